import { Type } from '@sinclair/typebox';
import { eq, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { ownersOf } from '../../../auth/guard.js';
import { anyOf } from '../../../data/filters.js';
import { findOne } from '../../../data/list.js';
import type { Resource } from '../../../data/resource.js';
import type { Tx } from '../../../db/client.js';
import { PRIVACY_REQUEST_KINDS, PRIVACY_REQUEST_ORIGINS, type PrivacyFound, privacyRequests, users } from '../../../db/schema/index.js';
import { conflict, forbidden, validationError } from '../../../errors.js';
import { actorOf } from '../../../http/actor.js';
import { named } from '../../../http/openapi.js';
import { resourceRoutes } from '../../../http/resource-routes.js';
import { Email, errorResponses, IdParams, Nullable, Strict, StringEnum, Timestamp, Uuid } from '../../../http/schemas.js';
import { countsOf, eraseAndRecord, exportDocument, findPerson, personHash, recordRequest, SECTIONS } from './person.js';

const PATH = '/api/crm/privacy-requests';
const downloadOf = (id: string) => `${PATH}/${id}/download`;

const summaryFields = {
  id: privacyRequests.id,
  kind: privacyRequests.kind,
  origin: privacyRequests.origin,
  requested_by: { id: users.id, name: users.name, email: users.email },
  found: sql<Record<string, number>>`(select coalesce(jsonb_object_agg(f.key, jsonb_array_length(f.value)), '{}'::jsonb) from jsonb_each(${privacyRequests.found}) f)`,
  download: sql<string | null>`case when ${privacyRequests.kind} = 'export' then ${PATH} || '/' || ${privacyRequests.id}::text || '/download' end`,
  created_at: privacyRequests.created_at,
};
const joins = (query: any) => query.leftJoin(users, eq(users.id, privacyRequests.requested_by));

/** The list of privacy requests (a plain resource, as the trash is: it has no webhook or live events of its own). */
const privacyRequestResource: Resource = {
  name: 'privacy_requests',
  module: 'crm',
  label: 'Privacy request',
  table: privacyRequests,
  id: privacyRequests.id,
  // The detail adds the ids found; the list gives the counts.
  view: { fields: { ...summaryFields, records: privacyRequests.found }, joins },
  listView: { fields: summaryFields, joins },
  list: {
    sortable: { created_at: privacyRequests.created_at },
    defaultSort: 'created_at',
    filters: {
      kind: anyOf(privacyRequests.kind, StringEnum(PRIVACY_REQUEST_KINDS)),
      origin: anyOf(privacyRequests.origin, StringEnum(PRIVACY_REQUEST_ORIGINS, { description: 'request: asked through the API; retention: the retention job' })),
    },
  },
};

const sectionList = SECTIONS.map((section) => `\`${section}\``).join(', ');
const Counts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: `Records found, by section: ${sectionList}` });
const counts = Object.fromEntries(SECTIONS.map((section) => [section, 0]));
const example = {
  id: '019a8e47-7c1e-7c4a-9d1a-2f3b4c5d6e7f', kind: 'export', origin: 'request',
  requested_by: { id: '019a8e40-0000-7000-8000-000000000001', name: 'Ana Cruz', email: 'ana@example.com' },
  found: { ...counts, leads: 1, inquiries: 2, audit_entries: 5 },
  download: `${PATH}/019a8e47-7c1e-7c4a-9d1a-2f3b4c5d6e7f/download`, created_at: '2026-11-27T10:00:00.000Z',
};
const summary = {
  id: Uuid(),
  kind: StringEnum(PRIVACY_REQUEST_KINDS, { description: 'export: the person\'s data as one JSON document; erase: their personal data anonymised everywhere' }),
  origin: StringEnum(PRIVACY_REQUEST_ORIGINS, { description: 'request: asked through the API; retention: the retention job (PERSONAL_DATA_RETENTION_MONTHS)' }),
  requested_by: Nullable(Strict({ id: Uuid(), name: Type.String(), email: Type.String() }, { description: 'Who asked; null for the retention job' })),
  found: Counts,
  download: Nullable(Type.String({ description: 'An export\'s download (GET, crm delete); null for an erase' })),
  created_at: Timestamp(),
};
const PrivacyRequestSummary = Strict(summary, { example });
const PrivacyRequest = Strict({
  ...summary,
  records: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'The ids of the records found, by section (stored mail: its file names). Never the e-mail address or phone asked for.' }),
}, { example: { ...example, records: { ...Object.fromEntries(SECTIONS.map((s) => [s, []])), leads: ['019a8e45-0000-7000-8000-00000000000a'] } } });

const PrivacyRequestInput = named('PrivacyRequestCreate', Strict({
  kind: StringEnum(PRIVACY_REQUEST_KINDS, { description: 'export or erase' }),
  email: Type.Optional(Email()),
  phone: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Compared by its digits (as a website inquiry is linked to a lead): `+63 917 123 4567` finds `0063-917-1234567`' })),
}, { examples: [{ kind: 'export', email: 'maria.santos@example.com' }, { kind: 'erase', email: 'maria.santos@example.com', phone: '+63 917 123 4567' }] }));

const Answer = named('PrivacyRequestDone', Strict({
  id: Uuid({ description: 'The privacy request, kept: GET /api/crm/privacy-requests/{id}' }),
  kind: StringEnum(PRIVACY_REQUEST_KINDS),
  found: Counts,
  download: Nullable(Type.String({ description: 'An export\'s JSON document (GET, crm delete); null for an erase' })),
  message: Type.String(),
}, { example: { id: example.id, kind: 'erase', found: { ...counts, leads: 1, inquiries: 2, audit_entries: 5 }, download: null, message: 'Erased: 8 records anonymised' } }));

const Document = Type.Object({}, {
  additionalProperties: true,
  description: 'The person\'s data as one JSON document: `privacy_request`, `generated_at`, then a section per kind, each an array of whole records as stored now',
  example: {
    privacy_request: { id: example.id, kind: 'export', created_at: '2026-11-27T10:00:00.000Z' }, generated_at: '2026-11-27T10:05:00.000Z',
    leads: [{ id: '019a8e45-0000-7000-8000-00000000000a', first_name: 'Maria', last_name: 'Santos', email: 'maria.santos@example.com', status: 'qualified' }],
    inquiries: [], subscriptions: [], pending_signups: [], reservations: [], activities: [], follow_ups: [], campaign_deliveries: [], notifications: [], audit_entries: [], trash: [], webhook_deliveries: [], mail: [],
  },
});

const total = (found: PrivacyFound) => Object.values(found).reduce((sum, list) => sum + list.length, 0);

/**
 * `POST /api/crm/privacy-requests` (export or erase a person's data), its list, detail and an export's download. Every
 * route needs crm delete and a crm record scope of `all`: an export or an erase must see every record.
 */
export default async function privacyRoutes(app: App) {
  const { db } = app.database;
  await app.register(async (scoped: App) => {
    scoped.addHook('onRoute', (route) => {
      route.config = { ...route.config, flag: 'can_delete' };
      route.schema = { ...route.schema, tags: ['privacy'] };
    });
    scoped.addHook('onRequest', async (request) => {
      if (await ownersOf(app, request)) {
        throw forbidden('Privacy requests need a crm record scope of "all": an export or erase must reach every record of the person, and yours hides some');
      }
    });

    scoped.post(PATH, {
      schema: {
        operationId: 'createPrivacyRequest',
        summary: 'Export or erase a person\'s data (crm delete, record scope all)',
        description: [
          'Finds the person by `email` (case-insensitive) and/or `phone` (by its digits) in every place personal data lives: leads, inquiries, newsletter subscriptions, '
            + 'reservations, a lead\'s activities and follow-ups, campaign deliveries, notifications, and the copies kept in the audit trail, the trash, webhook payloads, '
            + 'import files in progress and stored mail.',
          '`export`: 201 with the counts and `download`, the address of one JSON document holding it all (whole records).',
          '`erase`: every personal field is anonymised in one transaction (names become "Erased person", addresses `erased-<id>@invalid`, phones and free-text notes '
            + 'emptied); rows are not deleted, so statuses, dates, units, prices and every count and report stay as they were. The audit trail\'s before/after, trash '
            + 'entries, webhook payloads and stored mail lose the person\'s values too.',
          'The request is kept (who, when, what was found: counts and record ids) without the e-mail or phone in clear, and audited as `privacy_export` or `privacy_erase`.',
          '400 when neither `email` nor `phone` is given (both fields named), for a bad e-mail, or a phone without digits.',
        ].join('\n\n'),
        body: PrivacyRequestInput,
        response: { 201: Answer, ...errorResponses },
      },
    }, async (request, reply) => {
      const body = request.body as { kind: 'export' | 'erase'; email?: string; phone?: string };
      const email = body.email?.trim().toLowerCase() || undefined;
      const phone = body.phone?.trim() || undefined;
      if (!email && !phone) throw validationError({ email: 'give the person\'s e-mail address, phone number or both', phone: 'give the person\'s e-mail address, phone number or both' });
      const digits = phone?.replace(/\D/g, '');
      if (phone !== undefined && (!digits || digits.length < 4)) throw validationError({ phone: 'must hold at least 4 digits' });
      const person = { email, digits };
      const actor = await actorOf(app, request);
      const hashes = { emailHash: personHash(app.config.authSecret, 'email', email), phoneHash: personHash(app.config.authSecret, 'phone', digits) };
      if (body.kind === 'export') {
        const done = await db.transaction(async (tx) => {
          const findings = await findPerson(tx as Tx, person, app.config.dataDir);
          const recorded = await recordRequest(tx as Tx, actor, { kind: 'export', origin: 'request', ...hashes, found: findings.found });
          return { ...recorded, found: findings.found };
        });
        return reply.code(201).send({ id: done.id, kind: 'export', found: countsOf(done.found), download: downloadOf(done.id), message: `Exported: ${total(done.found)} records found` });
      }
      const done = await eraseAndRecord(db, actor, person, { dataDir: app.config.dataDir, origin: 'request', ...hashes });
      return reply.code(201).send({ id: done.id, kind: 'erase', found: countsOf(done.found), download: null, message: `Erased: ${total(done.found)} records anonymised` });
    });

    resourceRoutes(scoped, privacyRequestResource, { path: PATH, Item: PrivacyRequest, ListItem: PrivacyRequestSummary, remove: false, update: false });

    scoped.get(`${PATH}/:id/download`, {
      schema: {
        operationId: 'downloadPrivacyExport',
        summary: 'An export\'s JSON document (crm delete, record scope all)',
        description: 'The person\'s data as one JSON document (`Content-Disposition: attachment`), read again now from the records the export found: a record '
          + 'erased or changed since shows as it is now, one deleted since is left out. 409 for an erase (it keeps no document).',
        params: IdParams,
        response: { 200: Document, ...errorResponses },
      },
    }, async (request, reply) => {
      const row = await findOne<{ id: string; kind: string; records: PrivacyFound; created_at: Date }>(db, privacyRequestResource, request.params.id);
      if (row.kind !== 'export') throw conflict('An erase keeps no document: only an export has a download');
      const document = await exportDocument(db, { id: row.id, kind: row.kind, created_at: new Date(row.created_at) }, row.records, app.config.dataDir);
      reply.header('content-disposition', `attachment; filename="privacy-export-${row.id}.json"`);
      return document;
    });
  });
}
