import type { App } from '../app.js';
import { moduleRoutes } from '../auth/guard.js';
import { exportRoute } from '../http/export.js';
import { inquiryList, inquiryView } from './crm/inquiries.js';
import { inventoryList, inventoryView } from './crm/inventory.js';
import { leadList, leadView } from './crm/leads.js';
import { newsletterList, newsletterView } from './crm/newsletters.js';
import { reservationList, reservationView } from './crm/reservations.js';
import { activityLogList, activityLogView } from './iam/activity-logs.js';
import { userList, userView } from './iam/users.js';

/** CSV exports (CONTRACT §10): each list's filters, `q` and sort, streamed; `can_read` of the module. */
export const crmExports = moduleRoutes('crm', async (app: App) => {
  exportRoute(app, { path: '/api/crm/leads/export', spec: leadList, view: leadView, filename: 'leads' });
  exportRoute(app, { path: '/api/crm/reservations/export', spec: reservationList, view: reservationView, filename: 'reservations' });
  exportRoute(app, { path: '/api/crm/inventory/export', spec: inventoryList, view: inventoryView, filename: 'inventory' });
  exportRoute(app, { path: '/api/crm/inquiries/export', spec: inquiryList, view: inquiryView, filename: 'inquiries' });
  exportRoute(app, { path: '/api/crm/newsletters/export', spec: newsletterList, view: newsletterView, filename: 'newsletters' });
});

export const iamExports = moduleRoutes('iam', async (app: App) => {
  exportRoute(app, { path: '/api/iam/users/export', spec: userList, view: userView, filename: 'users' });
  exportRoute(app, { path: '/api/iam/activity-logs/export', spec: activityLogList, view: activityLogView, filename: 'activity-logs', jsonFields: ['changes'] });
});
