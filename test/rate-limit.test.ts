import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

const LIMITS = { AUTH_RATE_LIMIT: '5', WRITE_RATE_LIMIT: '30', READ_RATE_LIMIT: '100' };
let ctx: TestContext;
let ipCounter = 0;
/** A distinct client address per test, so buckets keyed by IP never mix. */
const nextIp = () => `198.51.100.${++ipCounter}`;

beforeAll(async () => {
  ctx = await createTestApp(LIMITS);
});
afterAll(async () => {
  await ctx?.close();
});

const loginFrom = (c: TestContext, ip: string) =>
  as(c, none, { remoteAddress: ip }).post('/api/auth/login', { email: 'nobody@example.com', password: 'Wrong!pass1' });

function expectLimitHeaders(res: { headers: Record<string, unknown> }, limit: number) {
  expect(Number(res.headers['x-ratelimit-limit'])).toBe(limit);
  expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
  const reset = Number(res.headers['x-ratelimit-reset']);
  expect(reset).toBeGreaterThan(Date.now() / 1000);
  expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 61);
}

function expect429(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }, limit: number) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toEqual({ error: 'Too many requests', message: expect.any(String) });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
  expectLimitHeaders(res, limit);
  expect(Number(res.headers['x-ratelimit-remaining'])).toBe(0);
}

describe('credential endpoints: AUTH_RATE_LIMIT per IP', () => {
  test('the 6th login in a minute from one IP is 429; another IP is unaffected', async () => {
    const ip = nextIp();
    for (let i = 0; i < 5; i++) {
      const res = await loginFrom(ctx, ip);
      expect(res.statusCode).toBe(401);
      expectLimitHeaders(res, 5);
      expect(Number(res.headers['x-ratelimit-remaining'])).toBe(4 - i);
    }
    expect429(await loginFrom(ctx, ip), 5);
    expect((await loginFrom(ctx, nextIp())).statusCode).toBe(401);
  });

  test('credential endpoints share one bucket per IP', async () => {
    const ip = nextIp();
    for (let i = 0; i < 3; i++) expect((await loginFrom(ctx, ip)).statusCode).toBe(401);
    for (let i = 0; i < 2; i++) {
      const res = await as(ctx, none, { remoteAddress: ip }).post('/api/auth/forgot-password', { email: 'x@example.com' });
      expect(res.statusCode).toBe(200);
    }
    expect429(await as(ctx, none, { remoteAddress: ip }).post('/api/auth/reset-password', { token: 'x', password: 'Str0ng!pass' }), 5);
  });
});

describe('reads and writes: per user', () => {
  let a: Awaited<ReturnType<typeof createUser>>;
  let b: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    // Two logins from 127.0.0.1: within the auth limit, and no other test uses that address.
    a = await createUser(ctx, {});
    b = await createUser(ctx, {});
  });

  test('the 31st write by one user is 429 (403s count too); another user is unaffected', async () => {
    const write = (who: typeof a) => as(ctx, who).post('/api/cms/amenities', { name: 'x' });
    for (let i = 0; i < 30; i++) {
      const res = await write(a);
      expect(res.statusCode).toBe(403);
      expectLimitHeaders(res, 30);
    }
    expect429(await write(a), 30);
    const other = await write(b);
    expect(other.statusCode).toBe(403);
    expect(Number(other.headers['x-ratelimit-remaining'])).toBe(29);
    // Reads are a separate bucket.
    expect((await as(ctx, a).get('/api/auth/session')).statusCode).toBe(200);
  });

  test('the 101st read by one user is 429; another user is unaffected', async () => {
    const read = (who: typeof a) => as(ctx, who).get('/api/auth/session');
    // The previous test spent one read of a's.
    for (let i = 0; i < 99; i++) {
      const res = await read(a);
      expect(res.statusCode).toBe(200);
      expectLimitHeaders(res, 100);
    }
    expect429(await read(a), 100);
    const other = await read(b);
    expect(other.statusCode).toBe(200);
    expect(Number(other.headers['x-ratelimit-limit'])).toBe(100);
  });

  test('signed-out requests are limited per IP, with the headers on 401s', async () => {
    const ip = nextIp();
    const res = await as(ctx, none, { remoteAddress: ip }).get('/api/cms/amenities');
    expect(res.statusCode).toBe(401);
    expectLimitHeaders(res, 100);
    expect(Number(res.headers['x-ratelimit-remaining'])).toBe(99);
  });
});

test('/api/health is not limited', async () => {
  const ip = nextIp();
  for (let i = 0; i < 120; i++) {
    const res = await as(ctx, none, { remoteAddress: ip }).get('/api/health');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  }
});

test.runIf(!!process.env.REDIS_URL)('with Redis, two instances with one namespace share their counters', async () => {
  const namespace = `pms-shared-${uuidv7()}-`;
  const one = await createTestApp(LIMITS, { rateLimitNamespace: namespace });
  const two = await createTestApp(LIMITS, { rateLimitNamespace: namespace });
  try {
    const ip = '192.0.2.77';
    for (let i = 0; i < 3; i++) expect((await loginFrom(one, ip)).statusCode).toBe(401);
    for (let i = 0; i < 2; i++) expect((await loginFrom(two, ip)).statusCode).toBe(401);
    expect429(await loginFrom(two, ip), 5);
    expect429(await loginFrom(one, ip), 5);
  } finally {
    await one.close();
    await two.close();
  }
});
