import { inArray, lt } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { activityLogs } from '../db/schema/index.js';
import { defineJob } from '../jobs/registry.js';

/** Rows per delete statement. A knob, so a test proves the batching with a few batches of a few rows. */
export const retentionBatch = { size: 5000 };

/**
 * Deletes activity logs older than `days`, a batch at a time: each batch is its own short statement, so the table
 * is never locked for long. Returns how many were deleted.
 */
export async function purgeActivityLogs(db: Executor, days: number): Promise<number> {
  const cutoff = new Date(Date.now() - days * 24 * 3600 * 1000);
  const batch = retentionBatch.size;
  let deleted = 0;
  for (;;) {
    const deletedIds = await db.delete(activityLogs)
      .where(inArray(activityLogs.id, db.select({ id: activityLogs.id }).from(activityLogs).where(lt(activityLogs.created_at, cutoff)).limit(batch)))
      .returning({ id: activityLogs.id });
    const count = deletedIds.length;
    deleted += count;
    if (count < batch) break;
  }
  return deleted;
}

/** The daily purge (CONTRACT §7); `POST /api/cron/activity-logs-retention` runs the same on demand. */
export const activityLogRetention = defineJob('activity-logs-retention', async (_data, { database, config, log }) => {
  const deleted = await purgeActivityLogs(database.db, config.activityLogRetentionDays);
  log.info({ deleted }, 'scheduled activity log retention');
}, { schedule: '17 3 * * *' });
