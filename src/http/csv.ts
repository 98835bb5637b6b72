import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';
import type { View } from '../data/resource.js';

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

type Column = { header: string; get: (row: Record<string, unknown>) => unknown };

/**
 * Column layout of a view: a nested object field becomes one column per key (`assigned_to_id`, `price_range_min`);
 * `json` fields (e.g. activity-log changes) stay one JSON column.
 */
export function columnsOf(view: View, json: string[] = []): Column[] {
  const columns: Column[] = [];
  for (const [name, field] of Object.entries(view.fields)) {
    const nested = field !== null && typeof field === 'object' && !('getSQL' in field) && !('columnType' in field) && !json.includes(name);
    if (nested) {
      for (const key of Object.keys(field)) columns.push({ header: `${name}_${key}`, get: (row) => (row[name] as Record<string, unknown> | null)?.[key] ?? null });
    } else {
      columns.push({ header: name, get: (row) => row[name] });
    }
  }
  return columns;
}

/** Streams rows as a CSV attachment named `<filename>-YYYY-MM-DD.csv` (CONTRACT §10). */
export function sendCsv(reply: FastifyReply, filename: string, columns: Column[], rows: AsyncIterable<Record<string, unknown>>) {
  const records = Readable.from((async function* () {
    for await (const row of rows) yield columns.map((column) => cell(column.get(row)));
  })());
  const csv = stringify({ header: true, columns: columns.map((c) => c.header), bom: false });
  records.on('error', (err) => csv.destroy(err));
  const day = new Date().toISOString().slice(0, 10);
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}-${day}.csv"`)
    .send(records.pipe(csv));
}
