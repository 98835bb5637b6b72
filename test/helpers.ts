import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import SwaggerParser from '@apidevtools/swagger-parser';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { expect, inject } from 'vitest';
import { type App, buildApp } from '../src/app.js';
import { clock } from '../src/clock.js';
import { type Config, loadConfig } from '../src/config.js';
import { type Database, type Executor, openDatabase } from '../src/db/client.js';
import { borrowDatabase } from './database-pool.js';

/** PostgreSQL server to test against (DATABASE_URL), or undefined for PGlite. */
export const serverUrl = process.env.DATABASE_URL || undefined;
export const redisUrl = process.env.REDIS_URL || undefined;

let templateDump: Promise<Blob> | undefined;

/** The migrated PGlite database the global setup dumped, read once per worker (for `PGlite.create`'s `loadDataDir`). */
export function pgliteTemplate(): Promise<Blob> {
  const file = inject('pgliteTemplate');
  if (!file) throw new Error('no PGlite template: test/global-setup.ts must run first (see vitest.config.ts)');
  templateDump ??= readFile(file).then((bytes) => new Blob([bytes]));
  return templateDump;
}

/**
 * A PGlite data directory holding the migrated template, for a process to open (a service, a command line): the
 * global setup's dump is a tar of the data directory (what PGlite's `loadDataDir` unpacks), unpacked in place by
 * `tar`, so no PGlite starts here for it. Where no `tar` can unpack it, PGlite loads the template and closes.
 */
export async function pgliteDataDir(dir: string) {
  const template = inject('pgliteTemplate');
  if (!template) throw new Error('no PGlite template: test/global-setup.ts must run first (see vitest.config.ts)');
  mkdirSync(dir, { recursive: true });
  try {
    // The members' names start with a slash (the data directory's root): tar takes them as relative.
    execFileSync('tar', ['-xf', template, '-C', dir], { stdio: 'ignore' });
    if (existsSync(join(dir, 'PG_VERSION'))) return;
  } catch {
    // no usable tar: PGlite unpacks it below
  }
  rmSync(dir, { recursive: true, force: true });
  await (await openDatabase({ dataDir: dir, loadDataDir: await pgliteTemplate() })).close();
}

/** Runs one statement on the server's maintenance connection. */
export async function onServer(text: string) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * A migrated database as the template is: PGlite in memory (lent from this worker's pool: a copy of the template, or
 * one an earlier file closed, emptied back to it), PGlite in `dataDir` (e.g. for a service process to open), or a new
 * database on the DATABASE_URL server. All start as the template the global setup migrated once for the run.
 */
export async function createTestDatabase(options: { dataDir?: string } = {}): Promise<Database & { url?: string }> {
  if (!serverUrl) {
    if (options.dataDir) return openDatabase({ dataDir: options.dataDir, loadDataDir: await pgliteTemplate() });
    // In memory: a database an earlier file of this worker returned, emptied, or a fresh copy (test/database-pool.ts).
    const pglite = await borrowDatabase(async () => (await openDatabase({ dataDir: 'memory://', loadDataDir: await pgliteTemplate() })).pglite!);
    return openDatabase({ pglite });
  }
  const template = inject('postgresTemplate');
  if (!template) throw new Error('no PostgreSQL template: test/global-setup.ts must run first (see vitest.config.ts)');
  const name = `pms_test_${uuidv7().replace(/-/g, '')}`;
  for (let attempt = 1; ; attempt++) {
    try {
      await onServer(`create database ${name} template ${template}`);
      break;
    } catch (err) {
      // 55006: the template is being accessed by other users (another worker copying it this very moment).
      if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  const close = database.close;
  return Object.assign(database, {
    url: url.toString(),
    close: async () => {
      await close();
      await onServer(`drop database if exists ${name} with (force)`);
    },
  });
}

/**
 * Every variable the service reads, as src/config.ts reads them (`env.NAME`, `env['NAME']` or a reader's `(env, 'NAME'`):
 * a service process a test starts gets only the ones the test sets, never the developer's; each is documented.
 */
export const SERVICE_VARIABLES: readonly string[] = [...new Set(
  [...readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8').matchAll(/\benv(?:, '|\.|\[')([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]),
)].sort();

/** A TCP port nothing listens on now (the system's pick), for a process or server a test starts. */
export const freePort = () => new Promise<number>((resolve, reject) => {
  const server = createServer();
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    server.close(() => resolve(port));
  });
});

export type TestEnv = Record<string, string | undefined>;

/** The tests' cron secret (at least 32 characters, as the service requires). */
export const CRON_SECRET = 'test-cron-secret-0123456789abcdef';

/** Configuration for tests: cheap hashing, generous limits, a private data directory. */
export function testConfig(env: TestEnv = {}): Config {
  const dataDir = mkdtempSync(join(tmpdir(), 'pms-test-'));
  return loadConfig({
    DATA_DIR: dataDir,
    AUTH_SECRET: 'test-secret-that-is-long-enough-0123456789',
    BCRYPT_COST: '4',
    AUTH_RATE_LIMIT: '100000',
    WRITE_RATE_LIMIT: '100000',
    READ_RATE_LIMIT: '100000',
    LOG_LEVEL: 'silent',
    BASE_URL: 'http://localhost:3000',
    CRON_SECRET: CRON_SECRET,
    // A form token may be used as soon as it is fetched (test/public-forms.test.ts sets the real wait).
    FORM_TOKEN_MIN_SECONDS: '0',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...env,
  });
}

export type TestContext = { app: App; database: Database; config: Config; close: () => Promise<void> };

/** Builds the real app on a fresh database. `env` overrides configuration variables. */
export async function createTestApp(
  env: TestEnv = {},
  options: { logger?: object; database?: Database; register?: (app: App) => Promise<void> | void; jobs?: boolean; rateLimitNamespace?: string; consoleDir?: string } = {},
): Promise<TestContext> {
  const config = testConfig(env);
  const database = options.database ?? (await createTestDatabase());
  const app = await buildApp({ config, database, logger: options.logger ?? false, jobs: options.jobs ?? false, rateLimitNamespace: options.rateLimitNamespace ?? `pms-test-${uuidv7()}-`, consoleDir: options.consoleDir });
  await options.register?.(app);
  await app.ready();
  return {
    app,
    database,
    config,
    close: async () => {
      await app.close();
      if (!options.database) await database.close();
      rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}

/** Counts the SQL statements matching `pattern` that run while `fn` does. */
export async function countQueries(database: Database, pattern: RegExp, fn: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const observe = (sql: string) => {
    if (pattern.test(sql)) count++;
  };
  database.queryObservers.add(observe);
  try {
    await fn();
  } finally {
    database.queryObservers.delete(observe);
  }
  return count;
}

export type Grants = Partial<Record<'cms' | 'crm' | 'iam', string>>;

let userCounter = 0;

/**
 * Creates a user directly in the database with the given module grants ('r', 'w', 'd' letters per module,
 * e.g. {cms: 'rwd', iam: 'r'}), signs them in through the API and returns their bearer headers.
 */
export async function createUser(ctx: TestContext, grants: Grants = {}, fields: { email?: string; name?: string; password?: string } = {}) {
  const { insertUserWithPassword } = await import('../src/auth/accounts.js');
  const { bcryptHasher } = await import('../src/auth/passwords.js');
  const { moduleAccess } = await import('../src/db/schema/index.js');
  const email = fields.email ?? `user${++userCounter}-${Date.now()}@example.com`;
  const password = fields.password ?? 'Passw0rd!';
  const hash = await bcryptHasher(ctx.config.bcryptCost).hash(password);
  const user = await insertUserWithPassword(ctx.database.db, { email, name: fields.name ?? `User ${userCounter}`, emailVerified: true }, hash);
  const rows = Object.entries(grants).map(([module, letters]) => ({
    user_id: user.id,
    module: module as 'cms' | 'crm' | 'iam',
    can_read: letters!.includes('r'),
    can_write: letters!.includes('w'),
    can_delete: letters!.includes('d'),
  }));
  if (rows.length) await ctx.database.db.insert(moduleAccess).values(rows);
  const token = await login(ctx, email, password);
  return { id: user.id, email, name: user.name, password, token, headers: { authorization: `Bearer ${token}` } };
}

/** Signs in through the API and returns the session token. */
export async function login(ctx: TestContext, email: string, password: string): Promise<string> {
  const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  return res.json().session.token;
}

/** The public forms that take a form token (`GET /api/public/form-token`). */
const PUBLIC_FORMS = /^\/api\/public\/(inquiries|newsletter)(\?|$)/;

/** Signed out: a request without any session. */
export const none = Object.freeze({ signedOut: true } as const);
/** Who sends a request: a created test user (by its token), a raw session token, or `none`. */
export type Who = { token: string } | string | typeof none;
export type Headers = Record<string, string>;
export type Reply = LightMyRequestResponse;

/**
 * Requests to the app as `who`: `as(ctx, user).get(url)`, `.post(url, body)`, `.patch(url, body)`, `.put(url, body)`,
 * `.delete(url)`, or `.request(method, url, body)`. `options.headers` go with every request of this client (each method takes more headers last),
 * `options.remoteAddress` is the client's address. Answers are the inject responses (`.statusCode`, `.headers`,
 * `.body`, `.json<T>()`).
 */
export function as(ctx: { app: App }, who: Who, options: { headers?: Headers; remoteAddress?: string } = {}) {
  const token = typeof who === 'string' ? who : 'token' in who ? who.token : undefined;
  const session: Headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown, extra: Headers = {}): Promise<Reply> =>
    ctx.app.inject({
      method, url, payload: payload as string | object | Buffer | undefined, headers: { ...session, ...options.headers, ...extra },
      ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    });
  // The public forms take a form token, fetched as the website does, unless the body names its own `form_token`.
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown, extra: Headers = {}): Promise<Reply> => {
    if (method !== 'POST' || !PUBLIC_FORMS.test(url) || !payload || typeof payload !== 'object' || Buffer.isBuffer(payload) || 'form_token' in payload) {
      return inject(method, url, payload, extra);
    }
    const issued = await inject('GET', '/api/public/form-token');
    if (issued.statusCode !== 200) return issued;
    return inject(method, url, { ...payload, form_token: issued.json().token }, extra);
  };
  return {
    get: (url: string, headers?: Headers) => send('GET', url, undefined, headers),
    post: (url: string, body?: unknown, headers?: Headers) => send('POST', url, body, headers),
    patch: (url: string, body?: unknown, headers?: Headers) => send('PATCH', url, body, headers),
    put: (url: string, body?: unknown, headers?: Headers) => send('PUT', url, body, headers),
    delete: (url: string, headers?: Headers) => send('DELETE', url, undefined, headers),
    /** Any method, e.g. when a test goes through several. */
    request: send,
  };
}

/**
 * The app's OpenAPI document with every `$ref` replaced by what it names, for tests that read a route's schemas
 * (the document itself shares them through components).
 */
export async function resolvedOpenapi(ctx: { app: App }): Promise<any> {
  const res = await ctx.app.inject({ method: 'GET', url: '/api/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /api/openapi.json answered ${res.statusCode}: ${res.body}`);
  return SwaggerParser.dereference(res.json());
}

/** How often waits look again: they end about as soon as their condition holds. */
export const POLL_MS = 10;
/**
 * How long a test waits for something that must happen (a mail, a job, a notification from another instance): only a
 * guard that turns a hang into a failure, far above what it takes on a busy machine, never a measure of speed. Waits
 * end as soon as their condition holds.
 */
export const PATIENCE_MS = 30_000;

/** Resolves once `condition` holds; checks every POLL_MS, fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition') {
  await eventually(async () => ((await condition()) ? true : undefined), what, timeoutMs);
}

/** The first value `find` returns other than undefined; looks every POLL_MS, fails after `timeoutMs`. */
export async function eventually<T>(find: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The service's clock from `iso` on, moving a millisecond a reading (timestamps it writes stay ordered). */
export function clockAt(iso: string) {
  let at = Date.parse(iso);
  clock.now = () => new Date(at++);
}

/** The JSON body of an answer, once its status is checked (the body is shown when it is not the one expected). */
export async function ok(res: Promise<Reply>, status = 200) {
  const reply = await res;
  expect(reply.statusCode, reply.body).toBe(status);
  return reply.json();
}
