import { describe, expect, test } from 'vitest';
import { type CellKind, csvFromBinaryCopy } from '../src/data/binary-csv.js';
import { record } from '../src/data/export.js';

// PostgreSQL's binary COPY output, written by hand as its documentation describes it, read back as CSV records: each
// record must be byte for byte what `record` (the JavaScript formatter) writes for the values the API answers, however
// the output is cut into reads.

const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
type Value = { kind: CellKind; value: unknown };

/** One field's bytes as PostgreSQL sends them (`value` null: NULL). */
function field({ kind, value }: Value): Buffer | null {
  if (value === null) return null;
  switch (kind) {
    case 'text':
    case 'word': return Buffer.from(value as string, 'utf8');
    case 'uuid': return Buffer.from((value as string).replace(/-/g, ''), 'hex');
    case 'timestamp': {
      const out = Buffer.alloc(8);
      const micros = value === Infinity ? 0x7fffffffffffffffn : value === -Infinity ? -0x8000000000000000n
        : BigInt((value as Date).getTime() - PG_EPOCH_MS) * 1000n + 417n; // finer digits than the service keeps
      out.writeBigInt64BE(micros);
      return out;
    }
    case 'boolean': return Buffer.from([value ? 1 : 0]);
    case 'integer': {
      const [size, n] = value as [2 | 4, number];
      const out = Buffer.alloc(size);
      if (size === 2) out.writeInt16BE(n);
      else out.writeInt32BE(n);
      return out;
    }
    case 'float': {
      const out = Buffer.alloc(8);
      out.writeDoubleBE(value as number);
      return out;
    }
  }
}

function binaryCopy(rows: Value[][], extension = Buffer.alloc(0)): Buffer {
  const parts: Buffer[] = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0]), Buffer.alloc(4), extension];
  parts[2].writeInt32BE(extension.length);
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(row.length);
    parts.push(count);
    for (const value of row) {
      const bytes = field(value);
      const length = Buffer.alloc(4);
      length.writeInt32BE(bytes ? bytes.length : -1);
      parts.push(length, ...(bytes ? [bytes] : []));
    }
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

/** What the API answers for a value, as `record` takes it. */
function answered({ kind, value }: Value): unknown {
  if (value === null) return null;
  if (kind === 'timestamp') return value instanceof Date ? value : null;
  if (kind === 'integer') return (value as [number, number])[1];
  return value;
}

async function* readsOf(bytes: Buffer, cut: number) {
  for (let at = 0; at < bytes.length; at += cut) yield bytes.subarray(at, at + cut);
}

async function csvOf(kinds: CellKind[], bytes: Buffer, cut: number): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of csvFromBinaryCopy(kinds, readsOf(bytes, cut))) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const HAZARDS = ['=1+2', '+63 917', '-5', '@home', '\tTabbed', '\rReturn', 'comma, inside', 'quote " inside', 'line\nbreak', 'crlf\r\nend',
  '=danger, "and" quoted', 'plain', 'ünïcödé ✓', "'already quoted", ' leading space', '', '"', ',', '\n'];
const STAMPS = [new Date('2026-11-27T19:21:57.091Z'), new Date('2026-11-27T19:21:57.091Z'), new Date('2026-11-28T00:00:00.000Z'),
  new Date('2000-01-01T00:00:00.000Z'), new Date('1999-12-31T23:59:59.999Z'), new Date('1970-01-01T00:00:00.001Z'), new Date('2024-02-29T12:00:00.500Z'),
  new Date('0001-01-01T00:00:00.000Z'), new Date('9999-12-31T23:59:59.999Z'), new Date('+010000-01-01T00:00:00.000Z'), new Date('-000044-03-15T00:00:00.000Z')];

const rows: Value[][] = HAZARDS.map((text, i) => [
  { kind: 'uuid', value: `0b9e7bc7-489d-4726-8869-60bf5fac0b${String(i).padStart(2, '0')}` },
  { kind: 'text', value: text },
  { kind: 'text', value: i % 3 ? null : `${text} again` },
  { kind: 'word', value: i % 2 ? 'website' : null },
  { kind: 'timestamp', value: STAMPS[i % STAMPS.length] },
  { kind: 'boolean', value: i % 3 === 0 ? null : i % 3 === 1 },
  { kind: 'integer', value: i % 2 ? [2, -i * 7] : [4, 2_000_000_000 - i] },
  { kind: 'float', value: [1234567.5, 80.25, 0.1 + 0.2, -3, 1e21, 1e-7][i % 6] },
]);
const kinds = rows[0].map((v) => v.kind);

describe('CSV records from binary COPY', () => {
  test('each record is byte for byte what the JavaScript formatter writes, however the output is cut into reads', async () => {
    const bytes = binaryCopy(rows, Buffer.from('ext'));
    const expected = rows.map((row) => record(row.map(answered))).join('');
    for (const cut of [1, 2, 3, 5, 7, 19, 64, 1000, bytes.length]) expect(await csvOf(kinds, bytes, cut), `reads of ${cut} bytes`).toBe(expected);
  });

  test('timestamps are toISOString\'s text in every year; an infinite one is an empty cell', async () => {
    const stamps: Value[][] = [...STAMPS.map((value) => [{ kind: 'timestamp', value } as Value]), [{ kind: 'timestamp', value: Infinity }], [{ kind: 'timestamp', value: -Infinity }]];
    const csv = await csvOf(['timestamp'], binaryCopy(stamps), 13);
    expect(csv.split('\n')).toEqual([...STAMPS.map((date) => date.toISOString()), '', '', '']);
    expect(csv).toContain('0001-01-01T00:00:00.000Z\n9999-12-31T23:59:59.999Z\n+010000-01-01T00:00:00.000Z\n-000044-03-15T00:00:00.000Z\n');
  });

  test('a value wider than the output buffer, quoted and guarded, and many rows: every byte kept', async () => {
    const wide = `=${'"quoted", '.repeat(20_000)}end`;
    const many: Value[][] = Array.from({ length: 5_000 }, (_, i) => [{ kind: 'text', value: i === 2_500 ? wide : `Row ${i}` }, { kind: 'text', value: null }, { kind: 'text', value: null }]);
    const csv = await csvOf(['text', 'text', 'text'], binaryCopy(many), 65_536);
    expect(csv).toBe(many.map((row) => record(row.map(answered))).join(''));
    expect(csv).toContain(`"'=${'""quoted"", '.repeat(20_000)}end"`);
  });

  test('output that is not binary COPY, a row of other columns, or data cut short is an error, not a wrong file', async () => {
    await expect(csvOf(['text'], Buffer.from('id,name\n1,Ana\n' + ' '.repeat(20)), 100)).rejects.toThrow('binary format');
    await expect(csvOf(['text', 'text'], binaryCopy([[{ kind: 'text', value: 'one' }]]), 100)).rejects.toThrow('2 were asked for');
    const whole = binaryCopy([[{ kind: 'text', value: 'one' }], [{ kind: 'text', value: 'two' }]]);
    await expect(csvOf(['text'], whole.subarray(0, whole.length - 5), 100)).rejects.toThrow('before its end');
  });
});

