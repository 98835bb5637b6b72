import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { and, eq, gt, lt, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { App } from '../app.js';
import type { Executor } from '../db/client.js';
import { listOrder, listQuerySchema, listWhere, type ListSpec, selectView, type View } from './list.js';
import { errorResponses } from './schemas.js';

const BATCH = 1000;
const DANGEROUS = /^[=+\-@\t\r]/;

/** One CSV cell: ISO timestamps, true/false, empty for null, arrays joined with ';', injection-safe text. */
export function cell(value: unknown): string | number {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return value;
  const text = Array.isArray(value) ? value.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join(';')
    : typeof value === 'object' ? JSON.stringify(value)
    : String(value);
  return DANGEROUS.test(text) ? `'${text}` : text;
}

/**
 * Column layout of a view: a nested object field becomes one column per key (`assigned_to_id`,
 * `price_range_min`); `json` fields (e.g. activity-log changes) stay one JSON column.
 */
export function columnsOf(view: View, jsonFields: string[] = []) {
  const columns: { header: string; get: (row: any) => unknown }[] = [];
  for (const [name, field] of Object.entries(view.fields)) {
    const nested = field && typeof field === 'object' && !('getSQL' in field) && !('columnType' in field) && !jsonFields.includes(name);
    if (nested) for (const key of Object.keys(field)) columns.push({ header: `${name}_${key}`, get: (row) => row[name]?.[key] ?? null });
    else columns.push({ header: name, get: (row) => row[name] });
  }
  return columns;
}

/**
 * Rows matching a list request, read in keyset batches — each batch one short statement continuing after
 * the last (sort value, id) — so neither the process nor the database holds the whole result.
 */
export async function* exportRows(db: Executor, spec: ListSpec, view: View, query: Record<string, unknown>) {
  const where = listWhere(spec, query);
  const order = listOrder(spec, query);
  const sortName = (query.sort as string) ?? spec.defaultSort;
  const sortColumn: PgColumn = spec.sortable[sortName] ?? spec.sortable[spec.defaultSort];
  const after = query.order === 'asc' ? gt : lt;
  let last: { sort: unknown; id: unknown } | undefined;
  for (;;) {
    const keyset: SQL | undefined = last
      ? or(after(sortColumn, last.sort), and(eq(sortColumn, last.sort), after(spec.id, last.id)))
      : undefined;
    const rows: any[] = await selectView(db, spec.table, view, { __sort: sortColumn, __id: spec.id })
      .where(and(where, keyset)).orderBy(...order).limit(BATCH);
    for (const row of rows) yield row;
    if (rows.length < BATCH) return;
    last = { sort: rows.at(-1).__sort, id: rows.at(-1).__id };
  }
}

export type ExportOptions = { path: string; spec: ListSpec; view: View; filename: string; jsonFields?: string[] };

/** `GET …/export`: the list's filters, `q` and sort (no paging), streamed as CSV (CONTRACT §10). */
export function exportRoute(app: App, options: ExportOptions) {
  const columns = columnsOf(options.view, options.jsonFields);
  app.get(options.path, {
    schema: {
      summary: `Export ${options.filename} as CSV (list filters, q and sort apply)`,
      querystring: listQuerySchema(options.spec, { paging: false }),
      produces: ['text/csv'],
      response: { 200: { description: 'CSV file with a header row', content: { 'text/csv': { schema: { type: 'string' } } } }, ...errorResponses } as any,
    },
  }, async (request, reply) => {
    const rows = exportRows(app.database.db, options.spec, options.view, request.query as Record<string, unknown>);
    const records = Readable.from((async function* () {
      for await (const row of rows) yield columns.map((column) => cell(column.get(row)));
    })());
    const csv = stringify({ header: true, columns: columns.map((c) => c.header), bom: false });
    records.on('error', (err) => csv.destroy(err));
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${options.filename}-${day}.csv"`)
      .send(records.pipe(csv));
  });
}
