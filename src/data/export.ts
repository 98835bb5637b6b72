import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { and, Column, is, type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Database, Executor } from '../db/client.js';
import { executePrepared } from '../db/prepared.js';
import { listOrder, listPredicate, type ScopeOption, selectView, sortColumn } from './list.js';
import type { Resource, SelectQuery, View } from './resource.js';
import { type CellKind, csvFromBinaryCopy } from './binary-csv.js';

/** Rows per statement: large enough that a statement's own cost is small beside its rows, small enough to stay flat. */
const BATCH = 2000;
/** Batches read at once (each on its own connection, PostgreSQL server): the database's share of an export on two cores. */
const READ_AHEAD = 2;

type Key = { sort: string; id: string };
/** A range's statement reads at most this many rows (see `rangeBatches`). */
const RANGE_LIMIT = 2 * BATCH;
/** Rows per range read by `COPY` (PostgreSQL), each planned for its own keys: see `copiedRange`. */
const COPY_RANGE = 50_000;
/**
 * Bytes of a `COPY` range read ahead of the one being written (about 1,200 leads): its statement starts while the
 * one before is written, so no range waits for its first rows. More buffered no faster (8 MB: the same rows/s on 1M
 * leads) and grew the process by 50–80 MB instead of about 33.
 */
const COPY_AHEAD_BYTES = 256 * 1024;

/**
 * One column of an export: its header, what is selected for it, and (`only`) the condition under which its value is
 * shown; an empty cell otherwise (a reference to a record outside the caller's scope).
 */
export type ExportColumn = { header: string; value: unknown; only?: SQL };

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

/** Records per chunk yielded (~50 kB): see `exportCsv`. */
const ROWS_PER_CHUNK = 250;
const DANGEROUS = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE = /"/g;

/** One CSV cell: ISO timestamps, true/false, empty for null, arrays joined with ';', injection-safe text. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  const text = Array.isArray(value) ? value.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join(';')
    : typeof value === 'object' ? JSON.stringify(value)
    : String(value);
  const safe = DANGEROUS.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(QUOTE, '""')}"` : safe;
}

/** One CSV record (RFC 4180): cells joined by commas, ended by a line feed. */
export const record = (values: unknown[]) => `${values.map(cell).join(',')}\n`;

/**
 * A column's CSV cell computed by PostgreSQL, exactly as `cell` writes its value (migration 0014's `pms_csv_text` for
 * text); undefined for a value `cell` formats in a way SQL does not reproduce exactly (arrays, JSON, expressions).
 */
function sqlCell(value: unknown, only?: SQL): SQL | undefined {
  if (!is(value, Column)) return undefined;
  if (only) {
    const shown = sqlCell(value);
    return shown && sql`(case when ${only} then ${shown} else '' end)`;
  }
  const column = value as PgColumn;
  switch (cellKind(column)) {
    case 'word': return sql`coalesce(${column}, '')`;
    case 'text': return sql`pms_csv_text(${column})`;
    case 'uuid': return sql`coalesce(${column}::text, '')`;
    case 'timestamp': return sql`coalesce(to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '')`;
    case 'boolean': return sql`(case when ${column} then 'true' when not ${column} then 'false' else '' end)`;
    case 'integer': return sql`coalesce(${column}::text, '')`;
    // A number as JavaScript prints it: float8's shortest form is the same digits for the sizes kept here (below 1e15).
    case 'float': return sql`coalesce(${column}::float8::text, '')`;
    default: return undefined;
  }
}

/** A column's value as a binary `COPY` sends it for `csvFromBinaryCopy`, and how its cell is written. */
function binaryCell(value: unknown, only?: SQL): { select: SQL; kind: CellKind } | undefined {
  if (!is(value, Column)) return undefined;
  const column = value as PgColumn;
  const kind = cellKind(column);
  if (!kind) return undefined;
  const selected = kind === 'float' ? sql`${column}::float8` : sql`${column}`;
  return { kind, select: only ? sql`(case when ${only} then ${selected} end)` : selected };
}

/** How a column's cell is written when SQL sends its value (see ./binary-csv.ts); undefined when `cell` must. */
function cellKind(column: PgColumn): CellKind | undefined {
  const type = column.columnType;
  // A closed set of values that are safe as they are (an enum of plain words): no guard, no quoting.
  const values = (column as { enumValues?: readonly string[] }).enumValues;
  if (values?.length && values.every((v) => v !== '' && !DANGEROUS.test(v) && !NEEDS_QUOTES.test(v))) return 'word';
  if (/^Pg(Text|Varchar|Char)$/.test(type)) return 'text';
  if (type === 'PgUUID') return 'uuid';
  if (/^PgTimestamp/.test(type)) return 'timestamp';
  if (type === 'PgBoolean') return 'boolean';
  if (/^Pg(Integer|SmallInt)$/.test(type)) return 'integer';
  if (type === 'PgNumeric') return 'float';
  return undefined;
}

/**
 * A column as the JavaScript path reads it: timestamps as ISO 8601 UTC text (what the API answers), decimals as
 * numbers; the driver's values need no mapping then.
 */
function exported(value: unknown, alias: string, only?: SQL): SQL.Aliased {
  if (only) return sql`(case when ${only} then ${exported(value, alias).sql} end)`.as(alias);
  if (is(value, Column)) {
    const column = value as PgColumn;
    if (/Timestamp/.test(column.columnType)) return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as(alias);
    if (/Numeric/.test(column.columnType)) return sql`${column}::float8`.as(alias);
    return sql`${column}`.as(alias);
  }
  return sql`${value as SQL}`.as(alias);
}

/**
 * The CSV records of the rows a list request matches (filters, `q`, sort, the caller's record scope; no paging), as text chunks of about
 * 250 records. Rows are read in keyset batches of about 2,000: each batch one short statement bounded by (sort value,
 * id) keys, so neither the process nor the database holds the whole result; the keyset is a row-value comparison,
 * which PostgreSQL bounds by a (sort, id) index, and the sort value travels as text so no precision is lost. When every column's cell
 * can be computed in SQL, PostgreSQL formats each record (one text per row to read, nothing to format here: the
 * export of 1M leads spent most of its time parsing and formatting cells on the service's one thread); on
 * PostgreSQL (`options.copyBinary`) its binary `COPY` sends the values and ./binary-csv.ts writes the records from
 * its bytes (see `copiedRange`).
 * Chunks stay small (~50 kB): a larger string lives in V8's large-object space, freed only by a full collection, and
 * an export of 1M rows with a chunk per batch grew the process by 200 MB.
 */
export async function* exportCsv(db: Executor, resource: Resource, columns: ExportColumn[], query: Record<string, unknown>,
  options: ScopeOption & { copyBinary?: Database['copyBinary'] } = {}): AsyncGenerator<string | Buffer> {
  // `options.scope`: the caller's record scope, in place of the resource's own scope, as lists take it.
  const where = listPredicate(resource, query, options.scope ?? resource.scope)?.sql;
  const order = listOrder(resource, query);
  const column = sortColumn(resource, query);
  const ascending = query.order === 'asc';
  const id = resource.id;
  const cells = columns.map((c) => sqlCell(c.value, c.only));
  const inSql = cells.every((c): c is SQL => c !== undefined);
  const joins = (resource.listView ?? resource.view).joins;
  const fields: Record<string, unknown> = inSql
    ? { __line: sql<string>`concat_ws(',', ${sql.join(cells, sql`, `)})`.as('__line') }
    : Object.fromEntries(columns.map((c, i) => [`c${i}`, exported(c.value, `c${i}`, c.only)]));
  const view: View = { fields: { ...fields, __sort: sql<string | null>`${column}::text`.as('__sort'), __id: sql`${id}`.as('__id') }, joins };
  const select = (fieldsOf: View) => selectView(db, resource.table, fieldsOf);
  // Each key bound also bounds the sort value alone, as it implies: PostgreSQL estimates a row comparison's rows
  // poorly (85,000 for a range of 50,000 of 1M leads), and read such a range by bitmap, sorted it and started parallel
  // workers; with the value's own bounds it reads the range in order from the sort index (PostgreSQL's time for a
  // range of 50,000 leads: 130–175 ms → 90–110).
  const after = (key: Key) => (ascending ? sql`(${column}, ${id}) > (${key.sort}, ${key.id}) and ${column} >= ${key.sort}` : sql`(${column}, ${id}) < (${key.sort}, ${key.id}) and ${column} <= ${key.sort}`);
  const upTo = (key: Key) => (ascending ? sql`(${column}, ${id}) <= (${key.sort}, ${key.id}) and ${column} <= ${key.sort}` : sql`(${column}, ${id}) >= (${key.sort}, ${key.id}) and ${column} >= ${key.sort}`);
  const binary = options.copyBinary && columns.map((c) => binaryCell(c.value, c.only));
  if (column.notNull && options.copyBinary && binary?.every((b) => b !== undefined)) {
    yield* rangeChunks(COPY_RANGE, copiedRange(options.copyBinary, binary as NonNullable<(typeof binary)[number]>[]));
    return;
  }
  if (inSql && column.notNull) {
    yield* rangeChunks(BATCH, aggregatedRange);
    return;
  }
  const line = inSql ? (row: Record<string, unknown>) => `${row.__line as string}\n` : (row: Record<string, unknown>) => record(columns.map((_, i) => row[`c${i}`]));
  for await (const rows of keysetBatches()) {
    for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
      let text = '';
      for (let j = i; j < Math.min(i + ROWS_PER_CHUNK, rows.length); j++) text += line(rows[j]);
      yield text;
    }
  }

  /**
   * Records formatted by PostgreSQL and a sort column that is never null (every export but the activity log's, in
   * its default order): the key range of each batch is found first, by a cheap index-only read of the keys alone (the
   * `size`th key after the last), and each range is then read whole, `(sort, id) > from and (sort, id) <= to`, two at
   * a time on two connections: PostgreSQL formats two batches on two cores while the service writes a third. The
   * ranges partition the keys, so a row written meanwhile is neither skipped nor read twice.
   */
  async function* rangeChunks<Chunk>(size: number, readRange: (from: Key | undefined, to: Key | undefined) => Promise<Chunk[] | (AsyncIterable<Chunk> & Readable)>): AsyncGenerator<Chunk> {
    /**
     * The key the batch starting after `from` ends at; undefined when fewer rows than a batch remain. The keys are
     * written as text outside the subquery that skips: inside, each of the rows skipped had its timestamp written
     * out (37-47 ms a range of 50,000 leads against 8).
     */
    const boundary = async (from: Key | undefined) => {
      const skipped = db.select({ sort: sql`${column}`.as('sort'), id: sql`${id}`.as('id') } as never).from(resource.table as never) as SelectQuery;
      const key = skipped.where(and(where, from && after(from))).orderBy(...order).limit(1).offset(size - 1);
      const [row] = (await executePrepared(db, sql`select k.sort::text as "__sort", k.id::text as "__id" from (${key}) as k`)).rows;
      return row && { sort: String(row.__sort), id: String(row.__id) };
    };
    const reading: ReturnType<typeof readRange>[] = [];
    try {
      let from: Key | undefined;
      let last = false;
      for (;;) {
        while (!last && reading.length < READ_AHEAD) {
          const to = await boundary(from);
          reading.push(readRange(from, to));
          if (to) from = to;
          else last = true;
        }
        const chunks = reading.shift();
        if (!chunks) return;
        yield* await chunks;
      }
    } finally {
      // Abandoned (the client went away): reads asked for ahead are not waited for (a stream is ended), and their
      // failures are nobody's.
      for (const chunks of reading) chunks.then((read) => (Array.isArray(read) ? undefined : read.destroy()), () => undefined);
    }
  }

  /**
   * A range's records from PostgreSQL's binary `COPY`: it sends the stored values as they are, and ./binary-csv.ts
   * writes the records (PostgreSQL formatting timestamps, ids and quoting took it twice as long as sending the bytes,
   * with the service's thread mostly idle). `COPY` takes no parameters, so the statement carries its values as
   * literals, and PostgreSQL plans each range for its own keys. The range being written streams; the one after it is
   * read ahead into a buffer of at most COPY_AHEAD_BYTES, beyond which its `COPY` waits (PostgreSQL blocks on a full
   * socket), so memory stays bounded however wide the rows.
   */
  function copiedRange(copyBinary: NonNullable<Database['copyBinary']>, cells: { select: SQL; kind: CellKind }[]) {
    const copied: View = { fields: Object.fromEntries(cells.map((c, i) => [`c${i}`, sql`${c.select}`.as(`c${i}`)])), joins };
    const kinds = cells.map((c) => c.kind);
    return async (from: Key | undefined, to: Key | undefined) => {
      const ahead = new PassThrough({ highWaterMark: COPY_AHEAD_BYTES });
      const statement = select(copied).where(and(where, from && after(from), to && upTo(to))).orderBy(...order).getSQL();
      // A failure reaches the reader through `ahead`; abandoning `ahead` ends the COPY (its connection is closed).
      pipeline(Readable.from(csvFromBinaryCopy(kinds, copyBinary(statement)), { objectMode: false }), ahead).catch(() => undefined);
      return ahead as AsyncIterable<Buffer> & Readable;
    };
  }

  /**
   * A range's records formatted by PostgreSQL (`pms_csv_text`), joined into chunks as soon as they arrive: rows kept
   * alive while earlier chunks were written were promoted to the old generation and grew the process by 80 MB over
   * 1M rows.
   */
  async function aggregatedRange(from: Key | undefined, to: Key | undefined): Promise<string[]> {
    // A limit, though the range holds about a batch: without one, PostgreSQL's generic plan for the statement expects a
    // ninth of the table, and scans it with parallel workers and a sort (50 ms a batch instead of 5). Rows written into
    // the range since its key was found may pass the limit: the rest of the range is read after the last row read.
    // PostgreSQL also joins the records into chunks: the service receives one string per chunk, not a row object and
    // a string per record, so a batch allocates a third as much and little is alive when the young generation is
    // collected (what survives those collections is what makes V8 grow it).
    const numbered: View = { ...view, fields: { ...view.fields, __n: sql<number>`row_number() over (order by ${sql.join(order, sql`, `)})`.as('__n') } };
    const chunks: string[] = [];
    for (let start = from; ;) {
      const rows = select(numbered).where(and(where, start && after(start), to && upTo(to))).orderBy(...order).limit(RANGE_LIMIT).as('batch');
      const grouped = sql`select string_agg(batch.__line, E'\n' order by batch.__n) || E'\n' as chunk, count(*)::int as records,
        (array_agg(batch.__sort order by batch.__n desc))[1] as last_sort, (array_agg(batch.__id order by batch.__n desc))[1]::text as last_id
        from ${rows} group by (batch.__n - 1) / ${sql.raw(String(ROWS_PER_CHUNK))} order by (batch.__n - 1) / ${sql.raw(String(ROWS_PER_CHUNK))}`;
      const answer = (await executePrepared(db, grouped)).rows;
      let records = 0;
      for (const row of answer) {
        chunks.push(String(row.chunk));
        records += Number(row.records);
      }
      if (records < RANGE_LIMIT) return chunks;
      const tail = answer[answer.length - 1];
      start = { sort: String(tail.last_sort), id: String(tail.last_id) };
    }
  }

  /** A sort column that may be null: each batch continues after the last row of the one before. */
  async function* keysetBatches(): AsyncGenerator<Record<string, unknown>[]> {
    let last: { sort: string | null; id: string } | undefined;
    for (;;) {
      let keyset: SQL | undefined;
      if (last) {
        const after = ascending ? sql`(${column}, ${id}) > (${last.sort}, ${last.id})` : sql`(${column}, ${id}) < (${last.sort}, ${last.id})`;
        // NULLs sort first when descending and last when ascending (PostgreSQL's default), and compare with nothing.
        if (last.sort === null) keyset = ascending ? sql`(${column} is null and ${id} > ${last.id})` : sql`(${column} is not null or ${id} < ${last.id})`;
        else keyset = ascending ? sql`(${after} or ${column} is null)` : sql`(${column} is not null and ${after})`;
      }
      const { rows } = await executePrepared(db, select(view).where(and(where, keyset)).orderBy(...order).limit(BATCH).getSQL());
      if (rows.length) yield rows;
      if (rows.length < BATCH) return;
      const tail = rows[rows.length - 1];
      last = { sort: tail.__sort as string | null, id: String(tail.__id) };
    }
  }
}
