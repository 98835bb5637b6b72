import { and, eq, getTableColumns, getTableName, inArray, lt, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { clock } from '../clock.js';
import type { Db, Executor, Tx } from '../db/client.js';
import { type ChangedRow, type ModuleName, trash, type TrashedRow } from '../db/schema/index.js';
import { conflict, notFound } from '../errors.js';
import type { Actor } from './actor.js';
import { keyOf, type Predicate } from './filters.js';
import { audited, type Work } from './mutations.js';
import { declaredResources, type Resource } from './resource.js';

/**
 * The trash: a deleted cms or crm record stays restorable for TRASH_RETENTION_DAYS. The record is really
 * deleted (lists, totals, exports, stats, public pages and unique checks never see it); its trash entry, written in
 * the delete's own transaction and keyed by the delete's activity log, keeps the whole row and everything the deletion
 * removed or changed with it, so a restore puts all of it back with the same ids.
 */

type Row = Record<string, unknown>;

/** A 409 naming the field that stands in the way (in `message` and in `details`). */
const blocked = (field: string, message: string) => conflict(message, { [field]: message });

// ── Which resources ─────────────────────────────────────────────────────────────────────────────────────────

const trashable = new Map<string, Resource>();

/** Deletions of cms and crm records go to the trash; iam's do not (a user is never restored). */
export const keepsTrash = (resource: Resource) => resource.module === 'cms' || resource.module === 'crm';

/** Called for every resource with a DELETE route: its deletions are kept in the trash when `keepsTrash`. */
export function registerTrashable(resource: Resource) {
  if (keepsTrash(resource)) trashable.set(resource.name, resource);
}

/** The resources of a module whose deleted records are in its trash (the trash list's `resource` values). */
export const trashableResources = (module: ModuleName) => [...trashable.values()].filter((resource) => resource.module === module);

/** The resource a table belongs to (the first declared for it), for the audit of rows restored with a record. */
function resourceOfTableName(table: string): Resource | undefined {
  return declaredResources().find((resource) => getTableName(resource.table) === table);
}

// ── What the database knows of a table ──────────────────────────────────────────────────────────────────────

type ForeignKey = { table: string; columns: string[]; refTable: string; refColumns: string[]; onDelete: string };
/** `key`: the primary key's columns (`id` for most tables; `lead_id` for a lead's routing row). */
type Catalog = { columns: Set<string>; key: string[]; outgoing: ForeignKey[]; incoming: ForeignKey[]; unique: string[][] };
const catalogs = new Map<string, Promise<Catalog>>();

const rowsOf = <T>(result: unknown) => ((result as { rows?: T[] }).rows ?? (result as T[]));

/**
 * A table's columns, its foreign keys both ways and its unique keys (plain columns only), read once from the catalog:
 * the rules a recreated row must meet, whatever table it is.
 */
function catalogOf(db: Executor, table: string): Promise<Catalog> {
  let catalog = catalogs.get(table);
  if (!catalog) {
    catalog = (async () => {
      const names = (key: string, rel: string) => sql.raw(`array(select a.attname::text from unnest(c.${key}) with ordinality k(n, o) join pg_attribute a on a.attrelid = c.${rel} and a.attnum = k.n order by k.o)`);
      const keys = rowsOf<{ table: string; columns: string[]; ref_table: string; ref_columns: string[]; on_delete: string }>(await db.execute(sql`
        select c.conrelid::regclass::text as table, ${names('conkey', 'conrelid')} as columns, c.confrelid::regclass::text as ref_table,
          ${names('confkey', 'confrelid')} as ref_columns, c.confdeltype::text as on_delete
        from pg_constraint c where c.contype = 'f' and (c.conrelid = to_regclass(${table}) or c.confrelid = to_regclass(${table}))`));
      const unique = rowsOf<{ columns: string[] }>(await db.execute(sql`
        select array(select a.attname::text from unnest(x.indkey::int2[]) with ordinality k(n, o) join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.n order by k.o) as columns
        from pg_index x where x.indrelid = to_regclass(${table}) and x.indisunique and not x.indisprimary and x.indpred is null and x.indexprs is null`));
      const columns = rowsOf<{ name: string }>(await db.execute(sql`
        select attname::text as name from pg_attribute where attrelid = to_regclass(${table}) and attnum > 0 and not attisdropped`));
      const [primary] = rowsOf<{ columns: string[] }>(await db.execute(sql`
        select array(select a.attname::text from unnest(x.indkey::int2[]) with ordinality k(n, o) join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.n order by k.o) as columns
        from pg_index x where x.indrelid = to_regclass(${table}) and x.indisprimary`));
      const foreign = keys.map((k) => ({ table: k.table.replace(/"/g, ''), columns: k.columns, refTable: k.ref_table.replace(/"/g, ''), refColumns: k.ref_columns, onDelete: k.on_delete }));
      return {
        columns: new Set(columns.map((c) => c.name)),
        key: primary?.columns ?? ['id'],
        outgoing: foreign.filter((k) => k.table === table),
        incoming: foreign.filter((k) => k.refTable === table),
        unique: unique.map((u) => u.columns),
      };
    })();
    catalog.catch(() => catalogs.delete(table));
    catalogs.set(table, catalog);
  }
  return catalog;
}

/** A drizzle row (property names) as the table's columns (SQL names), JSON-ready. */
function byColumn(table: PgTable, row: Row): Row {
  const out: Row = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    if (key in row) out[column.name] = row[key] instanceof Date ? (row[key] as Date).toISOString() : row[key];
  }
  return out;
}

/** What a person calls a record in a list: its name, title, person's name, code, address… */
export function titleOf(row: Row): string | null {
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
  const person = [text(row.first_name), text(row.last_name)].filter(Boolean).join(' ');
  return text(row.name) ?? text(row.title) ?? (person || undefined) ?? text(row.client_name) ?? text(row.inventory_code)
    ?? text(row.subject) ?? text(row.email) ?? text(row.caption) ?? text(row.image_url) ?? null;
}

// ── Deleting into the trash ─────────────────────────────────────────────────────────────────────────────────

/**
 * Deletes through `remove` (the resource's own audited delete, cascades included) and, for a cms or crm record, writes
 * its trash entry in the same transaction: the record's row, the rows deleted with it (audited cascades, and rows a
 * foreign key deletes with it), and the rows changed with it (before → after), each by column name.
 */
export async function deleteIntoTrash(work: Work, resource: Resource, id: string, remove: () => Promise<void>): Promise<void> {
  if (!keepsTrash(resource)) return remove();
  const table = getTableName(resource.table);
  // What the database itself will delete or set to null with the row (ON DELETE CASCADE / SET NULL), as it is now.
  const cascaded: { fk: ForeignKey; row: Row }[] = [];
  for (const fk of (await catalogOf(work.tx, table)).incoming) {
    if ((fk.onDelete !== 'c' && fk.onDelete !== 'n') || fk.columns.length !== 1) continue;
    const rows = rowsOf<{ row: Row }>(await work.tx.execute(sql`select to_jsonb(t) as row from ${sql.identifier(fk.table)} t where ${sql.identifier(fk.columns[0])} = ${id}`));
    for (const { row } of rows) cascaded.push({ fk, row });
  }
  const trail: NonNullable<Work['trail']> = [];
  work.trail = trail;
  try {
    await remove();
  } finally {
    work.trail = undefined;
  }
  const root = trail.find(({ log }) => log.action === 'delete' && log.resource === resource.name && log.resource_id === id);
  if (!root) return;
  const deletedWith: TrashedRow[] = [];
  const changedWith: ChangedRow[] = [];
  const seen = new Set<string>();
  for (const { change, log } of trail) {
    if (log === root.log) continue;
    const changedTable = change.resource.table;
    const name = getTableName(changedTable);
    seen.add(`${name}:${log.resource_id}`);
    if (log.action === 'delete' && change.before) deletedWith.push({ table: name, row: byColumn(changedTable, change.before) });
    if (log.action === 'update') {
      const { before, after } = log.changes as { before: Row; after: Row };
      changedWith.push({ table: name, id: log.resource_id, before: byColumn(changedTable, before), after: byColumn(changedTable, after) });
    }
  }
  for (const { fk, row } of cascaded) {
    if (seen.has(`${fk.table}:${String(row.id)}`)) continue;
    if (fk.onDelete === 'c') deletedWith.push({ table: fk.table, row });
    else changedWith.push({ table: fk.table, id: String(row.id), before: { [fk.columns[0]]: id }, after: { [fk.columns[0]]: null } });
  }
  const record = root.change.before ?? {};
  const owners = resource.ownership?.length ? resource.ownership.map((column) => record[keyOf(column)]).filter((v): v is string => typeof v === 'string') : null;
  await work.tx.insert(trash).values({
    id: root.log.id, module: resource.module as 'cms' | 'crm', resource: resource.name, record_id: id, title: titleOf(record),
    user_id: work.actor.userId, owners, record: byColumn(resource.table, record), deleted_with: deletedWith, changed_with: changedWith,
    deleted_at: root.log.created_at,
  });
}

// ── Restoring ───────────────────────────────────────────────────────────────────────────────────────────────

const labelOf = (table: string) => resourceOfTableName(table)?.label.toLowerCase() ?? table.replace(/_/g, ' ').replace(/s$/, '');
const shown = (value: unknown) => (typeof value === 'string' ? `"${value}"` : JSON.stringify(value));

/**
 * Inserts a row as it was (its id too), after the checks its table's rules would make: the id is free, every row a
 * foreign key names exists (a reference the database sets to null on delete is null when its row is gone), no other
 * row holds its unique values (each a 409 naming the field). Audited as a create
 * when the table is a resource's.
 */
async function recreate(work: Work, table: string, row: Row, what: string): Promise<void> {
  const catalog = await catalogOf(work.tx, table);
  const label = labelOf(table);
  const columns = Object.keys(row).filter((column) => catalog.columns.has(column));
  const itself = sql.join(catalog.key.map((column) => sql`${sql.identifier(column)} = ${String(row[column])}`), sql` and `);
  const [taken] = rowsOf<unknown>(await work.tx.execute(sql`select 1 from ${sql.identifier(table)} where ${itself} limit 1`));
  if (taken) throw blocked(catalog.key.join(', '), `Cannot restore ${what}: a ${label} with the ${catalog.key.join(', ')} ${catalog.key.map((column) => String(row[column])).join(', ')} exists (restored already?)`);
  for (const fk of catalog.outgoing) {
    const values = fk.columns.map((column) => row[column]);
    if (values.some((value) => value === null || value === undefined)) continue;
    const match = sql.join(fk.refColumns.map((column, i) => sql`${sql.identifier(column)} = ${values[i]}`), sql` and `);
    const [found] = rowsOf<unknown>(await work.tx.execute(sql`select 1 from ${sql.identifier(fk.refTable)} where ${match} limit 1`));
    if (!found && fk.onDelete === 'n') {
      // What the database would have done, had the row stayed: the reference set to null.
      for (const column of fk.columns) row[column] = null;
      continue;
    }
    if (!found) {
      const field = fk.columns.join(', ');
      throw blocked(field, `Cannot restore ${what}: its ${field} names a ${labelOf(fk.refTable)} (${values.join(', ')}) that no longer exists`);
    }
  }
  for (const key of catalog.unique) {
    const values = key.map((column) => row[column]);
    if (values.some((value) => value === null || value === undefined)) continue;
    const match = sql.join(key.map((column, i) => sql`${sql.identifier(column)} = ${values[i]}`), sql` and `);
    const [other] = rowsOf<unknown>(await work.tx.execute(sql`select 1 from ${sql.identifier(table)} where ${match} and not (${itself}) limit 1`));
    if (other) {
      const field = key.join(', ');
      throw blocked(field, `Cannot restore ${what}: another ${label} now has the same ${field} (${values.map(shown).join(', ')}); change or delete it first`);
    }
  }
  const list = sql.join(columns.map((column) => sql.identifier(column)), sql`, `);
  await work.tx.execute(sql`insert into ${sql.identifier(table)} (${list}) select ${list} from jsonb_populate_record(null::${sql.identifier(table)}, ${JSON.stringify(row)}::jsonb)`);
  const resource = resourceOfTableName(table);
  if (resource) {
    const [created] = await work.tx.select().from(resource.table).where(eq(resource.id, String(row.id)));
    await work.audit({ action: 'create', resource, id: String(row.id), after: created as Row });
  }
}

/**
 * Sets back what the deletion changed in another row (a unit its reservation held, a reference set to null), if that
 * row still is as the deletion left it; a row changed since is a 409 naming the field of the restored record that
 * refers to it (or the changed field). A row deleted since is left alone.
 */
async function setBack(work: Work, change: ChangedRow, record: Row, what: string): Promise<void> {
  const catalog = await catalogOf(work.tx, change.table);
  const columns = Object.keys(change.before).filter((column) => catalog.columns.has(column));
  if (!columns.length) return;
  const resource = resourceOfTableName(change.table);
  const [current] = rowsOf<{ row: Row }>(await work.tx.execute(sql`select to_jsonb(t) as row from ${sql.identifier(change.table)} t where id = ${change.id} for update`));
  if (!current) return;
  for (const column of columns) {
    const now = current.row[column] ?? null;
    const left = change.after[column] ?? null;
    if (JSON.stringify(now) === JSON.stringify(left) || (typeof now === 'string' && typeof left === 'string' && Date.parse(now) === Date.parse(left) && /^\d{4}-/.test(now))) continue;
    const referring = Object.entries(record).find(([, value]) => value === change.id)?.[0];
    const field = referring ?? column;
    const title = titleOf(current.row) ?? change.id;
    throw blocked(field, `Cannot restore ${what}: the ${labelOf(change.table)} ${title} has changed since the deletion (its ${column} is now ${shown(now)}, not ${shown(left)})`);
  }
  const before = resource ? (await work.tx.select().from(resource.table).where(eq(resource.id, change.id)))[0] : undefined;
  const assignments = sql.join(columns.map((column) => sql`${sql.identifier(column)} = r.${sql.identifier(column)}`), sql`, `);
  const touched = catalog.columns.has('updated_at') ? sql`, updated_at = ${clock.now().toISOString()}::timestamptz` : sql``;
  await work.tx.execute(sql`update ${sql.identifier(change.table)} t set ${assignments}${touched}
    from jsonb_populate_record(null::${sql.identifier(change.table)}, ${JSON.stringify(change.before)}::jsonb) r where t.id = ${change.id}`);
  if (resource && before) {
    const [after] = await work.tx.select().from(resource.table).where(eq(resource.id, change.id));
    await work.audit({ action: 'update', resource, id: change.id, before: before as Row, after: after as Row });
  }
}

export type TrashEntry = typeof trash.$inferSelect;

/** The crm record scope of a caller on the trash: entries of records one of `owners` owns, and of resources nobody owns. */
export function trashOwnedBy(owners: readonly string[]): Predicate {
  const ids = [...new Set(owners.map((id) => id.toLowerCase()))];
  return {
    sql: sql`(${trash.owners} is null or ${trash.owners} && string_to_array(${ids.join(',')}, ',')::uuid[])`,
    test: (row) => {
      const list = row.owners;
      return list == null || (Array.isArray(list) && list.some((id) => typeof id === 'string' && ids.includes(id.toLowerCase())));
    },
    reads: ['owners'],
  };
}

/**
 * Recreates a trashed record with its id, the rows deleted with it, and sets back the rows its deletion changed, in
 * one transaction whose activity logs name the delete's (`restored_from`). 404 for no such entry in this module (never
 * one, purged, or outside the caller's record scope), 409 when restored already or when something stands in the way.
 */
export async function restoreFromTrash(db: Db, actor: Actor, module: ModuleName, logId: string, scope?: Predicate): Promise<{ entry: TrashEntry; resource: Resource; restored: number }> {
  return audited(db, actor, async (work) => {
    work.restoredFrom = logId;
    const [entry] = await (work.tx as Tx).select().from(trash).where(and(eq(trash.id, logId), eq(trash.module, module), scope?.sql)).for('update');
    const resource = entry && trashable.get(entry.resource);
    if (!entry || !resource) throw notFound('Trash entry');
    const what = `the ${resource.label.toLowerCase()}${entry.title ? ` "${entry.title}"` : ''}`;
    if (entry.restored_at) throw blocked('log_id', `${what[0].toUpperCase()}${what.slice(1)} was restored already (${entry.restored_at.toISOString()})`);
    await recreate(work, getTableName(resource.table), entry.record, what);
    for (const row of entry.deleted_with) await recreate(work, row.table, row.row, what);
    for (const change of entry.changed_with) await setBack(work, change, entry.record, what);
    const restoredAt = clock.now();
    await work.tx.update(trash).set({ restored_at: restoredAt, restored_by: actor.userId }).where(eq(trash.id, logId));
    return { entry: { ...entry, restored_at: restoredAt, restored_by: actor.userId }, resource, restored: 1 + entry.deleted_with.length };
  });
}

// ── Purge ───────────────────────────────────────────────────────────────────────────────────────────────────

const BATCH = 1000;

/**
 * Deletes trash entries (restored or not) whose deletion is older than `days`, by the service's clock, a batch at a
 * time (each its own short statement). Returns how many. Their uploads are then unused and go with the unused-uploads
 * cleanup.
 */
export async function purgeTrash(db: Executor, days: number): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - days * 24 * 3600 * 1000);
  let purged = 0;
  for (;;) {
    const batch = await db.delete(trash)
      .where(inArray(trash.id, db.select({ id: trash.id }).from(trash).where(lt(trash.deleted_at, cutoff)).limit(BATCH)))
      .returning({ id: trash.id });
    purged += batch.length;
    if (batch.length < BATCH) break;
  }
  return purged;
}

/** What a purge run on demand answers (`POST /api/cron/trash-purge`, `npm run admin -- purge-trash`). */
export const trashPurgedMessage = (deleted: number, days: number) => `Purged ${deleted} trash ${deleted === 1 ? 'entry' : 'entries'} deleted more than ${days} days ago`;
