import { Type } from '@sinclair/typebox';
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { App } from '../../types.js';
import { clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { anyOf, equals, overlaps } from '../../data/filters.js';
import { audited } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import { withSecret } from '../../data/secret-columns.js';
import { users, WEBHOOK_DELIVERY_STATUSES, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import { conflict, notFound, validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { describeRoutes } from '../../http/openapi.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { errorResponses, IdParams, Nullable, Pagination, PartialStrict, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { urlProblem } from '../../webhooks/address.js';
import { ALL_EVENTS, EVENT_TYPES, isSubscribable, SUBSCRIBABLE, TEST_EVENT } from '../../webhooks/events.js';
import { deliveriesCommitted } from '../../webhooks/record.js';
import { newSecret, secretProblem } from '../../webhooks/signature.js';
import { UserRef, userRefFields } from '../crm/shared.js';

const endpoints = webhookEndpoints;
const deliveries = webhookDeliveries;

/** Webhook endpoints: where events are POSTed; the secret never shows after the answer that made it. */
export const webhookResource = defineResource({
  name: 'webhooks',
  module: 'iam',
  label: 'Webhook',
  table: endpoints,
  id: endpoints.id,
  view: {
    fields: {
      id: endpoints.id, url: endpoints.url, description: endpoints.description, events: endpoints.events, enabled: endpoints.enabled,
      created_by: userRefFields, created_at: endpoints.created_at, updated_at: endpoints.updated_at,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, endpoints.created_by)),
  },
  list: {
    sortable: { created_at: endpoints.created_at, updated_at: endpoints.updated_at, url: endpoints.url },
    defaultSort: 'created_at',
    filters: {
      enabled: equals(endpoints.enabled, Type.Boolean()),
      // Endpoints that receive any of the event types: subscribed to one of them, or to everything (`*`).
      event: overlaps(endpoints.events, StringEnum(EVENT_TYPES, { description: 'An event type: endpoints that receive it (subscribed to it or to `*`)' }), { wildcards: [ALL_EVENTS] }),
    },
    search: [endpoints.url, endpoints.description],
  },
});

const deliveryListFields = {
  id: deliveries.id, endpoint_id: deliveries.endpoint_id, event_type: deliveries.event_type, status: deliveries.status, attempts: deliveries.attempts,
  next_attempt_at: deliveries.next_attempt_at, last_status_code: deliveries.last_status_code, last_error: deliveries.last_error,
  delivered_at: deliveries.delivered_at, created_at: deliveries.created_at,
};

/** Deliveries: written by the audited path; through the API only a test event is created and a failed one retried. */
export const webhookDeliveryResource = defineResource({
  name: 'webhook_deliveries',
  module: 'iam',
  label: 'Webhook delivery',
  table: deliveries,
  id: deliveries.id,
  view: { fields: { ...deliveryListFields, payload: deliveries.payload } },
});

const EXAMPLE_ID = '0190f5a2-7c1e-7d3a-9b1c-2f4e6a8b0c1d';
const EXAMPLE_URL = 'https://crm.example.com/hooks/property';

const EventName = StringEnum(SUBSCRIBABLE, { description: `An event type, or \`${ALL_EVENTS}\` for every event` });
const Events = Type.Array(EventName, {
  minItems: 1, maxItems: 100,
  description: 'The event types delivered to this endpoint (at least one); `*` subscribes to all. `GET /api/iam/webhooks/event-types` lists them.',
  examples: [['lead.created', 'inquiry.received']],
});
const Url = Type.String({ format: 'uri', minLength: 1, maxLength: 2000, description: 'http(s) URL the events are POSTed to (at most 2000 characters)', examples: [EXAMPLE_URL] });
const Description = Nullable(Text({ maxLength: 500, description: 'What the endpoint is for' }));

export const Webhook = Strict({
  id: Uuid(),
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(EventName),
  enabled: Type.Boolean(),
  created_by: UserRef,
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, {
  examples: [{
    id: EXAMPLE_ID, url: EXAMPLE_URL, description: 'Website CRM sync', events: ['lead.created', 'lead.updated', 'inquiry.received'], enabled: true,
    created_by: { id: '0190f5a2-0000-7000-8000-000000000001', name: 'Administrator' }, created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:00.000Z',
  }],
});

const WebhookInput = Strict({
  url: Url,
  description: Type.Optional(Description),
  events: Events,
  enabled: Type.Optional(Type.Boolean({ default: true, description: 'A disabled endpoint records no new deliveries and is sent nothing but test events' })),
  secret: Type.Optional(Type.String({
    maxLength: 200, description: 'Signing secret in Standard Webhooks form (`whsec_` + base64 of 24–64 random bytes); generated when omitted',
  })),
}, { examples: [{ url: EXAMPLE_URL, description: 'Website CRM sync', events: ['lead.created', 'inquiry.received'] }] });

const WebhookPatch = PartialStrict(Strict({ url: Url, description: Description, events: Events, enabled: Type.Boolean() }, {
  examples: [{ enabled: false }, { events: ['*'] }],
}));

const SecretAnswer = Strict({
  id: Uuid(),
  secret: Type.String({ description: 'The signing secret: shown in this answer only' }),
  message: Type.String(),
}, { examples: [{ id: EXAMPLE_ID, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', message: 'Webhook created; keep the secret now, it is not shown again' }] });

const Queued = Strict({ id: Uuid({ description: 'The delivery (its `webhook-id`)' }), message: Type.String() }, {
  examples: [{ id: EXAMPLE_ID, message: 'Test event queued' }],
});

const deliveryExample = {
  id: EXAMPLE_ID, endpoint_id: '0190f5a2-7c1e-7d3a-9b1c-000000000002', event_type: 'lead.created', status: 'pending', attempts: 2,
  next_attempt_at: '2026-11-22T10:05:05.000Z', last_status_code: 503, last_error: 'HTTP 503: Service Unavailable', delivered_at: null,
  created_at: '2026-11-22T10:00:00.000Z',
};
const deliveryFields = {
  id: Uuid({ description: 'Also the `webhook-id` header: the same on every attempt' }),
  endpoint_id: Uuid(),
  event_type: Type.String(),
  status: StringEnum(WEBHOOK_DELIVERY_STATUSES),
  attempts: Type.Integer({ minimum: 0 }),
  next_attempt_at: Nullable(Timestamp({ description: 'When a pending delivery is tried next' })),
  last_status_code: Nullable(Type.Integer({ description: 'HTTP status of the last answer; null when none came' })),
  last_error: Nullable(Type.String()),
  delivered_at: Nullable(Timestamp()),
  created_at: Timestamp(),
};
export const Delivery = Strict(deliveryFields, { examples: [deliveryExample] });
export const DeliveryDetail = Strict({
  ...deliveryFields,
  payload: Type.Object({}, { additionalProperties: true, description: 'The body POSTed: `{type, timestamp, data}`' }),
}, {
  examples: [{
    ...deliveryExample,
    payload: { type: 'lead.created', timestamp: '2026-11-22T10:00:00.000Z', data: { id: '0190f5a2-7c1e-7d3a-9b1c-000000000003', resource: 'leads', after: { first_name: 'Ana' } } },
  }],
});

/** The delivery log's filters: a status, or several (`?status=pending,failed`). */
const deliveryFilters = { status: anyOf(deliveries.status, StringEnum(WEBHOOK_DELIVERY_STATUSES)) };
const DeliveriesQuery = Strict({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  status: Type.Optional(deliveryFilters.status.schema),
});

/** The audit trail (and the change log) never holds an endpoint's secret. */
const signingSecret = withSecret(webhookResource, 'secret');
/** Each event once, in the order sent. */
const distinct = (events: string[]) => [...new Set(events)];

/** 400 `details.url` for a URL that is not http(s) or (in production) reaches a private address. */
async function assertUrl(config: Config, url: string) {
  const problem = await urlProblem(url, { production: config.production, allowPrivate: config.webhookAllowPrivate });
  if (problem) throw validationError({ url: problem });
}

function assertSecret(secret: string | undefined) {
  const problem = secret === undefined ? null : secretProblem(secret);
  if (problem) throw validationError({ secret: problem });
}

/** Descriptions of the routes the resource factory makes (it gives them a summary only). */
const DESCRIPTIONS: Record<string, string> = {
  'GET /api/iam/webhooks': 'Webhook endpoints, newest first. Filters: `enabled`, `event` (endpoints that receive any of the event types given); `q` searches the URL and description. The secret is never shown.',
  'GET /api/iam/webhooks/:id': 'One webhook endpoint (never its secret).',
  'POST /api/iam/webhooks': 'Registers an endpoint. The signing secret is generated (or taken from `secret`) and returned in this answer only. '
    + 'With NODE_ENV=production, URLs that reach loopback, private or link-local addresses are refused (400 `details.url`) unless WEBHOOK_ALLOW_PRIVATE=true. '
    + 'An unknown event type is 400 `details.events`.',
  'PATCH /api/iam/webhooks/:id': 'Changes the fields sent. Disabling stops new deliveries and pauses pending ones; enabling resumes them.',
  'DELETE /api/iam/webhooks/:id': 'Deletes the endpoint and its delivery log.',
};

export default async function webhookRoutes(app: App) {
  const { db } = app.database;
  const tags = ['iam'];

  describeRoutes(app, DESCRIPTIONS);
  // An unknown event type is named in `details.events` (the schema's enum would only say `events.N` is not allowed).
  app.addHook('preValidation', async (request) => {
    const route = `${request.method} ${request.routeOptions.url}`;
    if (route !== 'POST /api/iam/webhooks' && route !== 'PATCH /api/iam/webhooks/:id') return;
    const events = (request.body as { events?: unknown } | undefined)?.events;
    if (!Array.isArray(events)) return;
    const unknown = events.find((event) => typeof event === 'string' && !isSubscribable(event));
    if (unknown !== undefined) throw validationError({ events: `"${unknown}" is not a known event type (GET /api/iam/webhooks/event-types lists them; "*" is every event)` });
  });

  app.get('/api/iam/webhooks/event-types', {
    schema: {
      tags, summary: 'Event types an endpoint can subscribe to',
      description: 'Every resource has `<singular>.created|updated|deleted`; the named events are `inquiry.received`, `newsletter.subscribed`, `reservation.status_changed`, `campaign.sent` and `lead.assigned` (`lead_id`, `assigned_to`, `previous`, `how`). `*` subscribes to all.',
      response: { 200: Strict({ data: Type.Array(StringEnum(EVENT_TYPES)) }, { examples: [{ data: ['lead.created', 'lead.updated', 'inquiry.received'] }] }), ...errorResponses },
    },
  }, async () => ({ data: [...EVENT_TYPES] }));

  resourceRoutes(app, webhookResource, {
    path: '/api/iam/webhooks',
    Item: Webhook,
    create: {
      body: WebhookInput,
      summary: 'Register a webhook endpoint (the secret is shown once)',
      values: async (body, { app, actor }) => {
        await assertUrl(app.config, body.url);
        assertSecret(body.secret);
        return {
          url: body.url, description: body.description ?? null, events: distinct(body.events), enabled: body.enabled ?? true,
          secret: body.secret ?? newSecret(), created_by: actor.userId,
        };
      },
      insert: signingSecret.insert,
      answer: {
        schema: { 201: SecretAnswer },
        send: (row) => ({ code: 201, body: { id: row.id, secret: row.secret, message: 'Webhook created; keep the secret now, it is not shown again' } }),
      },
    },
    update: {
      body: WebhookPatch,
      summary: 'Update a webhook endpoint (only the fields sent)',
      validate: async (body, { app }) => {
        if (body.url !== undefined) await assertUrl(app.config, body.url);
      },
      values: (body) => (body.events ? { ...body, events: distinct(body.events) } : body),
      change: signingSecret.change,
      // Enabled again: its pending deliveries go now rather than at the next scheduled run.
      committed: (row, _body, { app }) => {
        if (row.enabled) deliveriesCommitted(app.database.db);
      },
    },
    remove: { summary: 'Delete a webhook endpoint and its delivery log', remove: signingSecret.remove },
  });

  app.post('/api/iam/webhooks/:id/rotate-secret', {
    // A bare POST (no body) means "generate one".
    preValidation: async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    },
    schema: {
      tags, summary: "Replace an endpoint's signing secret (the new one is shown once)", 'x-answer-message': 'Secret replaced; keep it now, it is not shown again',
      description: 'A new secret is generated (or taken from `secret`); deliveries from now on are signed with it, retries of earlier ones included. Audited as a change of the credential, never its value.',
      params: IdParams,
      body: Strict({ secret: WebhookInput.properties.secret }, { examples: [{}, { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }] }),
      response: { 200: SecretAnswer, ...errorResponses },
    },
  }, async (request) => {
    const secret = request.body.secret ?? newSecret();
    assertSecret(secret);
    await audited(db, await actorOf(app, request), (work) => signingSecret.change(work, request.params.id, async () => ({ secret })));
    return { id: request.params.id, secret, message: 'Secret replaced; keep it now, it is not shown again' };
  });

  app.get('/api/iam/webhooks/:id/deliveries', {
    schema: {
      tags, summary: "An endpoint's delivery log, newest first",
      description: 'Every event recorded for the endpoint: status (`pending`, `delivered`, `failed`), attempts so far, the last answer\'s status code and error, and when it is tried next. Filter by `status` (several: `?status=pending,failed`). The payload is in `GET /api/iam/webhooks/deliveries/{id}`.',
      params: IdParams,
      querystring: DeliveriesQuery,
      response: { 200: Strict({ data: Type.Array(Delivery), pagination: Pagination }), ...errorResponses },
    },
  }, async (request) => {
    const { page = 1, limit = 10, status } = request.query;
    const [endpoint] = await db.select({ id: endpoints.id }).from(endpoints).where(eq(endpoints.id, request.params.id)).limit(1);
    if (!endpoint) throw notFound(webhookResource.label);
    const where = and(eq(deliveries.endpoint_id, endpoint.id), status ? deliveryFilters.status.where(status as never)?.sql : undefined);
    const data = await db.select(deliveryListFields).from(deliveries).where(where)
      .orderBy(desc(deliveries.created_at), desc(deliveries.id)).limit(limit).offset((page - 1) * limit);
    const [{ total }] = await db.select({ total: count() }).from(deliveries).where(where);
    return { data, pagination: { page, limit, total: Number(total), totalPages: Math.ceil(Number(total) / limit) } };
  });

  app.get('/api/iam/webhooks/deliveries/:id', {
    schema: {
      tags, summary: 'One delivery, with the payload it POSTs',
      description: 'The delivery as the log shows it, plus `payload`: the JSON body sent (`{type, timestamp, data}`).',
      params: IdParams,
      response: { 200: DeliveryDetail, ...errorResponses },
    },
  }, async (request) => {
    const [row] = await db.select(webhookDeliveryResource.view.fields as typeof deliveryListFields & { payload: typeof deliveries.payload })
      .from(deliveries).where(eq(deliveries.id, request.params.id)).limit(1);
    if (!row) throw notFound(webhookDeliveryResource.label);
    return { ...row, payload: row.payload as Record<string, unknown> };
  });

  app.post('/api/iam/webhooks/:id/test', {
    schema: {
      tags, summary: 'Send a test event to this endpoint',
      description: `Queues a \`${TEST_EVENT}\` event for this endpoint only (whatever it subscribes to, even when disabled), signed like any other; follow it in the delivery log.`,
      params: IdParams,
      response: { 202: Queued, ...errorResponses },
    },
  }, async (request, reply) => {
    const id = await audited(db, await actorOf(app, request), async (work) => {
      const endpoint = await work.lock(webhookResource, request.params.id);
      const at = clock.now();
      const [row] = await work.tx.insert(deliveries).values({
        endpoint_id: endpoint.id, event_type: TEST_EVENT, next_attempt_at: sql`now()` as never, created_at: at,
        payload: { type: TEST_EVENT, timestamp: at.toISOString(), data: { endpoint_id: endpoint.id, url: endpoint.url, message: 'A test event from the property management service' } },
      }).returning();
      await work.audit({ action: 'create', resource: webhookDeliveryResource, id: row.id, after: { id: row.id, endpoint_id: row.endpoint_id, event_type: row.event_type, status: row.status } });
      return row.id;
    });
    deliveriesCommitted(db);
    return reply.code(202).send({ id, message: 'Test event queued' });
  });

  app.post('/api/iam/webhooks/deliveries/:id/retry', {
    schema: {
      tags, summary: 'Retry a failed delivery', 'x-answer-message': 'Delivery queued again',
      description: 'Puts a failed delivery back to pending, tried at once: one more attempt (409 unless it failed).',
      params: IdParams,
      response: { 202: Queued, ...errorResponses },
    },
  }, async (request, reply) => {
    await audited(db, await actorOf(app, request), async (work) => {
      const current = await work.lock(webhookDeliveryResource, request.params.id);
      if (current.status !== 'failed') throw conflict(`Only a failed delivery can be retried; this one is ${current.status}`);
      const [row] = await work.tx.update(deliveries).set({ status: 'pending', next_attempt_at: sql`now()` }).where(eq(deliveries.id, current.id)).returning();
      const summary = (r: typeof row) => ({ id: r.id, endpoint_id: r.endpoint_id, event_type: r.event_type, status: r.status });
      await work.audit({ action: 'update', resource: webhookDeliveryResource, id: row.id, before: summary(current), after: summary(row) });
    });
    deliveriesCommitted(db);
    return reply.code(202).send({ id: request.params.id, message: 'Delivery queued again' });
  });
}
