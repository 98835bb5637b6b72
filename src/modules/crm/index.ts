import type { App } from '../../types.js';
import { moduleRoutes } from '../../auth/guard.js';
import { trashRoutes } from '../../http/trash-routes.js';
import campaignRoutes from './campaigns.js';
import importRoutes from './imports.js';
import inquiryRoutes from './inquiries.js';
import inventoryRoutes from './inventory.js';
import activityRoutes from './activities.js';
import leadFlowRoutes from './lead-flow/index.js';
import leadLinkRoutes from './lead-links.js';
import leadRoutes from './leads.js';
import newsletterRoutes from './newsletters.js';
import reportRoutes from './reports/index.js';
import reservationRoutes from './reservations.js';
import crmStatsRoutes from './stats.js';
import taskRoutes from './tasks.js';
import timelineRoutes from './timeline.js';
import leadFlowOfLeadRoutes from './lead-flow/flow.js';
import myDayRoutes from './lead-flow/my-day.js';
import planRoutes from './lead-flow/plans.js';
import privacyRoutes from './privacy/routes.js';
import runningPlanRoutes from './lead-flow/running-plans.js';

/** The crm module: every route inside is guarded by the crm permissions. */
export default moduleRoutes('crm', async (app: App) => {
  await app.register(leadRoutes);
  await app.register(inventoryRoutes);
  await app.register(reservationRoutes);
  await app.register(inquiryRoutes);
  await app.register(newsletterRoutes);
  await app.register(campaignRoutes);
  await app.register(crmStatsRoutes);
  await app.register(reportRoutes);
  await app.register(importRoutes);
  await app.register(activityRoutes);
  await app.register(leadLinkRoutes);
  await app.register(taskRoutes);
  await app.register(timelineRoutes);
  await app.register(planRoutes);
  await app.register(runningPlanRoutes);
  await app.register(myDayRoutes);
  await app.register(leadFlowRoutes);
  await app.register(leadFlowOfLeadRoutes);
  await app.register(privacyRoutes);
  // Last: the trash lists the resources registered above.
  await app.register(trashRoutes('crm'));
});
