import { and, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { listOrder, listPredicate, selectView, sortColumn } from './list.js';
import type { Resource } from './resource.js';

const BATCH = 1000;

/**
 * Rows matching a list request, a batch at a time, read in keyset batches — each batch one short statement continuing after the last
 * (sort value, id) — so neither the process nor the database holds the whole result. The keyset is a row-value
 * comparison, which PostgreSQL bounds by a (sort, id) index; the sort value travels as text so no precision is lost.
 */
export async function* exportRows(db: Executor, resource: Resource, query: Record<string, unknown>): AsyncGenerator<Record<string, unknown>[]> {
  const where = listPredicate(resource, query)?.sql;
  const order = listOrder(resource, query);
  const column = sortColumn(resource, query);
  const ascending = query.order === 'asc';
  const id = resource.id;
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
    const rows: Record<string, unknown>[] = await selectView(db, resource.table, resource.listView ?? resource.view, { __sort: sql<string | null>`${column}::text`, __id: id })
      .where(and(where, keyset)).orderBy(...order).limit(BATCH);
    if (rows.length === 0) return;
    const tail = rows[rows.length - 1];
    last = { sort: tail.__sort as string | null, id: String(tail.__id) };
    yield rows;
    if (rows.length < BATCH) return;
  }
}
