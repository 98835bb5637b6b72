import { Readable } from 'node:stream';

/** Message codes of PostgreSQL's protocol that matter while COPY sends its data (Frontend/Backend Protocol, "COPY Operations"). */
const ERROR_RESPONSE = 0x45; // E
const COPY_DATA = 0x64; // d
/** Messages that may come between CopyData messages; any other ends the data (CopyDone, or whatever comes instead). */
const WITHIN_COPY = new Set([0x48 /* CopyOutResponse */, COPY_DATA, 0x41 /* NotificationResponse */, 0x4e /* NoticeResponse */, 0x53 /* ParameterStatus */]);

/** What a read of the socket held: the data it carried, and, once COPY's data ended, what follows for pg to read. */
export type CopyRead = { data: Buffer | undefined; end?: { rest: Buffer; error: boolean } };

/**
 * The contents of a COPY's CopyData messages, from the bytes its connection receives: each read's messages joined in
 * place (each content moved over the header before it), so a read becomes one buffer of data without a buffer per
 * message. A message or a header may span reads.
 */
export class CopyDataReader {
  private header = Buffer.alloc(5);
  private headerBytes = 0;
  private code = 0;
  /** Content bytes of the current message still to come; -1 between messages. */
  private remaining = -1;

  /** Reads `chunk` (which it rewrites: the caller gives it up). */
  read(chunk: Buffer): CopyRead {
    const n = chunk.length;
    let w = 0;
    let p = 0;
    const result = (end?: CopyRead['end']): CopyRead => ({ data: w > 0 ? chunk.subarray(0, w) : undefined, end });
    while (p < n) {
      if (this.remaining >= 0) {
        const take = Math.min(this.remaining, n - p);
        if (this.code === COPY_DATA) {
          if (w !== p) chunk.copyWithin(w, p, p + take);
          w += take;
        }
        p += take;
        this.remaining -= take;
        if (this.remaining > 0) break;
        this.remaining = -1;
        if (!WITHIN_COPY.has(this.code)) return result({ rest: chunk.subarray(p), error: false });
        continue;
      }
      // A header: its code and its length (which counts itself), whole in this read or completed from the next.
      let code: number;
      let length: number;
      if (this.headerBytes === 0 && n - p >= 5) {
        code = chunk[p];
        length = chunk.readUInt32BE(p + 1);
        // An error is pg's to read, from its first byte.
        if (code === ERROR_RESPONSE) return result({ rest: chunk.subarray(p), error: true });
        p += 5;
      } else {
        const take = Math.min(5 - this.headerBytes, n - p);
        chunk.copy(this.header, this.headerBytes, p, p + take);
        this.headerBytes += take;
        p += take;
        if (this.headerBytes < 5) break;
        this.headerBytes = 0;
        code = this.header[0];
        length = this.header.readUInt32BE(1);
        if (code === ERROR_RESPONSE) return result({ rest: Buffer.concat([this.header, chunk.subarray(p)]), error: true });
      }
      this.code = code;
      this.remaining = length - 4;
    }
    // A message without content (CopyDone) whose header ended this read ends the data here.
    if (this.remaining === 0 && !WITHIN_COPY.has(this.code)) {
      this.remaining = -1;
      return result({ rest: chunk.subarray(p), error: false });
    }
    return result();
  }
}

/** What pg's connection offers a query that reads its socket itself (as pg-copy-streams does). */
type Connection = { stream: NodeJS.ReadableStream; query(text: string): void };

/**
 * `COPY (…) TO STDOUT` submitted to a pg client, read as its data (`CopyDataReader`). It reads the connection's socket
 * itself while COPY sends data, then hands the socket back to pg with what follows (the command's completion, or the
 * error that ended it). The connection handling follows pg-copy-streams' `to`, which takes a buffer per CopyData
 * message and joins them again per read: for a binary COPY (a message per row) that was 15 % of an export's CPU.
 */
export class CopyOut extends Readable {
  private connection?: Connection;
  private pgReader?: (chunk: Buffer) => void;
  private reader = new CopyDataReader();
  private wanted = false;
  private forwarding = false;
  private readonly onReadable = () => this.forward();

  constructor(private readonly text: string) {
    super();
  }

  /** Called by pg when the query's turn comes. */
  submit(connection: Connection) {
    this.connection = connection;
    const stream = connection.stream;
    const readers = stream.listeners('data') as ((chunk: Buffer) => void)[];
    if (readers.length !== 1) throw new Error('COPY needs the connection read by pg alone');
    this.pgReader = readers[0];
    stream.removeListener('data', this.pgReader);
    stream.pause();
    stream.on('readable', this.onReadable);
    connection.query(this.text);
  }

  override _read() {
    this.wanted = true;
    this.forward();
  }

  private forward() {
    if (this.forwarding || !this.wanted || !this.connection) return;
    this.forwarding = true;
    let chunk: Buffer | null;
    while (this.wanted && this.connection && (chunk = this.connection.stream.read() as Buffer | null) !== null) {
      const { data, end } = this.reader.read(chunk);
      if (data) this.wanted = this.push(data);
      if (end) this.handBack(end.rest, end.error);
    }
    this.forwarding = false;
  }

  /** The socket back to pg, with the bytes after the data; the data ends here unless an error follows (pg reports it). */
  private handBack(rest: Buffer, error: boolean) {
    const stream = this.connection!.stream;
    this.connection = undefined;
    stream.removeListener('readable', this.onReadable);
    stream.on('data', this.pgReader!);
    if (rest.length) this.pgReader!(rest);
    // Whatever the socket buffered meanwhile reaches pg once it flows again.
    process.nextTick(() => stream.resume());
    if (!error) this.push(null);
  }

  // pg calls these as it reads what follows the data.
  handleError(err: Error) {
    this.destroy(err);
  }

  handleCommandComplete() {}

  handleReadyForQuery() {}
}
