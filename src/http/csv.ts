import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { record } from '../data/export.js';

/**
 * Streams CSV text (chunks of records) as an attachment named `<filename>-YYYY-MM-DD.csv` (CONTRACT §10), after a
 * header record. The first chunk is read before the answer starts, so a query that fails is still answered as a JSON
 * error; a failure later can only cut the stream short (the status is sent by then), and is logged.
 */
export async function sendCsv(reply: FastifyReply, filename: string, headers: string[], chunks: AsyncIterable<string | Buffer>) {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  const body = Readable.from((async function* () {
    yield record(headers);
    for (let chunk = first; !chunk.done; chunk = await iterator.next()) yield chunk.value;
  })(), { objectMode: false });
  body.on('error', (err) => reply.log.error({ err }, 'export failed after it started: the CSV was cut short'));
  const day = new Date().toISOString().slice(0, 10);
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}-${day}.csv"`)
    .send(body);
}
