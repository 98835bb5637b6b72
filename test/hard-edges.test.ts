import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError } from '../src/config.js';
import { as, createTestApp, createUser, none, type TestContext, testConfig } from './helpers.js';
import { make } from './factories.js';

// CONTRACT §13, "Hard edges": each rule here through HTTP (or start-up, for configuration).

const ORIGIN = 'https://console.example.com';
let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp({ ALLOWED_ORIGINS: ORIGIN });
  staff = await createUser(ctx, { crm: 'rwd', iam: 'rwd' });
});
afterAll(() => ctx.close());

const validationError = (field: string) => ({ error: 'Validation error', details: expect.objectContaining({ [field]: expect.any(String) }) });

describe('unknown query parameters are 400 on every route', () => {
  test('detail, update, delete, export and routes that read no query at all', async () => {
    const lead = await make.lead(ctx, { notes: 'kept' }, staff);
    const who = as(ctx, staff);
    for (const res of [
      await who.get(`/api/crm/leads/${lead.id}?colour=blue`),
      await who.patch(`/api/crm/leads/${lead.id}?colour=blue`, { notes: 'x' }),
      await who.delete(`/api/crm/leads/${lead.id}?colour=blue`),
      await who.get('/api/crm/leads/export?colour=blue'),
      await who.get('/api/auth/session?colour=blue'),
      await who.get('/api/iam/departments?colour=blue'),
    ]) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual(validationError('colour'));
    }
    // Nothing was changed or deleted by the refused requests.
    expect((await who.get(`/api/crm/leads/${lead.id}`)).json().notes).toBe('kept');
  });
});

describe('paging', () => {
  test('page is an integer from 1 to 1,000,000', async () => {
    for (const page of ['0', '1000001', '99999999999999999999', '1.5', 'abc']) {
      const res = await as(ctx, staff).get(`/api/crm/leads?page=${page}`);
      expect(res.statusCode, page).toBe(400);
      expect(res.json()).toEqual(validationError('page'));
    }
    expect((await as(ctx, staff).get('/api/crm/leads?page=1000000')).statusCode).toBe(200);
  });
});

describe('CORS', () => {
  test('the preflight of an allowed origin allows GET, HEAD, POST, PATCH and DELETE with credentials', async () => {
    for (const method of ['PATCH', 'DELETE', 'POST']) {
      const res = await ctx.app.inject({
        method: 'OPTIONS', url: '/api/crm/leads/00000000-0000-0000-0000-000000000000',
        headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
      });
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE']));
    }
    const other = await ctx.app.inject({ method: 'OPTIONS', url: '/api/crm/leads', headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('request ids', () => {
  test('a client id of 1–64 characters of [A-Za-z0-9._-] is kept; anything else is replaced by a generated one', async () => {
    const kept = await as(ctx, none).get('/api/health', { 'x-request-id': 'abc-123_X.y' });
    expect(kept.headers['x-request-id']).toBe('abc-123_X.y');
    for (const bad of ['a'.repeat(65), 'has space', 'line\u2028break', 'semi;colon', '{"level":60}']) {
      const res = await as(ctx, none).get('/api/health', { 'x-request-id': bad });
      expect(res.headers['x-request-id'], bad).not.toBe(bad);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});

describe('configuration', () => {
  test('a CRON_SECRET shorter than 32 characters stops start-up, naming the variable', () => {
    expect(() => testConfig({ CRON_SECRET: 'abc' })).toThrow(ConfigError);
    expect(() => testConfig({ CRON_SECRET: 'x'.repeat(31) })).toThrow(/CRON_SECRET/);
    expect(testConfig({ CRON_SECRET: 'x'.repeat(32) }).cronSecret).toBe('x'.repeat(32));
  });
});
