import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { is } from '../src/data/filters.js';
import { campaigns, imports, privacyRequests, webhookDeliveries, webhookEndpoints } from '../src/db/schema/index.js';
import { localDay } from '../src/modules/crm/tasks.js';
import { adminOf, make } from './factories.js';
import { as, countQueries, createTestApp, resolvedOpenapi, type TestContext } from './helpers.js';

// Every enum filter of every list takes several values, comma-separated (`?status=new,contacted`)
// or repeated (`?status=new&status=contacted`), and the OpenAPI document says so. The lists and their enum parameters
// are read off the document itself, so a list added later is checked without touching this file (and fails here,
// loudly, when nothing seeded lets it be exercised).

type Json = Record<string, any>;
type Admin = Awaited<ReturnType<typeof adminOf>>;

/** Enum query parameters that are not filters: they choose one ordering, so they stay single-valued. */
// One at a time by nature: the order of a list, the grouping of a report.
const ORDERING = new Set(['sort', 'order', 'group_by']);

let ctx: TestContext;
let admin: Admin;
let doc: Json;
/** Concrete paths of lists under a record (`{id}`), for the lists among them that have enum filters. */
const concrete: Record<string, string> = {};
const hooks: Record<string, string> = {};

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await adminOf(ctx);
  const { db } = ctx.database;
  const api = as(ctx, admin);
  const ok = async (reply: Promise<{ statusCode: number; body: string }>, status = 200) => {
    const res = await reply;
    expect(res.statusCode, res.body).toBe(status);
  };

  // Leads: every status but `converted`, every source.
  const leadRows = [['new', 'website'], ['contacted', 'referral'], ['qualified', 'event'], ['new', 'social'], ['lost', 'website']];
  const leadIds: string[] = [];
  for (const [status, source] of leadRows) leadIds.push((await make.lead(ctx, { status, source })).id);
  await ok(api.patch(`/api/crm/leads/${leadIds[1]}`, { notes: 'Called back' })); // an update in the activity log

  // CMS content, published (so the public lists have it too).
  await make.project(ctx, { status: 'active', type: 'residential', published: true });
  await make.project(ctx, { status: 'upcoming', type: 'commercial', published: true });
  await make.project(ctx, { status: 'completed', type: 'mixed-use', published: true });
  for (const type of ['news', 'announcement', 'blog']) await make.article(ctx, { type, published: true });
  for (const employment_type of ['full-time', 'part-time', 'contract']) await make.career(ctx, { employment_type, published: true });
  const amenity = await make.amenity(ctx);
  await ok(api.delete(`/api/cms/amenities/${amenity.id}`)); // a delete in the activity log

  // Inventory and reservations.
  const project = await make.project(ctx, { status: 'on-hold' });
  for (const status of ['available', 'reserved', 'sold']) await make.unit(ctx, { status, project_id: project.id });
  await make.reservation(ctx, { status: 'pending', payment_status: 'unpaid' });
  await make.reservation(ctx, { status: 'confirmed', payment_status: 'partial' });
  const cancelled = await make.reservation(ctx, { status: 'pending', payment_status: 'paid' });
  await ok(api.patch(`/api/crm/reservations/${cancelled.id}`, { status: 'cancelled' }));

  // Inquiries, subscriptions, campaigns.
  const inquiries = [await make.inquiry(ctx), await make.inquiry(ctx), await make.inquiry(ctx)];
  await ok(api.patch(`/api/crm/inquiries/${inquiries[1].id}`, { status: 'read' }));
  await ok(api.patch(`/api/crm/inquiries/${inquiries[2].id}`, { status: 'closed' }));
  await make.newsletter(ctx);
  const unsubscribed = await make.newsletter(ctx);
  await ok(api.patch(`/api/crm/newsletters/${unsubscribed.id}`, { status: 'unsubscribed' }));
  await make.campaign(ctx);
  const scheduled = await make.campaign(ctx);
  const sent = await make.campaign(ctx);
  await db.update(campaigns).set({ status: 'scheduled', scheduled_at: new Date('2099-01-01T09:00:00Z') }).where(eq(campaigns.id, scheduled.id));
  await db.update(campaigns).set({ status: 'sent', sent_at: new Date('2026-01-01T09:00:00Z') }).where(eq(campaigns.id, sent.id));

  // Imports (their rows are written by the import job: here directly).
  await db.insert(imports).values([
    { resource: 'leads', filename: 'leads.csv', status: 'completed', created_by: admin.id },
    { resource: 'inventory', filename: 'units.csv', status: 'failed', failure_reason: 'Not a CSV file', created_by: admin.id },
    { resource: 'newsletters', filename: 'readers.csv', status: 'queued', content: 'email\n', created_by: admin.id },
  ]);

  // Privacy requests: an export and an erase asked for, and a run of the retention job (written by the job: here directly).
  await ok(api.post('/api/crm/privacy-requests', { kind: 'export', email: 'nobody-export@example.com' }), 201);
  await ok(api.post('/api/crm/privacy-requests', { kind: 'erase', email: 'nobody-erase@example.com' }), 201);
  await db.insert(privacyRequests).values({ kind: 'erase', origin: 'retention', found: {} });

  // Webhook endpoints: an event reaches those subscribed to it and those subscribed to everything.
  const endpoint = async (name: string, events: string[]) => {
    const res = await api.post('/api/iam/webhooks', { url: `https://hooks.example.com/${name}`, events });
    expect(res.statusCode, res.body).toBe(201);
    hooks[name] = res.json().id;
  };
  await endpoint('created', ['lead.created']);
  await endpoint('updated', ['lead.updated', 'inquiry.received']);
  await endpoint('everything', ['*']);
  await endpoint('log', ['campaign.sent']);
  // The delivery log of one endpoint, in every status (the dispatcher does not run here).
  const delivery = (status: 'pending' | 'delivered' | 'failed', n: number) => ({
    endpoint_id: hooks.log, event_type: 'campaign.sent', status, payload: { type: 'campaign.sent', n }, attempts: status === 'pending' ? 0 : 1,
    delivered_at: status === 'delivered' ? new Date() : null, last_status_code: status === 'failed' ? 503 : status === 'delivered' ? 204 : null,
  });
  await db.insert(webhookDeliveries).values([delivery('pending', 1), delivery('delivered', 2), delivery('failed', 3), delivery('pending', 4)]);
  concrete['/api/iam/webhooks/{id}/deliveries'] = `/api/iam/webhooks/${hooks.log}/deliveries`;

  // A lead's story: an activity of every kind, and its timeline (creation, a status change, activities).
  const storied = leadIds[0];
  const soon = new Date(Date.now() + 3600_000).toISOString();
  for (const activity of [{ kind: 'note', body: 'Prefers corner lots' }, { kind: 'call', outcome: 'no_answer' }, { kind: 'email', body: 'Sent the price list' },
    { kind: 'meeting', occurred_at: soon, place: 'Office' }, { kind: 'site_visit', occurred_at: soon, place: 'Model house' }]) {
    await ok(api.post(`/api/crm/leads/${storied}/activities`, activity), 201);
  }
  await ok(api.patch(`/api/crm/leads/${storied}`, { status: 'contacted' }));
  concrete['/api/crm/leads/{id}/activities'] = `/api/crm/leads/${storied}/activities`;
  concrete['/api/crm/leads/{id}/timeline'] = `/api/crm/leads/${storied}/timeline`;
  // Follow-ups in every `due` bucket: overdue, later today (in TASK_TIME_ZONE), upcoming; and one done.
  const { end } = localDay(new Date(), ctx.config.taskTimeZone);
  const later = new Date((Date.now() + end.getTime()) / 2);
  for (const due_at of [new Date(Date.now() - 86_400_000), later, new Date(end.getTime() + 86_400_000)]) {
    await ok(api.post('/api/crm/tasks', { title: `Due ${due_at.toISOString()}`, due_at: due_at.toISOString() }), 201);
  }
  await ok(api.post('/api/crm/tasks', { title: 'Done already', due_at: later.toISOString(), done: true }), 201);
  // The trash of each module: deleted records of two resources each.
  await ok(api.delete(`/api/cms/articles/${(await make.article(ctx)).id}`));
  await ok(api.delete(`/api/cms/careers/${(await make.career(ctx)).id}`));
  await ok(api.delete(`/api/crm/leads/${(await make.lead(ctx)).id}`));
  await ok(api.delete(`/api/crm/inquiries/${(await make.inquiry(ctx)).id}`));

  doc = await resolvedOpenapi(ctx);
}, 120_000);
afterAll(async () => {
  await ctx?.close();
});

/** The JSON answer of a GET operation, when it has one. */
const answerOf = (op: Json): Json | undefined => op.responses?.['200']?.content?.['application/json']?.schema;
/** A list: it pages (`page`/`limit`), or answers a `data` array with `pagination`. */
function isList(op: Json): boolean {
  const names = queryOf(op).map((p) => p.name);
  const answer = answerOf(op);
  return names.includes('page') || names.includes('limit') || (answer?.properties?.data?.type === 'array' && Boolean(answer?.properties?.pagination));
}
const queryOf = (op: Json): Json[] => (op.parameters ?? []).filter((p: Json) => p.in === 'query');
/** The enum values of a parameter: its schema's, or its items'. */
const enumOf = (p: Json): unknown[] | undefined => p.schema?.enum ?? p.schema?.items?.enum;

/** Every GET operation with enum query parameters, and whether it is a list. */
function operations() {
  const found: { path: string; op: Json; list: boolean; params: Json[] }[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    if (!item.get) continue;
    const params = queryOf(item.get).filter((p) => enumOf(p));
    found.push({ path, op: item.get, list: isList(item.get), params });
  }
  return found;
}
const enumFilters = (params: Json[]) => params.filter((p) => !ORDERING.has(p.name));

/** The URL of a path template: lists under a record use the seeded record's id; an unknown template fails loudly. */
function urlOf(path: string): string {
  if (!path.includes('{')) return path;
  const url = concrete[path];
  if (!url) throw new Error(`${path}: a list with enum filters under a record this test seeds nothing for; add it to \`concrete\` (and seed its rows)`);
  return url;
}

const encode = (name: string, value: unknown) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`;

/** Every row a list answers for the query (each page of 100), by id, in order; the totals must agree with the rows. */
async function rowsOf(path: string, query: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const res = await as(ctx, admin).get(`${urlOf(path)}?${query}&limit=100&page=${page}`);
    expect(res.statusCode, `GET ${path}?${query}: ${res.body}`).toBe(200);
    const body = res.json();
    for (const row of body.data as Json[]) {
      // A row without an id (a lead's timeline entry) is compared whole.
      ids.push(typeof row.id === 'string' ? row.id : JSON.stringify(row));
    }
    if (page >= body.pagination.totalPages) {
      expect(body.pagination.total, `${path}?${query}: the total counts the rows`).toBe(ids.length);
      return ids;
    }
  }
}

/** Two values of the enum both selecting rows, the second adding rows to the first when some pair can. */
function pairOf(selected: Map<unknown, string[]>): [unknown, unknown] | undefined {
  const values = [...selected.keys()].filter((value) => selected.get(value)!.length > 0);
  let best: [unknown, unknown] | undefined;
  let gain = -1;
  for (const [i, a] of values.entries()) {
    for (const b of values.slice(i + 1)) {
      const union = new Set([...selected.get(a)!, ...selected.get(b)!]).size;
      const adds = Math.min(union - selected.get(a)!.length, union - selected.get(b)!.length);
      if (adds > gain) [best, gain] = [[a, b], adds];
    }
  }
  return best;
}

describe('the OpenAPI document', () => {
  test('finds the lists, and among them the enum filters the issue names', () => {
    const lists = operations().filter((o) => o.list);
    const named = (path: string) => enumFilters(lists.find((o) => o.path === path)?.params ?? []).map((p) => p.name).sort();
    expect(named('/api/crm/leads')).toEqual(['source', 'status']);
    expect(named('/api/crm/inventory')).toEqual(['status']);
    expect(named('/api/crm/reservations')).toEqual(['payment_status', 'status']);
    expect(named('/api/iam/webhooks')).toEqual(['event']);
    expect(named('/api/iam/webhooks/{id}/deliveries')).toEqual(['status']);
    expect(named('/api/crm/imports')).toEqual(['resource', 'status']);
    expect(named('/api/iam/activity-logs')).toEqual(['action', 'module']);
    expect(named('/api/public/projects')).toEqual(['status', 'type']);
  });

  test('declares every enum filter of every list (and export) as an array of its enum, repeated or comma-separated', () => {
    let checked = 0;
    for (const { path, params } of operations()) {
      for (const p of params) {
        const where = `GET ${path} ?${p.name}`;
        if (ORDERING.has(p.name)) {
          // One ordering at a time: a plain enum.
          expect(p.schema.type, where).toBe('string');
          continue;
        }
        expect(p.required ?? false, where).toBe(false);
        expect(p.schema.type, `${where}: several values are an array`).toBe('array');
        expect(p.schema.items, where).toMatchObject({ type: 'string', enum: expect.any(Array) });
        expect(p.schema.items.enum.length, where).toBeGreaterThan(1);
        expect(p.schema.minItems, where).toBe(1);
        expect({ style: p.style, explode: p.explode }, where).toEqual({ style: 'form', explode: true });
        expect(p.description ?? '', `${where}: says values may be comma-separated`).toMatch(/comma/i);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });
});

describe('through HTTP, signed in as an administrator', () => {
  test('every enum filter of every list: `a,b` and `a&p=b` answer the same rows, the union of `a` and of `b`', async () => {
    const lists = operations().filter((o) => o.list && enumFilters(o.params).length);
    expect(lists.length).toBeGreaterThanOrEqual(15);
    const unexercised: string[] = [];
    for (const { path, params } of lists) {
      for (const p of enumFilters(params)) {
        const where = `GET ${path} ?${p.name}`;
        const selected = new Map<unknown, string[]>();
        for (const value of enumOf(p)!) selected.set(value, await rowsOf(path, encode(p.name, value)));
        const pair = pairOf(selected);
        if (!pair) {
          unexercised.push(`${where}: fewer than two of its values select rows (${[...selected].map(([v, ids]) => `${v}: ${ids.length}`).join(', ')})`);
          continue;
        }
        const [a, b] = pair;
        const union = [...new Set([...selected.get(a)!, ...selected.get(b)!])].sort();
        const commas = await rowsOf(path, `${p.name}=${encodeURIComponent(`${a},${b}`)}`);
        const repeated = await rowsOf(path, `${encode(p.name, a)}&${encode(p.name, b)}`);
        expect(repeated, `${where}=${a}&${p.name}=${b} answers what ${a},${b} does`).toEqual(commas);
        expect([...commas].sort(), `${where}=${a},${b}: the union of ${a} and ${b}`).toEqual(union);
        // Spaces around the commas, and a value sent twice, change nothing.
        expect(await rowsOf(path, `${p.name}=${encodeURIComponent(`${a} , ${b},${a}`)}`), `${where}: spaces, a repeat`).toEqual(commas);
      }
    }
    // A list whose enum filter this file cannot exercise is a failure: seed rows for it in beforeAll.
    expect(unexercised).toEqual([]);
  });

  test('an unknown value, alone or among known ones, is the contract\'s 400 naming the parameter', async () => {
    for (const { path, params } of operations()) {
      if (!enumFilters(params).length) continue;
      const url = urlOf(path);
      for (const p of enumFilters(params)) {
        const known = String(enumOf(p)![0]);
        for (const query of [encode(p.name, 'no-such-value'), `${p.name}=${encodeURIComponent(`${known},no-such-value`)}`, `${encode(p.name, known)}&${encode(p.name, 'no-such-value')}`]) {
          const res = await as(ctx, admin).get(`${url}?${query}`);
          expect(res.statusCode, `GET ${path}?${query}`).toBe(400);
          const body = res.json();
          expect(body.error, `GET ${path}?${query}`).toBe('Validation error');
          expect(Object.keys(body.details ?? {}), `GET ${path}?${query}`).toEqual([p.name]);
          expect(body.details[p.name], `GET ${path}?${query}`).toMatch(/must be one of/);
        }
      }
    }
  });

  test('exports take several values too: comma-separated and repeated give the same file', async () => {
    const exports = operations().filter((o) => !o.list && o.path.endsWith('/export') && enumFilters(o.params).length);
    expect(exports.length).toBeGreaterThanOrEqual(5);
    for (const { path, params } of exports) {
      for (const p of enumFilters(params)) {
        const [a, b] = enumOf(p)!.map(String);
        const commas = await as(ctx, admin).get(`${urlOf(path)}?${p.name}=${encodeURIComponent(`${a},${b}`)}`);
        const repeated = await as(ctx, admin).get(`${urlOf(path)}?${encode(p.name, a)}&${encode(p.name, b)}`);
        expect(commas.statusCode, `GET ${path}?${p.name}=${a},${b}: ${commas.body}`).toBe(200);
        expect(repeated.body, `GET ${path}?${p.name}=${a}&${p.name}=${b}`).toBe(commas.body);
      }
    }
  });
});

describe('webhook endpoints by event: any of the events (array overlap)', () => {
  const endpointsFor = async (query: string) => {
    const res = await as(ctx, admin).get(`/api/iam/webhooks?${query}&limit=100`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.pagination.total).toBe(body.data.length);
    const names = Object.fromEntries(Object.entries(hooks).map(([name, id]) => [id, name]));
    return (body.data as { id: string }[]).map((row) => names[row.id] ?? row.id).sort();
  };

  test('endpoints subscribed to any of the events, or to everything', async () => {
    expect(await endpointsFor('event=lead.created')).toEqual(['created', 'everything']);
    expect(await endpointsFor('event=lead.created,lead.updated')).toEqual(['created', 'everything', 'updated']);
    expect(await endpointsFor('event=lead.updated&event=inquiry.received')).toEqual(['everything', 'updated']);
    expect(await endpointsFor('event=campaign.sent,user.deleted')).toEqual(['everything', 'log']);
    expect(await endpointsFor('event=user.deleted')).toEqual(['everything']);
    expect(await endpointsFor('event=lead.created,campaign.sent&enabled=true')).toEqual(['created', 'everything', 'log']);
  });

  test('the total follows changes to the endpoints (a cached total is brought forward by testing changed rows)', async () => {
    const query = 'event=lead.deleted,inquiry.received';
    const COUNT = /count\(\*\)/i;
    // Counted the first time; then not counted again: the cached total is brought forward by the predicate's test of
    // each changed endpoint.
    expect(await countQueries(ctx.database, COUNT, async () => expect(await endpointsFor(query)).toEqual(['everything', 'updated']))).toBeGreaterThan(0);
    const api = as(ctx, admin);
    const uncounted = async (expected: string[]) =>
      expect(await countQueries(ctx.database, COUNT, async () => expect(await endpointsFor(query)).toEqual(expected))).toBe(0);
    expect((await api.patch(`/api/iam/webhooks/${hooks.created}`, { events: ['lead.created', 'lead.deleted'] })).statusCode).toBe(200);
    await uncounted(['created', 'everything', 'updated']);
    expect((await api.patch(`/api/iam/webhooks/${hooks.everything}`, { events: ['newsletter.subscribed'] })).statusCode).toBe(200);
    await uncounted(['created', 'updated']);
    expect((await api.patch(`/api/iam/webhooks/${hooks.everything}`, { events: ['*'] })).statusCode).toBe(200);
    expect((await api.patch(`/api/iam/webhooks/${hooks.created}`, { events: ['lead.created'] })).statusCode).toBe(200);
    await uncounted(['everything', 'updated']);
  });

  test('the predicate\'s in-memory test answers exactly as its SQL, row by row', async () => {
    const { db } = ctx.database;
    // Odd arrays too: empty, and with a null element (`&&` ignores nulls).
    const odd = await db.insert(webhookEndpoints).values([
      { url: 'https://hooks.example.com/empty', events: [], secret: 'whsec_x' },
      { url: 'https://hooks.example.com/null', events: sql`array[null, 'lead.created']::text[]` as never, secret: 'whsec_x' },
      { url: 'https://hooks.example.com/only-null', events: sql`array[null]::text[]` as never, secret: 'whsec_x' },
    ]).returning({ id: webhookEndpoints.id });
    try {
      const rows = await db.select({ id: webhookEndpoints.id, events: webhookEndpoints.events }).from(webhookEndpoints);
      expect(rows.length).toBeGreaterThanOrEqual(7);
      for (const values of [['lead.created'], ['lead.created', 'lead.updated'], ['*'], ['user.deleted', '*'], ['nothing.here'], [null], []]) {
        const predicate = is.overlapping(webhookEndpoints.events, values);
        const bySql = (await db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(predicate.sql)).map((r) => r.id).sort();
        const inMemory = rows.filter((row) => predicate.test(row) === true).map((r) => r.id).sort();
        expect(inMemory, JSON.stringify(values)).toEqual(bySql);
        for (const row of rows) expect(predicate.test(row), `${JSON.stringify(row.events)} && ${JSON.stringify(values)}`).not.toBeUndefined();
      }
      expect(is.overlapping(webhookEndpoints.events, ['x']).test({ events: null })).toBe(false);
      expect(is.overlapping(webhookEndpoints.events, ['x']).reads).toEqual(['events']);
    } finally {
      await db.delete(webhookEndpoints).where(inArray(webhookEndpoints.id, odd.map((r) => r.id)));
    }
  });
});

describe('the webhook delivery log by status', () => {
  test('one status, several, and an unknown one', async () => {
    const statuses = async (query: string) => {
      const res = await as(ctx, admin).get(`/api/iam/webhooks/${hooks.log}/deliveries?${query}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.pagination.total).toBe(body.data.length);
      return (body.data as { status: string }[]).map((d) => d.status).sort();
    };
    expect(await statuses('status=pending')).toEqual(['pending', 'pending']);
    expect(await statuses('status=pending,delivered')).toEqual(['delivered', 'pending', 'pending']);
    expect(await statuses('status=failed&status=delivered')).toEqual(['delivered', 'failed']);
    expect(await statuses('')).toEqual(['delivered', 'failed', 'pending', 'pending']);
    const bad = await as(ctx, admin).get(`/api/iam/webhooks/${hooks.log}/deliveries?status=pending,lost`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details).toEqual({ status: expect.stringContaining('must be one of: pending, delivered, failed') });
  });
});
