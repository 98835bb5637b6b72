import type { App } from '../../../types.js';
import claimRoutes from './claim.js';
import leadGroupRoutes from './groups.js';
import leadFlowRuleRoutes from './rules.js';
import leadFlowPeopleRoutes from './people.js';

/** Lead flow's routes in the crm module: its settings (groups, rules), the people leads go to, and a lead's claim. */
export default async function leadFlowRoutes(app: App) {
  await app.register(leadGroupRoutes);
  await app.register(leadFlowRuleRoutes);
  await app.register(claimRoutes);
  await app.register(leadFlowPeopleRoutes);
}
