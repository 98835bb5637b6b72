import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, DEFAULT_WEBHOOK_RETRY_SCHEDULE, loadConfig } from '../src/config.js';
import { SYSTEM } from '../src/data/actor.js';
import { audited } from '../src/data/mutations.js';
import { declaredResources } from '../src/data/resource.js';
import { webhookDeliveries, webhookEndpoints } from '../src/db/schema/index.js';
import { leadResource } from '../src/modules/crm/lead-resource.js';
import { isPrivateAddress } from '../src/webhooks/address.js';
import { dispatcherOf } from '../src/webhooks/dispatcher.js';
import { EVENT_TYPES, RESOURCE_EVENTS, RESOURCES_WITHOUT_EVENTS } from '../src/webhooks/events.js';
import { secretProblem } from '../src/webhooks/signature.js';
import { adminOf, make } from './factories.js';
import { as, createTestApp, createUser, eventually, none, PATIENCE_MS, resolvedOpenapi, type TestContext, waitFor } from './helpers.js';
import { confirmPathOf, outboxReader } from './mail.js';

// Outgoing webhooks, through HTTP with a real receiver on a local port: endpoints and their secret,
// events recorded in the transaction of the change, delivery by the job queue with retries, Standard Webhooks
// signatures (checked with the `standardwebhooks` package), the delivery log, test events, retries, and SSRF rules.

type Received = { path: string; headers: IncomingHttpHeaders; body: string };

/** A local receiver: records every request; each path answers the status set for it (204 by default; 0: no answer). */
async function startReceiver(port = 0) {
  const received: Received[] = [];
  /** Paths of requests whose client closed the connection before any answer (cut short). */
  const abandoned: string[] = [];
  const answers = new Map<string, { status: number; location?: string }>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body });
      const answer = answers.get(path) ?? { status: 204 };
      if (answer.status === 0) {
        res.on('close', () => abandoned.push(path));
        return; // never answers
      }
      res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
      res.end(answer.status >= 400 ? `failure at ${path}` : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  return {
    port: actualPort,
    url: (path: string) => `http://127.0.0.1:${actualPort}${path}`,
    at: (path: string) => received.filter((r) => r.path === path),
    abandonedAt: (path: string) => abandoned.filter((p) => p === path).length,
    answer: (path: string, status: number, location?: string) => answers.set(path, { status, location }),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

let ctx: TestContext;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let admin: Awaited<ReturnType<typeof adminOf>>;
let paths = 0;
/** A path of its own for each endpoint, so tests sharing the receiver never see each other's requests. */
const newPath = () => `/hook/${++paths}-${uuidv7().slice(-6)}`;

beforeAll(async () => {
  receiver = await startReceiver();
  // Three retries, a second apart: the whole schedule runs within a test. A POST's timeout longer than any test: only
  // stopping the queue can cut one short.
  ctx = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '0.1,0.1,0.1', WEBHOOK_TIMEOUT_MS: '120000' }, { jobs: true });
  admin = await adminOf(ctx);
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

/** Registers an endpoint as the admin; returns its id, secret and path. */
async function endpoint(events: string[], extra: Record<string, unknown> = {}, path = newPath()) {
  const res = await as(ctx, admin).post('/api/iam/webhooks', { url: receiver.url(path), events, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  const { id, secret } = res.json();
  return { id: id as string, secret: secret as string, path };
}

/** The delivery log of an endpoint, through the API. */
async function log(id: string, query = 'limit=100') {
  const res = await as(ctx, admin).get(`/api/iam/webhooks/${id}/deliveries?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Record<string, any>[]; pagination: Record<string, number> };
}

/** Checks a received request's signature with the standardwebhooks package and returns the payload it holds. */
function verified(secret: string, request: Received) {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, any> };
}

/** The payloads `path` received, each verified, in arrival order. */
const payloadsAt = (secret: string, path: string) => receiver.at(path).map((r) => verified(secret, r));

async function receivedAt(path: string, n: number, what = `${n} request(s) at ${path}`) {
  await waitFor(() => receiver.at(path).length >= n, PATIENCE_MS, what);
  return receiver.at(path);
}

const deliveryRows = (endpointId: string) => ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpoint_id, endpointId));

/**
 * An endpoint's deliveries once none is pending (rows are written with the change, in its transaction): from then on
 * no request can come for it, so what its path received is all it will receive.
 */
async function settled(endpointId: string) {
  await waitFor(async () => (await deliveryRows(endpointId)).every((d) => d.status !== 'pending'), PATIENCE_MS, 'no pending delivery');
  return deliveryRows(endpointId);
}

describe('endpoints', () => {
  test('create, read, update, rotate and delete; the secret is shown once and never logged', async () => {
    const path = newPath();
    const created = await as(ctx, admin).post('/api/iam/webhooks', { url: receiver.url(path), description: '  CRM sync  ', events: ['lead.created', 'lead.created', 'inquiry.received'] });
    expect(created.statusCode).toBe(201);
    const { id, secret, message } = created.json();
    expect(message).toMatch(/secret/i);
    expect(secretProblem(secret)).toBeNull();
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const detail = await as(ctx, admin).get(`/api/iam/webhooks/${id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toEqual({
      id, url: receiver.url(path), description: 'CRM sync', events: ['lead.created', 'inquiry.received'], enabled: true,
      created_by: { id: admin.id, name: 'Factory Admin' }, created_at: expect.any(String), updated_at: expect.any(String),
    });
    const list = await as(ctx, admin).get('/api/iam/webhooks?limit=100');
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((w: { id: string }) => w.id)).toContain(id);
    expect(list.body).not.toContain(secret);
    expect(detail.body).not.toContain('secret');

    expect((await as(ctx, admin).patch(`/api/iam/webhooks/${id}`, { enabled: false, events: ['*'] })).statusCode).toBe(200);
    expect((await as(ctx, admin).get(`/api/iam/webhooks/${id}`)).json()).toMatchObject({ enabled: false, events: ['*'] });
    expect((await as(ctx, admin).get('/api/iam/webhooks?enabled=false&limit=100')).json().data.map((w: { id: string }) => w.id)).toContain(id);
    // `event` lists the endpoints that receive it: `*` does.
    expect((await as(ctx, admin).get('/api/iam/webhooks?event=campaign.sent&limit=100')).json().data.map((w: { id: string }) => w.id)).toContain(id);

    const rotated = await as(ctx, admin).post(`/api/iam/webhooks/${id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const fresh = rotated.json().secret;
    expect(secretProblem(fresh)).toBeNull();
    expect(fresh).not.toBe(secret);
    const given = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    expect((await as(ctx, admin).post(`/api/iam/webhooks/${id}/rotate-secret`, { secret: given })).json().secret).toBe(given);
    expect((await as(ctx, admin).post(`/api/iam/webhooks/${id}/rotate-secret`, { secret: 'whsec_short' })).json().details.secret).toMatch(/base64|bytes/);

    expect((await as(ctx, admin).delete(`/api/iam/webhooks/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, admin).get(`/api/iam/webhooks/${id}`)).statusCode).toBe(404);

    const logs = await as(ctx, admin).get(`/api/iam/activity-logs?resource=webhooks&resource_id=${id}&sort=created_at&order=asc`);
    expect(logs.json().data.map((l: { action: string }) => l.action)).toEqual(['create', 'update', 'update', 'update', 'delete']);
    for (const s of [secret, fresh, given]) expect(logs.body).not.toContain(s);
    expect(logs.body).not.toContain('whsec_');
    expect(logs.json().data[2].changes).toEqual({ before: { credential: null }, after: { credential: 'replaced' } });
  });

  test('a secret may be given when it is a Standard Webhooks secret', async () => {
    const secret = `whsec_${Buffer.alloc(40, 1).toString('base64')}`;
    const res = await as(ctx, admin).post('/api/iam/webhooks', { url: receiver.url(newPath()), events: ['lead.created'], secret });
    expect(res.statusCode).toBe(201);
    expect(res.json().secret).toBe(secret);
    for (const bad of ['plain-text', 'whsec_!!!!', `whsec_${Buffer.alloc(16).toString('base64')}`, `whsec_${Buffer.alloc(65).toString('base64')}`]) {
      const refused = await as(ctx, admin).post('/api/iam/webhooks', { url: receiver.url(newPath()), events: ['lead.created'], secret: bad });
      expect(refused.statusCode, bad).toBe(400);
      expect(Object.keys(refused.json().details)).toEqual(['secret']);
    }
  });

  test('validation errors name the field', async () => {
    const post = (body: Record<string, unknown>) => as(ctx, admin).post('/api/iam/webhooks', body);
    const url = receiver.url('/valid');
    const details = async (body: Record<string, unknown>) => {
      const res = await post(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      return res.json().details as Record<string, string>;
    };
    expect((await details({ url: 'ftp://example.com/hook', events: ['lead.created'] })).url).toMatch(/http/);
    expect((await details({ url: 'not a url', events: ['lead.created'] })).url).toBeDefined();
    expect((await details({ url: `https://example.com/${'a'.repeat(2000)}`, events: ['lead.created'] })).url).toBeDefined();
    expect((await details({ url, events: [] })).events).toBeDefined();
    expect((await details({ url })).events).toBe('is required');
    expect((await details({ events: ['lead.created'] })).url).toBe('is required');
    const unknown = await details({ url, events: ['lead.created', 'lead.exploded'] });
    expect(unknown.events).toContain('lead.exploded');
    expect(unknown.events).toContain('is not a known event type');
    expect((await details({ url, events: ['activity_log.created'] })).events).toContain('activity_log.created');
    expect((await details({ url, events: ['webhook.created'] })).events).toContain('webhook.created');
    expect((await details({ url, events: ['lead.created'], id: uuidv7() })).id).toBe('is not an allowed field');
    const { id } = await endpoint(['lead.created']);
    const patch = await as(ctx, admin).patch(`/api/iam/webhooks/${id}`, { events: ['inquiry.received', 'nope'] });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().details.events).toContain('"nope"');
    expect((await as(ctx, admin).patch(`/api/iam/webhooks/${id}`, {})).statusCode).toBe(400);
    expect((await as(ctx, admin).patch(`/api/iam/webhooks/${id}`, { url: 'javascript:alert(1)' })).json().details.url).toBeDefined();
    expect((await as(ctx, admin).get(`/api/iam/webhooks/${id}/deliveries?status=lost`)).json().details.status).toBeDefined();
    expect((await as(ctx, admin).get(`/api/iam/webhooks/${uuidv7()}/deliveries`)).statusCode).toBe(404);
    expect((await as(ctx, admin).get(`/api/iam/webhooks/deliveries/${uuidv7()}`)).statusCode).toBe(404);
    expect((await as(ctx, admin).post(`/api/iam/webhooks/${uuidv7()}/test`)).statusCode).toBe(404);
  });

  test('permissions: iam read lists, iam write changes, iam delete deletes; crm rights give nothing', async () => {
    const { id } = await endpoint(['lead.created']);
    const crm = await createUser(ctx, { crm: 'rwd' });
    const reader = await createUser(ctx, { iam: 'r' });
    const writer = await createUser(ctx, { iam: 'rw' });
    const body = { url: receiver.url(newPath()), events: ['lead.created'] };
    for (const [method, url, payload] of [
      ['GET', '/api/iam/webhooks'], ['GET', `/api/iam/webhooks/${id}`], ['GET', `/api/iam/webhooks/${id}/deliveries`], ['GET', '/api/iam/webhooks/event-types'],
      ['POST', '/api/iam/webhooks', body], ['PATCH', `/api/iam/webhooks/${id}`, { enabled: false }], ['POST', `/api/iam/webhooks/${id}/test`],
      ['POST', `/api/iam/webhooks/${id}/rotate-secret`], ['DELETE', `/api/iam/webhooks/${id}`],
    ] as const) {
      const res = await as(ctx, crm).request(method, url, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toEqual({ error: 'Insufficient permissions' });
      expect((await as(ctx, none).request(method, url, payload)).statusCode, `${method} ${url} signed out`).toBe(401);
    }
    expect((await as(ctx, reader).get('/api/iam/webhooks')).statusCode).toBe(200);
    expect((await as(ctx, reader).get(`/api/iam/webhooks/${id}/deliveries`)).statusCode).toBe(200);
    expect((await as(ctx, reader).post('/api/iam/webhooks', body)).statusCode).toBe(403);
    expect((await as(ctx, reader).post(`/api/iam/webhooks/${id}/rotate-secret`)).statusCode).toBe(403);
    // 403 comes before validation: a bad body tells a reader nothing.
    expect((await as(ctx, reader).post('/api/iam/webhooks', { events: ['nope'] })).statusCode).toBe(403);
    expect((await as(ctx, writer).post('/api/iam/webhooks', body)).statusCode).toBe(201);
    expect((await as(ctx, writer).patch(`/api/iam/webhooks/${id}`, { description: 'x' })).statusCode).toBe(200);
    expect((await as(ctx, writer).delete(`/api/iam/webhooks/${id}`)).statusCode).toBe(403);
  });

  test('event types: one list, every audited resource but the activity log and the webhook tables', async () => {
    const res = await as(ctx, admin).get('/api/iam/webhooks/event-types');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([...EVENT_TYPES]);
    for (const type of ['lead.created', 'inventory_unit.updated', 'newsletter_subscription.deleted', 'gallery_image.created', 'module_access.updated',
      'user.deleted', 'department.created', 'project.updated', 'article.deleted', 'career.created', 'amenity.updated', 'campaign.deleted',
      'inquiry.created', 'reservation.updated', 'inquiry.received', 'newsletter.subscribed', 'reservation.status_changed', 'campaign.sent']) {
      expect(EVENT_TYPES, type).toContain(type);
    }
    const snake = (label: string) => label.toLowerCase().replace(/[^a-z0-9]+/g, '_');
    const names = new Set(declaredResources().map((r) => r.name));
    expect(names.size).toBeGreaterThan(10);
    for (const resource of declaredResources()) {
      if ((RESOURCES_WITHOUT_EVENTS as readonly string[]).includes(resource.name)) continue;
      expect((RESOURCE_EVENTS as Record<string, string>)[resource.name], resource.name).toBe(snake(resource.label));
    }
    // The OpenAPI document carries the list as the enum of `events`.
    const doc = await resolvedOpenapi(ctx);
    const input = doc.paths['/api/iam/webhooks'].post.requestBody.content['application/json'].schema;
    expect(input.properties.events.items.enum).toEqual([...EVENT_TYPES, '*']);
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { summary?: string; description?: string }>>)) {
      if (!path.startsWith('/api/iam/webhooks')) continue;
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.summary, `${method} ${path}`).toBeTruthy();
        expect(operation.description, `${method} ${path}`).toBeTruthy();
      }
    }
  });
});

describe('events are recorded with the change and delivered signed', () => {
  test('a lead created, updated and deleted arrives at the endpoint, each signed and verifiable', async () => {
    const { id, secret, path } = await endpoint(['lead.created', 'lead.updated', 'lead.deleted']);
    const lead = await make.lead(ctx, { first_name: 'Ana', email: 'ana-hook@example.com' });
    expect((await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { status: 'contacted' })).statusCode).toBe(200);
    expect((await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`)).statusCode).toBe(200);
    const requests = await receivedAt(path, 3);
    const payloads = requests.map((r) => verified(secret, r));
    const byType = Object.fromEntries(payloads.map((p) => [p.type, p]));
    expect(Object.keys(byType).sort()).toEqual(['lead.created', 'lead.deleted', 'lead.updated']);
    expect(byType['lead.created'].data).toEqual({ id: lead.id, resource: 'leads', after: expect.objectContaining({ id: lead.id, first_name: 'Ana', email: 'ana-hook@example.com', status: 'new' }) });
    expect(byType['lead.created'].data.before).toBeUndefined();
    expect(byType['lead.updated'].data).toEqual({ id: lead.id, resource: 'leads', before: { status: 'new' }, after: { status: 'contacted' } });
    expect(byType['lead.deleted'].data).toMatchObject({ id: lead.id, resource: 'leads', before: { first_name: 'Ana', status: 'contacted' } });
    expect(byType['lead.deleted'].data.after).toBeUndefined();
    expect(Date.parse(byType['lead.created'].timestamp)).not.toBeNaN();
    for (const r of requests) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
    // A body changed in transit, or another secret, fails verification.
    expect(() => new Webhook(secret).verify(requests[0].body.replace('lead', 'LEAD'), requests[0].headers as Record<string, string>)).toThrow();
    expect(() => verified(`whsec_${Buffer.alloc(32, 9).toString('base64')}`, requests[0])).toThrow();

    // The delivery log: each delivered at the first attempt; `webhook-id` is the delivery's id.
    await waitFor(async () => (await log(id)).data.every((d) => d.status === 'delivered'), PATIENCE_MS, 'the log to show every delivery delivered');
    const { data, pagination } = await log(id);
    expect(pagination).toEqual({ page: 1, limit: 100, total: 3, totalPages: 1 });
    expect(data.map((d) => d.event_type)).toEqual(['lead.deleted', 'lead.updated', 'lead.created']); // newest first
    expect(data[0]).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 204, last_error: null, next_attempt_at: null, delivered_at: expect.any(String) });
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set(data.map((d) => d.id)));
    const detail = await as(ctx, admin).get(`/api/iam/webhooks/deliveries/${data[1].id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.json().payload).toEqual(byType['lead.updated']);
    expect((await log(id, 'status=failed')).pagination.total).toBe(0);
    expect((await log(id, 'status=delivered&limit=2&page=2')).data).toHaveLength(1);
  });

  test('the event rows are written by the statement that writes the activity log (no extra round trip)', async () => {
    await endpoint(['lead.created', 'lead.updated']);
    const statements: string[] = [];
    const observe = (text: string) => statements.push(text);
    ctx.database.queryObservers.add(observe);
    try {
      const lead = await make.lead(ctx);
      expect((await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { notes: 'called' })).statusCode).toBe(200);
    } finally {
      ctx.database.queryObservers.delete(observe);
    }
    const recording = statements.filter((s) => s.includes('insert into "webhook_deliveries"'));
    expect(recording).toHaveLength(2);
    // The create is one statement: the lead, its activity log, its change-log entries and its deliveries.
    expect(recording[0]).toMatch(/insert into "leads"/);
    for (const s of recording) expect(s).toMatch(/insert into "activity_logs"/);
  });

  test('no secret in a payload: a created user carries no password or hash', async () => {
    const { secret, path } = await endpoint(['user.created']);
    await make.user(ctx, { name: 'Hooked User', password: 'Str0ng!pass-hook' });
    await receivedAt(path, 1);
    const [payload] = payloadsAt(secret, path);
    expect(payload.data.after).toMatchObject({ name: 'Hooked User' });
    expect(JSON.stringify(payload)).not.toMatch(/password|hash|Str0ng/i);
  });

  test('an event type the endpoint does not subscribe to is not recorded nor delivered; a disabled endpoint gets nothing', async () => {
    const deletes = await endpoint(['lead.deleted']);
    const disabled = await endpoint(['*'], { enabled: false });
    const lead = await make.lead(ctx);
    expect((await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { notes: 'x' })).statusCode).toBe(200);
    expect(await deliveryRows(deletes.id)).toHaveLength(0);
    expect(await deliveryRows(disabled.id)).toHaveLength(0);
    expect((await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`)).statusCode).toBe(200);
    const [request] = await receivedAt(deletes.path, 1);
    expect(verified(deletes.secret, request).type).toBe('lead.deleted');
    expect((await settled(deletes.id)).map((d) => [d.event_type, d.status, d.attempts])).toEqual([['lead.deleted', 'delivered', 1]]);
    expect(receiver.at(deletes.path)).toHaveLength(1);
    expect(receiver.at(disabled.path)).toHaveLength(0);
    expect(await deliveryRows(disabled.id)).toHaveLength(0);
  });

  test('a change rolled back leaves no delivery: a direct audited call that throws, and a request refused after its write', async () => {
    const all = await endpoint(['*']);
    const marker = `Rollback ${uuidv7()}`;
    await expect(audited(ctx.database.db, SYSTEM, async (work) => {
      await work.create(leadResource, { first_name: marker, last_name: 'X', phone: '1' });
      throw new Error('changed my mind');
    })).rejects.toThrow('changed my mind');
    expect(await deliveryRows(all.id)).toHaveLength(0);

    // A reservation of a sold unit: the cancel is written (and its events with it), then freeing the unit refuses (409).
    const reservations = await endpoint(['reservation.updated', 'reservation.status_changed']);
    const reservation = await make.reservation(ctx);
    const unit = (await as(ctx, admin).get(`/api/crm/reservations/${reservation.id}`)).json().inventory.id;
    expect((await as(ctx, admin).patch('/api/projects/inventory', { inventory_id: unit, sold_to: reservation.id, status: 'sold' })).statusCode).toBe(200);
    const before = (await deliveryRows(reservations.id)).length;
    const refused = await as(ctx, admin).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' });
    expect(refused.statusCode).toBe(409);
    expect((await deliveryRows(reservations.id)).length).toBe(before);
    const rows = await ctx.database.db.select().from(webhookDeliveries)
      .where(sql`${webhookDeliveries.payload} -> 'data' ->> 'id' = ${reservation.id}`);
    expect(rows.filter((r) => r.event_type.startsWith('reservation.') && JSON.stringify(r.payload).includes('cancelled'))).toHaveLength(0);
    expect((await as(ctx, admin).get(`/api/crm/reservations/${reservation.id}`)).json().status).toBe('pending');
  });
});

describe('named events', () => {
  test('a public inquiry is inquiry.received (a staff one is not)', async () => {
    const { id, secret, path } = await endpoint(['inquiry.received']);
    const res = await as(ctx, none).post('/api/public/inquiries', { name: 'Visitor', email: 'Visitor@Example.com', subject: 'Price list', message: 'Please send it' });
    expect(res.statusCode).toBe(201);
    await make.inquiry(ctx, { subject: 'Staff-recorded' });
    const [request] = await receivedAt(path, 1);
    const payload = verified(secret, request);
    expect(payload).toMatchObject({ type: 'inquiry.received', data: { id: res.json().id, resource: 'inquiries', after: { email: 'visitor@example.com', subject: 'Price list', status: 'unread' } } });
    expect(await settled(id)).toHaveLength(1);
    expect(receiver.at(path)).toHaveLength(1);
  });

  test('a public subscription, new or re-activated, is newsletter.subscribed', async () => {
    const { id, secret, path } = await endpoint(['newsletter.subscribed']);
    const email = `hook-reader-${uuidv7().slice(-8)}@example.com`;
    const outbox = outboxReader(ctx);
    // Subscribed when the e-mailed link is followed: the event comes then, not with the sign-up.
    expect((await as(ctx, none).post('/api/public/newsletter', { email, name: 'Reader' })).statusCode).toBe(200);
    expect((await as(ctx, none).get(confirmPathOf(await outbox.next(email)))).statusCode).toBe(200);
    expect((await as(ctx, none).post('/api/public/newsletter', { email })).statusCode).toBe(200); // already subscribed: no event
    await receivedAt(path, 1);
    const [first] = payloadsAt(secret, path);
    expect(first.data).toMatchObject({ resource: 'newsletters', resubscribed: false, after: { email, name: 'Reader', status: 'subscribed' } });
    expect((await as(ctx, admin).patch(`/api/crm/newsletters/${first.data.id}`, { status: 'unsubscribed' })).statusCode).toBe(200);
    expect((await as(ctx, none).post('/api/public/newsletter', { email })).statusCode).toBe(200);
    expect((await as(ctx, none).get(confirmPathOf(await outbox.next(email)))).statusCode).toBe(200);
    await receivedAt(path, 2);
    const second = payloadsAt(secret, path)[1];
    expect(second.data).toMatchObject({ id: first.data.id, resubscribed: true, after: { email, status: 'subscribed', unsubscribed_at: null } });
    expect((await settled(id)).map((d) => d.attempts)).toEqual([1, 1]);
    expect(receiver.at(path)).toHaveLength(2);
  });

  test('a reservation whose status moves is reservation.status_changed with from and to', async () => {
    const { secret, path } = await endpoint(['reservation.status_changed']);
    const reservation = await make.reservation(ctx);
    expect((await as(ctx, admin).patch(`/api/crm/reservations/${reservation.id}`, { notes: 'no status change' })).statusCode).toBe(200);
    expect((await as(ctx, admin).patch(`/api/crm/reservations/${reservation.id}`, { status: 'confirmed' })).statusCode).toBe(200);
    expect((await as(ctx, admin).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    await receivedAt(path, 2);
    const payloads = payloadsAt(secret, path).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(payloads.map((p) => p.data)).toEqual([
      { id: reservation.id, resource: 'reservations', from: 'pending', to: 'confirmed' },
      { id: reservation.id, resource: 'reservations', from: 'confirmed', to: 'cancelled' },
    ]);
  });

  test("a campaign's finished delivery is campaign.sent, once, with its counts", async () => {
    const { id, secret, path } = await endpoint(['campaign.sent']);
    const campaign = await make.campaign(ctx, { recipients: ['one-hook@example.com', 'two-hook@example.com'] });
    expect((await as(ctx, admin).post(`/api/crm/campaigns/${campaign.id}/send`)).statusCode).toBe(200);
    const [request] = await receivedAt(path, 1);
    expect(verified(secret, request)).toMatchObject({
      type: 'campaign.sent', data: { id: campaign.id, resource: 'campaigns', name: campaign.name, deliveries: { total: 2, sent: 2, failed: 0 } },
    });
    // Announcing again (a duplicate job finishing) records nothing new.
    const { announceSent } = await import('../src/modules/crm/delivery.js');
    await announceSent({ config: ctx.config, database: ctx.database, mailer: ctx.app.mailer, log: ctx.app.log, jobs: ctx.app.jobs }, campaign.id);
    expect((await log(id)).pagination.total).toBe(1);
  });
});

describe('delivery', () => {
  test('a receiver that is down: attempts and the error are recorded, and when it comes back a retry delivers', async () => {
    // A service of its own whose one retry is an hour away: the retry is made due by the test, once the receiver is
    // back, so no second-long schedule races a slow machine between the failure and the receiver's return.
    const patient = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '3600', WEBHOOK_TIMEOUT_MS: '120000' }, { jobs: true });
    const down = await startReceiver();
    const port = down.port;
    await down.close(); // nothing listens there now
    let up: Awaited<ReturnType<typeof startReceiver>> | undefined;
    try {
      const owner = await adminOf(patient);
      const deliveries = async (id: string) => (await as(patient, owner).get(`/api/iam/webhooks/${id}/deliveries`)).json().data as Record<string, any>[];
      const path = '/down-then-up';
      const res = await as(patient, owner).post('/api/iam/webhooks', { url: `http://127.0.0.1:${port}${path}`, events: ['lead.created'] });
      expect(res.statusCode).toBe(201);
      const { id, secret } = res.json();
      const lead = await make.lead(patient);
      const failed = await eventually(async () => (await deliveries(id)).find((d) => d.attempts >= 1 && d.last_error), 'a failed first attempt');
      expect(failed).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, next_attempt_at: expect.any(String), delivered_at: null });
      expect(failed.last_error).toMatch(/ECONNREFUSED/);
      expect(Date.parse(failed.next_attempt_at) - Date.parse(failed.last_attempt_at ?? failed.created_at)).toBeGreaterThan(3000 * 1000);
      up = await startReceiver(port);
      // The hour passes: the retry falls due now, and the dispatcher is told (as a commit or its schedule would).
      await patient.database.execute('update webhook_deliveries set next_attempt_at = now() where id = $1', [failed.id]);
      dispatcherOf({ jobs: patient.app.jobs })!.nudge();
      await waitFor(() => up!.at(path).length > 0, PATIENCE_MS, 'the retry to arrive');
      const [request] = up.at(path);
      expect(verified(secret, request).data.id).toBe(lead.id);
      const delivered = await eventually(async () => (await deliveries(id)).find((d) => d.status === 'delivered'), 'the delivery to be delivered');
      expect(delivered).toMatchObject({ id: failed.id, attempts: 2, last_error: null });
      expect(request.headers['webhook-id']).toBe(failed.id); // the same message id on every attempt
    } finally {
      await up?.close();
      await patient.close();
    }
  });

  test('a delivery failing every attempt ends failed; a manual retry sends it again', async () => {
    const { id, secret, path } = await endpoint(['lead.created']);
    receiver.answer(path, 500);
    await make.lead(ctx);
    const failed = await eventually(async () => (await log(id, 'status=failed')).data[0], 'the delivery to fail');
    expect(failed).toMatchObject({ attempts: 4, last_status_code: 500, next_attempt_at: null, delivered_at: null }); // first try + 3 retries
    expect(failed.last_error).toMatch(/^HTTP 500: failure at/);
    expect(receiver.at(path)).toHaveLength(4);
    receiver.answer(path, 200);
    const retried = await as(ctx, admin).post(`/api/iam/webhooks/deliveries/${failed.id}/retry`);
    expect(retried.statusCode).toBe(202);
    expect(retried.json()).toEqual({ id: failed.id, message: expect.any(String) });
    const delivered = await eventually(async () => (await log(id)).data.find((d) => d.id === failed.id && d.status === 'delivered'), 'the retry to deliver');
    expect(delivered).toMatchObject({ attempts: 5, last_status_code: 200, last_error: null });
    expect(verified(secret, receiver.at(path)[4]).type).toBe('lead.created');
    expect((await as(ctx, admin).post(`/api/iam/webhooks/deliveries/${failed.id}/retry`)).statusCode).toBe(409);
    expect((await as(ctx, admin).post(`/api/iam/webhooks/deliveries/${uuidv7()}/retry`)).statusCode).toBe(404);
    const logs = await as(ctx, admin).get(`/api/iam/activity-logs?resource=webhook_deliveries&resource_id=${failed.id}`);
    expect(logs.json().data[0].changes).toEqual({ before: { status: 'failed' }, after: { status: 'pending' } });
  });

  test('a redirect is not followed', async () => {
    const { id, path } = await endpoint(['lead.created']);
    const elsewhere = newPath();
    receiver.answer(path, 302, receiver.url(elsewhere));
    await make.lead(ctx);
    const attempt = await eventually(async () => (await log(id)).data.find((d) => d.last_status_code === 302), 'the redirect answer');
    expect(attempt.last_error).toMatch(/redirects are not followed/);
    expect(receiver.at(elsewhere)).toHaveLength(0);
    await as(ctx, admin).delete(`/api/iam/webhooks/${id}`);
  });

  test('the test event goes to that endpoint only, whatever it subscribes to', async () => {
    const { id, secret, path } = await endpoint(['campaign.sent']);
    const bystander = await endpoint(['*']);
    const res = await as(ctx, admin).post(`/api/iam/webhooks/${id}/test`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ id: expect.any(String), message: 'Test event queued' });
    const [request] = await receivedAt(path, 1);
    expect(request.headers['webhook-id']).toBe(res.json().id);
    expect(verified(secret, request)).toMatchObject({ type: 'webhook.test', data: { endpoint_id: id } });
    // The test event is a delivery to its endpoint alone: the bystander has none, so nothing can come to it.
    expect(await settled(id)).toHaveLength(1);
    expect(await deliveryRows(bystander.id)).toHaveLength(0);
    expect(receiver.at(bystander.path)).toHaveLength(0);
    expect((await log(id)).data[0]).toMatchObject({ id: res.json().id, event_type: 'webhook.test', status: 'delivered' });
    const logged = await as(ctx, admin).get(`/api/iam/activity-logs?resource=webhook_deliveries&resource_id=${res.json().id}`);
    expect(logged.json().data[0]).toMatchObject({ action: 'create', user: { id: admin.id } });
  });

  test('deliveries a crash left (pending, due) are delivered when the queue starts', async () => {
    const { id, secret, path } = await endpoint(['lead.created']);
    // Written as an earlier process would have left it: pending, due, never attempted; then a fresh start picks it up.
    const [row] = await ctx.database.db.insert(webhookDeliveries).values({
      endpoint_id: id, event_type: 'lead.created', next_attempt_at: new Date(Date.now() - 1000),
      payload: { type: 'lead.created', timestamp: new Date().toISOString(), data: { id: uuidv7(), resource: 'leads', after: {} } },
    }).returning();
    await ctx.app.jobs.stop();
    await ctx.app.jobs.start({ config: ctx.config, database: ctx.database, mailer: ctx.app.mailer, log: ctx.app.log });
    const [request] = await receivedAt(path, 1);
    expect(request.headers['webhook-id']).toBe(row.id);
    expect(verified(secret, request).type).toBe('lead.created');
  });
});

describe('shutdown and retention', () => {
  test('stopping the queue cuts a POST in flight short and hands its delivery back, due at once, no attempt spent', async () => {
    const { id, secret, path } = await endpoint(['lead.created']);
    receiver.answer(path, 0);
    await make.lead(ctx);
    await receivedAt(path, 1, 'the POST to be in flight');
    await ctx.app.jobs.stop();
    // The POST's own timeout (WEBHOOK_TIMEOUT_MS here) is longer than the test: only the stop can have cut it short.
    await waitFor(() => receiver.abandonedAt(path) === 1, PATIENCE_MS, 'the POST in flight to be abandoned');
    const [row] = await deliveryRows(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, last_error: null });
    expect(row.next_attempt_at!.getTime()).toBeLessThanOrEqual(Date.now());
    receiver.answer(path, 204);
    await ctx.app.jobs.start({ config: ctx.config, database: ctx.database, mailer: ctx.app.mailer, log: ctx.app.log });
    await receivedAt(path, 2);
    expect(verified(secret, receiver.at(path)[1]).type).toBe('lead.created');
    await eventually(async () => (await log(id)).data.find((d) => d.status === 'delivered' && d.attempts === 1), 'delivered at its first counted attempt');
  });

  test('finished deliveries older than the retention are purged; pending ones stay', async () => {
    const { purgeDeliveries } = await import('../src/webhooks/dispatcher.js');
    const { id } = await endpoint(['campaign.sent'], { enabled: false });
    const old = new Date(Date.now() - 31 * 24 * 3600 * 1000);
    const payload = { type: 'campaign.sent', timestamp: old.toISOString(), data: {} };
    const rows = await ctx.database.db.insert(webhookDeliveries).values([
      { endpoint_id: id, event_type: 'campaign.sent', payload, status: 'delivered', created_at: old },
      { endpoint_id: id, event_type: 'campaign.sent', payload, status: 'failed', created_at: old },
      { endpoint_id: id, event_type: 'campaign.sent', payload, status: 'pending', created_at: old, next_attempt_at: new Date() },
      { endpoint_id: id, event_type: 'campaign.sent', payload, status: 'delivered', created_at: new Date() },
    ]).returning();
    expect(await purgeDeliveries(ctx, 30)).toBeGreaterThanOrEqual(2);
    expect((await deliveryRows(id)).map((r) => r.id).sort()).toEqual([rows[2].id, rows[3].id].sort());
  });
});

describe('SSRF', () => {
  test('private, loopback and link-local addresses', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a00:1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:808:808']) expect(isPrivateAddress(address), address).toBe(false);
  });

  test('in production such URLs are refused (400 details.url) unless WEBHOOK_ALLOW_PRIVATE, and again at delivery after resolution', async () => {
    const production = await createTestApp({ NODE_ENV: 'production', WEBHOOK_TIMEOUT_MS: '2000' }, { jobs: true });
    const allowing = await createTestApp({ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: 'true' });
    try {
      const boss = await createUser(production, { iam: 'rwd', crm: 'rwd' });
      for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://app.localhost/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest',
        'http://10.0.0.5/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://2130706433/hook', 'http://0x7f.1/hook']) {
        const res = await as(production, boss).post('/api/iam/webhooks', { url, events: ['lead.created'] });
        expect(res.statusCode, url).toBe(400);
        expect(res.json().details.url, url).toMatch(/loopback|private|localhost/);
      }
      const allowed = await createUser(allowing, { iam: 'rwd' });
      expect((await as(allowing, allowed).post('/api/iam/webhooks', { url: 'http://127.0.0.1:8080/hook', events: ['lead.created'] })).statusCode).toBe(201);

      // Stored before the rule applied (or a name that resolved elsewhere then): refused when delivering, nothing sent.
      const path = newPath();
      const stored = await production.database.db.insert(webhookEndpoints).values([
        { url: receiver.url(path), events: ['lead.created'], secret: `whsec_${Buffer.alloc(32).toString('base64')}` },
        { url: `http://localhost:${receiver.port}${path}`, events: ['lead.created'], secret: `whsec_${Buffer.alloc(32).toString('base64')}` },
      ]).returning();
      expect((await as(production, boss).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '1' })).statusCode).toBe(201);
      for (const endpoint of stored) {
        const attempt = await eventually(async () => {
          const [row] = await production.database.db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.endpoint_id, endpoint.id)));
          return row?.last_error ? row : undefined;
        }, `the delivery to ${endpoint.url} to be refused`);
        expect(attempt.last_error).toMatch(/refused: .*(loopback|private)/);
        expect(attempt.last_status_code).toBeNull();
      }
      expect(receiver.at(path)).toHaveLength(0);
    } finally {
      await production.close();
      await allowing.close();
    }
  });
});

describe('configuration', () => {
  test('WEBHOOK_RETRY_SCHEDULE: Standard Webhooks by default (over 24 h), a list of seconds when set', () => {
    const base = { AUTH_SECRET: 'x'.repeat(40), DATA_DIR: ctx.config.dataDir };
    expect(loadConfig(base).webhookRetrySchedule).toEqual(DEFAULT_WEBHOOK_RETRY_SCHEDULE);
    expect(DEFAULT_WEBHOOK_RETRY_SCHEDULE.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * 3600);
    expect(loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '1, 2,3' }).webhookRetrySchedule).toEqual([1, 2, 3]);
    expect(loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '0.5,1.25,604800' }).webhookRetrySchedule).toEqual([0.5, 1.25, 604800]);
    for (const bad of ['0.0001', '1e3', '-1', '.5', '604801', '1,,2']) expect(() => loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: bad }), bad).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '' }).webhookRetrySchedule).toEqual([]);
    expect(() => loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '5,soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '5,soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ ...base, WEBHOOK_ALLOW_PRIVATE: 'maybe' })).toThrow(/WEBHOOK_ALLOW_PRIVATE/);
    expect(loadConfig({ ...base, WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate).toBe(true);
    expect(loadConfig(base).webhookTimeoutMs).toBe(10_000);
  });
});
