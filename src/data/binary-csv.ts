/**
 * CSV records written from PostgreSQL's binary `COPY` output, byte for byte as `cell` (./export.ts) writes the values
 * the API answers: PostgreSQL only sends the stored bytes (no text formatting of timestamps and ids, no guard, no
 * quoting), which took it half as long as writing the same records as CSV itself; the records are written here with
 * byte loops, without a string per value.
 *
 * The binary format (PostgreSQL's documentation, "COPY", Binary Format): a header (11-byte signature, 32-bit flags,
 * 32-bit extension length and the extension), then per row a 16-bit field count and per field a 32-bit length (-1:
 * NULL) and its bytes, all big-endian; a count of -1 ends the data.
 */

/**
 * How a column's binary value becomes its cell: `text` guarded against formulas and quoted when needed, `word` a
 * value known to need neither (an enum of plain words), `uuid` 16 bytes, `timestamp` microseconds since 2000 (UTC),
 * `boolean` one byte, `integer` 2 or 4 bytes, `float` 8 bytes (a decimal is sent as float8: JavaScript's number).
 */
export type CellKind = 'text' | 'word' | 'uuid' | 'timestamp' | 'boolean' | 'integer' | 'float';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER_BYTES = SIGNATURE.length + 8;
/** Bytes of output buffer asked for at least: a socket write of about the size PostgreSQL's reads arrive in. */
const OUTPUT_BYTES = 64 * 1024;
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const COMMA = 44;
const QUOTE = 34;
const APOSTROPHE = 39;
const LINE_FEED = 10;

const lookup = (codes: number[]) => {
  const table = new Uint8Array(256);
  for (const code of codes) table[code] = 1;
  return table;
};
/** `"`, `,`, CR, LF: the cell is quoted (RFC 4180). */
const NEEDS_QUOTES = lookup([QUOTE, COMMA, 13, LINE_FEED]);
/** `=`, `+`, `-`, `@`, tab, CR first: the text is written after an apostrophe (a spreadsheet would run it). */
const DANGEROUS_FIRST = lookup([61, 43, 45, 64, 9, 13]);
/** The two lower-case hexadecimal digits of each byte. */
const HEX_PAIRS = Buffer.from(Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(2, '0')).join(''), 'latin1');
/** Two ASCII digits of each number 0–99. */
const DIGITS = Buffer.from(Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).join(''), 'latin1');

/** Reads 32-bit big-endian signed integers without a bounds check per byte (the caller checked). */
const int32 = (b: Buffer, at: number) => (b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3];

const KINDS: CellKind[] = ['text', 'word', 'uuid', 'timestamp', 'boolean', 'integer', 'float'];
const [TEXT, WORD, UUID, TIMESTAMP] = [0, 1, 2, 3];

/** The most bytes a value of `length` bytes can take as a cell (a text: every byte a doubled quote, two quotes, the guard). */
const widest = (kind: number, length: number) => (kind === TEXT ? 2 * length + 3 : kind === WORD ? length : kind === UUID ? 36 : 32);

/**
 * The CSV records (each ended by a line feed) of one binary `COPY`'s output, in chunks of about 32–64 kB. `kinds`:
 * each column's, in the statement's order.
 */
export async function* csvFromBinaryCopy(kinds: CellKind[], input: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const reader = new BinaryCopyReader(kinds);
  for await (const chunk of input) yield* reader.read(chunk);
  yield* reader.end();
}

/** `csvFromBinaryCopy` one read at a time: each read answers the records written so far, when they fill a chunk. */
export class BinaryCopyReader {
  private writer: RecordWriter;
  private rest: Buffer | undefined;
  private headerRead = false;

  constructor(kinds: CellKind[]) {
    this.writer = new RecordWriter(Uint8Array.from(kinds, (kind) => KINDS.indexOf(kind)));
  }

  read(chunk: Buffer): Buffer[] {
    const chunks: Buffer[] = [];
    if (this.writer.ended) return chunks;
    let data = chunk;
    if (this.rest?.length && this.headerRead) {
      // The row begun in the last read, completed with the bytes of this one it takes: copying every read behind the
      // rest of the last one copied the whole export once more.
      const taken = bytesCompleting(this.rest, chunk);
      if (taken < 0) {
        this.rest = Buffer.concat([this.rest, chunk]);
        return chunks;
      }
      this.write(Buffer.concat([this.rest, chunk.subarray(0, taken)]), 0, chunks);
      this.rest = undefined;
      if (this.writer.ended) return chunks;
      data = chunk.subarray(taken);
    } else if (this.rest?.length) {
      data = Buffer.concat([this.rest, chunk]);
    }
    let p = 0;
    if (!this.headerRead) {
      if (data.length >= SIGNATURE.length && !data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('COPY did not answer in its binary format');
      if (data.length < HEADER_BYTES || data.length < HEADER_BYTES + int32(data, SIGNATURE.length + 4)) {
        this.rest = data;
        return chunks;
      }
      p = HEADER_BYTES + int32(data, SIGNATURE.length + 4);
      this.headerRead = true;
    }
    p = this.write(data, p, chunks);
    this.rest = p < data.length ? data.subarray(p) : undefined;
    if (this.writer.written >= OUTPUT_BYTES / 2) chunks.push(this.writer.take(0));
    return chunks;
  }

  /** Writes the whole rows of `data` from `p` on (full buffers into `chunks`); answers where the rest begins. */
  private write(data: Buffer, p: number, chunks: Buffer[]): number {
    const writer = this.writer;
    for (;;) {
      p = writer.rows(data, p);
      if (p >= 0) return p;
      // Out of room for the next row: what is written goes, and the row is written into a new buffer.
      p = -p - 1;
      chunks.push(writer.take(writer.widestRow(data, p)));
    }
  }

  /** The last records; an error when the output ended before its end of data. */
  end(): Buffer[] {
    if (!this.writer.ended) throw new Error('COPY ended before its end of data');
    return this.writer.written ? [this.writer.take(0)] : [];
  }
}

/**
 * How many bytes of `next` complete the row (or the end of data) that `rest` begins; -1 when `next` does not hold
 * all of it.
 */
function bytesCompleting(rest: Buffer, next: Buffer): number {
  const total = rest.length + next.length;
  const byte = (at: number) => (at < rest.length ? rest[at] : next[at - rest.length]);
  const signed = (at: number, bytes: number) => {
    let n = 0;
    for (let i = 0; i < bytes; i++) n = n * 256 + byte(at + i);
    return n >= 2 ** (8 * bytes - 1) ? n - 2 ** (8 * bytes) : n;
  };
  if (total < 2) return -1;
  const fields = signed(0, 2);
  let at = 2;
  for (let f = 0; f < fields; f++) {
    if (at + 4 > total) return -1;
    const length = signed(at, 4);
    at += 4 + Math.max(length, 0);
    if (at > total) return -1;
  }
  return at - rest.length;
}

/** Records written into a buffer of at least 64 kB, taken out as it fills. */
class RecordWriter {
  ended = false;
  private out = Buffer.allocUnsafe(OUTPUT_BYTES);
  private o = 0;
  /** One per column: each keeps its own day (a lead's creation and last change are often days apart). */
  private timestamps: TimestampWriter[];

  constructor(private codes: Uint8Array) {
    this.timestamps = Array.from(codes, () => new TimestampWriter());
  }

  get written() {
    return this.o;
  }

  /** What was written; the next records go into a new buffer with room for at least `room` bytes. */
  take(room: number): Buffer {
    const written = this.out.subarray(0, this.o);
    this.out = Buffer.allocUnsafe(Math.max(OUTPUT_BYTES, room));
    this.o = 0;
    return written;
  }

  /** The most bytes the row at `p` (whole in `data`) can take as a record. */
  widestRow(data: Buffer, p: number): number {
    let bytes = 2 * this.codes.length + 2;
    p += 2;
    for (let f = 0; f < this.codes.length; f++) {
      const length = int32(data, p);
      p += 4;
      if (length > 0) {
        bytes += widest(this.codes[f], length);
        p += length;
      }
    }
    return bytes;
  }

  /**
   * Writes the records of the rows in `data` from `p` on, up to the first that does not end in it (written again
   * from its start with the next read) or the end of data; answers where that row starts. A row that does not fit
   * in what is left of the buffer is not written: the answer is then -1 - its start.
   */
  rows(data: Buffer, p: number): number {
    const codes = this.codes;
    const fields = codes.length;
    const end = data.length;
    const timestamps = this.timestamps;
    const out = this.out;
    let o = this.o;
    let ended = false;
    let full = false;
    // Every way out goes through the stores after the loop: V8 compiles this method while the first export runs, and a
    // store it has not yet seen made it throw the compiled code away when first reached (the end, a full buffer).
    rows: for (;;) {
      if (p + 2 > end) break;
      const count = ((data[p] << 24) | (data[p + 1] << 16)) >> 16;
      if (count === -1) {
        ended = true;
        p += 2;
        break;
      }
      if (count !== fields) throw new Error(`COPY sent ${count} fields, ${fields} were asked for`);
      if (o + fields + 1 > out.length) {
        full = true;
        break;
      }
      const start = o;
      let q = p + 2;
      for (let f = 0; f < fields; f++) {
        if (q + 4 > end) {
          o = start;
          break rows;
        }
        const length = int32(data, q);
        q += 4;
        if (f) out[o++] = COMMA;
        if (length < 0) continue;
        const stop = q + length;
        if (stop > end) {
          o = start;
          break rows;
        }
        const kind = codes[f];
        // The commas of the cells after it and the line feed are counted in.
        if (o + widest(kind, length) + fields + 1 > out.length) {
          o = start;
          full = true;
          break rows;
        }
        if (kind === TEXT) {
          if (length === 0) continue;
          // Written as it is while no byte needs quotes (most text); written again, quoted, when one does.
          const from = o;
          if (DANGEROUS_FIRST[data[q]]) out[o++] = APOSTROPHE;
          for (let i = q; i < stop; i++) {
            const byte = data[i];
            if (NEEDS_QUOTES[byte]) {
              o = quoted(data, q, stop, out, from);
              break;
            }
            out[o++] = byte;
          }
        } else if (kind === WORD) {
          for (let i = q; i < stop; i++) out[o++] = data[i];
        } else if (kind === UUID) {
          // 8-4-4-4-12 hexadecimal digits
          for (let i = 0; i < 16; i++) {
            if (i === 4 || i === 6 || i === 8 || i === 10) out[o++] = 45;
            const at = data[q + i] << 1;
            out[o] = HEX_PAIRS[at];
            out[o + 1] = HEX_PAIRS[at + 1];
            o += 2;
          }
        } else if (kind === TIMESTAMP) {
          const ms = Math.floor((int32(data, q) * 4_294_967_296 + (int32(data, q + 4) >>> 0)) / 1000) + PG_EPOCH_MS;
          o = timestamps[f].write(ms, out, o);
        } else {
          o += out.write(textOf(KINDS[kind], data, q, length), o, 'latin1');
        }
        q = stop;
      }
      out[o++] = LINE_FEED;
      p = q;
    }
    this.o = o;
    this.ended ||= ended;
    return full ? -1 - p : p;
  }
}

/** A text that needs quotes, written from `o`: the guard inside the quotes, quotes doubled. */
function quoted(data: Buffer, p: number, end: number, out: Buffer, o: number): number {
  out[o++] = QUOTE;
  if (DANGEROUS_FIRST[data[p]]) out[o++] = APOSTROPHE;
  for (let i = p; i < end; i++) {
    const byte = data[i];
    if (byte === QUOTE) out[o++] = QUOTE;
    out[o++] = byte;
  }
  out[o++] = QUOTE;
  return o;
}

/** The cell of a value that is not text: a boolean, an integer (2 or 4 bytes), a float8. */
function textOf(kind: CellKind, data: Buffer, p: number, length: number): string {
  if (kind === 'boolean') return data[p] ? 'true' : 'false';
  if (kind === 'integer') return String(length === 2 ? data.readInt16BE(p) : data.readInt32BE(p));
  return String(data.readDoubleBE(p));
}

/**
 * Writes a timestamp as `Date.prototype.toISOString` does (what the API answers), `YYYY-MM-DDTHH:MM:SS.mmmZ`: the
 * date and the time to the minute from the minute's number (the date by Howard Hinnant's civil calendar), kept while
 * the minute is the same (an export runs in date order, and rows written close together share their minute), then
 * seconds and milliseconds in small-integer arithmetic; for the years 1–9999 the service reads all day, other years
 * through `Date`. The service keeps
 * milliseconds; finer digits are dropped, as reading them into a `Date` does. An infinite timestamp, which the API
 * answers as null, is an empty cell.
 */
class TimestampWriter {
  private minute = Number.NaN;
  /** `YYYY-MM-DDTHH:MM:` of `minute` */
  private prefix = Buffer.alloc(17);

  write(ms: number, out: Buffer, o: number): number {
    // -62135596800000: 0001-01-01; 253402300800000: 10000-01-01.
    if (!(ms >= -62_135_596_800_000 && ms < 253_402_300_800_000)) {
      const date = new Date(ms);
      return Number.isNaN(date.getTime()) ? o : o + out.write(date.toISOString(), o, 'latin1');
    }
    const minute = Math.floor(ms / 60_000);
    if (minute !== this.minute) this.setMinute(minute);
    const prefix = this.prefix;
    for (let i = 0; i < 17; i++) out[o + i] = prefix[i];
    o += 17;
    // Within the minute: an integer of at most 59,999 (small-integer arithmetic from here on).
    const rest = (ms - minute * 60_000) | 0;
    const seconds = (rest / 1000) | 0;
    const millis = rest - seconds * 1000;
    const hundreds = (millis / 100) | 0;
    const belowHundred = millis - hundreds * 100;
    out[o] = DIGITS[2 * seconds];
    out[o + 1] = DIGITS[2 * seconds + 1];
    out[o + 2] = 46; // .
    out[o + 3] = 48 + hundreds;
    out[o + 4] = DIGITS[2 * belowHundred];
    out[o + 5] = DIGITS[2 * belowHundred + 1];
    out[o + 6] = 90; // Z
    return o + 7;
  }

  private setMinute(minute: number) {
    const day = Math.floor(minute / 1440);
    const ofDay = minute - day * 1440;
    const shifted = day + 719_468;
    const era = Math.floor(shifted / 146_097);
    const dayOfEra = shifted - era * 146_097;
    const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
    const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
    const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
    const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
    const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
    const prefix = this.prefix;
    two(prefix, 0, Math.floor(year / 100));
    two(prefix, 2, year % 100);
    prefix[4] = 45;
    two(prefix, 5, month);
    prefix[7] = 45;
    two(prefix, 8, dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1);
    prefix[10] = 84; // T
    two(prefix, 11, Math.floor(ofDay / 60));
    prefix[13] = 58;
    two(prefix, 14, ofDay % 60);
    prefix[16] = 58;
    this.minute = minute;
  }
}

function two(out: Buffer, o: number, n: number) {
  out[o] = DIGITS[2 * n];
  out[o + 1] = DIGITS[2 * n + 1];
  return o + 2;
}

/**
 * Binary `COPY` output of `rows` rows through every path of the record writer: every column kind, NULLs, empty text,
 * text to guard and to quote, timestamps within and outside the years written by hand, infinity, and last a value
 * wider than the output buffer.
 */
function sampleCopy(rows: number): Buffer {
  const parts: Buffer[] = [SIGNATURE, Buffer.alloc(8)];
  const int32Of = (n: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(n);
    return bytes;
  };
  const texts = ['Ana', '', '=1+2', 'comma, "quoted"', 'line\nbreak', 'ünïcödé', 'x'.repeat(OUTPUT_BYTES)];
  for (let r = 0; r < rows; r++) {
    const stamp = Buffer.alloc(8);
    stamp.writeBigInt64BE(r % 3 === 0 ? 0x7fffffffffffffffn : r % 5 === 0 ? -63_000_000_000_000_000n : BigInt(r) * 86_400_000_417n);
    const values: (Buffer | null)[] = [
      Buffer.from('0123456789abcdef0123456789abcdef', 'hex'), Buffer.from(texts[r === rows - 1 ? 6 : r % 6], 'utf8'), r % 4 ? Buffer.from('new') : null,
      stamp, Buffer.from([r & 1]), r % 2 ? Buffer.from([0, 7]) : int32Of(-r), Buffer.from(Float64Array.of(r / 3).buffer).reverse(),
    ];
    parts.push(Buffer.from([0, values.length]));
    for (const value of values) parts.push(int32Of(value ? value.length : -1), ...(value ? [value] : []));
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

/**
 * Runs the record writer over a sample of every path, in reads of several sizes, so that V8 has seen every branch
 * before the first export: compiled while an export ran, the writer was thrown back to the interpreter and compiled
 * again each time the export first reached a branch (an operation) it had not seen, a few times per start.
 */
export function primeRecordWriter() {
  const sample = sampleCopy(60);
  const kinds: CellKind[] = ['uuid', 'text', 'word', 'timestamp', 'boolean', 'integer', 'float'];
  for (const cut of [301, 4096, sample.length]) {
    const reader = new BinaryCopyReader(kinds);
    for (let at = 0; at < sample.length; at += cut) reader.read(sample.subarray(at, at + cut));
    reader.end();
  }
}
