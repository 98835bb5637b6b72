import type { App } from '../../../types.js';
import claimRoutes from './claim.js';
import leadGroupRoutes from './groups.js';
import leadFlowRuleRoutes from './rules.js';

/** Lead flow's routes in the crm module: its settings (groups, rules) and a lead's claim. */
export default async function leadFlowRoutes(app: App) {
  await app.register(leadGroupRoutes);
  await app.register(leadFlowRuleRoutes);
  await app.register(claimRoutes);
}
