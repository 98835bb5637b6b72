import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import type { Database } from '../src/db/client.js';
import { createTestDatabase, freePort, serverUrl, waitFor } from './helpers.js';
import { compiled } from './compiled.js';
import { startCaptureServer } from './crm-smtp-capture.js';

// The real service as a child process, killed with SIGKILL in the middle of a campaign and started again on the
// same data: every recipient must end up with the campaign, and nobody with two different copies of it.

// Batches of 100 (src/modules/crm/delivery.ts): three are sent before the kill, two after the restart.
const RECIPIENTS = 500;
const KILL_AFTER = 300;

let child: ChildProcess | undefined;
let cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  child?.kill('SIGKILL');
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

test('a campaign survives kill -9 mid-send: each recipient gets it once', async () => {
  const smtp = await startCaptureServer();
  cleanup.push(smtp.close);
  const dataDir = mkdtempSync(join(tmpdir(), 'pms-crash-'));
  cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  // The recipients go straight into the database before the service starts: what this test is about is the
  // sending (subscribing through the API is tested elsewhere), and 2,000 requests took most of its time.
  const subscribe = (database: Database) => database.execute(
    `insert into newsletter_subscriptions (id, email) select gen_random_uuid(), 'crash' || g || '@example.com' from generate_series(0, $1::int - 1) g`,
    [RECIPIENTS],
  );
  let databaseUrl: string | undefined;
  if (serverUrl) {
    const database = await createTestDatabase();
    databaseUrl = database.url;
    cleanup.push(() => database.close());
    await subscribe(database);
  } else {
    // The service's own PGlite directory, copied from the migrated template (the service then only checks it).
    const database = await createTestDatabase({ dataDir: join(dataDir, 'pglite') });
    await subscribe(database);
    await database.close();
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: base,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    // A pooled transport: one SMTP connection for many messages (a fresh one per message costs ~100 ms here).
    SMTP_URL: `${smtp.url}&pool=true`,
    ADMIN_EMAIL: 'admin@example.com',
    ADMIN_PASSWORD: 'Crash-Test-0!',
    AUTH_SECRET: 'crash-test-secret-that-is-long-enough-0123',
    BCRYPT_COST: '4',
    WRITE_RATE_LIMIT: '1000000',
    READ_RATE_LIMIT: '1000000',
    AUTH_RATE_LIMIT: '1000',
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
  };
  const start = async () => {
    const proc = spawn(process.execPath, await compiled('main.ts'), { env, stdio: ['ignore', process.env.CRASH_LOG ? 'inherit' : 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr!.on('data', (c) => { stderr += c; });
    child = proc;
    await waitFor(async () => {
      if (proc.exitCode !== null) throw new Error(`service exited: ${stderr}`);
      return fetch(`${base}/api/health`).then((r) => r.ok, () => false);
    }, 60_000, 'the service to start');
    return proc;
  };
  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() as any };
  };

  let proc = await start();
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD }) });
  expect(login.status).toBe(200);
  const token = (await login.json() as any).session.token as string;

  const subscribers = await api('GET', '/api/crm/newsletters?status=subscribed&limit=1', token);
  expect(subscribers.status).toBe(200);
  expect(subscribers.body.pagination.total).toBe(RECIPIENTS);

  const campaign = await api('POST', '/api/crm/campaigns', token, { name: 'Crash', subject: 'Crash test', content: 'Hello **there**' });
  expect(campaign.status).toBe(201);
  expect((await api('POST', `/api/crm/campaigns/${campaign.body.id}/send`, token)).status).toBe(200);

  await waitFor(() => smtp.messages.length >= KILL_AFTER, 60_000, `${KILL_AFTER} messages before the kill`);
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
  const atKill = smtp.messages.length;
  expect(atKill).toBeLessThan(RECIPIENTS);

  proc = await start();
  const received = () => new Set(smtp.messages.flatMap((m) => m.to)).size;
  if (process.env.CRASH_LOG) {
    const timer = setInterval(async () => console.log('received', received(), JSON.stringify((await api('GET', `/api/crm/campaigns/${campaign.body.id}`, token)).body.deliveries)), 5000);
    cleanup.push(async () => clearInterval(timer));
  }
  await waitFor(() => received() === RECIPIENTS, 120_000, 'every recipient after the restart');
  await waitFor(async () => (await api('GET', `/api/crm/campaigns/${campaign.body.id}`, token)).body.deliveries?.pending === 0, 30_000, 'no pending delivery');
  const detail = await api('GET', `/api/crm/campaigns/${campaign.body.id}`, token);
  expect(detail.body.deliveries).toEqual({ total: RECIPIENTS, sent: RECIPIENTS, failed: 0, pending: 0 });
  // The service stops (SIGTERM: it finishes what it is sending, and the SMTP server has each message before it
  // answers): from then on no copy can be on its way, so the count below is final. No quiet time is waited out.
  const stopped = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  expect(await stopped).toBe(0);
  const byRecipient = new Map<string, string[]>();
  for (const m of smtp.messages) for (const to of m.to) byRecipient.set(to, [...(byRecipient.get(to) ?? []), m.headers['message-id']]);
  expect(byRecipient.size).toBe(RECIPIENTS);
  // Each recipient has one message; the one in flight at the kill may have gone out twice, with the same
  // Message-ID (so mail clients show it once). Nobody else got a second copy.
  const repeated = [...byRecipient.entries()].filter(([, ids]) => ids.length > 1);
  expect(repeated.length).toBeLessThanOrEqual(1);
  for (const [, ids] of repeated) expect(new Set(ids).size).toBe(1);
  expect(smtp.messages.length).toBeLessThanOrEqual(RECIPIENTS + 1);
  console.info(`crash test: ${atKill} messages before the kill, ${smtp.messages.length} in all, ${repeated.length} resent in-flight`);
}, 240_000);
