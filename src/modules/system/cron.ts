import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { purgeActivityLogs } from '../../audit/retention.js';
import { bearerMatches } from '../../auth/bearer-secret.js';
import { unauthorized } from '../../errors.js';
import { ErrorBody } from '../../http/schemas.js';

/** Constant-time check of `Authorization: Bearer <CRON_SECRET>`; no secret configured → nobody passes. */
export const cronAuthorised = bearerMatches;

export default async function cronRoutes(app: App) {
  app.post('/api/cron/activity-logs-retention', {
    schema: {
      tags: ['system'],
      summary: 'Delete activity logs older than ACTIVITY_LOG_RETENTION_DAYS (bearer CRON_SECRET)',
      security: [{ cronSecret: [] }],
      response: { 200: Type.Object({ deleted: Type.Integer(), message: Type.String() }, { examples: [{ deleted: 1204, message: 'Deleted 1204 activity logs older than 365 days' }] }), 401: ErrorBody },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const days = app.config.activityLogRetentionDays;
    const deleted = await purgeActivityLogs(app.database.db, days);
    request.log.info({ deleted, days }, 'activity log retention');
    return { deleted, message: `Deleted ${deleted} activity logs older than ${days} days` };
  });
}
