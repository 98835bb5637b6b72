import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../../types.js';
import { can, currentPrincipal } from '../../../auth/guard.js';
import { departments } from '../../../db/schema/index.js';
import { forbidden } from '../../../errors.js';

/**
 * Who may change lead-flow settings (groups, rules, action plans): administrators (iam write), and department managers
 * (a user some department names as its manager) who have crm write. Everyone with crm read may read them. The module
 * guard has already required crm write for the request.
 */
export async function requireLeadFlowManager(app: App, request: FastifyRequest): Promise<void> {
  const principal = await currentPrincipal(app, request);
  if (can(principal, ['iam'], 'can_write')) return;
  if (can(principal, ['crm'], 'can_write')) {
    const [managed] = await app.database.db.select({ id: departments.id }).from(departments).where(eq(departments.manager_id, principal.user.id)).limit(1);
    if (managed) return;
  }
  throw forbidden('Only administrators and department managers may change lead flow settings');
}
