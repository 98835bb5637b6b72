import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, expect, onTestFinished, test } from 'vitest';
import { ConfigError, loadConfig, loadDotEnv } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/client.js';
import { leads } from '../src/db/schema/index.js';
import { compiled, ROOT } from './compiled.js';
import { createTestDatabase, pgliteDataDir, POLL_MS, serverUrl } from './helpers.js';

const SECRET = 'a-test-secret-that-is-at-least-32-characters';
const tempDirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pms-config-'));
  tempDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs loadConfig and returns the ConfigError it throws (fails the test if it does not throw one). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ AUTH_SECRET: SECRET, DATA_DIR: tempDir(), ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

test('defaults are those of CONTRACT section 1', () => {
  const config = loadConfig({ AUTH_SECRET: SECRET });
  expect(config).toMatchObject({
    nodeEnv: 'development',
    production: false,
    port: 3000,
    host: '0.0.0.0',
    baseUrl: 'http://localhost:3000',
    dataDir: resolve('./data'),
    databaseUrl: undefined,
    redisUrl: undefined,
    cronSecret: undefined,
    smtpUrl: undefined,
    adminEmail: 'admin@example.com',
    adminPassword: undefined,
    trustProxy: false,
    allowedOrigins: [],
    authRateLimit: 5,
    writeRateLimit: 30,
    readRateLimit: 100,
    bcryptCost: 12,
    sessionTtlHours: 168,
    activityLogRetentionDays: 90,
    uploadDir: resolve('./data/uploads'),
    uploadMaxBytes: 10_485_760,
    logLevel: 'info',
  });
  expect(config.mailFrom).toMatch(/@/);
});

test('BASE_URL follows PORT, UPLOAD_DIR follows DATA_DIR, and values are parsed', () => {
  const dataDir = tempDir();
  const config = loadConfig({
    AUTH_SECRET: SECRET,
    PORT: '8080',
    DATA_DIR: dataDir,
    ALLOWED_ORIGINS: 'https://a.example.com, https://b.example.com',
    TRUST_PROXY: 'true',
    ADMIN_EMAIL: 'Boss@Example.COM',
    DATABASE_URL: 'postgres://u:p@db.internal:5432/pms',
    REDIS_URL: 'redis://cache:6379',
    SMTP_URL: 'smtp://user:pass@mail:587',
    BCRYPT_COST: '4',
    LOG_LEVEL: 'debug',
  });
  expect(config.port).toBe(8080);
  expect(config.baseUrl).toBe('http://localhost:8080');
  expect(config.dataDir).toBe(dataDir);
  expect(config.uploadDir).toBe(join(dataDir, 'uploads'));
  expect(config.allowedOrigins).toEqual(['https://a.example.com', 'https://b.example.com']);
  expect(config.trustProxy).toBe(true);
  expect(config.adminEmail).toBe('boss@example.com');
  expect(config.databaseUrl).toBe('postgres://u:p@db.internal:5432/pms');
  expect(config.redisUrl).toBe('redis://cache:6379');
  expect(config.smtpUrl).toBe('smtp://user:pass@mail:587');
  expect(config.bcryptCost).toBe(4);
  expect(config.logLevel).toBe('debug');
  expect(loadConfig({ AUTH_SECRET: SECRET, BASE_URL: 'https://pms.example.com/' }).baseUrl).toBe('https://pms.example.com');
});

test.each([
  ['PORT', 'abc'],
  ['PORT', '70000'],
  ['PORT', '-1'],
  ['DATABASE_URL', 'not a url'],
  ['DATABASE_URL', 'mysql://localhost/db'],
  ['REDIS_URL', 'http://localhost:6379'],
  ['SMTP_URL', 'nope'],
  ['BASE_URL', 'localhost:3000'],
  ['LOG_LEVEL', 'verbose'],
  ['BCRYPT_COST', 'twelve'],
  ['BCRYPT_COST', '3'],
  ['BCRYPT_COST', '40'],
  ['AUTH_RATE_LIMIT', '0'],
  ['WRITE_RATE_LIMIT', '1.5'],
  ['READ_RATE_LIMIT', 'lots'],
  ['SESSION_TTL_HOURS', 'x'],
  ['ACTIVITY_LOG_RETENTION_DAYS', '-5'],
  ['UPLOAD_MAX_BYTES', '10MB'],
  ['ADMIN_EMAIL', 'not-an-email'],
  ['ALLOWED_ORIGINS', 'https://ok.example.com,not an origin'],
  ['AUTH_SECRET', 'too-short'],
  ['UPLOAD_MAX_PIXELS', '0'],
  ['UPLOAD_UNUSED_RETENTION_HOURS', 'week'],
  ['S3_ENDPOINT', 'not a url'],
  ['S3_BUCKET', 'Not_A_Bucket'],
  ['LOG_FORMAT', 'yaml'],
  ['METRICS_TOKEN', 'too-short-for-a-token'],
])('%s=%s stops start-up with a ConfigError naming the variable', (name, value) => {
  const err = configError({ [name]: value });
  expect(err.message).toContain(name);
});

test('uploads: local storage by default; S3 settings parse, and half of them stop start-up', () => {
  const plain = loadConfig({ AUTH_SECRET: SECRET });
  expect(plain).toMatchObject({ s3: undefined, uploadMaxPixels: 100_000_000, uploadUnusedRetentionHours: 168 });
  expect(loadConfig({ AUTH_SECRET: SECRET, S3_BUCKET: 'media', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' }).s3)
    .toEqual({ bucket: 'media', endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true });
  expect(loadConfig({ AUTH_SECRET: SECRET, S3_BUCKET: 'media', S3_REGION: 'eu-west-3' }).s3).toMatchObject({ endpoint: undefined, region: 'eu-west-3', forcePathStyle: false });
  expect(configError({ S3_ENDPOINT: 'http://127.0.0.1:9000' }).message).toContain('S3_BUCKET');
  expect(configError({ S3_BUCKET: 'media', S3_ACCESS_KEY_ID: 'k' }).message).toContain('S3_SECRET_ACCESS_KEY');
});

test('AUTH_SECRET is required when NODE_ENV=production', () => {
  const err = (() => {
    try {
      loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir() });
    } catch (e) {
      return e as Error;
    }
    throw new Error('production start-up without AUTH_SECRET was accepted');
  })();
  expect(err).toBeInstanceOf(ConfigError);
  expect(err.message).toContain('AUTH_SECRET');
  const config = loadConfig({ NODE_ENV: 'production', AUTH_SECRET: SECRET, DATA_DIR: tempDir() });
  expect(config.production).toBe(true);
  expect(config.authSecret).toBe(SECRET);
});

test('in development a secret is generated once and kept in DATA_DIR', () => {
  const dataDir = tempDir();
  const first = loadConfig({ DATA_DIR: dataDir });
  expect(first.authSecret.length).toBeGreaterThanOrEqual(32);
  expect(existsSync(join(dataDir, 'auth-secret'))).toBe(true);
  expect(readFileSync(join(dataDir, 'auth-secret'), 'utf8').trim()).toBe(first.authSecret);
  expect(loadConfig({ DATA_DIR: dataDir }).authSecret).toBe(first.authSecret);
  expect(loadConfig({ DATA_DIR: tempDir() }).authSecret).not.toBe(first.authSecret);
});

// ---------------------------------------------------------------------------------------------------------------
// The real process: `src/main.ts` run by node (compiled as tsx would, see test/compiled.ts).

/** Every variable the service reads: the child gets only the ones a test sets, never the developer's. */
const SERVICE_VARIABLES = [
  'NODE_ENV', 'PORT', 'HOST', 'BASE_URL', 'DATA_DIR', 'DATABASE_URL', 'REDIS_URL', 'AUTH_SECRET', 'CRON_SECRET',
  'SMTP_URL', 'MAIL_FROM', 'ADMIN_EMAIL', 'ADMIN_PASSWORD', 'TRUST_PROXY', 'ALLOWED_ORIGINS', 'AUTH_RATE_LIMIT',
  'WRITE_RATE_LIMIT', 'READ_RATE_LIMIT', 'BCRYPT_COST', 'SESSION_TTL_HOURS', 'ACTIVITY_LOG_RETENTION_DAYS',
  'UPLOAD_DIR', 'UPLOAD_MAX_BYTES', 'LOG_LEVEL', 'UPLOAD_MAX_PIXELS', 'UPLOAD_UNUSED_RETENTION_HOURS',
  'S3_BUCKET', 'S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE', 'LOG_FORMAT', 'METRICS_TOKEN',
];

type Service = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

async function startService(env: Record<string, string>, cwd = tempDir()): Promise<Service> {
  const main = await compiled('main.ts');
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete childEnv[name];
  // The working directory is a temporary one, so a developer's .env in the repository is not read.
  const child = spawn(process.execPath, main, {
    cwd,
    env: { ...childEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  // 'close', not 'exit': it comes after the output has been drained.
  const exited = new Promise<number | null>((resolveExit) => child.on('close', (code) => resolveExit(code)));
  return { child, output: () => output, exited };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise((ok) => server.close(ok));
  return port;
}

/** `timeoutMs` guards against a hang, not a speed check: a first start creates its PGlite database (long on a busy machine). */
async function waitForHealth(service: Service, port: number, timeoutMs = 120_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void service.exited.then((code) => (exitCode = code));
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`service exited with ${exitCode} before answering:\n${service.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return res;
    } catch {
      // not listening yet
    }
    await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
  service.child.kill('SIGKILL');
  throw new Error(`service did not become healthy within ${timeoutMs} ms:\n${service.output()}`);
}

/** Resolves once the service's output matches `pattern` (its log lines arrive a little after its answers). */
async function waitForOutput(service: Service, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(service.output())) {
    if (Date.now() > deadline) throw new Error(`output never matched ${pattern}:\n${service.output()}`);
    await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
}

async function stopService(service: Service): Promise<number | null> {
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 60_000);
  const code = await service.exited;
  clearTimeout(timer);
  return code;
}

test('PORT=abc stops the real start-up with a non-zero exit and a message naming PORT', async () => {
  const service = await startService({ PORT: 'abc', DATA_DIR: tempDir(), AUTH_SECRET: SECRET });
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 60_000);
  const code = await service.exited;
  clearTimeout(timer);
  expect(code).not.toBe(0);
  expect(code).not.toBeNull(); // not killed by the timeout
  expect(service.output()).toMatch(/PORT/);
  expect(service.output()).not.toMatch(/service ready/);
});

/** A PostgreSQL database with nothing in it (not even migrations), dropped when the file ends. */
async function emptyServerDatabase(): Promise<string> {
  const name = `pms_test_${uuidv7().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  onTestFinished(async () => {
    const dropper = new pg.Client({ connectionString: serverUrl });
    await dropper.connect();
    await dropper.query(`drop database if exists ${name} with (force)`);
    await dropper.end();
  });
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

test('the service starts, restarts on the same data (migrations are a no-op, data kept) and exits 0 on SIGTERM', async () => {
  const dataDir = tempDir();
  const databaseUrl = serverUrl ? await emptyServerDatabase() : undefined;
  /** Opens the service's own database directly (only while the service is stopped: PGlite has one owner). */
  const openServiceDatabase = (): Promise<Database> =>
    openDatabase(databaseUrl ? { url: databaseUrl } : { dataDir: join(dataDir, 'pglite') });
  const migrationsApplied = async (database: Database) =>
    Number((await database.execute('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0].n);

  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
    BCRYPT_COST: '4',
    ADMIN_PASSWORD: 'Start-up-Test-Passw0rd!',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };

  // First start: migrations run on an empty database.
  const first = await startService(env);
  const health = await waitForHealth(first, port);
  expect(await health.json()).toEqual({ status: 'ok' });
  await waitForOutput(first, /service ready/);
  expect(await stopService(first), first.output()).toBe(0);

  // Between runs, put a row in and note what the migrations table holds.
  const leadId = uuidv7();
  let database = await openServiceDatabase();
  const migrations = await migrationsApplied(database);
  expect(migrations).toBeGreaterThan(0);
  await database.db.insert(leads).values({ id: leadId, first_name: 'Kept', last_name: 'Across-Restarts', email: 'kept@example.com' });
  await database.close();
  // The development secret was generated once and is reused by the second start.
  const secret = readFileSync(join(dataDir, 'auth-secret'), 'utf8');

  // Second start on the same data: succeeds, applies nothing new, keeps the row.
  const second = await startService(env);
  await waitForHealth(second, port);
  expect(await stopService(second), second.output()).toBe(0);
  expect(second.output()).toMatch(/"signal":"SIGTERM"/);

  database = await openServiceDatabase();
  try {
    expect(await migrationsApplied(database)).toBe(migrations);
    const kept = await database.db.select().from(leads).where(eq(leads.id, leadId));
    expect(kept).toHaveLength(1);
    expect(kept[0].last_name).toBe('Across-Restarts');
    expect((await database.execute('select count(*)::int as n from leads')).rows[0].n).toBe(1);
  } finally {
    await database.close();
  }
  expect(readFileSync(join(dataDir, 'auth-secret'), 'utf8')).toBe(secret);
  // Three starts of the service, each migrating or opening its database: a guard against a hang, not a speed check.
}, 240_000);

test('a .env file in the working directory is read by the real start-up', async () => {
  const cwd = tempDir();
  writeFileSync(join(cwd, '.env'), 'PORT=not-a-port\n');
  const service = await startService({ DATA_DIR: tempDir(), AUTH_SECRET: SECRET }, cwd);
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 60_000);
  const code = await service.exited;
  clearTimeout(timer);
  expect(code).not.toBe(0);
  expect(code).not.toBeNull();
  expect(service.output()).toMatch(/PORT/);
});

test('loadDotEnv reads variables from the file, and real environment variables win', () => {
  const file = join(tempDir(), '.env');
  writeFileSync(file, 'PMS_TEST_FROM_FILE=from-file\nPMS_TEST_BOTH=from-file\n');
  process.env.PMS_TEST_BOTH = 'from-environment';
  try {
    loadDotEnv(file);
    expect(process.env.PMS_TEST_FROM_FILE).toBe('from-file');
    expect(process.env.PMS_TEST_BOTH).toBe('from-environment');
    loadDotEnv(join(tempDir(), 'missing.env')); // absent file: nothing happens
  } finally {
    delete process.env.PMS_TEST_FROM_FILE;
    delete process.env.PMS_TEST_BOTH;
  }
});

test('.env.example and the README document every variable, and the example values parse', () => {
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  for (const name of SERVICE_VARIABLES) {
    expect(example, name).toMatch(new RegExp(`^# ${name}=`, 'm'));
    expect(readme, name).toContain(`| \`${name}\` |`);
  }
  // Uncommenting every example line that has a value gives a configuration that loads.
  const env: Record<string, string> = { DATA_DIR: tempDir() };
  for (const [, name, value] of example.matchAll(/^# ([A-Z_]+)=(.+)$/gm)) if (name !== 'DATA_DIR' && name !== 'UPLOAD_DIR') env[name] = value;
  expect(Object.keys(env).length).toBeGreaterThan(15);
  const config = loadConfig(env);
  expect(config.port).toBe(3000);
  expect(config.mailFrom).toBe(loadConfig({ AUTH_SECRET: SECRET }).mailFrom);
});

test('SIGTERM sent to the `npm start` process alone stops the server: the port closes and no node keeps serving (CONTRACT §13)', async () => {
  const port = await freePort();
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete childEnv[name];
  // A database migrated already (a first start's migrations are the test above): this one is about the signal.
  const dataDir = tempDir();
  const database = serverUrl ? await createTestDatabase() : undefined;
  if (database) onTestFinished(() => database.close());
  else await pgliteDataDir(join(dataDir, 'pglite'));
  // Exactly what a user runs; it builds first, then runs the service.
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { ...childEnv, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, AUTH_SECRET: SECRET, LOG_LEVEL: 'warn', ...(database ? { DATABASE_URL: database.url! } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so the clean-up below reaches an orphan too
  });
  let output = '';
  npm.stdout!.on('data', (chunk) => (output += chunk));
  npm.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolveExit) => npm.on('close', (code) => resolveExit(code)));
  try {
    await waitForHealth({ child: npm, output: () => output, exited }, port, 120_000);
    process.kill(npm.pid!, 'SIGTERM'); // npm only, not its process group
    const deadline = Date.now() + 15_000;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      closed = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(1000) }).then(() => false, () => true);
      if (!closed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(closed, output).toBe(true);
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}, 180_000);
