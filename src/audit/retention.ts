import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { bumpVersion } from '../http/list.js';

const BATCH = 5000;

/**
 * Deletes activity logs older than `days`, a batch at a time: each batch is its own short statement, so the
 * table is never locked for long. Returns how many were deleted.
 */
export async function purgeActivityLogs(db: Executor, days: number): Promise<number> {
  const cutoff = new Date(Date.now() - days * 24 * 3600 * 1000);
  let deleted = 0;
  for (;;) {
    const result: any = await db.execute(sql`
      with doomed as (select id from activity_logs where created_at < ${cutoff} limit ${BATCH})
      delete from activity_logs where id in (select id from doomed) returning 1`);
    const count = (result.rows ?? result).length as number;
    deleted += count;
    if (count < BATCH) break;
  }
  if (deleted > 0) await bumpVersion(db, 'activity_logs');
  return deleted;
}
