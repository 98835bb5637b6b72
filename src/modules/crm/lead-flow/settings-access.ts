import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../../types.js';
import { can, currentPrincipal } from '../../../auth/guard.js';
import { departments } from '../../../db/schema/index.js';
import { forbidden } from '../../../errors.js';

/**
 * Who may change lead-flow settings (groups, rules, action plans): administrators (iam write), and department managers
 * (a user some department names as its manager) who have crm write. Everyone with crm read may read them.
 */
export async function mayManageLeadFlow(app: App, request: FastifyRequest): Promise<boolean> {
  const principal = await currentPrincipal(app, request);
  if (can(principal, ['iam'], 'can_write')) return true;
  if (!can(principal, ['crm'], 'can_write')) return false;
  const [managed] = await app.database.db.select({ id: departments.id }).from(departments).where(eq(departments.manager_id, principal.user.id)).limit(1);
  return !!managed;
}

/** Refuses (403) a settings change by someone who may not make it. */
export async function requireLeadFlowManager(app: App, request: FastifyRequest): Promise<void> {
  if (!(await mayManageLeadFlow(app, request))) throw forbidden('Only administrators and department managers may change lead flow settings');
}

/** `requireLeadFlowManager` as a route hook. */
export const requireFlowManager = (app: App) => (request: FastifyRequest) => requireLeadFlowManager(app, request);
