import type { TSchema } from '@sinclair/typebox';
import { eq, sql } from 'drizzle-orm';
import { clock } from '../../clock.js';
import type { Actor } from '../../data/actor.js';
import { type CsvRecord, csvRecords, CsvSyntaxError } from '../../data/csv-records.js';
import { audited } from '../../data/mutations.js';
import type { Executor, Tx } from '../../db/client.js';
import { type ImportError, imports } from '../../db/schema/index.js';
import { ApiError, validationError } from '../../errors.js';
import { detailsFromAjv } from '../../http/errors.js';
import { compileBodyValidator } from '../../http/validation.js';
import { defineJob, type Services } from '../../jobs/registry.js';
import { type Body, IMPORT_KINDS, type ImportKind, type ImportResource, type Row } from './import-kinds.js';

/** Rows per transaction: each batch's rows, their activity logs and the import's progress commit together. */
export const IMPORT_BATCH = 500;
/** An import's result lists at most this many bad rows (then `errors_truncated`). */
export const MAX_ERRORS = 1000;
/** A job works this long, then hands over to a fresh job (well inside its expiration and the shutdown grace). */
const JOB_BUDGET_MS = 5_000;

/** How a file's columns map onto the create body: per column, the body field it fills, or null (ignored). */
export type Columns = { fields: (string | null)[]; columnOf: Map<string, string> };

const validators = new WeakMap<TSchema, ReturnType<typeof compileBodyValidator>>();
const validatorOf = (schema: TSchema) => {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = compileBodyValidator(schema)));
  return validate;
};

/** A file-level problem: 400 `details.file`. */
const fileError = (message: string) => validationError({ file: message });

/**
 * Reads the header row against the kind: a column is a body field (a reference by its `_id` column, as exported:
 * `assigned_to_id` fills `assigned_to`), another column of the export (ignored: `id`, `created_at`, joined names…),
 * or unknown (400 naming it). A required field without its column is a 400 too.
 */
export function columnsOf(kind: ImportKind, header: string[]): Columns {
  const properties = kind.schema.properties as Record<string, TSchema>;
  const fields: (string | null)[] = [];
  const columnOf = new Map<string, string>();
  const unknown: string[] = [];
  const seen = new Set<string>();
  header.forEach((raw, index) => {
    const name = raw.trim().toLowerCase();
    if (!name) return unknown.push(`column ${index + 1} has no name`);
    if (seen.has(name)) throw fileError(`the column "${name}" appears twice in the header row`);
    seen.add(name);
    const field = name in properties ? name : name.endsWith('_id') && name.slice(0, -3) in properties ? name.slice(0, -3) : undefined;
    if (field !== undefined) {
      if (columnOf.has(field)) throw fileError(`the columns "${columnOf.get(field)}" and "${name}" both fill "${field}": keep one`);
      columnOf.set(field, name);
      fields.push(field);
    } else if (kind.exported.includes(name)) fields.push(null);
    else {
      unknown.push(`unknown column "${name}"`);
      fields.push(null);
    }
  });
  if (unknown.length) {
    throw fileError(`${unknown.join(', ')}: ${kind.plural} take the columns of their export (${accepted(kind).join(', ')})`);
  }
  const missing = ((kind.schema.required ?? []) as string[]).filter((field) => !columnOf.has(field));
  if (missing.length) throw fileError(`the required column${missing.length > 1 ? 's' : ''} ${missing.map((f) => `"${columnName(kind, f)}"`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing`);
  const problem = kind.header?.(new Set(columnOf.keys()));
  if (problem) throw fileError(`the header row ${problem}`);
  return { fields, columnOf };
}

/** A body field's column as the export names it (`assigned_to` → `assigned_to_id`). */
function columnName(kind: ImportKind, field: string) {
  return kind.exported.includes(field) ? field : kind.exported.includes(`${field}_id`) ? `${field}_id` : field;
}

/** Every column a kind's file may have: its body fields (as exported) and the rest of its export. */
export function accepted(kind: ImportKind): string[] {
  const fields = Object.keys(kind.schema.properties).map((field) => columnName(kind, field));
  return [...new Set([...kind.exported, ...fields])];
}

/** The JSON type a body field takes (a nullable field's non-null one). */
function typeOf(schema: TSchema | undefined): string | undefined {
  if (!schema) return undefined;
  if (typeof schema.type === 'string') return schema.type;
  const branches = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  return branches?.map(typeOf).find((type) => type && type !== 'null');
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** The export's guard against formula injection (`'=…`, `'+63…`): undone, so an exported file re-imports as it was. */
const GUARDED = /^'[=+\-@\t\r]/;

/** A cell as the body's value: empty → absent; numbers and booleans as JSON would carry them, else the text. */
function valueOf(cell: string, type: string | undefined): unknown {
  const text = (GUARDED.test(cell) ? cell.slice(1) : cell).trim();
  if (text === '') return undefined;
  if ((type === 'number' || type === 'integer') && NUMBER.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/**
 * The rows of some records, each validated as its create route validates a body: the same schema (through the
 * API's own validator settings and messages), the resource's own checks, then its references, a batch at a time.
 */
export async function prepareRows(kind: ImportKind, db: Executor, columns: Columns, records: CsvRecord[]): Promise<Row[]> {
  const validate = validatorOf(kind.schema);
  const properties = kind.schema.properties as Record<string, TSchema>;
  const rows = records.map(({ line, cells }): Row => {
    if (cells.length !== columns.fields.length) {
      return { line, body: {}, details: { '': `has ${cells.length} cell${cells.length === 1 ? '' : 's'} where the header row has ${columns.fields.length}` } };
    }
    const body: Body = {};
    cells.forEach((cell, i) => {
      const field = columns.fields[i];
      if (field === null) return;
      const value = valueOf(cell, typeOf(properties[field]));
      if (value !== undefined) body[field] = value;
    });
    if (!validate(body)) return { line, body, details: detailsFromAjv(validate.errors as never, 'body') };
    try {
      kind.check?.(body);
    } catch (err) {
      if (err instanceof ApiError && err.body.details) return { line, body, details: err.body.details };
      throw err;
    }
    return { line, body: kind.normalize ? kind.normalize(body) : body, details: {} };
  });
  await kind.references?.(db, rows.filter(valid));
  return rows;
}

const valid = (row: Row) => Object.keys(row.details).length === 0;

/** A row's problems as the result lists them: its line, the column (as the file names it) and the message. */
function errorsOf(row: Row, columns: Columns): ImportError[] {
  return Object.entries(row.details).map(([key, message]) => {
    const field = key.split('.')[0];
    return { line: row.line, field: key === '' || key === 'body' ? null : (columns.columnOf.get(field) ?? field), message };
  });
}

/**
 * Sorts valid rows into those to create and duplicates: a row whose natural key is in the database, or was in an
 * earlier row of the file (`seen`, kept across batches), is a duplicate. Whatever the importing user's record scope
 *: a key known among records they cannot see is a duplicate too, so an import never gives a colleague's
 * client a second lead. The report says only how many rows are duplicates — never which record, its owner or fields.
 */
export async function classify(kind: ImportKind, db: Executor, rows: Row[], seen: Set<string>) {
  const candidates = rows.filter(valid);
  const existing = await kind.existing(db, candidates);
  const fresh: Row[] = [];
  let duplicates = 0;
  for (const row of candidates) {
    const keys = kind.keys(row);
    if (keys.some((key) => seen.has(key) || existing.has(key))) duplicates++;
    else fresh.push(row);
    for (const key of keys) seen.add(key);
  }
  return { fresh, duplicates };
}

/** A file's header and columns, and where its data rows start; 400 when the header does not fit the kind. */
export function openFile(kind: ImportKind, content: string) {
  const records = csvRecords(content);
  let first: IteratorResult<CsvRecord>;
  try {
    first = records.next();
  } catch (err) {
    if (err instanceof CsvSyntaxError) throw fileError(`is not valid CSV: ${err.message}`);
    throw err;
  }
  if (first.done) throw fileError('is empty: the first line must be the header row');
  return { columns: columnsOf(kind, first.value.cells), offset: first.value.end, line: first.value.nextLine };
}

/** Records from `offset`, `size` at a time; a syntax error is a 400 naming its line. */
export async function* batchesOf(content: string, offset: number, line: number, size = IMPORT_BATCH): AsyncGenerator<CsvRecord[]> {
  const records = csvRecords(content, offset, line);
  let batch: CsvRecord[] = [];
  for (;;) {
    let next: IteratorResult<CsvRecord>;
    try {
      next = records.next();
    } catch (err) {
      if (err instanceof CsvSyntaxError) throw fileError(`is not valid CSV: ${err.message}`);
      throw err;
    }
    if (next.done) break;
    batch.push(next.value);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/** Counts a file's data rows (and finds any syntax error) before it is queued. */
export function countRows(content: string, offset: number, line: number): number {
  let count = 0;
  try {
    for (const _ of csvRecords(content, offset, line)) count++;
  } catch (err) {
    if (err instanceof CsvSyntaxError) throw fileError(`is not valid CSV: ${err.message}`);
    throw err;
  }
  return count;
}

export type DryRun = { total_rows: number; valid_rows: number; duplicate_rows: number; invalid_rows: number; errors: ImportError[]; errors_truncated: boolean };

/** What an import of the file would do, row by row; nothing is written. */
export async function dryRun(kind: ImportKind, db: Executor, content: string): Promise<DryRun> {
  const { columns, offset, line } = openFile(kind, content);
  const result: DryRun = { total_rows: 0, valid_rows: 0, duplicate_rows: 0, invalid_rows: 0, errors: [], errors_truncated: false };
  const seen = new Set<string>();
  for await (const records of batchesOf(content, offset, line)) {
    const rows = await prepareRows(kind, db, columns, records);
    const { fresh, duplicates } = await classify(kind, db, rows, seen);
    result.total_rows += rows.length;
    result.valid_rows += fresh.length;
    result.duplicate_rows += duplicates;
    for (const row of rows) {
      if (valid(row)) continue;
      result.invalid_rows++;
      for (const error of errorsOf(row, columns)) {
        if (result.errors.length < MAX_ERRORS) result.errors.push(error);
        else result.errors_truncated = true;
      }
    }
  }
  return result;
}

type ImportRow = typeof imports.$inferSelect;
/** An import as its list and change-log entries read it (never its file). */
const PROGRESS = {
  id: imports.id, resource: imports.resource, status: imports.status, total_rows: imports.total_rows, processed_rows: imports.processed_rows,
  created: imports.created, skipped: imports.skipped, failed: imports.failed, errors: imports.errors, errors_truncated: imports.errors_truncated,
  resume_offset: imports.resume_offset, resume_line: imports.resume_line, created_by: imports.created_by, ip_address: imports.ip_address,
  user_agent: imports.user_agent, created_at: imports.created_at, started_at: imports.started_at, finished_at: imports.finished_at,
};
type Progress = Pick<ImportRow, keyof typeof PROGRESS>;

/**
 * Changes an import's bookkeeping (progress, status) in `tx` (the change log hears of it from the table's trigger, so
 * cached list totals and kept pages see it). Not an activity log: the job changes it, nobody did.
 */
async function setProgress(tx: Tx, before: Progress, values: Partial<ImportRow>): Promise<Progress> {
  const [after] = await tx.update(imports).set({ ...values, updated_at: clock.now() }).where(eq(imports.id, before.id)).returning(PROGRESS);
  return after;
}

const lockImport = async (tx: Tx, id: string) => (await tx.select(PROGRESS).from(imports).where(eq(imports.id, id)).for('update'))[0] as Progress | undefined;

/** Marks an import failed with its reason (a crash past its retries, a file that no longer reads). */
export async function failImport(services: Pick<Services, 'database' | 'log'>, id: string, reason: string) {
  await services.database.db.transaction(async (tx) => {
    const current = await lockImport(tx as Tx, id);
    if (!current || current.status === 'completed' || current.status === 'failed') return;
    await setProgress(tx as Tx, current, { status: 'failed', failure_reason: reason.slice(0, 1000), finished_at: clock.now(), content: null });
  });
  services.log.error({ importId: id, reason }, 'import failed');
}

/** The problem of a job's failure, as a person reads it. */
const reasonOf = (err: unknown) => (err instanceof ApiError ? `${err.body.error}: ${Object.values(err.body.details ?? {}).join('; ') || err.message}` : err instanceof Error ? err.message : String(err));

/** Imports this process is running (a second job for the same import waits for the next turn). */
const active = new Set<string>();

/**
 * Runs an import from where its last committed batch ended: each batch (IMPORT_BATCH rows) in one transaction holding
 * its created records, their activity logs (the importing user as actor) and the import's new position and counts.
 * The import's row is locked first, so two workers never run the same batch; rows of one resource are imported one
 * batch at a time (an advisory lock), so two imports of the same file cannot both create a row.
 */
export async function runImport(services: Services, id: string, budgetMs = JOB_BUDGET_MS) {
  if (active.has(id)) return;
  active.add(id);
  try {
    const db = services.database.db;
    const [head] = await db.select({ ...PROGRESS, content: imports.content }).from(imports).where(eq(imports.id, id));
    if (!head || head.status === 'completed' || head.status === 'failed') return;
    if (head.content === null) return failImport(services, id, 'the file is no longer stored');
    const kind = IMPORT_KINDS[head.resource as ImportResource];
    const content = head.content;
    let file: ReturnType<typeof openFile>;
    try {
      file = openFile(kind, content);
    } catch (err) {
      return failImport(services, id, reasonOf(err));
    }
    const actor: Actor = { userId: head.created_by, ip: head.ip_address, userAgent: head.user_agent };
    let offset = head.resume_offset || file.offset;
    let line = head.resume_offset ? head.resume_line : file.line;
    const deadline = Date.now() + budgetMs;
    const seen = new Set<string>();
    const records = batchesOf(content, offset, line);
    for (;;) {
      let next: IteratorResult<CsvRecord[]>;
      try {
        next = await records.next();
      } catch (err) {
        return failImport(services, id, reasonOf(err));
      }
      const batch = next.done ? [] : next.value;
      const done = await audited(db, actor, async (work) => {
        const current = await lockImport(work.tx, id);
        // Another worker moved it on (or finished it) meanwhile: this one stops.
        if (!current || current.status === 'completed' || current.status === 'failed' || (current.resume_offset || file.offset) !== offset) return 'stale' as const;
        const started = current.status === 'queued' ? { status: 'running' as const, started_at: clock.now() } : {};
        if (!batch.length) {
          await setProgress(work.tx, current, { ...started, status: 'completed', finished_at: clock.now(), content: null });
          return 'done' as const;
        }
        await work.tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`import:${kind.name}`}))`);
        const rows = await prepareRows(kind, work.tx, file.columns, batch);
        const { fresh, duplicates } = await classify(kind, work.tx, rows, seen);
        const created = await kind.create(work, fresh, services);
        const bad = rows.filter((row) => !valid(row));
        const errors = [...current.errors];
        let truncated = current.errors_truncated;
        for (const row of bad) for (const error of errorsOf(row, file.columns)) {
          if (errors.length < MAX_ERRORS) errors.push(error);
          else truncated = true;
        }
        const end = batch[batch.length - 1];
        await setProgress(work.tx, current, {
          ...started,
          processed_rows: current.processed_rows + batch.length,
          created: current.created + created,
          skipped: current.skipped + duplicates + (fresh.length - created),
          failed: current.failed + bad.length,
          errors,
          errors_truncated: truncated,
          resume_offset: end.end,
          resume_line: end.nextLine,
        });
        offset = end.end;
        line = end.nextLine;
        return 'more' as const;
      });
      if (done !== 'more') {
        if (done === 'done') services.log.info({ importId: id }, 'import completed');
        return;
      }
      if (Date.now() >= deadline) {
        await services.jobs.send(importJob, { importId: id });
        return;
      }
    }
  } finally {
    active.delete(id);
  }
}

/** On start: imports a crash or a shutdown interrupted get their job again (a duplicate job is harmless). */
export async function resumeImports(services: Services) {
  const unfinished = await services.database.db.select({ id: imports.id }).from(imports).where(sql`${imports.status} in ('queued', 'running')`);
  for (const { id } of unfinished) await services.jobs.send(importJob, { importId: id });
}

/** Runs a queued import; a job whose worker died is retried once its expiration passes, then the import fails. */
export const importJob = defineJob<{ importId: string }>('csv-import', ({ importId }, services) => runImport(services, importId), {
  sendOptions: ({ importId }) => ({ expireInSeconds: 120, retryLimit: 5, retryDelay: 5, retryBackoff: true, singletonKey: importId }),
  exhausted: ({ importId }, services, err) => failImport(services, importId, reasonOf(err)),
  onStart: resumeImports,
});
