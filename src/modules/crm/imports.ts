import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../types.js';
import { anyOf } from '../../data/filters.js';
import { audited } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import { IMPORT_RESOURCES, IMPORT_STATUSES, imports, users } from '../../db/schema/index.js';
import { ApiError, unsupportedMediaType, validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { ErrorBody, errorResponses, Nullable, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { compileQueryValidator } from '../../http/validation.js';
import { fileField, TooLarge } from '../../http/multipart-file.js';
import { accepted, countRows, dryRun, IMPORT_BATCH, importJob, MAX_ERRORS, openFile } from './import-engine.js';
import { IMPORT_KINDS, type ImportKind } from './import-kinds.js';

const progressFields = {
  id: imports.id, resource: imports.resource, filename: imports.filename, status: imports.status, total_rows: imports.total_rows,
  processed_rows: imports.processed_rows, created: imports.created, skipped: imports.skipped, failed: imports.failed,
};
const tailFields = {
  errors_truncated: imports.errors_truncated, failure_reason: imports.failure_reason,
  created_by: { id: users.id, name: users.name, email: users.email },
  created_at: imports.created_at, started_at: imports.started_at, finished_at: imports.finished_at,
};
const joins = (query: any) => query.leftJoin(users, eq(users.id, imports.created_by));

/** CSV imports (CONTRACT-style list): newest first, by resource and status; the detail adds the bad rows. */
export const importResource = defineResource({
  name: 'imports',
  module: 'crm',
  label: 'Import',
  table: imports,
  id: imports.id,
  view: { fields: { ...progressFields, errors: imports.errors, ...tailFields }, joins },
  listView: { fields: { ...progressFields, ...tailFields }, joins },
  list: {
    sortable: { created_at: imports.created_at },
    defaultSort: 'created_at',
    filters: {
      resource: anyOf(imports.resource, StringEnum(IMPORT_RESOURCES, { description: 'What was imported' })),
      status: anyOf(imports.status, StringEnum(IMPORT_STATUSES)),
    },
  },
  // Scoped like the records an import makes: a caller whose crm scope is `own` or `department` follows the imports of
  // their users only (file names, counts and line errors of a colleague's import are theirs).
  ownership: [imports.created_by],
});

const RowError = Strict({
  line: Type.Integer({ description: 'Line of the CSV file (the header row is line 1; a record spanning lines: its first)' }),
  field: Nullable(Type.String({ description: 'The column, as the file names it; null for the row as a whole (wrong number of cells)' })),
  message: Type.String(),
}, { example: { line: 7, field: 'email', message: 'must be a valid e-mail address' } });

const summary = {
  id: Uuid(),
  resource: StringEnum(IMPORT_RESOURCES),
  filename: Type.String(),
  status: StringEnum(IMPORT_STATUSES, { description: 'queued → running → completed, or failed (see failure_reason)' }),
  total_rows: Type.Integer({ description: 'Data rows in the file (blank lines not counted)' }),
  processed_rows: Type.Integer({ description: 'Rows handled so far, in committed batches' }),
  created: Type.Integer(),
  skipped: Type.Integer({ description: 'Rows whose natural key was already known (in the database or earlier in the file): left as they are' }),
  failed: Type.Integer({ description: 'Rows refused; each listed in errors' }),
};
const tail = {
  errors_truncated: Type.Boolean({ description: `More than ${MAX_ERRORS} errors: only the first are listed` }),
  failure_reason: Nullable(Type.String({ description: 'Why a failed import stopped (rows before it stay imported)' })),
  created_by: Nullable(Strict({ id: Uuid(), name: Type.String(), email: Type.String() })),
  created_at: Timestamp(),
  started_at: Nullable(Timestamp()),
  finished_at: Nullable(Timestamp()),
};
const example = {
  id: '019a8e47-7c1e-7c4a-9d1a-2f3b4c5d6e7f', resource: 'leads', filename: 'leads-2026-11-23.csv', status: 'completed', total_rows: 3,
  processed_rows: 3, created: 1, skipped: 1, failed: 1, errors: [{ line: 4, field: 'email', message: 'must be a valid e-mail address' }],
  errors_truncated: false, failure_reason: null, created_by: { id: '019a8e40-0000-7000-8000-000000000001', name: 'Ana Cruz', email: 'ana@example.com' },
  created_at: '2026-11-23T10:00:00.000Z', started_at: '2026-11-23T10:00:01.000Z', finished_at: '2026-11-23T10:00:02.000Z',
};
const { errors: _omitted, ...listExample } = example;
export const Import = Strict({ ...summary, errors: Type.Array(RowError), ...tail }, { example });
const ImportListItem = Strict({ ...summary, ...tail }, { example: listExample });

const DryRunResult = Strict({
  total_rows: Type.Integer({ description: 'Data rows in the file' }),
  valid_rows: Type.Integer({ description: 'Rows an import would create' }),
  duplicate_rows: Type.Integer({ description: 'Valid rows an import would skip: their natural key is known (database or earlier row)' }),
  invalid_rows: Type.Integer({ description: 'Rows an import would refuse' }),
  errors: Type.Array(RowError, { description: `Every problem of every bad row (at most ${MAX_ERRORS})` }),
  errors_truncated: Type.Boolean(),
}, { example: { total_rows: 4, valid_rows: 2, duplicate_rows: 1, invalid_rows: 1, errors: [{ line: 5, field: 'assigned_to_id', message: 'must be an existing user' }], errors_truncated: false } });

const Queued = Strict({
  id: Uuid({ description: 'The import: follow it at GET /api/crm/imports/{id}' }),
  status: Type.Literal('queued'),
  message: Type.String(),
}, { example: { id: '019a8e47-7c1e-7c4a-9d1a-2f3b4c5d6e7f', status: 'queued', message: 'Import of 1200 rows queued' } });

const ImportQuery = Strict({
  dry_run: Type.Optional(Type.Boolean({ default: false, description: 'true: validate every row and report, write nothing (200); false: queue the import (202)' })),
});

/** The path and wording of each kind's upload route. */
const ROUTES: Record<ImportKind['name'], { path: string; keys: string }> = {
  leads: { path: '/api/crm/leads/import', keys: 'a lead whose e-mail (case-insensitively) or phone is already known' },
  inventory: { path: '/api/crm/inventory/import', keys: 'a unit whose project, block and lot are already taken' },
  newsletters: { path: '/api/crm/newsletters/import', keys: 'an address already on the list (whatever its status)' },
};

const describe = (kind: ImportKind, maxBytes: number) => {
  const fields = Object.keys(kind.schema.properties);
  const required = (kind.schema.required ?? []) as string[];
  return [
    `Uploads ${kind.plural} as CSV: multipart/form-data, the file in the field \`file\` (UTF-8, an optional byte-order mark, a header row, at most ${maxBytes} bytes).`,
    `Columns: those of the export (${accepted(kind).map((c) => `\`${c}\``).join(', ')}); the ones that are no create field (${kind.exported.filter((c) => !fields.includes(c) && !fields.includes(c.replace(/_id$/, ''))).map((c) => `\`${c}\``).join(', ')}) are ignored, so an exported file re-imports as it is.`,
    `Required columns: ${required.map((c) => `\`${c}\``).join(', ')}. Any other column is a 400 naming it. An empty cell is an absent field.`,
    'Each row is validated exactly as the create route validates its body, with its own checks (references must exist).',
    `A row is skipped, not changed, when its natural key is known: ${ROUTES[kind.name].keys}, or an earlier row of the file had it. `
      + 'Keys are compared with every record, also those outside the importing user\'s record scope: a dry run then counts the row in `duplicate_rows`, '
      + 'and says nothing of the record it matched (neither which one nor whose). Imported records have no creator (`created_by` null): they belong to their assignee.',
    `\`dry_run=true\` answers what an import would do, listing every bad row's line and column; nothing is written. Otherwise the file is stored and a background job imports it in batches of ${IMPORT_BATCH} rows (each batch one transaction, every created record audited with the importing user): 202 with the import's id, whose progress and result \`GET /api/crm/imports/{id}\` shows. The upload counts as one write for the rate limit.`,
  ].join('\n\n');
};

/** The uploaded file, whole (up to `maxBytes`), and its name; 400/413/415 as uploads answer them. */
async function readUpload(request: FastifyRequest, maxBytes: number): Promise<{ bytes: Buffer; filename: string }> {
  const { part, refuse } = await fileField(request, maxBytes, { what: 'the CSV file' });
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new TooLarge();
      chunks.push(chunk);
    }
    if (part.file.truncated) throw new TooLarge();
  } catch (err) {
    throw refuse(err);
  }
  // eslint-disable-next-line no-control-regex
  const filename = (part.filename ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255) || 'import.csv';
  return { bytes: Buffer.concat(chunks, size), filename };
}

/** The file as text: UTF-8 (a byte-order mark dropped), never binary. */
function textOf(bytes: Buffer): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw validationError({ file: 'is not UTF-8 text: save the CSV with the UTF-8 encoding' });
  }
  if (text.includes('\u0000')) throw validationError({ file: 'is not a CSV file: it holds binary data' });
  return text;
}

/**
 * `POST /api/crm/{leads,inventory,newsletters}/import` (crm write; dry run or queued import) and
 * `GET /api/crm/imports[/:id]` (crm read): the progress and result of imports.
 */
export default async function importRoutes(app: App) {
  const { db } = app.database;
  const maxBytes = app.config.importMaxBytes;

  await app.register(async (scoped: App) => {
    await scoped.register(multipart, {
      // The reader enforces the limit too; busboy's own limit is a backstop one byte above it.
      limits: { fileSize: maxBytes + 1, files: 1, fields: 5, parts: 10, fieldSize: 1024, headerPairs: 100 },
    });
    for (const kind of Object.values(IMPORT_KINDS)) {
      scoped.post(ROUTES[kind.name].path, {
        schema: {
          summary: `Import ${kind.plural} from CSV (dry run, or a background job)`,
          description: describe(kind, maxBytes),
          consumes: ['multipart/form-data'],
          querystring: ImportQuery,
          body: Strict({ file: Type.String({ format: 'binary', description: 'The CSV file' }) }),
          response: { 200: DryRunResult, 202: Queued, 413: ErrorBody, 415: ErrorBody, ...errorResponses },
        },
        // The multipart body is read by the handler as a stream (the schema above documents it); the query is validated.
        validatorCompiler: ({ schema, httpPart }) => (httpPart === 'body' ? () => true : (compileQueryValidator(schema as object) as never)),
      }, async (request, reply) => {
        const { bytes, filename } = await readUpload(request, maxBytes);
        const content = textOf(bytes);
        if (request.query.dry_run) return reply.code(200).send(await dryRun(kind, db, content));
        const file = openFile(kind, content);
        const total = countRows(content, file.offset, file.line);
        const actor = await actorOf(app, request);
        const id = await audited(db, actor, async (work) => {
          const [row] = await work.tx.insert(imports).values({
            resource: kind.name, filename, content, total_rows: total, created_by: actor.userId, ip_address: actor.ip, user_agent: actor.userAgent,
          }).returning({ id: imports.id, resource: imports.resource, filename: imports.filename, status: imports.status, total_rows: imports.total_rows, created_by: imports.created_by, created_at: imports.created_at });
          // The log holds what was asked for, never the file itself.
          await work.audit({ action: 'create', resource: importResource, id: row.id, after: row });
          return row.id;
        });
        await app.jobs.send(importJob, { importId: id });
        return reply.code(202).send({ id, status: 'queued' as const, message: `Import of ${total} row${total === 1 ? '' : 's'} queued` });
      });
    }
  });

  resourceRoutes(app, importResource, { path: '/api/crm/imports', Item: Import, ListItem: ImportListItem, remove: false });
}
