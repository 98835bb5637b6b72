import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { hashing } from '../src/auth/passwords.js';
import { as, createTestApp, createUser, none, type Reply, type TestContext, waitFor } from './helpers.js';

/**
 * CONTRACT §4: passwords are hashed with bcrypt (BCRYPT_COST) off the event loop, in a hashing process, behind an
 * admission gate. Nothing here depends on how long a hash takes on this machine: the tests stop the hashing process
 * (SIGSTOP) while they look, so every hash sent to it stays unanswered until they let it go on (SIGCONT), and they
 * give the gate small limits and a fixed estimate of a hash's duration. What they assert are the gate's counts.
 */
const LOGINS = 20;
const HOUR = 3_600_000;
/** How long the tests wait for something that must happen (not how long it may take: the waits end when it does). */
const UNTIL = 30_000;

let ctx: TestContext;
let baseUrl: string;
/** Undo what a test did to the shared gate and hashing process, whatever happened in it. */
let restoreLimits: (() => void) | undefined;
let resumeHashing: (() => void) | undefined;

beforeAll(async () => {
  ctx = await createTestApp({ BCRYPT_COST: '12' });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});
afterEach(() => {
  resumeHashing?.();
  restoreLimits?.();
  resumeHashing = restoreLimits = undefined;
});
afterAll(async () => {
  await ctx?.close();
});

/**
 * A user whose stored hash is of the cheapest cost: what the tests below assert does not depend on a hash's duration,
 * so their logins need not each spend a cost-12 verification.
 */
const cheapUser = (password: string) => createUser({ ...ctx, config: { ...ctx.config, bcryptCost: 4 } }, {}, { password });

/** Stops the hashing process: hashes sent to it wait, unanswered, until the returned function lets it go on. */
function pauseHashing(): () => void {
  const pid = hashing.processId();
  process.kill(pid, 'SIGSTOP');
  let resumed = false;
  resumeHashing = () => {
    if (!resumed) process.kill(pid, 'SIGCONT');
    resumed = true;
  };
  return resumeHashing;
}

/** Gives the gate other limits for one test (restored after it); the counts start from zero. */
function limitGate(limits: Parameters<typeof hashing.limit>[0]) {
  restoreLimits = hashing.limit(limits);
}

/** Starts `count` logins at once; `answered` fills as they are answered. */
function storm(user: { email: string }, count: number, password: (i: number) => string) {
  const answered: Reply[] = [];
  const all = Array.from({ length: count }, (_, i) =>
    as(ctx, none).post('/api/auth/login', { email: user.email, password: password(i) }).then((res) => {
      answered.push(res);
      return res;
    }));
  return { answered, all: Promise.all(all) };
}

const expectRefused = (res: Reply, retryAfter: number) => {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.json()).toEqual({ error: 'Too many requests', message: `Too many sign-ins are being checked at once, retry in ${retryAfter} seconds` });
  expect(res.headers['retry-after']).toBe(String(retryAfter));
};

test('passwords are stored as bcrypt hashes of the configured cost', async () => {
  expect(ctx.config.bcryptCost).toBe(12);
  const user = await createUser(ctx, {}, { password: 'Hash-Passw0rd!' });
  // Change the password through the API: the stored hash is made by the service itself.
  const changed = await fetch(`${baseUrl}/api/auth/change-password`, {
    method: 'POST',
    headers: { ...user.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ currentPassword: 'Hash-Passw0rd!', newPassword: 'Hash-Passw0rd-2!' }),
  });
  expect(changed.status).toBe(200);
  const { rows } = await ctx.database.execute(`select password from accounts where user_id = $1 and provider_id = 'credential'`, [user.id]);
  expect(rows).toHaveLength(1);
  expect(rows[0].password).toMatch(/^\$2[aby]\$12\$[./A-Za-z0-9]{53}$/);
  expect(rows[0].password).not.toContain('Hash-Passw0rd-2!');
});

test('a burst of logins does not block the event loop: while all their hashes wait in the hashing process, health answers', async () => {
  const user = await cheapUser('Burst-Passw0rd!');
  // Room for every login whatever a hash takes here: this test is about where hashing runs, not about admission.
  limitGate({ maxAdmitted: LOGINS, maxWaitMs: HOUR, knockMs: HOUR });
  const resume = pauseHashing();
  const finished: number[] = [];
  const logins = Array.from({ length: LOGINS }, (_, i) =>
    fetch(`${baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Half right, half wrong: a failed login hashes (verifies) just the same.
      body: JSON.stringify({ email: user.email, password: i % 2 ? 'Burst-Passw0rd!' : 'Wrong-Passw0rd!' }),
    }).then(async (res) => {
      await res.arrayBuffer();
      finished.push(i);
      return res.status;
    }));

  // Every login is admitted and has handed its hash to the (stopped) hashing process: none can finish now.
  await waitFor(() => hashing.counts.hashing === LOGINS, UNTIL, `${LOGINS} hashes sent to the hashing process`);
  const health = await fetch(`${baseUrl}/api/health`);
  expect({ status: health.status, body: await health.json() }).toEqual({ status: 200, body: { status: 'ok' } });
  expect(finished).toEqual([]);
  expect(hashing.counts).toMatchObject({ admitted: LOGINS, hashing: LOGINS, knocking: 0 });

  resume();
  const statuses = await Promise.all(logins);
  expect(statuses.filter((s) => s === 200)).toHaveLength(LOGINS / 2);
  expect(statuses.filter((s) => s === 401)).toHaveLength(LOGINS / 2);
  expect(hashing.counts).toEqual({ admitted: 0, knocking: 0, hashing: 0, waited: 0, refused: { full: 0, slow: 0 } });
});

test('a login storm: beyond the admitted places, a login that finds no room within a knock is told when to retry (429, Retry-After)', async () => {
  const user = await cheapUser('Storm-Passw0rd!');
  // 4 places, a 50 ms knock, a hash assumed to take 600 ms: Retry-After is the expected wait, 4 × 0.6 s → 3 s.
  limitGate({ maxAdmitted: 4, maxWaitMs: HOUR, knockMs: 50, hashMs: 600 });
  const resume = pauseHashing();
  const { answered, all } = storm(user, 10, () => 'Storm-Passw0rd!');
  // The 4 admitted wait in the stopped hashing process, so no room comes up: the other 6 are refused after their knock.
  await waitFor(() => answered.length === 6 && hashing.counts.hashing === 4, UNTIL, '6 refusals, and the 4 admitted hashing');
  for (const res of answered) expectRefused(res, 3);
  expect(hashing.counts).toEqual({ admitted: 4, knocking: 0, hashing: 4, waited: 0, refused: { full: 6, slow: 0 } });

  resume();
  expect((await all).map((res) => res.statusCode).sort()).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
  // Once the queue drains, logins work again.
  expect((await as(ctx, none).post('/api/auth/login', { email: user.email, password: 'Storm-Passw0rd!' })).statusCode).toBe(200);
  expect(hashing.counts).toMatchObject({ admitted: 0, refused: { full: 6, slow: 0 } });
});

test('a login that finds no room waits for some: it is admitted as soon as an admitted login finishes', async () => {
  const user = await cheapUser('Queue-Passw0rd!');
  // One place, and a knock far longer than the test: only a finished login can let the second in.
  limitGate({ maxAdmitted: 1, maxWaitMs: HOUR, knockMs: HOUR });
  const resume = pauseHashing();
  const first = storm(user, 1, () => 'Queue-Passw0rd!');
  await waitFor(() => hashing.counts.hashing === 1, UNTIL, 'the first hash sent');
  const second = storm(user, 1, () => 'Wrong-Passw0rd!');
  await waitFor(() => hashing.counts.knocking === 1, UNTIL, 'the second login to knock');
  expect(hashing.counts).toEqual({ admitted: 1, knocking: 1, hashing: 1, waited: 0, refused: { full: 0, slow: 0 } });

  resume();
  expect((await first.all).map((res) => res.statusCode)).toEqual([200]);
  expect((await second.all).map((res) => res.statusCode)).toEqual([401]);
  expect(hashing.counts).toEqual({ admitted: 0, knocking: 0, hashing: 0, waited: 1, refused: { full: 0, slow: 0 } });
});

test('while the expected wait is too long, a login is refused though places are free (Retry-After: that wait)', async () => {
  const user = await cheapUser('Slow-Passw0rd!');
  // A hash assumed to take 600 ms and at most 1 s of expected wait: a second login is admitted (0.6 s), a third is not (1.2 s).
  limitGate({ maxAdmitted: 32, maxWaitMs: 1000, knockMs: 50, hashMs: 600 });
  const resume = pauseHashing();
  const { answered, all } = storm(user, 3, () => 'Slow-Passw0rd!');
  await waitFor(() => answered.length === 1 && hashing.counts.hashing === 2, UNTIL, 'a refusal, and the 2 admitted hashing');
  expectRefused(answered[0], 2);
  expect(hashing.counts).toEqual({ admitted: 2, knocking: 0, hashing: 2, waited: 0, refused: { full: 0, slow: 1 } });

  resume();
  expect((await all).map((res) => res.statusCode).sort()).toEqual([200, 200, 429]);
});
