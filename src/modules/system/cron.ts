import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { App } from '../../app.js';
import { purgeActivityLogs } from '../../audit/retention.js';
import { unauthorized } from '../../errors.js';
import { ErrorBody } from '../../http/schemas.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time check of `Authorization: Bearer <CRON_SECRET>`; no secret configured → nobody passes. */
export function cronAuthorised(secret: string | undefined, header: string | undefined): boolean {
  if (!secret || !header?.startsWith('Bearer ')) return false;
  return timingSafeEqual(digest(header.slice(7)), digest(secret));
}

export default async function cronRoutes(app: App) {
  app.post('/api/cron/activity-logs-retention', {
    schema: {
      tags: ['system'],
      summary: 'Delete activity logs older than ACTIVITY_LOG_RETENTION_DAYS (bearer CRON_SECRET)',
      security: [{ bearer: [] }],
      response: { 200: Type.Object({ deleted: Type.Integer(), message: Type.String() }), 401: ErrorBody },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const days = app.config.activityLogRetentionDays;
    const deleted = await purgeActivityLogs(app.database.db, days);
    request.log.info({ deleted, days }, 'activity log retention');
    return { deleted, message: `Deleted ${deleted} activity logs older than ${days} days` };
  });
}
