import { getTableColumns, lt, type Placeholder, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import { changeLog } from '../db/schema/index.js';

/**
 * A PostgreSQL snapshot (`pg_current_snapshot()`): transactions below `xmin` are visible, from `xmax` on they are not,
 * and those in `running` are not (they had not committed when it was taken).
 */
export type Snapshot = { xmin: number; xmax: number; running: Set<number> };

export function parseSnapshot(text: string): Snapshot {
  const [xmin, xmax, running = ''] = text.split(':');
  return { xmin: Number(xmin), xmax: Number(xmax), running: new Set(running ? running.split(',').map(Number) : []) };
}

/** Whether the changes of transaction `xid` are seen by `snapshot` (PostgreSQL's `pg_visible_in_snapshot`). */
export const visibleIn = (xid: number, snapshot: Snapshot) => xid < snapshot.xmin || (xid < snapshot.xmax && !snapshot.running.has(xid));

/** Whether `later` sees everything `earlier` sees, so `earlier` can be brought forward to it. */
export function covers(later: Snapshot, earlier: Snapshot): boolean {
  if (later.xmax < earlier.xmax || later.xmin < earlier.xmin) return false;
  for (const xid of later.running) if (xid < earlier.xmax && !(xid >= earlier.xmin && earlier.running.has(xid))) return false;
  return true;
}

/** The current statement's snapshot, as text, to select beside a page or a count. */
export const currentSnapshot = sql<string>`pg_current_snapshot()::text`;

/**
 * The changes of a resource by transactions from `fromXid` on that the current statement sees, as JSON
 * `[xid, row_id, before, after]` (at most `limit`, by transaction id), each row reduced to the properties named in `reads`.
 * In the order of the (resource, xid) index, so the read stops at `limit`: ordered by `id`, the statement's generic plan
 * walked the primary key from the log's oldest entry, filtering (430 ms a page once the log held 1.3M entries, and a
 * pool of connections waiting on it). Those reading the changes only add them up, in any order. Read through
 * `pms_change_rows` (migration 0018), whose plan stays on that index: inline, a prepared statement planned while the
 * log was nearly empty kept a sequential scan as it grew.
 * The triggers (migration 0012) log rows as PostgreSQL has them, by column name; they are read back by the table's
 * property names (`departmentId` for `department_id`), as predicates test them. A scalar subquery: PostgreSQL runs it
 * once per statement.
 */
export function changesSince(resource: { name: string; table: PgTable }, fromXid: string | Placeholder, limit: number, reads: string[]) {
  const columns = getTableColumns(resource.table);
  const only = (side: 'before' | 'after') => {
    const column = sql.raw(`c.${side}`);
    const fields = reads.length ? sql.join(reads.map((key) => sql`${key}::text, ${column} -> ${columns[key]?.name ?? key}::text`), sql`, `) : sql``;
    return sql`case when ${column} is null then null else jsonb_build_object(${fields}) end`;
  };
  return sql<string | null>`(select coalesce(json_agg(json_build_array(c.xid::text, c.row_id, ${only('before')}, ${only('after')})), '[]')::text
  from pms_change_rows(${resource.name}, ${fromXid}::xid8, ${limit}) c)`;
}

export type LoggedChange = { xid: number; rowId: string | null; before: Record<string, unknown> | null; after: Record<string, unknown> | null };

export const parseChanges = (json: string): LoggedChange[] =>
  (JSON.parse(json) as [string, string | null, Record<string, unknown> | null, Record<string, unknown> | null][])
    .map(([xid, rowId, before, after]) => ({ xid: Number(xid), rowId, before, after }));

/** How long the log keeps a change; cached totals older than a fraction of it are recounted, never brought forward. */
export const CHANGE_LOG_RETENTION_MS = 60 * 60 * 1000;

export async function pruneChangeLog(db: Executor, olderThanMs = CHANGE_LOG_RETENTION_MS) {
  await db.delete(changeLog).where(lt(changeLog.created_at, new Date(Date.now() - olderThanMs)));
}

/** A predicate's answer as a weight: true counts 1, false 0, "cannot tell" nothing. */
export const weightOf = (answer: boolean | undefined) => (answer === undefined ? undefined : answer ? 1 : 0);

/**
 * How many more rows count after the changes a snapshot had not seen than before them: each changed row is weighed
 * before and after (1 if it counts, 0 if not); undefined when any cannot be weighed, or a change lists no row.
 */
export function netChange(changes: LoggedChange[], seen: Snapshot, weigh: (row: Record<string, unknown>) => 0 | 1 | undefined): number | undefined {
  const weight = (row: Record<string, unknown> | null) => (row === null ? 0 : weigh(row));
  let net = 0;
  for (const change of changes) {
    if (visibleIn(change.xid, seen)) continue;
    if (change.rowId === null) return undefined;
    const was = weight(change.before);
    const is = weight(change.after);
    if (was === undefined || is === undefined) return undefined;
    net += is - was;
  }
  return net;
}
