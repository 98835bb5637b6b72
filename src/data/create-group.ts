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

/** One create, known whole beforehand: its row and its activity log. */
export type GroupedCreate = { row: Row; log: ActivityLog };

type Waiting = GroupedCreate & { resolve: (written: boolean) => void; reject: (error: unknown) => void };

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

/** How creates are written: `unless`, a condition under which none is (see `writeCreates`); `also`, further event types of each. */
export type CreateOptions = { unless?: SQL; also?: string[] };

/**
 * One statement for creates known beforehand: the rows, their activity logs and their webhook deliveries (`also`:
 * further event types carrying each create's data). With `unless`, each part is written only where that condition
 * does not hold; one statement reads one snapshot, so it is all of them or none. Answers whether they were written.
 */
export async function writeCreates(db: Db, table: PgTable, rows: Row[], logs: ActivityLog[], options: CreateOptions = {}): Promise<boolean> {
  const gate = options.unless ? sql` where not (${options.unless})` : sql``;
  const head = sql`with created as (${rowsInsert(table, rows)}${gate}), log as (${logsInsert(logs)}${gate})`;
  const written = options.unless ? sql`not (${options.unless})` : sql`true`;
  const events = batchEvents(logs, options.also);
  if (!events) return Boolean(rowsOf<{ written: boolean }>(await executePrepared(db, sql`${head} select ${written} as written`))[0]?.written);
  const [answer] = rowsOf<{ written: boolean; n: number }>(await executePrepared(db,
    sql`${head}, hooks as (${deliveriesInsert(sql`${events}${gate}`)}) select ${written} as written, (select count(*)::int from hooks) as n`));
  if (Number(answer?.n ?? 0)) deliveriesCommitted(db);
  return Boolean(answer?.written);
}

class CreateGroup {
  private waiting: Waiting[] = [];
  private writing = 0;

  constructor(private readonly db: Db, private readonly table: PgTable, private readonly unless: SQL | undefined) {}

  add(create: GroupedCreate): Promise<boolean> {
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
    const options = { unless: this.unless };
    try {
      const written = await writeCreates(this.db, this.table, group.map((c) => c.row), group.map((c) => c.log), options);
      count.statements++;
      if (written) count.rows += group.length;
      for (const create of group) create.resolve(written);
      return;
    } catch (error) {
      // A create alone: the error is its own.
      if (group.length === 1) return group[0].reject(error);
      // Refused as a whole: each alone below, answering its own error (the group's statement changed nothing).
      count.retried += group.length;
    }
    await Promise.all(group.map((create) => writeCreates(this.db, this.table, [create.row], [create.log], options).then((written) => {
      count.statements++;
      if (written) count.rows++;
      create.resolve(written);
    }, create.reject)));
  }
}

/** Per database, per table, per condition (`unless`, by identity: a caller passes one constant): the groups. */
const groups = new WeakMap<Db, Map<PgTable, Map<SQL | undefined, CreateGroup>>>();
/** Databases whose creates wait until released (`holdCreates`). */
const held = new WeakSet<Db>();

const groupsOf = (db: Db) => [...(groups.get(db)?.values() ?? [])].flatMap((byCondition) => [...byCondition.values()]);

/**
 * Lets creates of `db` queue without writing until the returned function is called (tests: a group forms whatever
 * the machine's speed). `queuedCreates` says how many wait.
 */
export function holdCreates(db: Db): () => void {
  held.add(db);
  return () => {
    held.delete(db);
    for (const group of groupsOf(db)) group.pump();
  };
}

export const queuedCreates = (db: Db) => groupsOf(db).reduce((sum, group) => sum + group.queued, 0);

/**
 * Writes `create` with the other creates of its table (and condition) waiting at the same time (see above); with
 * `unless`, not when that condition holds as the statement runs. Answers whether it was written.
 */
export function createInGroup(db: Db, table: PgTable, create: GroupedCreate, unless?: SQL): Promise<boolean> {
  let tables = groups.get(db);
  if (!tables) groups.set(db, (tables = new Map()));
  let byCondition = tables.get(table);
  if (!byCondition) tables.set(table, (byCondition = new Map()));
  let group = byCondition.get(unless);
  if (!group) byCondition.set(unless, (group = new CreateGroup(db, table, unless)));
  return group.add(create);
}
