import type { App } from '../../types.js';
import { ActivityLog, activityLogResource } from '../../audit/activity-log.js';
import { resourceRoutes } from '../../http/resource-routes.js';

/** Read-only: the service writes logs itself, in the transaction of each change. */
export default async function activityLogRoutes(app: App) {
  resourceRoutes(app, activityLogResource, { path: '/api/iam/activity-logs', Item: ActivityLog, remove: false });
}
