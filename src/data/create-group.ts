import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { ActivityLog } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { executePrepared } from '../db/prepared.js';
import { activityLogs } from '../db/schema/index.js';
import { batchEvents, deliveriesCommitted, deliveriesInsert, rowsOf } from '../webhooks/record.js';

/**
 * Group commit for audited creates. A create's cost on PostgreSQL is mostly its commit (waiting for the WAL to reach
 * the disk: 1,300 creates/s with 8 clients, 3,100/s with `synchronous_commit=off`, pgbench on the 1M-lead table) and
 * the statement around its rows (planning, the change-log triggers, which run once per statement). So creates of one
 * table that arrive while earlier ones are being written wait for a free writer and then go together: one statement,
 * one commit, each row with its own activity log and webhook deliveries. Nobody waits when nothing is being written;
 * each caller still hears only after its own row is committed. A group PostgreSQL refuses (a reference gone meanwhile,
 * a key taken) is written again one by one, so each caller gets its own answer and no row depends on another's.
 */

type Row = Record<string, unknown>;

/** One create, known whole beforehand: its row, its activity log, and how to write it on its own (its usual statement). */
export type GroupedCreate = { row: Row; log: ActivityLog; alone: () => Promise<void> };

type Waiting = GroupedCreate & { resolve: () => void; reject: (error: unknown) => void };

/** Statements writing at once per table: enough to keep the disk busy, few enough to leave connections for reads. */
const WRITERS = 4;
/** Rows per statement at most (its JSON parameters stay small). */
const MOST = 100;

/** How creates were written, per database (tests read it to see that groups formed). */
export type GroupCounts = { statements: number; rows: number; retried: number };
const counts = new WeakMap<Db, GroupCounts>();
export const groupCounts = (db: Db): GroupCounts => counts.get(db) ?? { statements: 0, rows: 0, retried: 0 };

/**
 * Insert of many rows as two JSON parameters PostgreSQL unpacks into the table's own row type and the activity log's
 * columns (building and parsing thousands of bound parameters costs more than the rows).
 */
export function rowsInsert(table: PgTable, rows: Row[]): SQL {
  const columns = Object.entries(getTableColumns(table));
  const json = rows.map((row) => Object.fromEntries(columns.map(([key, column]) => [column.name, row[key]])));
  return sql`insert into ${table} select * from jsonb_populate_recordset(null::${table}, ${JSON.stringify(json)}::jsonb)`;
}

export function logsInsert(logs: ActivityLog[]): SQL {
  return sql`insert into ${activityLogs} (id, user_id, action, module, resource, resource_id, changes, ip_address, user_agent, created_at, restored_from)
    select * from jsonb_to_recordset(${JSON.stringify(logs)}::jsonb) as t(id uuid, user_id uuid, action text, module text, resource text,
      resource_id uuid, changes jsonb, ip_address text, user_agent text, created_at timestamptz, restored_from uuid)`;
}

/** One statement for a group: the rows, their activity logs and their webhook deliveries. */
async function writeMany(db: Db, table: PgTable, rows: Row[], logs: ActivityLog[]) {
  const head = sql`with created as (${rowsInsert(table, rows)}), log as (${logsInsert(logs)})`;
  const events = batchEvents(logs);
  if (!events) {
    await executePrepared(db, sql`${head} select 1`);
    return;
  }
  const result = await executePrepared(db, sql`${head}, hooks as (${deliveriesInsert(events)}) select count(*)::int as n from hooks`);
  if (Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0)) deliveriesCommitted(db);
}

class CreateGroup {
  private waiting: Waiting[] = [];
  private writing = 0;

  constructor(private readonly db: Db, private readonly table: PgTable) {}

  add(create: GroupedCreate): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...create, resolve, reject });
      this.pump();
    });
  }

  get queued() {
    return this.waiting.length;
  }

  pump() {
    while (!held.has(this.db) && this.writing < WRITERS && this.waiting.length) {
      const group = this.waiting.splice(0, MOST);
      this.writing++;
      void this.write(group).finally(() => {
        this.writing--;
        this.pump();
      });
    }
  }

  private async write(group: Waiting[]) {
    const count = counts.get(this.db) ?? { statements: 0, rows: 0, retried: 0 };
    counts.set(this.db, count);
    if (group.length > 1) {
      try {
        await writeMany(this.db, this.table, group.map((c) => c.row), group.map((c) => c.log));
        count.statements++;
        count.rows += group.length;
        for (const create of group) create.resolve();
        return;
      } catch {
        // Refused as a whole: each alone below, answering its own error (the group's statement changed nothing).
        count.retried += group.length;
      }
    }
    await Promise.all(group.map((create) => create.alone().then(() => {
      count.statements++;
      count.rows++;
      create.resolve();
    }, create.reject)));
  }
}

const groups = new WeakMap<Db, Map<PgTable, CreateGroup>>();
/** Databases whose creates wait until released (`holdCreates`). */
const held = new WeakSet<Db>();

/**
 * Lets creates of `db` queue without writing until the returned function is called (tests: a group forms whatever
 * the machine's speed). `queuedCreates` says how many wait.
 */
export function holdCreates(db: Db): () => void {
  held.add(db);
  return () => {
    held.delete(db);
    for (const group of groups.get(db)?.values() ?? []) group.pump();
  };
}

export const queuedCreates = (db: Db) => [...(groups.get(db)?.values() ?? [])].reduce((sum, group) => sum + group.queued, 0);

/** Writes `create` with the other creates of its table waiting at the same time (see above). */
export function createInGroup(db: Db, table: PgTable, create: GroupedCreate): Promise<void> {
  let tables = groups.get(db);
  if (!tables) groups.set(db, (tables = new Map()));
  let group = tables.get(table);
  if (!group) tables.set(table, (group = new CreateGroup(db, table)));
  return group.add(create);
}
