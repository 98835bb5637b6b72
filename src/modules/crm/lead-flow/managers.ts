import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../../types.js';
import { can, currentPrincipal } from '../../../auth/guard.js';
import { departments } from '../../../db/schema/index.js';
import { forbidden } from '../../../errors.js';

/**
 * Hook of every lead-flow settings change: administrators (iam write) and department managers (a user some
 * department names as its `manager_id`) may change groups, rules and plans; the crm module's guard has already asked
 * for crm write (or delete). Everyone else with crm read reads them.
 */
export const requireFlowManager = (app: App) => async (request: FastifyRequest) => {
  const principal = await currentPrincipal(app, request);
  if (can(principal, ['iam'], 'can_write')) return;
  const [managed] = await app.database.db.select({ id: departments.id }).from(departments).where(eq(departments.manager_id, principal.user.id)).limit(1);
  if (!managed) throw forbidden('Only administrators and department managers may change lead flow settings');
};
