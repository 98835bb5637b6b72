import type { App } from '../../types.js';
import { moduleRoutes } from '../../auth/guard.js';
import activityLogRoutes from './activity-logs.js';
import apiTokenRoutes from './api-tokens.js';
import departmentRoutes from './departments.js';
import moduleAccessRoutes from './module-access.js';
import userRoutes from './users.js';
import ssoProviderRoutes from './sso-providers.js';
import webhookRoutes from './webhooks.js';

/** The iam module: every route inside is guarded by the iam permissions. */
export default moduleRoutes('iam', async (app: App) => {
  await app.register(userRoutes);
  await app.register(departmentRoutes);
  await app.register(moduleAccessRoutes);
  await app.register(activityLogRoutes);
  await app.register(apiTokenRoutes);
  await app.register(webhookRoutes);
  await app.register(ssoProviderRoutes);
});
