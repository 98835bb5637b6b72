import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type App, buildApp } from '../src/app.js';
import { type Config, loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/client.js';

/** PostgreSQL server to test against (DATABASE_URL), or undefined for PGlite. */
export const serverUrl = process.env.DATABASE_URL || undefined;
export const redisUrl = process.env.REDIS_URL || undefined;

/** A fresh, migrated database: PGlite in memory, or a new database on the DATABASE_URL server. */
export async function createTestDatabase(): Promise<Database & { url?: string }> {
  if (!serverUrl) {
    const database = await openDatabase({ dataDir: 'memory://' });
    await database.migrate();
    return database;
  }
  const name = `pms_test_${uuidv7().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  await database.migrate();
  const close = database.close;
  return Object.assign(database, {
    url: url.toString(),
    close: async () => {
      await close();
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`);
      await dropper.end();
    },
  });
}

export type TestEnv = Record<string, string | undefined>;

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
    CRON_SECRET: 'test-cron-secret',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...env,
  });
}

export type TestContext = { app: App; database: Database; config: Config; close: () => Promise<void> };

/** Builds the real app on a fresh database. `env` overrides configuration variables. */
export async function createTestApp(
  env: TestEnv = {},
  options: { logger?: object; database?: Database; register?: (app: App) => Promise<void> | void; jobs?: boolean; rateLimitNamespace?: string } = {},
): Promise<TestContext> {
  const config = testConfig(env);
  const database = options.database ?? (await createTestDatabase());
  const app = await buildApp({ config, database, logger: options.logger ?? false, jobs: options.jobs ?? false, rateLimitNamespace: options.rateLimitNamespace ?? `pms-test-${uuidv7()}-` });
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
  // Written behind the API's back: tell cached list totals, as every real mutation does.
  const { touch } = await import('../src/data/changes.js');
  await touch(ctx.database.db, 'users');
  const token = await login(ctx, email, password);
  return { id: user.id, email, name: user.name, password, token, headers: { authorization: `Bearer ${token}` } };
}

/** Signs in through the API and returns the session token. */
export async function login(ctx: TestContext, email: string, password: string): Promise<string> {
  const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  return res.json().session.token;
}
