import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

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

/** Records per chunk written: small enough to stay short-lived, large enough to keep per-chunk overhead low. */
const ROWS_PER_CHUNK = 100;
const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE = /"/g;

/**
 * One CSV record (RFC 4180): a field with a comma, quote or line break is quoted, its quotes doubled. Written here
 * rather than through csv-stringify: that much is all an export needs, and the library's per-record machinery was
 * most of an export's CPU time (measured: 3.4 of 12 s for 1,000,000 rows).
 */
function record(fields: (string | number)[]): string {
  let line = '';
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    const text = typeof field === 'number' ? String(field) : field;
    line += (i ? ',' : '') + (NEEDS_QUOTES.test(text) ? `"${text.replace(QUOTE, '""')}"` : text);
  }
  return `${line}\n`;
}

/**
 * Streams batches of rows as a CSV attachment named `<filename>-YYYY-MM-DD.csv` (CONTRACT §10), a chunk per batch.
 * The first batch is read before the answer starts, so a query that fails is still answered as a JSON error; a
 * failure later can only cut the stream short (the status is sent by then), and is logged.
 */
export async function sendCsv(reply: FastifyReply, filename: string, headers: string[], batches: AsyncIterable<unknown[][]>) {
  const iterator = batches[Symbol.asyncIterator]();
  const first = await iterator.next();
  const chunks = Readable.from((async function* () {
    yield record(headers);
    for (let batch = first; !batch.done; batch = await iterator.next()) {
      const rows = batch.value;
      for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
        yield rows.slice(i, i + ROWS_PER_CHUNK).map((row) => record(row.map(cell))).join('');
      }
    }
  })(), { objectMode: false });
  chunks.on('error', (err) => reply.log.error({ err }, 'export failed after it started: the CSV was cut short'));
  const day = new Date().toISOString().slice(0, 10);
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}-${day}.csv"`)
    .send(chunks);
}
