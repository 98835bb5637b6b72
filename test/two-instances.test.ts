import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compiled } from './compiled.js';
import { startCaptureServer } from './crm-smtp-capture.js';
import { createTestDatabase, eventually, freePort, redisUrl, serverUrl, waitFor } from './helpers.js';

// Two real service processes (`src/main.ts` compiled as `test/compiled.ts` runs it, as the crash test and the browser tests
// start it), each on its own port and DATA_DIR, on one PostgreSQL database and one Redis, driven over HTTP only.
// What one instance does must hold on the other at once: revocations, permissions, rate limits, and background work
// (webhooks, imports, scheduled campaigns) done once whichever instance's workers take it.

const SKIP = !serverUrl || !redisUrl;
const TITLE = 'two service processes on one PostgreSQL database and one Redis'
  + (SKIP ? ' (skipped: needs DATABASE_URL and REDIS_URL, a PostgreSQL server and Redis the two processes share)' : '');

/** Writes per user per minute on both instances together (their shared Redis counters). */
const WRITE_LIMIT = 40;
const ADMIN = { email: 'admin@example.com', password: 'Two-Instances-0!' };
const tag = uuidv7().replace(/-/g, '').slice(-10);
/**
 * The client's address as the services see it (TRUST_PROXY trusts the loopback hop): random per run, so even the
 * per-IP buckets (sign-in) of parallel runs on the same Redis never share a counter. Every other bucket is keyed by
 * user or token id, fresh in each run's own database.
 */
const CLIENT_IP = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

type Instance = { name: 'A' | 'B'; base: string; proc: ChildProcess; output: () => string; errors: string[] };
type Answer = { status: number; headers: Headers; body: any };
type Who = string | { token: string } | undefined;

/** One HTTP request to an instance, as a client sends it (bearer token, JSON or a raw body). */
async function call(instance: Instance, method: string, path: string, who?: Who, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const token = typeof who === 'string' ? who : who?.token;
  const raw = Buffer.isBuffer(body);
  const res = await fetch(`${instance.base}${path}`, {
    method,
    headers: {
      'x-forwarded-for': CLIENT_IP,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined && !raw ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : raw ? new Uint8Array(body as Buffer) : JSON.stringify(body),
  }).catch((err: Error) => {
    throw new Error(`${method} ${path} on ${instance.name}: ${err.message} (${err.cause ?? ''}); its last output:\n${instance.output().slice(-3000)}`);
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch { /* not JSON: kept as text */ }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A request expected to answer `status`; its body. */
async function ok(instance: Instance, status: number, method: string, path: string, who?: Who, body?: unknown, headers?: Record<string, string>) {
  const res = await call(instance, method, path, who, body, headers);
  expect(res.status, `${method} ${path} on ${instance.name}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/**
 * A local receiver for webhooks: records every request, answers 204 after a short while, so a POST is in flight long
 * enough for the other instance's dispatcher to see its delivery (and take it again, were it not leased).
 */
async function startReceiver() {
  const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server: Server = createHttpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body });
      setTimeout(() => res.writeHead(204).end(), 200);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const BOUNDARY = '----pms-two-instances-boundary';
const multipart = (content: string, filename: string) => Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`),
  Buffer.from(content, 'utf8'),
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);


describe.skipIf(SKIP)(TITLE, () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  const instances: Instance[] = [];
  let A: Instance;
  let B: Instance;
  let smtp: Awaited<ReturnType<typeof startCaptureServer>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let admin: string;
  /** The instances' database, for what only the queue shows (a job made due, every job of a campaign finished). */
  let database: Awaited<ReturnType<typeof createTestDatabase>>;

  /** Starts one service process as a user would, and waits until it answers its readiness probe. */
  async function startInstance(name: 'A' | 'B', env: Record<string, string>): Promise<Instance> {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const dataDir = mkdtempSync(join(tmpdir(), `pms-two-instances-${name}-`));
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const proc = spawn(process.execPath, await compiled('main.ts'), {
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', BASE_URL: base, DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The last lines each process wrote, for failure messages (TWO_INSTANCES_LOG=1 echoes them as they come); every
    // line logged at error level or above (pino: 50 error, 60 fatal) or written to stderr, for the last test.
    let output = '';
    const errors: string[] = [];
    const keep = (stream: 'stdout' | 'stderr') => {
      let partial = '';
      return (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-20_000);
        if (process.env.TWO_INSTANCES_LOG) process.stderr.write(`[${name}] ${chunk}`);
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop()!;
        errors.push(...lines.filter((line) => line.trim() && (stream === 'stderr' || /"level":[56]\d\b/.test(line))));
      };
    };
    proc.stdout!.on('data', keep('stdout'));
    proc.stderr!.on('data', keep('stderr'));
    const instance: Instance = { name, base, proc, output: () => output, errors };
    instances.push(instance);
    await waitFor(async () => {
      if (proc.exitCode !== null) throw new Error(`instance ${name} exited with ${proc.exitCode}:\n${output}`);
      return fetch(`${base}/api/health/ready`).then((r) => r.ok, () => false);
    }, 90_000, `instance ${name} to be ready`);
    return instance;
  }

  /** Stops an instance as a process manager would: SIGTERM, then SIGKILL if it has not exited in 15 s. */
  async function stopInstance(instance: Instance) {
    const { proc } = instance;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }

  const login = async (instance: Instance, email: string, password: string): Promise<string> =>
    (await ok(instance, 200, 'POST', '/api/auth/login', undefined, { email, password })).session.token;

  let users = 0;
  /**
   * A user created through the iam API by the administrator (on A or B in turn), granted `grants` (module → 'rwd'
   * letters), signed in on `on`. Each case has users of its own, so no user's writes reach the write limit but the
   * rate-limit case's.
   */
  async function newUser(grants: Record<string, string>, on: Instance = A) {
    const n = ++users;
    const via = n % 2 ? A : B;
    const email = `two-${n}-${tag}@example.com`;
    const password = `Two-Instances-${n}!`;
    const { id } = await ok(via, 201, 'POST', '/api/iam/users', admin, { email, name: `Two ${n}`, password, emailVerified: true });
    const access: Record<string, string> = {};
    for (const [module, letters] of Object.entries(grants)) {
      const row = await ok(via, 201, 'POST', '/api/iam/module-access', admin, {
        user_id: id, module, can_read: letters.includes('r'), can_write: letters.includes('w'), can_delete: letters.includes('d'),
      });
      access[module] = row.id;
    }
    return { id, email, password, access, token: await login(on, email, password) };
  }

  const total = async (instance: Instance, who: Who, query = '') =>
    (await ok(instance, 200, 'GET', `/api/crm/leads?limit=1${query ? `&${query}` : ''}`, who)).pagination.total as number;

  beforeAll(async () => {
    smtp = await startCaptureServer();
    cleanup.push(() => smtp.close());
    receiver = await startReceiver();
    cleanup.push(() => receiver.close());
    // A fresh database on the server (a copy of the run's migrated template), dropped at the end.
    database = await createTestDatabase();
    cleanup.push(() => database.close());
    // Without the job queue's schema the template carries (test/global-setup.ts): both instances install it at once.
    await database.execute('drop schema pgboss cascade');
    const env: Record<string, string> = {
      NODE_ENV: 'test',
      DATABASE_URL: database.url!,
      REDIS_URL: redisUrl!,
      // Both instances of one deployment share the session secret.
      AUTH_SECRET: `two-instances-secret-${tag}-0123456789abcdef`,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      SMTP_URL: smtp.url,
      BCRYPT_COST: '4',
      WRITE_RATE_LIMIT: String(WRITE_LIMIT),
      READ_RATE_LIMIT: '1000000',
      AUTH_RATE_LIMIT: '100000',
      TRUST_PROXY: '127.0.0.1',
      // Every list page is kept and served again while the change log allows: the cache the totals case challenges.
      SLOW_PAGE_MS: '0',
      INQUIRY_NOTICE_TO: 'none',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      // Nothing of the developer's environment: the outbox, uploads and storage under each DATA_DIR.
      UPLOAD_DIR: '', S3_BUCKET: '', S3_ENDPOINT: '', S3_ACCESS_KEY_ID: '', S3_SECRET_ACCESS_KEY: '',
      METRICS_TOKEN: '', CRON_SECRET: '', ALLOWED_ORIGINS: '', WEBHOOK_RETRY_SCHEDULE: '5,300',
    };
    // Started together on the empty database, as two replicas of one deployment would be.
    [A, B] = await Promise.all([startInstance('A', env), startInstance('B', env)]);
    admin = await login(B, ADMIN.email, ADMIN.password);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    for (const step of cleanup.reverse()) await step().catch((err) => console.warn('two-instances cleanup:', err));
  }, 180_000);

  test('a session ended on one instance (sign-out, password change) or an API token revoked there is refused by the other on its next request', async () => {
    const user = await newUser({ crm: 'r' });
    const read = (instance: Instance, token: string) => call(instance, 'GET', '/api/crm/leads?limit=1', token);

    for (const [here, there] of [[A, B], [B, A], [A, B], [B, A]]) {
      const session = await login(here, user.email, user.password);
      // Both instances know the session (and keep it in their principal caches) before it ends.
      expect((await read(there, session)).status).toBe(200);
      expect((await read(here, session)).status).toBe(200);
      await ok(here, 200, 'POST', '/api/auth/logout', session);
      expect((await read(there, session)).status, `a session signed out on ${here.name}, used on ${there.name}`).toBe(401);
      expect((await read(here, session)).status).toBe(401);
      // The user's other session is untouched.
      expect((await read(there, user.token)).status).toBe(200);
    }

    // A password changed on one instance ends the user's other sessions on both.
    const other = await login(B, user.email, user.password);
    expect((await read(B, other)).status).toBe(200);
    expect((await read(A, other)).status).toBe(200);
    user.password = `${user.password}-changed`;
    await ok(A, 200, 'POST', '/api/auth/change-password', user, { currentPassword: user.password.replace(/-changed$/, ''), newPassword: user.password });
    expect((await read(B, other)).status, 'a session ended by a password change on A, used on B').toBe(401);
    expect((await read(A, other)).status).toBe(401);
    expect((await read(B, user.token)).status).toBe(200);

    for (const [here, there] of [[A, B], [B, A], [A, B], [B, A]]) {
      const created = await ok(there, 201, 'POST', '/api/auth/tokens', user, {
        name: `two-instances ${here.name}`, permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }],
      });
      expect((await read(there, created.token)).status).toBe(200);
      expect((await read(here, created.token)).status).toBe(200);
      await ok(here, 200, 'DELETE', `/api/auth/tokens/${created.id}`, user);
      expect((await read(there, created.token)).status, `an API token revoked on ${here.name}, used on ${there.name}`).toBe(401);
      expect((await read(here, created.token)).status).toBe(401);
      expect((await read(there, user.token)).status).toBe(200);
    }
  });

  test('a permission removed through the iam API on one instance is enforced by the other on its next request', async () => {
    const user = await newUser({ crm: 'rw' });
    const apiToken = (await ok(A, 201, 'POST', '/api/auth/tokens', user, {
      name: 'two-instances reader', permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }],
    })).token as string;
    const read = (instance: Instance, token: string) => call(instance, 'GET', '/api/crm/leads?limit=1', token);

    for (const [here, there] of [[A, B], [B, A]]) {
      for (const token of [user.token, apiToken]) {
        expect((await read(there, token)).status).toBe(200);
        expect((await read(here, token)).status).toBe(200);
      }
      await ok(here, 200, 'PATCH', `/api/iam/module-access/${user.access.crm}`, admin, { can_read: false });
      // The user's session and their API token (never more than its creator) both lose it, on both instances.
      for (const token of [user.token, apiToken]) {
        expect((await read(there, token)).status, `crm read removed on ${here.name}, used on ${there.name}`).toBe(403);
        expect((await read(here, token)).status).toBe(403);
      }
      // A flag given back on one instance is honoured by the other at once too.
      await ok(there, 200, 'PATCH', `/api/iam/module-access/${user.access.crm}`, admin, { can_read: true });
      expect((await read(here, user.token)).status, `crm read given back on ${there.name}, used on ${here.name}`).toBe(200);
    }
  });

  test('the rate limit is shared: writes alternating between the instances get 429 at the combined count', async () => {
    const user = await newUser({ crm: 'rw' });
    for (let i = 0; i < WRITE_LIMIT; i++) {
      const instance = i % 2 ? B : A;
      const res = await call(instance, 'POST', '/api/crm/leads', user, { first_name: 'Rate', last_name: `Limit${tag}`, phone: `+63 917 ${String(i).padStart(4, '0')}` });
      expect(res.status, `write ${i + 1} on ${instance.name}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(WRITE_LIMIT));
      // One counter for both: each instance sees the other's writes.
      expect(Number(res.headers.get('x-ratelimit-remaining')), `remaining after write ${i + 1} on ${instance.name}`).toBe(WRITE_LIMIT - i - 1);
    }
    for (const instance of [A, B]) {
      const refused = await call(instance, 'POST', '/api/crm/leads', user, { first_name: 'Rate', last_name: `Limit${tag}`, phone: '+63 917 9999' });
      expect(refused.status, `write ${WRITE_LIMIT + 1} on ${instance.name}`).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Exactly the allowed writes were made; reads have a bucket of their own.
    expect(await total(B, user, `q=Limit${tag}`)).toBe(WRITE_LIMIT);
  });

  test('a webhook event is delivered once, though both instances run dispatchers', async () => {
    const staff = await newUser({ crm: 'rw' });
    const path = `/hooks/${tag}`;
    const endpoint = await ok(A, 201, 'POST', '/api/iam/webhooks', admin, { url: receiver.url(path), events: ['lead.created'] });
    const deliveries = async () => (await ok(B, 200, 'GET', `/api/iam/webhooks/${endpoint.id}/deliveries?limit=100`, admin)).data as any[];
    const settled = (n: number) => waitFor(async () => {
      const rows = await deliveries();
      return rows.length === n && rows.every((d) => d.status !== 'pending');
    }, 60_000, `${n} deliveries settled`);
    const leadIdsReceived = () => receiver.at(path).map((r) => JSON.parse(r.body).data.id as string);

    // One change on A: one POST.
    const lead = await ok(A, 201, 'POST', '/api/crm/leads', staff, { first_name: 'Hook', last_name: `Once${tag}`, email: `hook-${tag}@example.com` });
    await waitFor(() => receiver.at(path).length >= 1, 30_000, 'the webhook POST');
    await settled(1);
    // No second copy can be on its way: a POST is made only by a dispatcher that claimed the row, a claim counts an
    // attempt, and the row is delivered after one (below); so what arrived is all that will.
    expect(leadIdsReceived()).toEqual([lead.id]);
    const [delivery] = await deliveries();
    expect(delivery).toMatchObject({ event_type: 'lead.created', status: 'delivered', attempts: 1, last_status_code: 204 });
    expect(receiver.at(path)[0].headers['webhook-id']).toBe(delivery.id);

    // Twenty changes at once, half on each instance: both dispatchers are nudged and contend for the same table.
    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => ok(i % 2 ? B : A, 201, 'POST', '/api/crm/leads', staff, {
      first_name: 'Hook', last_name: `Burst${tag}`, email: `hook-${i}-${tag}@example.com`,
    })));
    await waitFor(() => receiver.at(path).length >= 21, 30_000, '21 webhook POSTs');
    await settled(21);
    const received = receiver.at(path);
    expect(received).toHaveLength(21);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(21);
    expect(leadIdsReceived().sort()).toEqual([lead.id, ...made.map((m) => m.id as string)].sort());
    for (const d of await deliveries()) expect(d, `delivery ${d.id}`).toMatchObject({ status: 'delivered', attempts: 1 });

    // Later cases create many leads: this endpoint hears no more.
    await ok(B, 200, 'DELETE', `/api/iam/webhooks/${endpoint.id}`, admin);
  }, 120_000);

  test('a CSV import is processed once, though both instances run import workers', async () => {
    const staff = await newUser({ crm: 'rw' });
    const ROWS = 1200; // three batches of 500
    const csv = ['first_name,last_name,email', ...Array.from({ length: ROWS }, (_, i) => `Imp${i},Import${tag},imp-${i}-${tag}@example.com`)].join('\n');
    const before = await total(B, staff);
    const upload = await ok(A, 202, 'POST', '/api/crm/leads/import', staff, multipart(csv, `two-instances-${tag}.csv`), {
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    });
    const result = await eventually(async () => {
      const body = await ok(B, 200, 'GET', `/api/crm/imports/${upload.id}`, staff);
      return body.status === 'completed' || body.status === 'failed' ? body : undefined;
    }, 'the import to finish', 90_000);
    expect(result).toMatchObject({ status: 'completed', total_rows: ROWS, processed_rows: ROWS, created: ROWS, skipped: 0, failed: 0, errors: [] });
    // Each row created once: a second pass would have created nothing more but counted skips, or added rows.
    expect(await total(A, staff, `q=Import${tag}`)).toBe(ROWS);
    expect(await total(A, staff)).toBe(before + ROWS);
    const imports = await ok(A, 200, 'GET', '/api/crm/imports?resource=leads&limit=100', staff);
    expect(imports.data.filter((i: any) => i.filename === `two-instances-${tag}.csv`)).toHaveLength(1);
    // Still so once no job of the import is left anywhere (a job running twice would still be adding rows).
    await waitFor(async () => Number((await database.execute(`select count(*) as n from pgboss.job where data->>'importId' = $1
      and state not in ('completed', 'failed', 'cancelled')`, [upload.id])).rows[0].n) === 0, 30_000, 'every job of the import finished');
    expect(await ok(B, 200, 'GET', `/api/crm/imports/${upload.id}`, staff)).toMatchObject({ status: 'completed', processed_rows: ROWS, created: ROWS, skipped: 0 });
    expect(await total(B, staff, `q=Import${tag}`)).toBe(ROWS);
  }, 120_000);

  test('a scheduled campaign is sent once, though both instances run the job workers', async () => {
    const staff = await newUser({ crm: 'rwd' });
    const readers = Array.from({ length: 6 }, (_, i) => `reader-${i}-${tag}@example.com`);
    for (const [i, email] of readers.entries()) await ok(i % 2 ? B : A, 201, 'POST', '/api/crm/newsletters', staff, { email });
    const subject = `Open house ${tag}`;
    const campaign = await ok(A, 201, 'POST', '/api/crm/campaigns', staff, { name: `Two instances ${tag}`, subject, content: 'Come **see** us.' });
    // An hour ahead; then the test makes the time arrive (the queued job falls due now): however slow the machine,
    // the request scheduling it comes first, and nothing waits for the clock.
    const at = new Date(Date.now() + 3600_000);
    await ok(B, 200, 'POST', `/api/crm/campaigns/${campaign.id}/send`, staff, { scheduled_at: at.toISOString() });
    expect(await ok(A, 200, 'GET', `/api/crm/campaigns/${campaign.id}`, staff)).toMatchObject({ status: 'scheduled', scheduled_at: at.toISOString(), sent_at: null });
    const due = await database.execute(`update pgboss.job set start_after = now() where name = 'campaign-scheduled' and data->>'campaignId' = $1 and state = 'created'
      returning extract(epoch from now()) * 1000 as at`, [campaign.id]);
    expect(due.rows).toHaveLength(1);
    const madeDue = Number(due.rows[0].at);

    const mails = () => smtp.messages.filter((m) => m.headers.subject === subject);
    // Generous deadlines for the event itself; then the count must stay exactly one per reader.
    await waitFor(() => readers.every((email) => mails().some((m) => m.to.includes(email))), 60_000, 'every reader to get the campaign');
    await waitFor(async () => {
      const { deliveries } = await ok(B, 200, 'GET', `/api/crm/campaigns/${campaign.id}`, staff);
      return deliveries.pending === 0 && deliveries.total === readers.length;
    }, 30_000, 'no delivery pending');
    // Every job of the campaign has finished, on both instances: nothing can send it again, so the counts are final.
    await waitFor(async () => Number((await database.execute(`select count(*) as n from pgboss.job where data->>'campaignId' = $1
      and state not in ('completed', 'failed', 'cancelled')`, [campaign.id])).rows[0].n) === 0, 30_000, 'every job of the campaign finished');
    const detail = await ok(A, 200, 'GET', `/api/crm/campaigns/${campaign.id}`, staff);
    expect(detail).toMatchObject({ status: 'sent', deliveries: { total: readers.length, sent: readers.length, failed: 0, pending: 0 } });
    expect(Date.parse(detail.sent_at)).toBeGreaterThanOrEqual(Math.floor(madeDue));
    expect(mails()).toHaveLength(readers.length);
    for (const email of readers) expect(mails().filter((m) => m.to.includes(email)), email).toHaveLength(1);
  }, 120_000);

  test('a list total read on one instance right after a write on the other is exact', async () => {
    const staff = await newUser({ crm: 'rwd' });
    const OPEN = 'status=new,contacted';
    const SEARCH = `q=Total${tag}`;
    // Every figure read on both instances first, so each has the pages cached (SLOW_PAGE_MS=0) before the writes.
    const figures = async (instance: Instance) => ({ all: await total(instance, staff), open: await total(instance, staff, OPEN), search: await total(instance, staff, SEARCH) });
    const expected = await figures(A);
    expect(await figures(B)).toEqual(expected);
    expect(expected.search).toBe(0);

    const made: { id: string; open: boolean; on: Instance }[] = [];
    for (let i = 0; i < 8; i++) {
      const [here, there] = i % 2 ? [B, A] : [A, B];
      const status = ['new', 'contacted', 'lost', 'qualified'][i % 4];
      const lead = await ok(here, 201, 'POST', '/api/crm/leads', staff, { first_name: `N${i}`, last_name: `Total${tag}`, phone: `+63 918 ${i}`, status });
      const open = status === 'new' || status === 'contacted';
      made.push({ id: lead.id, open, on: here });
      expected.all++;
      expected.search++;
      if (open) expected.open++;
      expect(await figures(there), `after create ${i + 1} on ${here.name}, read on ${there.name}`).toEqual(expected);
      // The newest row on the other instance's first page is the one just made.
      expect((await ok(there, 200, 'GET', `/api/crm/leads?limit=5&${SEARCH}&sort=created_at&order=desc`, staff)).data[0].id).toBe(lead.id);
    }

    // A status change on one moves the filtered total on the other.
    const moved = made.find((m) => m.open)!;
    await ok(moved.on, 200, 'PATCH', `/api/crm/leads/${moved.id}`, staff, { status: 'lost' });
    moved.open = false;
    expected.open--;
    expect(await figures(moved.on === A ? B : A), 'after a status change').toEqual(expected);

    // Deleted on the instance that did not make them, read on the one that did.
    for (const [i, lead] of made.slice(0, 5).entries()) {
      const there = lead.on;
      const here = there === A ? B : A;
      await ok(here, 200, 'DELETE', `/api/crm/leads/${lead.id}`, staff);
      expected.all--;
      expected.search--;
      if (lead.open) expected.open--;
      expect(await figures(there), `after delete ${i + 1} on ${here.name}, read on ${there.name}`).toEqual(expected);
      expect(await figures(here)).toEqual(expected);
    }
    expect(expected.search).toBe(3);
  });

  test('neither instance logged an error', () => {
    for (const instance of instances) expect(instance.errors, `instance ${instance.name}`).toEqual([]);
  });
});
