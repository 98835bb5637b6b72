import { eq, getTableColumns, is, SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { type ActivityLog, activityLogOf } from '../audit/record.js';
import type { Db, Tx } from '../db/client.js';
import { activityLogs, changeLog } from '../db/schema/index.js';
import { clock } from '../clock.js';
import { notFound } from '../errors.js';
import type { Actor } from './actor.js';
import { type ChangeEntry, changeLogInsert } from './changes.js';
import type { Resource, RowOf } from './resource.js';

/** Values to insert or set on a resource's table. */
export type Patch<T extends PgTable> = Partial<T['$inferInsert']>;

type Row = Record<string, unknown>;
/** The activity log's resource name: every audited change adds to its list. */
const ACTIVITY_LOGS = 'activity_logs';

/** One changed record, as the audit trail records it. */
export type Change = { action: 'create' | 'update' | 'delete'; resource: Resource; id: string; before?: Row; after?: Row };

/**
 * The one way to change data: `work` runs in a transaction, and every change it makes through `Work` is written
 * with its activity log and its change-version bump, so either all of it is kept or none.
 */
export function audited<R>(db: Db, actor: Actor, work: (work: Work) => Promise<R>): Promise<R> {
  return db.transaction((tx) => work(new Work(tx as Tx, actor)));
}

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
 * An audited create on its own: when the whole row is known beforehand, the row, its activity log and its change-log
 * entries are one statement (atomic by itself: no transaction, one round trip); otherwise a plain audited create.
 */
export async function createAudited<T extends PgTable>(db: Db, actor: Actor, resource: Resource<T>, values: Patch<T>): Promise<RowOf<T>> {
  const row = rowOf(resource.table, values as Row);
  const log = row && activityLogOf(actor, { action: 'create', module: resource.module, resource: resource.name, resourceId: String(row.id), after: row });
  if (!row || !log) return audited(db, actor, (work) => work.create(resource, values));
  await db.execute(sql`with created as (${db.insert(resource.table as PgTable).values(row as never).getSQL()}), log as (${db.insert(activityLogs).values(log).getSQL()}) ${changeLogInsert(db, [
    { resource: resource.name, rowId: String(row.id), after: row },
    { resource: ACTIVITY_LOGS, rowId: log.id, after: log },
  ]).getSQL()}`);
  return row as RowOf<T>;
}

/** The changes of one transaction, by one actor. */
export class Work {
  constructor(readonly tx: Tx, readonly actor: Actor) {}

  /**
   * Records a change made by hand (`tx` directly): its activity log, and in the change log the record and the log
   * entry (both are listed resources). False for an update that changed nothing (nothing is written).
   */
  async audit(change: Change): Promise<boolean> {
    const log = activityLogOf(this.actor, {
      action: change.action, module: change.resource.module, resource: change.resource.name, resourceId: change.id, before: change.before, after: change.after,
    });
    if (!log) return false;
    // One statement (one round trip) for both: the log, and the change log's entries for the record and the log.
    await this.tx.execute(sql`with log as (${this.tx.insert(activityLogs).values(log).getSQL()}) ${changeLogInsert(this.tx, [
      { resource: change.resource.name, rowId: change.id, before: change.action === 'create' ? null : change.before, after: change.action === 'delete' ? null : change.after },
      { resource: ACTIVITY_LOGS, rowId: log.id, after: log },
    ]).getSQL()}`);
    return true;
  }

  /**
   * Records many changes at once (a batch of an import): every activity log, and their change-log entries, in one
   * statement. Updates that changed nothing are left out, as `audit` does.
   */
  async auditMany(changes: Change[]): Promise<void> {
    const logs: ActivityLog[] = [];
    const entries: ChangeEntry[] = [];
    for (const change of changes) {
      const log = activityLogOf(this.actor, {
        action: change.action, module: change.resource.module, resource: change.resource.name, resourceId: change.id, before: change.before, after: change.after,
      });
      if (!log) continue;
      logs.push(log);
      entries.push(
        { resource: change.resource.name, rowId: change.id, before: change.action === 'create' ? null : change.before, after: change.action === 'delete' ? null : change.after },
        { resource: ACTIVITY_LOGS, rowId: log.id, after: log },
      );
    }
    if (!logs.length) return;
    // Two parameters however many rows: each set travels as one JSON array that PostgreSQL unpacks (building and
    // parsing thousands of bound parameters was most of a large batch's cost).
    const at = clock.now();
    await this.tx.execute(sql`with log as (
      insert into ${activityLogs} (id, user_id, action, module, resource, resource_id, changes, ip_address, user_agent, created_at)
      select * from jsonb_to_recordset(${JSON.stringify(logs)}::jsonb) as t(id uuid, user_id uuid, action text, module text, resource text,
        resource_id uuid, changes jsonb, ip_address text, user_agent text, created_at timestamptz))
    insert into ${changeLog} (resource, row_id, before, after, created_at)
      select resource, row_id, before, after, ${at.toISOString()}::timestamptz from jsonb_to_recordset(${JSON.stringify(entries.map((e) => ({ resource: e.resource, row_id: e.rowId, before: e.before ?? null, after: e.after ?? null })))}::jsonb)
        as t(resource text, row_id uuid, before jsonb, after jsonb)`);
  }

  /**
   * Audited insert of many rows in one statement, then their logs in one more (`auditMany`). With `skipConflicts`, a
   * row a unique index already holds is left out (`on conflict do nothing`): only the rows inserted are returned.
   */
  async createMany<T extends PgTable>(resource: Resource<T>, values: Patch<T>[], options: { skipConflicts?: boolean } = {}): Promise<RowOf<T>[]> {
    if (!values.length) return [];
    const table = resource.table as PgTable;
    const known = options.skipConflicts ? undefined : values.map((v) => rowOf(table, v as Row));
    if (known?.every((row): row is Row => row !== undefined)) {
      // Every row known beforehand: one JSON parameter PostgreSQL unpacks into the table's own row type.
      const columns = Object.entries(getTableColumns(table));
      const json = known.map((row) => Object.fromEntries(columns.map(([key, column]) => [column.name, row[key]])));
      await this.tx.execute(sql`insert into ${table} select * from jsonb_populate_recordset(null::${table}, ${JSON.stringify(json)}::jsonb)`);
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
      .where(eq(resource.id, id)).for('update');
    if (!row) throw notFound(resource.label);
    return row as RowOf<T>;
  }

  /** Audited insert. */
  async create<T extends PgTable>(resource: Resource<T>, values: Patch<T>): Promise<RowOf<T>> {
    const [row] = (await this.tx.insert(resource.table as PgTable).values(values as never).returning()) as Row[];
    await this.audit({ action: 'create', resource, id: String(row.id), after: row });
    return row as RowOf<T>;
  }

  /** Audited partial update of an existing row (404 when missing); the log holds only the changed fields. */
  async update<T extends PgTable>(resource: Resource<T>, id: string, patch: Patch<T> | ((current: RowOf<T>) => Patch<T> | Promise<Patch<T>>)): Promise<RowOf<T>> {
    const current = await this.lock(resource, id);
    const values = typeof patch === 'function' ? await patch(current) : patch;
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
