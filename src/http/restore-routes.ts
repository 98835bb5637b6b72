import { type TObject, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import { keepsTrash } from '../data/trash.js';
import { recordScope } from '../auth/guard.js';
import { findOne } from '../data/list.js';
import type { Resource } from '../data/resource.js';
import { historyEntry, restoreBody, type RestoreSide } from '../data/restore.js';
import { validationError } from '../errors.js';
import { detailsFromAjv } from './errors.js';
import { named, pascal } from './openapi.js';
import { errorResponses, Strict, StringEnum, Uuid } from './schemas.js';
import { compileBodyValidator } from './validation.js';
import { historyWithoutHidden } from './record-walls.js';

/** How an update runs as a restore: the entry it restores, and whether it is only tried (rolled back). */
export type RestoreOptions = { from: string; dryRun: boolean };
type Changes = { before: Record<string, unknown>; after: Record<string, unknown> };
type Change = (request: FastifyRequest, id: string, body: never, restore: RestoreOptions) => Promise<{ changes: unknown }>;

const RestoreParams = Strict({
  id: Uuid({ description: "The record's id" }),
  log_id: Uuid({ description: 'The id of one entry of the record\'s history (`GET …/{id}/history`)' }),
});
const RestoreQuery = Strict({
  dry_run: Type.Optional(Type.Boolean({ description: 'true: check the restore and answer the fields it would change, without changing anything' })),
});
const RestoreInput = named('RestoreInput', Strict({
  to: Type.Optional(StringEnum(['before', 'after'] as const, { description: 'The state to go back to: before the change (default) or right after it', default: 'before' })),
}, { examples: [{ to: 'before' }] }));
const Fields = Type.Object({}, { additionalProperties: true });
const Restored = named('Restored', Strict({
  message: Type.String({ examples: ['Lead restored'] }),
  changes: Strict({ before: Fields, after: Fields }, { description: 'The fields the restore changed (would change, in a dry run): their values before and after it; empty when the record already was so' }),
  skipped: Type.Array(Type.String(), { description: 'Fields of the entry the service sets by its own rules (not settable), left as they are' }),
}, { examples: [{ message: 'Lead restored', changes: { before: { status: 'lost' }, after: { status: 'contacted' } }, skipped: [] }] }));

/**
 * `POST <path>/:id/history/:log_id/restore`: sets the record's fields back to their state before (or after)
 * one change of its history, as one update made exactly as PATCH makes it (`change`: the resource's validation, state
 * moves, unique keys, references and record scope), its activity log naming the entry restored (`restored_from`).
 */
export function historyRestoreRoute(app: App, resource: Resource, path: string, updateBody: TObject, change: Change) {
  // cms and crm records only (iam's users, access and webhooks are not restored).
  if (!keepsTrash(resource)) return;
  const db = app.database.db;
  const Name = pascal(resource.label);
  const settable = Object.keys(updateBody.properties);
  const validate = compileBodyValidator(updateBody);
  app.post(`${path}/:id/history/:log_id/restore`, {
    // A bare POST (no body) restores the state before the change.
    preValidation: async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    },
    schema: {
      operationId: `restore${Name}`,
      summary: `Restore ${resource.label.toLowerCase()} to its state before (or after) one change of its history`,
      description: 'Sets back the fields of one history entry as PATCH would (400/409 naming the field it refuses); audited with `restored_from`. '
        + '`?dry_run=true`: what would change. 404: not this record\'s entry.',
      params: RestoreParams, querystring: RestoreQuery, body: RestoreInput,
      response: { 200: Restored, ...errorResponses },
      'x-answer-message': `${resource.label} restored`,
    },
  }, async (request) => {
    const { id, log_id: logId } = request.params;
    const dryRun = request.query.dry_run === true;
    await findOne(db, resource, id, await recordScope(app, request, resource));
    const entry = await historyEntry(db, resource.name, id, logId);
    const { body, skipped } = restoreBody(entry, request.body.to ?? 'before', settable, resource.label);
    if (!validate(body)) throw validationError(detailsFromAjv(validate.errors as never));
    const { changes } = await change(request, id, body as never, { from: logId, dryRun });
    // As the record's history shows it: no id of a record outside the caller's scope.
    const [shown] = await historyWithoutHidden(db, resource, [{ changes: (changes as Changes | undefined) ?? { before: {}, after: {} } }], (target) => recordScope(app, request, target));
    return { message: dryRun ? `${resource.label} not changed (dry run)` : `${resource.label} restored`, changes: shown.changes, skipped };
  });
}
