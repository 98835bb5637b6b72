import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { purgeActivityLogs } from '../../audit/retention.js';
import { purgeTrash, trashPurgedMessage } from '../../data/trash.js';
import { bearerMatches } from '../../auth/bearer-secret.js';
import { unauthorized } from '../../errors.js';
import { ErrorBody } from '../../http/schemas.js';

/** Constant-time check of `Authorization: Bearer <CRON_SECRET>`; no secret configured → nobody passes. */
export const cronAuthorised = bearerMatches;

const Purged = (example: { deleted: number; message: string }) => Type.Object({ deleted: Type.Integer(), message: Type.String() }, { examples: [example] });

export default async function cronRoutes(app: App) {
  app.post('/api/cron/activity-logs-retention', {
    schema: {
      tags: ['system'],
      summary: 'Delete activity logs older than ACTIVITY_LOG_RETENTION_DAYS (bearer CRON_SECRET)',
      security: [{ cronSecret: [] }],
      response: { 200: Purged({ deleted: 1204, message: 'Deleted 1204 activity logs older than 365 days' }), 401: ErrorBody },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const days = app.config.activityLogRetentionDays;
    const deleted = await purgeActivityLogs(app.database.db, days);
    request.log.info({ deleted, days }, 'activity log retention');
    return { deleted, message: `Deleted ${deleted} activity logs older than ${days} days` };
  });

  // The daily trash purge, now: what an operator runs to free the space (or the uploads) of deleted records at once.
  app.post('/api/cron/trash-purge', {
    schema: {
      tags: ['system'],
      summary: 'Purge trash entries (deleted cms and crm records) older than TRASH_RETENTION_DAYS (bearer CRON_SECRET)',
      description: 'What the daily trash purge does, run now: the entries deleted more than TRASH_RETENTION_DAYS ago (by the service clock) '
        + 'are removed for good, restored or not, in batches; their records can no longer be restored. Their uploads go with the unused-uploads cleanup.',
      security: [{ cronSecret: [] }],
      response: { 200: Purged({ deleted: 12, message: 'Purged 12 trash entries deleted more than 30 days ago' }), 401: ErrorBody },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const days = app.config.trashRetentionDays;
    const deleted = await purgeTrash(app.database.db, days);
    request.log.info({ deleted, days }, 'trash purge');
    return { deleted, message: trashPurgedMessage(deleted, days) };
  });
}
