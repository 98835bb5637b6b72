import { and, eq, getTableColumns, is, SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { type ActivityLog, activityLogOf } from '../audit/record.js';
import type { Db, Tx } from '../db/client.js';
import { executePrepared } from '../db/prepared.js';
import { createInGroup, logsInsert, rowsInsert, writeCreates } from './create-group.js';
import { activityLogs, inventoryUnits, leads } from '../db/schema/index.js';
import { clock } from '../clock.js';
import { notFound } from '../errors.js';
import type { Actor } from './actor.js';
import type { Predicate } from './filters.js';
import type { Resource, RowOf } from './resource.js';
import { batchEvents, changeEvents, deliveriesCommitted, deliveriesInsert, type Emitted, emittedEvents, rowsOf } from '../webhooks/record.js';
import type { NamedEvent } from '../webhooks/events.js';

/** Values to insert or set on a resource's table. */
export type Patch<T extends PgTable> = Partial<T['$inferInsert']>;

type Row = Record<string, unknown>;

/**
 * One changed record, as the audit trail records it. `also`: further webhook event types carrying this change's data
 * (a public inquiry is also `inquiry.received`).
 */
export type Change = { action: 'create' | 'update' | 'delete'; resource: Resource; id: string; before?: Row; after?: Row; also?: NamedEvent[] };

/**
 * The one way to change data: `work` runs in a transaction, and every change it makes through `Work` is written
 * with its activity log and its webhook deliveries, so either all of it is kept or none (the change log is the
 * database's: its triggers log every write, migration 0012).
 * After the commit, the dispatcher hears of deliveries recorded.
 */
export async function audited<R>(db: Db, actor: Actor, work: (work: Work) => Promise<R>): Promise<R> {
  let done: Work | undefined;
  const result = await db.transaction(async (tx) => {
    done = new Work(tx as Tx, actor);
    const result = await work(done);
    await done.flush();
    return result;
  });
  if (done?.recorded) deliveriesCommitted(db);
  for (const run of done?.committed ?? []) run();
  return result;
}

/**
 * The tail of an audited statement: the webhook deliveries of `events` as one more CTE, and the count of them as the
 * statement's answer; without events, nothing (the statement ends with its last insert, as before).
 */
function withDeliveries(events: SQL | undefined): { cte: SQL; tail: SQL } | undefined {
  return events && { cte: sql`, hooks as (${deliveriesInsert(events)})`, tail: sql`select count(*)::int as n from hooks` };
}

/** Deliveries an audited statement recorded (its answer when it had a `hooks` CTE). */
const countOf = (result: unknown) => Number(rowsOf<{ n?: number }>(result)[0]?.n ?? 0);

/** Column types PostgreSQL stores exactly as sent from JavaScript (not numeric, real or double precision). */
const EXACT_TYPES = /^Pg(Text|Varchar|Char|UUID|Boolean|Integer|SmallInt|BigInt53|Timestamp|Date|Jsonb|Json|Array|Enum)/;

/**
 * The whole row an insert of `values` creates, known before it runs (every default has a JavaScript function or a
 * literal, every type is stored exactly); undefined when the database would decide some of it.
 */
function rowOf(table: PgTable, values: Record<string, unknown>): Row | undefined {
  const row: Row = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    if (!EXACT_TYPES.test(column.columnType) || column.generated || column.generatedIdentity) return undefined;
    let value = values[key];
    if (value === undefined) value = column.defaultFn ? column.defaultFn() : column.default ?? null;
    if (is(value, SQL)) return undefined;
    row[key] = value;
  }
  return row;
}

/**
 * An audited create on its own: when the whole row is known beforehand, the row, its activity log and its webhook
 * deliveries are one statement (atomic by itself: no transaction, one round trip), shared with the creates of the same
 * table waiting at that moment (`create-group.ts`); otherwise a plain audited create. `also`: further event types
 * carrying the created event's data (`inquiry.received`).
 */
export async function createAudited<T extends PgTable>(db: Db, actor: Actor, resource: Resource<T>, values: Patch<T>, also?: NamedEvent[]): Promise<RowOf<T>> {
  return (await createAuditedUnless(db, actor, resource, values, { also }))!;
}

/**
 * `createAudited`, but nothing is written while `unless` holds (a condition on other tables, checked by the create's
 * own statement, so in the same snapshot as its write): then the answer is undefined.
 */
export async function createAuditedUnless<T extends PgTable>(db: Db, actor: Actor, resource: Resource<T>, values: Patch<T>,
  { also, unless }: { also?: NamedEvent[]; unless?: SQL }): Promise<RowOf<T> | undefined> {
  const table = resource.table as PgTable;
  const row = rowOf(table, values as Row);
  const log = row && activityLogOf(actor, { action: 'create', module: resource.module, resource: resource.name, resourceId: String(row.id), after: row });
  if (!row || !log) {
    if (unless && rowsOf<{ holds: boolean }>(await db.execute(sql`select ${unless} as holds`))[0]?.holds) return undefined;
    return audited(db, actor, (work) => work.create(resource, values, also));
  }
  // Extra event types travel only in the statement of one create; every other create may share a group's commit.
  const written = also?.length ? await writeCreates(db, table, [row], [log], { also, unless }) : await createInGroup(db, table, { row, log }, unless);
  return written ? (row as RowOf<T>) : undefined;
}

/** Tables whose status changes a database trigger records with the user who made them (migration 0021). */
const STATUS_HISTORIES: ReadonlySet<PgTable> = new Set([leads, inventoryUnits]);

/** The changes of one transaction, by one actor. */
export class Work {
  /** Webhook deliveries this transaction recorded so far. */
  recorded = 0;
  /** Events emitted and not yet written: the next audited statement (or the end of the transaction) writes them. */
  private emitted: Emitted[] = [];
  /**
   * The caller's record scopes, by resource name: `lock` (so `update` and `remove`) finds only the rows
   * they allow, and answers 404 for the others as for a missing row. Checked on the locked row, so a record handed to
   * someone else meanwhile is not changed.
   */
  readonly visible = new Map<string, Predicate>();
  /** The activity log the changes of this transaction restore: each of their logs names it. */
  restoredFrom?: string;
  /** When set, every change `audit` records is also kept here with its log (what a deletion's trash entry holds). */
  trail?: { change: Change; log: ActivityLog }[];
  /** What to do once this transaction committed (tell people of what it did); dropped when it rolls back. */
  readonly committed: (() => void)[] = [];

  /** Whether this transaction told the status-history triggers who the actor is. */
  private actorNamed = false;

  constructor(readonly tx: Tx, readonly actor: Actor) {}

  /** Runs `then` after the commit (never when the transaction rolls back); it must not throw. */
  onCommit(then: () => void) {
    this.committed.push(then);
  }

  /** Names the actor to the status-history triggers, for the rest of the transaction (once, and only when needed). */
  private async nameActor(table: PgTable) {
    if (this.actorNamed || !this.actor.userId || !STATUS_HISTORIES.has(table)) return;
    this.actorNamed = true;
    await this.tx.execute(sql`select set_config('pms.actor_id', ${this.actor.userId}, true)`);
  }

  /**
   * A named webhook event with its own data (`newsletter.subscribed`, `campaign.sent`), recorded in this transaction:
   * with the next audited change's statement, or at the end of the transaction when none follows.
   */
  emit(type: NamedEvent, data: Record<string, unknown>) {
    this.emitted.push({ type, data, at: clock.now() });
  }

  /** Writes the events emitted since the last audited statement (one statement; none when there are none). */
  async flush() {
    const events = emittedEvents(this.emitted.splice(0));
    if (events) this.recorded += countOf(await this.tx.execute(sql`with hooks as (${deliveriesInsert(events)}) select count(*)::int as n from hooks`));
  }

  /**
   * Records a change made by hand (`tx` directly): its activity log and its webhook deliveries. False for an update that changed nothing (nothing is
   * written).
   */
  async audit(change: Change): Promise<boolean> {
    const log = activityLogOf(this.actor, {
      action: change.action, module: change.resource.module, resource: change.resource.name, resourceId: change.id, before: change.before, after: change.after,
      restoredFrom: this.restoredFrom,
    });
    if (!log) return false;
    this.trail?.push({ change, log });
    // One statement (one round trip) for both: the log, and the deliveries of its events (and of events emitted before
    // it) to the endpoints subscribed.
    const events = [changeEvents(log, change.also), emittedEvents(this.emitted.splice(0))].filter((e): e is SQL => e !== undefined);
    const hooks = withDeliveries(events.length ? sql.join(events, sql` union all `) : undefined);
    if (!hooks) {
      await executePrepared(this.tx, this.tx.insert(activityLogs).values(log).getSQL());
      return true;
    }
    const logged = this.tx.insert(activityLogs).values(log).returning({ changes: activityLogs.changes }).getSQL();
    this.recorded += countOf(await executePrepared(this.tx, sql`with log as (${logged})${hooks.cte} ${hooks.tail}`));
    return true;
  }

  /**
   * Records many changes at once (a batch of an import): every activity log in one statement. Updates that changed nothing are left out, as `audit` does.
   */
  async auditMany(changes: Change[]): Promise<void> {
    const logs: ActivityLog[] = [];
    for (const change of changes) {
      const log = activityLogOf(this.actor, {
        action: change.action, module: change.resource.module, resource: change.resource.name, resourceId: change.id, before: change.before, after: change.after,
      });
      if (!log) continue;
      logs.push(log);
    }
    if (!logs.length) return;
    // One parameter however many rows: the set travels as one JSON array that PostgreSQL unpacks (building and
    // parsing thousands of bound parameters was most of a large batch's cost).
    const statement = sql`with log as (${logsInsert(logs)})`;
    // Their webhook events too, in the same statement (one JSON parameter), built from the logs as `audit` builds them.
    const hooks = withDeliveries(batchEvents(logs));
    if (!hooks) await this.tx.execute(sql`${statement} select 1`);
    else this.recorded += countOf(await this.tx.execute(sql`${statement}${hooks.cte} ${hooks.tail}`));
  }

  /**
   * Audited insert of many rows in one statement, then their logs in one more (`auditMany`). With `skipConflicts`, a
   * row a unique index already holds is left out (`on conflict do nothing`): only the rows inserted are returned.
   */
  async createMany<T extends PgTable>(resource: Resource<T>, values: Patch<T>[], options: { skipConflicts?: boolean } = {}): Promise<RowOf<T>[]> {
    if (!values.length) return [];
    const table = resource.table as PgTable;
    // An import's leads: their first status is recorded as the importer's.
    await this.nameActor(table);
    const known = options.skipConflicts ? undefined : values.map((v) => rowOf(table, v as Row));
    if (known?.every((row): row is Row => row !== undefined)) {
      // Every row known beforehand: one JSON parameter PostgreSQL unpacks into the table's own row type.
      await this.tx.execute(rowsInsert(table, known));
      await this.auditMany(known.map((row) => ({ action: 'create', resource, id: String(row.id), after: row })));
      return known as RowOf<T>[];
    }
    const insert = this.tx.insert(table).values(values as never);
    const rows = (await (options.skipConflicts ? insert.onConflictDoNothing() : insert).returning()) as Row[];
    await this.auditMany(rows.map((row) => ({ action: 'create', resource, id: String(row.id), after: row })));
    return rows as RowOf<T>[];
  }

  /** Locks a row until the transaction ends and returns it, or 404. */
  async lock<T extends PgTable>(resource: Resource<T>, id: string): Promise<RowOf<T>> {
    const [row] = await (this.tx.select().from(resource.table as PgTable) as never as { where(c: unknown): { for(s: 'update'): Promise<Row[]> } })
      .where(and(eq(resource.id, id), this.visible.get(resource.name)?.sql)).for('update');
    if (!row) throw notFound(resource.label);
    return row as RowOf<T>;
  }

  /** Audited insert; `also`: further event types carrying the created event's data. */
  async create<T extends PgTable>(resource: Resource<T>, values: Patch<T>, also?: NamedEvent[]): Promise<RowOf<T>> {
    const [row] = (await this.tx.insert(resource.table as PgTable).values(values as never).returning()) as Row[];
    await this.audit({ action: 'create', resource, id: String(row.id), after: row, also });
    return row as RowOf<T>;
  }

  /** Audited partial update of an existing row (404 when missing); the log holds only the changed fields. */
  async update<T extends PgTable>(resource: Resource<T>, id: string, patch: Patch<T> | ((current: RowOf<T>) => Patch<T> | Promise<Patch<T>>)): Promise<RowOf<T>> {
    const current = await this.lock(resource, id);
    const values = typeof patch === 'function' ? await patch(current) : patch;
    if ('status' in values) await this.nameActor(resource.table as PgTable);
    const [row] = Object.keys(values).length
      ? ((await this.tx.update(resource.table as PgTable).set(values as never).where(eq(resource.id, id)).returning()) as Row[])
      : [current as Row];
    await this.audit({ action: 'update', resource, id, before: current as Row, after: row });
    return row as RowOf<T>;
  }

  /** Audited update of every row `where` selects (a cascade): each row locked, one log per changed row. */
  async updateAll<T extends PgTable>(resource: Resource<T>, where: SQL, values: Patch<T>): Promise<RowOf<T>[]> {
    const ids = (await this.tx.select({ id: resource.id }).from(resource.table as PgTable).where(where)) as { id: unknown }[];
    const rows: RowOf<T>[] = [];
    for (const { id } of ids) rows.push(await this.update(resource, String(id), values));
    return rows;
  }

  /** Audited delete of every row `where` selects (a cascade): one log per deleted row. */
  async removeAll<T extends PgTable>(resource: Resource<T>, where: SQL): Promise<RowOf<T>[]> {
    const rows = (await this.tx.delete(resource.table as PgTable).where(where).returning()) as Row[];
    for (const row of rows) await this.audit({ action: 'delete', resource, id: String(row.id), before: row });
    return rows as RowOf<T>[];
  }

  /** Audited delete of an existing row (404 when missing); `check` sees the locked row first and may refuse. */
  async remove<T extends PgTable>(resource: Resource<T>, id: string, check?: (current: RowOf<T>) => Promise<void> | void): Promise<RowOf<T>> {
    const current = await this.lock(resource, id);
    await check?.(current);
    await this.tx.delete(resource.table as PgTable).where(eq(resource.id, id));
    await this.audit({ action: 'delete', resource, id, before: current as Row });
    return current;
  }
}
