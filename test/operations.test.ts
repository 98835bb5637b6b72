import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import SwaggerParser from '@apidevtools/swagger-parser';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp, loggerOptions } from '../src/app.js';
import { activityLogRetention } from '../src/audit/retention.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/client.js';
import { as, createTestApp, createTestDatabase, createUser, none, redisUrl, resolvedOpenapi, serverUrl, PATIENCE_MS, testConfig, type TestContext, waitFor } from './helpers.js';
import { make } from './factories.js';

const TOKEN = 'metrics-token-0123456789abcdef-0123456789';
const scrapeAs = (ctx: TestContext, authorization?: string) =>
  ctx.app.inject({ method: 'GET', url: '/api/metrics', headers: authorization ? { authorization } : {} });
const scrape = async (ctx: TestContext) => {
  const res = await scrapeAs(ctx, `Bearer ${TOKEN}`);
  expect(res.statusCode).toBe(200);
  return res.body;
};

type Sample = { labels: Record<string, string>; value: number };
/** The samples of one metric in a Prometheus text exposition. */
function samples(text: string, name: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value;
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}
const value = (text: string, name: string, labels: Record<string, string> = {}) =>
  samples(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('configuration', () => {
  const base = { AUTH_SECRET: 'test-secret-that-is-long-enough-0123456789', DATA_DIR: testConfig().dataDir };
  const configError = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return err as ConfigError;
    }
    throw new Error(`accepted ${JSON.stringify(env)}`);
  };

  test('LOG_FORMAT: JSON unless stdout is a terminal; json or pretty forces it; anything else stops start-up', () => {
    expect(loadConfig(base).logFormat).toBe('json');
    expect(loadConfig(base, { stdoutIsTTY: false }).logFormat).toBe('json');
    expect(loadConfig(base, { stdoutIsTTY: true }).logFormat).toBe('pretty');
    expect(loadConfig({ ...base, LOG_FORMAT: 'json' }, { stdoutIsTTY: true }).logFormat).toBe('json');
    expect(loadConfig({ ...base, LOG_FORMAT: 'Pretty ' }).logFormat).toBe('pretty');
    for (const bad of ['yaml', 'text', '1']) expect(configError({ LOG_FORMAT: bad }).message).toMatch(/^LOG_FORMAT must be json or pretty/);
  });

  test('METRICS_TOKEN: unset means off; shorter than 32 characters stops start-up naming it', () => {
    expect(loadConfig(base).metricsToken).toBeUndefined();
    expect(loadConfig({ ...base, METRICS_TOKEN: '  ' }).metricsToken).toBeUndefined();
    expect(loadConfig({ ...base, METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    expect(loadConfig({ ...base, METRICS_TOKEN: 'x'.repeat(32) }).metricsToken).toBe('x'.repeat(32));
    expect(configError({ METRICS_TOKEN: 'x'.repeat(31) }).message).toMatch(/^METRICS_TOKEN must be at least 32 characters/);
  });
});

describe('logs', () => {
  async function logged(format: 'json' | 'pretty') {
    const config = testConfig({ LOG_FORMAT: format, LOG_LEVEL: 'info' });
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk) => (text += chunk));
    const database = await createTestDatabase();
    const app = await buildApp({ config, database, jobs: false, logger: await loggerOptions(config, out) });
    try {
      app.log.info({ user: { password: 'hunter2-secret' }, reset: { token: 'reset-token-secret' } }, 'hello operations');
      await app.inject({ method: 'GET', url: '/api/health/live?token=query-secret', headers: { authorization: 'Bearer header-secret' } });
      await waitFor(() => text.includes('request completed'), PATIENCE_MS, 'the request lines');
    } finally {
      await app.close();
      await database.close();
    }
    return text;
  }

  test('LOG_FORMAT=json: one JSON object a line, secrets redacted', async () => {
    const text = await logged('json');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line));
    const hello = lines.find((l) => l.msg === 'hello operations');
    expect(hello).toMatchObject({ level: 30, user: { password: '[redacted]' }, reset: { token: '[redacted]' } });
    expect(text).not.toMatch(/hunter2|reset-token-secret|query-secret|header-secret/);
  });

  test('LOG_FORMAT=pretty: readable lines (not JSON), the same redactions', async () => {
    const text = await logged('pretty');
    const line = text.split('\n').find((l) => l.includes('hello operations'))!;
    expect(line).toMatch(/INFO/);
    expect(() => JSON.parse(line)).toThrow();
    expect(text).toContain('[redacted]');
    expect(text).not.toMatch(/hunter2|reset-token-secret|query-secret|header-secret/);
  });
});

describe('metrics', () => {
  let off: TestContext;
  let on: TestContext;
  beforeAll(async () => {
    off = await createTestApp();
    on = await createTestApp({ METRICS_TOKEN: TOKEN }, { jobs: true });
    // A job waiting an hour: the queue depth has something to count.
    await on.app.jobs.send(activityLogRetention, {}, { startAfter: 3600 });
  }, 180_000);
  afterAll(async () => {
    await off?.close();
    await on?.close();
  });

  test('off by default: /api/metrics is an unknown route (404) and nothing is measured', async () => {
    const res = await scrapeAs(off, `Bearer ${TOKEN}`);
    expect(res.statusCode).toBe(404);
    const unknown = await as(off, none).get('/api/no-such-route');
    expect(res.json()).toEqual({ ...unknown.json(), message: 'No route for GET /api/metrics' });
    expect(off.app.metrics).toBeNull();
    const doc = (await as(off, none).get('/api/openapi.json')).json();
    expect(doc.paths['/api/metrics']).toBeUndefined();
  });

  test('on: 401 without the token, with a wrong one or with a session; 200 Prometheus text with it', async () => {
    const staff = await createUser(on, { crm: 'rwd', cms: 'rwd', iam: 'rwd' });
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`, staff.headers.authorization]) {
      const res = await scrapeAs(on, authorization);
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication required' });
      expect(res.body).not.toContain('http_requests_total');
    }
    const res = await scrapeAs(on, `Bearer ${TOKEN}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    for (const name of ['http_requests_total', 'http_request_duration_seconds', 'mail_sent_total', 'mail_failed_total', 'job_queue_depth', 'job_queue_active']) {
      expect(res.body).toContain(`# HELP ${name} `);
    }
    // Node's process metrics come with every scrape.
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(samples(res.body, name).length, name).toBeGreaterThan(0);
    }
    // PGlite has no connection pool: no pool gauges rather than made-up numbers.
    if (!serverUrl) expect(res.body).not.toContain('db_pool_');
  });

  test('requests are counted and timed by route pattern; no raw path or id appears in a label', async () => {
    const staff = await createUser(on, { crm: 'rwd' });
    const lead = await make.lead(on, { email: `metrics-${uuidv7()}@example.com` }, staff);
    const before = await scrape(on);
    const route = { method: 'GET', route: '/api/crm/leads/:id', status_code: '200' };
    const countBefore = value(before, 'http_requests_total', route) ?? 0;
    for (let i = 0; i < 3; i++) expect((await as(on, staff).get(`/api/crm/leads/${lead.id}`)).statusCode).toBe(200);
    const missing = uuidv7();
    expect((await as(on, staff).get(`/api/crm/leads/${missing}`)).statusCode).toBe(404);
    expect((await as(on, staff).request('PUT', `/nowhere/${missing}`)).statusCode).toBe(404);

    const after = await scrape(on);
    expect(value(after, 'http_requests_total', route)).toBe(countBefore + 3);
    expect(value(after, 'http_requests_total', { ...route, status_code: '404' })).toBe(1);
    expect(value(after, 'http_request_duration_seconds_count', route)).toBe(countBefore + 3);
    expect(value(after, 'http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(countBefore + 3);
    expect(value(after, 'http_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    // A path no route matches is `unmatched`, whatever it was.
    expect(value(after, 'http_requests_total', { method: 'PUT', route: 'unmatched', status_code: '404' })).toBe(1);
    // The earlier scrape was counted too, under its own pattern.
    expect(value(after, 'http_requests_total', { method: 'GET', route: '/api/metrics', status_code: '200' })).toBeGreaterThanOrEqual(1);

    const routes = new Set(samples(after, 'http_requests_total').map((s) => s.labels.route));
    for (const r of routes) expect(r, r).toMatch(/^(\/[a-z0-9.*:_/-]*|unmatched)$/i);
    expect(after).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    expect(after).not.toContain('nowhere');
  });

  test('mail sent is counted; job queue depth per queue', async () => {
    const user = await createUser(on, {});
    const sent = value(await scrape(on), 'mail_sent_total') ?? 0;
    expect((await as(on, none).post('/api/auth/forgot-password', { email: user.email })).statusCode).toBe(200);
    let text = '';
    await waitFor(async () => value((text = await scrape(on)), 'mail_sent_total') === sent + 1, PATIENCE_MS, 'mail_sent_total to move');
    expect(value(text, 'mail_failed_total')).toBe(0);
    const depth = samples(text, 'job_queue_depth');
    expect(depth.map((s) => s.labels.queue)).toEqual(expect.arrayContaining(['activity-logs-retention', 'change-log-prune', 'campaign-delivery']));
    expect(value(text, 'job_queue_depth', { queue: 'activity-logs-retention' })).toBeGreaterThanOrEqual(1);
    for (const s of samples(text, 'job_queue_active')) expect(s.value).toBeGreaterThanOrEqual(0);
  });

  test('a mail that cannot be sent counts as failed', async () => {
    const failing = await createTestApp({ METRICS_TOKEN: TOKEN, SMTP_URL: `smtp://127.0.0.1:${await closedPort()}?ignoreTLS=true` });
    try {
      const user = await createUser(failing, {});
      expect((await as(failing, none).post('/api/auth/forgot-password', { email: user.email })).statusCode).toBe(200);
      let text = '';
      await waitFor(async () => value((text = await scrape(failing)), 'mail_failed_total') === 1, PATIENCE_MS, 'mail_failed_total to move');
      expect(value(text, 'mail_sent_total')).toBe(0);
      // The queue is off in this app: no queue samples rather than stale or made-up ones.
      expect(samples(text, 'job_queue_depth')).toEqual([]);
    } finally {
      await failing.close();
    }
  });

  test('scrapes and probes are never rate limited', async () => {
    const limited = await createTestApp({ METRICS_TOKEN: TOKEN, READ_RATE_LIMIT: '2' });
    try {
      for (let i = 0; i < 5; i++) {
        for (const url of ['/api/metrics', '/api/health/live', '/api/health/ready']) {
          const res = await limited.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TOKEN}` } });
          expect(res.statusCode, url).toBe(200);
          expect(res.headers['x-ratelimit-limit'], url).toBeUndefined();
        }
      }
      // A wrong token is not limited either (it reveals nothing and costs nothing).
      expect((await scrapeAs(limited, 'Bearer nope')).statusCode).toBe(401);
    } finally {
      await limited.close();
    }
  });

  test('the OpenAPI document: metrics under its own bearer scheme answering text/plain; probes public', async () => {
    const doc = await resolvedOpenapi(on);
    await SwaggerParser.validate(structuredClone(doc));
    expect(doc.components.securitySchemes.metricsToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const metrics = doc.paths['/api/metrics'].get;
    expect(metrics.security).toEqual([{ metricsToken: [] }]);
    expect(Object.keys(metrics.responses['200'].content)).toEqual(['text/plain']);
    expect(metrics.responses['200'].content['text/plain'].schema.type).toBe('string');
    expect(Object.keys(metrics.responses['401'].content)).toEqual(['application/json']);
    expect(metrics.parameters ?? []).toEqual([]);

    const live = doc.paths['/api/health/live'].get;
    expect(live.security).toEqual([]);
    expect(Object.keys(live.responses)).toEqual(['200']);
    const ready = doc.paths['/api/health/ready'].get;
    expect(ready.security).toEqual([]);
    expect(Object.keys(ready.responses).sort()).toEqual(['200', '503']);
    expect(ready.responses['503'].content['application/json'].schema.properties.checks.properties.database.enum).toEqual(['ok', 'failed', 'skipped']);
  });
});

describe('pool metrics on PostgreSQL', () => {
  let database: Database;
  let ctx: TestContext;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    if (serverUrl) {
      const own = await createTestDatabase();
      database = own;
      cleanup = () => own.close();
    } else {
      // PGlite behind its PostgreSQL wire server: the service talks to it through the pg pool, as to a real server.
      const template = await createTestDatabase();
      const socketServer = new PGLiteSocketServer({ db: template.pglite!, host: '127.0.0.1', port: 0, maxConnections: 20 });
      await socketServer.start();
      database = await openDatabase({ url: `postgres://postgres@${socketServer.getServerConn()}/postgres` });
      cleanup = async () => {
        await database.close();
        await socketServer.stop();
        await template.close();
      };
    }
    ctx = await createTestApp({ METRICS_TOKEN: TOKEN }, { database });
  }, 180_000);
  afterAll(async () => {
    await ctx?.close();
    await cleanup?.();
  });

  test('open, idle and waiting connections and the maximum of the pg pool', async () => {
    expect(database.kind).toBe('postgres');
    expect((await as(ctx, none).get('/api/health/ready')).statusCode).toBe(200);
    const text = await scrape(ctx);
    expect(value(text, 'db_pool_max_connections')).toBe(10);
    expect(value(text, 'db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'db_pool_idle_connections')).toBeGreaterThanOrEqual(0);
    expect(value(text, 'db_pool_waiting_requests')).toBe(0);
  });
});

describe('liveness and readiness', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const expectedChecks = { shutdown: 'ok', database: 'ok', migrations: 'ok', ...(redisUrl ? { redis: 'ok' } : {}) };

  test('live and ready answer 200 while everything answers; /api/health keeps its shape', async () => {
    const live = await as(ctx, none).get('/api/health/live');
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });
    const ready = await as(ctx, none).get('/api/health/ready');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok', checks: expectedChecks });
    expect((await as(ctx, none).get('/api/health')).json()).toEqual({ status: 'ok' });
    expect((await as(ctx, none).get('/api/health/ready?verbose=1')).statusCode).toBe(400);
  });

  test('shutdown begun: ready answers 503 at once without looking at anything, live still 200', async () => {
    ctx.app.lifecycle.stopping = true;
    try {
      const ready = await as(ctx, none).get('/api/health/ready');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({ status: 'unavailable', checks: { shutdown: 'in_progress' } });
      expect((await as(ctx, none).get('/api/health/live')).statusCode).toBe(200);
    } finally {
      ctx.app.lifecycle.stopping = false;
    }
    expect((await as(ctx, none).get('/api/health/ready')).statusCode).toBe(200);
  });

  test('closing the app marks it stopping', async () => {
    const other = await createTestApp();
    expect(other.app.lifecycle.stopping).toBe(false);
    await other.close();
    expect(other.app.lifecycle.stopping).toBe(true);
  });

  test('migrations behind → 503 naming migrations; database closed → 503 naming the database; live stays 200', async () => {
    const own = await createTestApp();
    try {
      await own.database.execute('delete from drizzle.__drizzle_migrations where created_at = (select max(created_at) from drizzle.__drizzle_migrations)', []);
      const behind = await as(own, none).get('/api/health/ready');
      expect(behind.statusCode).toBe(503);
      expect(behind.json()).toMatchObject({ status: 'unavailable', checks: { shutdown: 'ok', database: 'ok', migrations: 'failed' } });

      await own.database.close();
      const down = await as(own, none).get('/api/health/ready');
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ status: 'unavailable', checks: { shutdown: 'ok', database: 'failed', migrations: 'skipped' } });
      expect((await as(own, none).get('/api/health')).statusCode).toBe(503);
      const live = await as(own, none).get('/api/health/live');
      expect(live.statusCode).toBe(200);
      expect(live.json()).toEqual({ status: 'ok' });
    } finally {
      await own.close();
    }
  });

  test('Redis configured but not answering → 503 naming redis; nothing secret in the answer', async () => {
    const port = await closedPort();
    const own = await createTestApp({ REDIS_URL: `redis://:hunter2-redis@127.0.0.1:${port}` });
    try {
      const res = await as(own, none).get('/api/health/ready');
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'unavailable', checks: { shutdown: 'ok', database: 'ok', migrations: 'ok', redis: 'failed' } });
      expect(res.body).not.toContain('hunter2');
      expect(res.body).not.toContain(String(port));
    } finally {
      await own.close();
    }
  });
});
