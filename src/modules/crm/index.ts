import type { App } from '../../app.js';
import { moduleRoutes } from '../../auth/guard.js';
import campaignRoutes from './campaigns.js';
import importRoutes from './imports.js';
import inquiryRoutes from './inquiries.js';
import inventoryRoutes from './inventory.js';
import leadRoutes from './leads.js';
import newsletterRoutes from './newsletters.js';
import reservationRoutes from './reservations.js';
import crmStatsRoutes from './stats.js';

/** The crm module: every route inside is guarded by the crm permissions. */
export default moduleRoutes('crm', async (app: App) => {
  await app.register(leadRoutes);
  await app.register(inventoryRoutes);
  await app.register(reservationRoutes);
  await app.register(inquiryRoutes);
  await app.register(newsletterRoutes);
  await app.register(campaignRoutes);
  await app.register(crmStatsRoutes);
  await app.register(importRoutes);
});
