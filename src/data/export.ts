import { and, Column, is, type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import { listOrder, listPredicate, selectView, sortColumn } from './list.js';
import type { Resource, SelectQuery, View } from './resource.js';

const BATCH = 1000;

/** One column of an export: its header, and what is selected for it. */
export type ExportColumn = { header: string; value: unknown };

/**
 * The columns of a view, flat: a nested object field becomes one column per key (`assigned_to_id`,
 * `price_range_min`); `json` fields (e.g. activity-log changes) stay one JSON column.
 */
export function exportColumns(view: View, json: string[] = []): ExportColumn[] {
  const columns: ExportColumn[] = [];
  for (const [name, field] of Object.entries(view.fields)) {
    const nested = field !== null && typeof field === 'object' && !('getSQL' in field) && !('columnType' in field) && !json.includes(name);
    if (nested) for (const [key, inner] of Object.entries(field)) columns.push({ header: `${name}_${key}`, value: inner });
    else columns.push({ header: name, value: field });
  }
  return columns;
}

/**
 * A column as the export writes it, computed by PostgreSQL: timestamps as ISO 8601 UTC text (what the API answers),
 * decimals as numbers; the driver's values need no mapping then, which was most of an export's CPU time.
 */
function exported(value: unknown, alias: string): SQL.Aliased {
  if (is(value, Column)) {
    const column = value as PgColumn;
    if (/Timestamp/.test(column.columnType)) return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as(alias);
    if (/Numeric/.test(column.columnType)) return sql`${column}::float8`.as(alias);
    return sql`${column}`.as(alias);
  }
  return sql`${value as SQL}`.as(alias);
}

/**
 * Rows matching a list request (each an array of the export's column values), a batch at a time, read in keyset
 * batches: each batch one short statement continuing after the last (sort value, id), so neither the process nor the
 * database holds the whole result. The keyset is a row-value comparison, which PostgreSQL bounds by a (sort, id)
 * index; the sort value travels as text so no precision is lost.
 */
export async function* exportRows(db: Executor, resource: Resource, columns: ExportColumn[], query: Record<string, unknown>): AsyncGenerator<unknown[][]> {
  const where = listPredicate(resource, query)?.sql;
  const order = listOrder(resource, query);
  const column = sortColumn(resource, query);
  const ascending = query.order === 'asc';
  const id = resource.id;
  const fields = Object.fromEntries(columns.map((c, i) => [`c${i}`, exported(c.value, `c${i}`)]));
  const view: View = { fields: { ...fields, __sort: sql<string | null>`${column}::text`.as('__sort'), __id: sql`${id}`.as('__id') }, joins: (resource.listView ?? resource.view).joins };
  let last: { sort: string | null; id: string } | undefined;
  for (;;) {
    let keyset: SQL | undefined;
    if (last) {
      const after = ascending ? sql`(${column}, ${id}) > (${last.sort}, ${last.id})` : sql`(${column}, ${id}) < (${last.sort}, ${last.id})`;
      // NULLs sort first when descending and last when ascending (PostgreSQL's default), and compare with nothing.
      if (column.notNull) keyset = after;
      else if (last.sort === null) keyset = ascending ? sql`(${column} is null and ${id} > ${last.id})` : sql`(${column} is not null or ${id} < ${last.id})`;
      else keyset = ascending ? sql`(${after} or ${column} is null)` : sql`(${column} is not null and ${after})`;
    }
    const statement: SelectQuery = selectView(db, resource.table, view).where(and(where, keyset)).orderBy(...order).limit(BATCH);
    // Run as plain SQL: the rows come back as the driver gives them, keyed by the aliases.
    const { rows } = (await db.execute(statement.getSQL())) as unknown as { rows: Record<string, unknown>[] };
    if (rows.length === 0) return;
    const tail = rows[rows.length - 1];
    last = { sort: tail.__sort as string | null, id: String(tail.__id) };
    yield rows.map((row) => columns.map((_, i) => row[`c${i}`]));
    if (rows.length < BATCH) return;
  }
}
