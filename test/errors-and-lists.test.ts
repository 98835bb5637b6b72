import { Type } from '@sinclair/typebox';
import { eq, inArray } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { App } from '../src/app.js';
import { LEAD_STATUSES, leads, serviceSettings } from '../src/db/schema/index.js';
import { equals, is } from '../src/data/filters.js';
import { defineResource } from '../src/data/resource.js';
import { listQuerySchema } from '../src/http/list-query.js';
import { securityHeaders } from '../src/http/security-headers.js';
import { IdParams, Nullable, RequiredText, Strict, StringEnum } from '../src/http/schemas.js';
import { as, countQueries, createTestApp, none, type TestContext } from './helpers.js';

// Throwaway routes over the real `leads` table: they exercise the shared list machinery and error handling the
// way every resource route will, without depending on any resource module.

const spec = defineResource({
  name: 'leads',
  module: 'crm',
  label: 'Lead',
  table: leads,
  id: leads.id,
  view: {
    fields: { id: leads.id, first_name: leads.first_name, last_name: leads.last_name, email: leads.email, status: leads.status, created_at: leads.created_at },
  },
  list: {
    sortable: { created_at: leads.created_at, last_name: leads.last_name },
    defaultSort: 'created_at',
    filters: { status: equals(leads.status, StringEnum(LEAD_STATUSES)) },
    search: [leads.first_name, leads.last_name, leads.email],
  },
});
/** A second list over the same collection with a fixed scope: its totals must not be mixed up with the first's. */
const lostSpec = { ...spec, scope: is.equal(leads.status, 'lost') };

const ThingBody = Strict({
  name: RequiredText(),
  price: Type.Number({ minimum: 0 }),
  kind: StringEnum(['house', 'lot'] as const),
  price_range: Type.Optional(Nullable(Strict({ min: Type.Number(), max: Type.Number() }))),
  images: Type.Optional(Type.Array(Strict({ image_url: Type.String({ minLength: 1 }), caption: Type.Optional(Type.String()) }))),
  password: Type.Optional(Type.String()),
});

function register(app: App) {
  app.get('/api/test/leads', { schema: { querystring: listQuerySchema(spec) } }, async (request) => app.lists.page(spec, request.query));
  app.get('/api/test/lost-leads', { schema: { querystring: listQuerySchema(lostSpec) } }, async (request) => app.lists.page(lostSpec, request.query));
  app.post('/api/test/things', { schema: { body: ThingBody } }, async (request, reply) => reply.code(201).send(request.body));
  app.get('/api/test/things/:id', { schema: { params: IdParams } }, async (request) => ({ id: request.params.id }));
  app.get('/api/test/bad-json-in-code', async () => JSON.parse('{not json'));
  app.get('/api/test/boom', async () => {
    throw new Error('relation "secret_table" does not exist: select password_hash from users');
  });
  app.post('/api/test/duplicate', async () => {
    const key = `dup-${uuidv7()}`;
    await app.database.db.insert(serviceSettings).values({ key, value: '1' });
    await app.database.db.insert(serviceSettings).values({ key, value: '1' });
    return { ok: true };
  });
  app.post('/api/test/dangling', async () => {
    await app.database.db.insert(leads).values({ first_name: 'Dangling', last_name: 'Ref', assigned_to: uuidv7() });
    return { ok: true };
  });
}

type Lead = { id: string; first_name: string; last_name: string; email: string; status: string; created_at: Date };
type ListBody = { data: (Omit<Lead, 'created_at'> & { created_at: string })[]; pagination: { page: number; limit: number; total: number; totalPages: number } };

const LAST_NAMES = ['Adams', 'Baker', 'Clark', 'Davis', 'Evans'];
let ctx: TestContext;
let seeded: Lead[] = [];

beforeAll(async () => {
  ctx = await createTestApp({}, { register });
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  seeded = Array.from({ length: 25 }, (_, i) => ({
    id: uuidv7(),
    first_name: i === 24 ? 'Ann_100%' : `Lead${i}`,
    last_name: LAST_NAMES[i % 5],
    email: i === 7 ? 'LEAD7@EXAMPLE.COM' : `lead${i}@example.com`,
    status: LEAD_STATUSES[Math.floor(i / 5)],
    // Five leads share one timestamp: the id must break the tie so pages never overlap.
    created_at: new Date(base + (i >= 10 && i < 15 ? 10 : i) * 1000),
  }));
  // Direct inserts bypass the change version; every real mutation bumps it in its transaction, so do the same.
  await ctx.database.db.insert(leads).values(seeded as any);
});
afterAll(async () => {
  await ctx?.close();
});

const get = async (url: string) => {
  const res = await as(ctx, none).get(url);
  return { status: res.statusCode, body: res.json() as any, headers: res.headers };
};
const list = async (query: string): Promise<ListBody> => {
  const res = await get(`/api/test/leads${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const byCreatedDesc = (a: Lead, b: Lead) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : -1);

describe('lists', () => {
  test('defaults: page 1, limit 10, newest first with ties broken by id, exact totals', async () => {
    const body = await list('');
    expect(body.pagination).toEqual({ page: 1, limit: 10, total: 25, totalPages: 3 });
    expect(body.data.map((l) => l.id)).toEqual([...seeded].sort(byCreatedDesc).slice(0, 10).map((l) => l.id));
    expect(body.data[0]).toMatchObject({ first_name: 'Ann_100%', last_name: 'Evans', status: 'lost' });
    expect(body.data[0].created_at).toBe('2026-01-01T00:00:24.000Z');
  });

  test('pages do not overlap and together hold every row once, also across a timestamp tie', async () => {
    for (const limit of [3, 7, 10]) {
      const ids: string[] = [];
      const pages = Math.ceil(25 / limit);
      for (let page = 1; page <= pages; page++) {
        const body = await list(`?page=${page}&limit=${limit}`);
        expect(body.pagination).toEqual({ page, limit, total: 25, totalPages: pages });
        ids.push(...body.data.map((l) => l.id));
      }
      expect(ids).toHaveLength(25);
      expect(new Set(ids).size).toBe(25);
      expect(ids).toEqual([...seeded].sort(byCreatedDesc).map((l) => l.id));
    }
  });

  test('a page past the end returns no data, the same pagination and the requested page', async () => {
    const body = await list('?page=9&limit=10');
    expect(body).toEqual({ data: [], pagination: { page: 9, limit: 10, total: 25, totalPages: 3 } });
  });

  test('sort and order: ascending and descending on a sortable field, ties broken by id in the same direction', async () => {
    const asc = await list('?sort=last_name&order=asc&limit=100');
    const expectedAsc = [...seeded].sort((a, b) => a.last_name.localeCompare(b.last_name) || (a.id < b.id ? -1 : 1));
    expect(asc.data.map((l) => l.id)).toEqual(expectedAsc.map((l) => l.id));
    const desc = await list('?sort=last_name&order=desc&limit=100');
    expect(desc.data.map((l) => l.id)).toEqual([...expectedAsc].reverse().map((l) => l.id));
    const oldest = await list('?sort=created_at&order=asc&limit=1');
    expect(oldest.data[0].id).toBe(seeded[0].id);
    expect(oldest.pagination).toEqual({ page: 1, limit: 1, total: 25, totalPages: 25 });
  });

  test('q is a case-insensitive substring search over the text fields', async () => {
    const adams = await list('?q=aDaMs&limit=100');
    expect(adams.pagination.total).toBe(5);
    expect(adams.data.every((l) => l.last_name === 'Adams')).toBe(true);
    const email = await list('?q=lead7@example.com');
    expect(email.data.map((l) => l.id)).toEqual([seeded[7].id]);
    const first = await list('?q=lead2');
    expect(first.data.map((l) => l.first_name).sort()).toEqual(['Ann_100%', 'Lead2', 'Lead20', 'Lead21', 'Lead22', 'Lead23']); // lead24@… is Ann's e-mail
    // LIKE wildcards in q are literal characters.
    expect((await list('?q=%25')).data.map((l) => l.id)).toEqual([seeded[24].id]);
    expect((await list('?q=_')).data.map((l) => l.id)).toEqual([seeded[24].id]);
    const none = await list('?q=no-such-lead');
    expect(none).toEqual({ data: [], pagination: { page: 1, limit: 10, total: 0, totalPages: 0 } });
  });

  test('filters narrow the rows and the total; filters and q combine', async () => {
    const qualified = await list('?status=qualified');
    expect(qualified.pagination).toEqual({ page: 1, limit: 10, total: 5, totalPages: 1 });
    expect(qualified.data.map((l) => l.id).sort()).toEqual(seeded.filter((l) => l.status === 'qualified').map((l) => l.id).sort());
    const combined = await list('?status=new&q=baker');
    expect(combined.data.map((l) => l.id)).toEqual([seeded[1].id]);
    expect(combined.pagination.total).toBe(1);
  });

  test('a scoped list over the same collection keeps its own totals', async () => {
    const all = await list('');
    const lost = await get('/api/test/lost-leads');
    expect(lost.status).toBe(200);
    expect(lost.body.pagination.total).toBe(5);
    expect(lost.body.data.every((l: Lead) => l.status === 'lost')).toBe(true);
    expect(all.pagination.total).toBe(25);
    expect((await list('')).pagination.total).toBe(25);
  });

  test.each([
    ['?limit=101', 'limit'],
    ['?limit=0', 'limit'],
    ['?limit=ten', 'limit'],
    ['?page=0', 'page'],
    ['?page=-1', 'page'],
    ['?page=1.5', 'page'],
    ['?sort=email', 'sort'],
    ['?order=sideways', 'order'],
    ['?status=archived', 'status'],
    ['?colour=blue', 'colour'],
  ])('GET %s → 400 naming %s', async (query, field) => {
    const res = await get(`/api/test/leads${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Validation error');
    expect(Object.keys(res.body.details)).toContain(field);
    expect(typeof res.body.details[field]).toBe('string');
  });
});

describe('exact totals are cached until the collection changes', () => {
  const COUNT = /count\(\*\)/i;

  test('identical lists without a write in between count once; a write makes the next total exact', async () => {
    let first: ListBody | undefined;
    let second: ListBody | undefined;
    expect(await countQueries(ctx.database, COUNT, async () => {
      first = await list('?status=new');
      second = await list('?status=new&page=2&sort=last_name&order=asc'); // paging and sorting do not change the total
    })).toBe(1);
    expect(first!.pagination.total).toBe(5);
    expect(second!.pagination.total).toBe(5);

    // Insert with plain drizzle, no audited path: the table's trigger logs it, and the next total is brought forward
    // from the cached one (no count) and exact.
    const added = uuidv7();
    await ctx.database.db.transaction(async (tx) => {
      await tx.insert(leads).values({ id: added, first_name: 'New', last_name: 'Comer', email: 'newcomer@example.com' });
    });
    let afterInsert: ListBody | undefined;
    expect(await countQueries(ctx.database, COUNT, async () => {
      afterInsert = await list('?status=new');
      await list('?status=new');
    })).toBe(0);
    expect(afterInsert!.pagination.total).toBe(6);
    expect(afterInsert!.data.map((l) => l.id)).toContain(added);

    // A different filter is a different total, counted on its own, once.
    let contacted: ListBody | undefined;
    expect(await countQueries(ctx.database, COUNT, async () => {
      contacted = await list('?status=contacted');
      await list('?status=contacted');
      await list('?status=new'); // still cached
    })).toBe(1);
    expect(contacted!.pagination.total).toBe(5);

    // Update moves a lead from new to contacted: both totals change.
    await ctx.database.db.transaction(async (tx) => {
      await tx.update(leads).set({ status: 'contacted' }).where(eq(leads.id, added));
    });
    expect((await list('?status=new')).pagination.total).toBe(5);
    expect((await list('?status=contacted')).pagination.total).toBe(6);
    expect((await list('')).pagination.total).toBe(26);

    // Delete.
    await ctx.database.db.transaction(async (tx) => {
      await tx.delete(leads).where(inArray(leads.id, [added, seeded[5].id]));
    });
    expect((await list('?status=contacted')).pagination).toEqual({ page: 1, limit: 10, total: 4, totalPages: 1 });
    expect((await list('')).pagination.total).toBe(24);
    expect(await countQueries(ctx.database, COUNT, () => list(''))).toBe(0);

    // Put the deleted seed row back for any later test.
    await ctx.database.db.transaction(async (tx) => {
      await tx.insert(leads).values(seeded[5] as any);
    });
    expect((await list('')).pagination.total).toBe(25);
  });

  test('a page past the end reads the total from the cache too', async () => {
    await list('?status=lost');
    expect(await countQueries(ctx.database, COUNT, async () => {
      const body = await list('?status=lost&page=50');
      expect(body).toEqual({ data: [], pagination: { page: 50, limit: 10, total: 5, totalPages: 1 } });
    })).toBe(0);
  });
});

describe('validation errors', () => {
  const valid = { name: 'Lot 12', price: 1500000, kind: 'lot' };

  test('a valid body passes; strings are trimmed, passwords are not', async () => {
    const res = await as(ctx, none).post('/api/test/things', { ...valid, name: '  Lot 12  ', price_range: { min: 1, max: 2 }, password: '  spaced  ' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ name: 'Lot 12', password: '  spaced  ', price_range: { min: 1, max: 2 } });
  });

  test('an unknown field → 400 naming it', async () => {
    const res = await as(ctx, none).post('/api/test/things', { ...valid, id: uuidv7() });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: { id: expect.any(String) } });
  });

  test('nested fields use dotted paths', async () => {
    const unknownNested = await as(ctx, none).post('/api/test/things', { ...valid, price_range: { min: 1, max: 2, avg: 1.5 } });
    expect(unknownNested.statusCode).toBe(400);
    expect(unknownNested.json().details).toEqual({ 'price_range.avg': expect.any(String) });

    const wrongNested = await as(ctx, none).post('/api/test/things', { ...valid, price_range: { min: 'cheap', max: 2 } });
    expect(wrongNested.statusCode).toBe(400);
    expect(wrongNested.json().details).toEqual({ 'price_range.min': expect.stringMatching(/number/) });

    const inArrayItem = await as(ctx, none).post('/api/test/things', { ...valid, images: [{ image_url: 'a.jpg' }, { caption: 'no url' }] });
    expect(inArrayItem.statusCode).toBe(400);
    expect(inArrayItem.json().details).toEqual({ 'images.1.image_url': 'is required' });
  });

  test('several problems are all reported', async () => {
    const res = await as(ctx, none).post('/api/test/things', { name: '   ', price: '100', kind: 'castle', extra: true });
    expect(res.statusCode).toBe(400);
    const { details } = res.json();
    expect(Object.keys(details).sort()).toEqual(['extra', 'kind', 'name', 'price']);
    expect(details.name).toBe('must not be empty');
    expect(details.kind).toMatch(/house, lot/);
  });

  test('a wrong type is 400 (bodies are never coerced) and a missing required field is named', async () => {
    const wrongType = await as(ctx, none).post('/api/test/things', { ...valid, price: '1500000' });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().details).toEqual({ price: expect.stringMatching(/number/) });
    const missing = await as(ctx, none).post('/api/test/things', { name: 'x', kind: 'lot' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details).toEqual({ price: 'is required' });
    const nullRequired = await as(ctx, none).post('/api/test/things', { ...valid, name: null });
    expect(nullRequired.statusCode).toBe(400);
    expect(Object.keys(nullRequired.json().details)).toEqual(['name']);
  });

  test('a nullable field accepts null', async () => {
    const res = await as(ctx, none).post('/api/test/things', { ...valid, price_range: null });
    expect(res.statusCode).toBe(201);
    expect(res.json().price_range).toBeNull();
  });

  test('malformed JSON → 400 details.body', async () => {
    const res = await as(ctx, none, { headers: { 'content-type': 'application/json' } }).post('/api/test/things', '{"name": "x",');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: { body: expect.any(String) } });
  });

  test('an empty JSON body and a body that is not an object → 400 details.body', async () => {
    const empty = await as(ctx, none, { headers: { 'content-type': 'application/json' } }).post('/api/test/things', '');
    expect(empty.statusCode).toBe(400);
    expect(Object.keys(empty.json().details)).toEqual(['body']);
    const array = await as(ctx, none, { headers: { 'content-type': 'application/json' } }).post('/api/test/things', '[1,2]');
    expect(array.statusCode).toBe(400);
    expect(Object.keys(array.json().details)).toEqual(['body']);
  });

  test('a path id that is not a UUID → 400 details.id', async () => {
    const bad = await get('/api/test/things/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Validation error', details: { id: expect.any(String) } });
    const id = uuidv7();
    expect(await get(`/api/test/things/${id}`)).toMatchObject({ status: 200, body: { id } });
  });
});

describe('other errors', () => {
  test('a body over 1 MiB → 413', async () => {
    const res = await as(ctx, none).post('/api/test/things', { name: 'big', price: 1, kind: 'lot', password: 'x'.repeat(1024 * 1024 + 10) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'Payload too large', message: expect.any(String) });
  });

  test('an unsupported content type → 415; text is not JSON → 400, never 500', async () => {
    const xml = await as(ctx, none, { headers: { 'content-type': 'application/xml' } }).post('/api/test/things', '<thing/>');
    expect(xml.statusCode).toBe(415);
    expect(xml.json()).toMatchObject({ error: 'Unsupported media type', message: expect.any(String) });
    const text = await as(ctx, none, { headers: { 'content-type': 'text/plain' } }).post('/api/test/things', '{"name":"x"}');
    expect(text.statusCode).toBe(400);
    expect(text.json().error).toBe('Validation error');
  });

  test('an unknown route or method → 404 with an error body', async () => {
    const route = await get('/api/no-such-thing?x=1');
    expect(route.status).toBe(404);
    expect(route.body).toEqual({ error: 'Resource not found', message: expect.stringContaining('/api/no-such-thing') });
    expect(route.body.message).not.toContain('x=1');
    const method = await as(ctx, none).delete('/api/health');
    expect(method.statusCode).toBe(404);
    expect(method.json().error).toBe('Resource not found');
  });

  test('an unexpected error → 500 with a fixed body: no message, stack or SQL of its own', async () => {
    const res = await as(ctx, none).get('/api/test/boom');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Internal server error', message: 'An unexpected error occurred' });
    expect(res.body).not.toMatch(/secret_table|password_hash|stack|at \//);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  test("a SyntaxError in the service's own code is a 500, not the client's 'body is not valid JSON'", async () => {
    const res = await as(ctx, none).get('/api/test/bad-json-in-code');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Internal server error', message: 'An unexpected error occurred' });
    const sent = await as(ctx, none, { headers: { 'content-type': 'application/json' } }).post('/api/test/things', '{not json');
    expect(sent.statusCode).toBe(400);
    expect(sent.json()).toEqual({ error: 'Validation error', details: { body: 'is not valid JSON' } });
  });

  test('database constraint violations → 409, not 500', async () => {
    const duplicate = await as(ctx, none).post('/api/test/duplicate');
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({ error: 'Conflict', message: expect.any(String) });
    expect(duplicate.body).not.toMatch(/collection_versions|insert/i);
    const dangling = await as(ctx, none).post('/api/test/dangling');
    expect(dangling.statusCode).toBe(409);
    expect(dangling.json().error).toBe('Conflict');
  });

  test('every answer carries a request id; a sane incoming one is echoed', async () => {
    const res = await as(ctx, none, { headers: { 'x-request-id': 'trace-123' } }).get('/api/health');
    expect(res.headers['x-request-id']).toBe('trace-123');
    const generated = await as(ctx, none).get('/api/health');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("every answer carries helmet's security headers, errors from any hook included (read once, set per request)", async () => {
    const expected = securityHeaders({ contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } });
    expect(expected).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'SAMEORIGIN', 'cross-origin-resource-policy': 'same-site' });
    expect(expected).not.toHaveProperty('content-security-policy');
    const answers = [
      await as(ctx, none).get('/api/health'), // 200
      await ctx.app.inject({ method: 'GET', url: '/api/crm/leads' }), // 401 from the guard's hook
      await as(ctx, none).get('/api/no-such-route'), // 404
      await as(ctx, none).get('/api/test/boom'), // 500
    ];
    expect(answers.map((res) => res.statusCode)).toEqual([200, 401, 404, 500]);
    for (const res of answers) {
      for (const [name, value] of Object.entries(expected)) expect(res.headers[name], `${res.statusCode} ${name}`).toBe(value);
      expect(res.headers['x-request-id']).toBeTruthy();
    }
    const badUrl = await ctx.app.inject({ method: 'GET', url: '/api/crm/leads/%E0%A4%A' });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.headers['x-request-id']).toBeTruthy();
  });
});
