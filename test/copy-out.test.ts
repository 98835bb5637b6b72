import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { describe, expect, test } from 'vitest';
import { CopyDataReader, CopyOut } from '../src/db/copy-out.js';
import { serverUrl } from './helpers.js';

// COPY's data read straight from the connection's bytes (src/db/copy-out.ts): the contents of its CopyData messages,
// whatever messages come between them and however the socket cuts them, and pg given back what follows.

/** One protocol message: its code, its length (counting itself) and its content. */
function message(code: string, content: Buffer | string): Buffer {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content);
  const header = Buffer.alloc(5);
  header[0] = code.charCodeAt(0);
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const rows = Array.from({ length: 300 }, (_, i) => Buffer.from(`row ${i} ${'x'.repeat(i % 37)}\n`));
const data = Buffer.concat(rows);
/** What pg reads after the data: the command's completion and the ready signal. */
const after = Buffer.concat([message('C', 'COPY 300\0'), message('Z', 'I')]);
/** The messages of a COPY sending `sent`: the response, then the rows with notices, settings and an empty message between. */
const copyingOf = (sent: Buffer[]) => [
  message('H', Buffer.from([0, 0, 0])),
  ...sent.flatMap((row, i) => [
    message('d', row),
    ...(i % 50 === 7 ? [message('N', 'SNOTICE\0Mhalfway\0\0')] : []),
    ...(i % 90 === 3 ? [message('S', 'TimeZone\0UTC\0')] : []),
    ...(i % 120 === 5 ? [message('d', '')] : []),
  ]),
];
const completed = Buffer.concat([...copyingOf(rows), message('c', ''), after]);
/** The data broken off by an error after 100 rows: pg must read the error from its first byte. */
const error = Buffer.concat([message('E', 'SERROR\0C22012\0Mdivision by zero\0\0'), message('Z', 'I')]);
const failed = Buffer.concat([...copyingOf(rows.slice(0, 100)), error]);

/** `bytes` read `cut` bytes at a time (each read a copy: the reader rewrites what it is given). */
function readInCuts(bytes: Buffer, cut: number) {
  const reader = new CopyDataReader();
  const received: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += cut) {
    const { data: part, end } = reader.read(Buffer.from(bytes.subarray(at, at + cut)));
    if (part) received.push(Buffer.from(part));
    if (end) return { data: Buffer.concat(received), end: { rest: Buffer.concat([end.rest, bytes.subarray(at + cut)]), error: end.error } };
  }
  return { data: Buffer.concat(received), end: undefined };
}

describe('CopyDataReader', () => {
  const cuts = [1, 2, 3, 4, 5, 6, 7, 11, 64, 1000, completed.length];

  test('joins every CopyData content, skips the messages between them, and ends at CopyDone with what follows', () => {
    for (const cut of cuts) {
      const read = readInCuts(completed, cut);
      expect(read.data.equals(data), `reads of ${cut} bytes`).toBe(true);
      expect(read.end, `reads of ${cut} bytes`).toEqual({ rest: after, error: false });
    }
  });

  test('an error ends the data, and pg gets the error message from its first byte', () => {
    for (const cut of cuts) {
      const read = readInCuts(failed, cut);
      expect(read.data.equals(Buffer.concat(rows.slice(0, 100))), `reads of ${cut} bytes`).toBe(true);
      expect(read.end, `reads of ${cut} bytes`).toEqual({ rest: error, error: true });
    }
  });
});

describe.runIf(!!serverUrl)('CopyOut on PostgreSQL', () => {
  const connect = async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    return client;
  };
  const collect = async (stream: AsyncIterable<Buffer>) => {
    const parts: Buffer[] = [];
    for await (const part of stream) parts.push(part);
    return Buffer.concat(parts);
  };
  const copied = (client: pg.Client, text: string) => collect(client.query(new CopyOut(text) as unknown as pg.Submittable) as unknown as AsyncIterable<Buffer>);

  test('sends what pg-copy-streams reads, text and binary, notices between rows included, and pg reads on after it', async () => {
    const client = await connect();
    try {
      await client.query(`create function pg_temp.noisy(i int) returns int language plpgsql as $$
        begin if i % 5000 = 0 then raise notice 'row %', i; end if; return i; end $$`);
      for (const format of ['text', 'binary']) {
        const text = `copy (select pg_temp.noisy(g), repeat('ü', g % 300), timestamptz '2026-11-27 12:00:00+00' + g * interval '1 second' from generate_series(1, 40000) g) to stdout (format ${format})`;
        const ours = await copied(client, text);
        const theirs = await collect(client.query(copyTo(text)));
        expect(ours.length).toBeGreaterThan(400_000);
        expect(ours.equals(theirs), format).toBe(true);
        expect((await client.query('select 41 + 1 as n')).rows).toEqual([{ n: 42 }]);
      }
    } finally {
      await client.end();
    }
  });

  test('an error during the data rejects the read, and the connection answers the next query', async () => {
    const client = await connect();
    try {
      await expect(copied(client, 'copy (select 1 / (g - 30000) from generate_series(1, 40000) g) to stdout')).rejects.toThrow('division by zero');
      expect((await client.query('select 1 as n')).rows).toEqual([{ n: 1 }]);
      await expect(copied(client, 'copy (select * from no_such_table) to stdout')).rejects.toThrow('does not exist');
      expect((await client.query('select 2 as n')).rows).toEqual([{ n: 2 }]);
    } finally {
      await client.end();
    }
  });
});
