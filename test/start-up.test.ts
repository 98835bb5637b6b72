import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, expect, onTestFinished, test } from 'vitest';
import { type Database, openDatabase } from '../src/db/client.js';
import { leads } from '../src/db/schema/index.js';
import { compiled, ROOT } from './compiled.js';
import { createTestDatabase, freePort, pgliteDataDir, POLL_MS, serverUrl, SERVICE_VARIABLES } from './helpers.js';

// The service as a user starts it: its own process (`node dist/main.js`, compiled from the sources, and `npm start`),
// with only the variables a test gives it. Out of `npm run test:quick`, which runs in-process tests only.

const SECRET = 'a-test-secret-that-is-at-least-32-characters';
const tempDirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pms-start-up-'));
  tempDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

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

test('a promise rejected with nobody listening (as a library may drop one) is logged, and the service keeps answering', async () => {
  const port = await freePort();
  // Loaded before the service: once the service answers, one is made that nobody handles.
  const stray = `let wait = setInterval(() => fetch('http://127.0.0.1:${port}/api/health').then((res) => { if (res.ok && wait) { clearInterval(wait); wait = 0; Promise.reject(new Error('a stray rejection')); } }, () => {}), 100);`;
  const service = await startService({
    PORT: String(port), HOST: '127.0.0.1', DATA_DIR: tempDir(), AUTH_SECRET: SECRET, BCRYPT_COST: '4',
    NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(stray)}`,
  });
  await waitForOutput(service, /a stray rejection/);
  expect(service.output()).toMatch(/unhandled promise rejection; the service keeps running/);
  const health = await waitForHealth(service, port);
  expect(await health.json()).toEqual({ status: 'ok' });
  expect(await stopService(service), service.output()).toBe(0);
}, 180_000);

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
    // Until it answers or exits, whatever that takes: `npm start` first compiles the service, which on a fresh clone (no
    // dist/) is a whole build, and waits for a console build another test file may be making. The test's own timeout
    // is the hang guard.
    await waitForHealth({ child: npm, output: () => output, exited }, port, Infinity);
    process.kill(npm.pid!, 'SIGTERM'); // npm only, not its process group
    // A hang guard, as the file's other waits for a stop (60 s).
    const deadline = Date.now() + 60_000;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      // Closed means refused: an answer, or none yet (a busy machine), is a port still open.
      closed = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(1000) })
        .then(() => false, (err: { cause?: { code?: string } }) => err.cause?.code === 'ECONNREFUSED');
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
  // A fresh clone's whole build and a start, then the stop: a guard against a hang, not a speed check.
}, 360_000);
