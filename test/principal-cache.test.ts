import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { moduleAccess, sessions, verifications } from '../src/db/schema/index.js';
import { PrincipalCache } from '../src/auth/principals.js';
import { as, countQueries, createTestApp, createUser, login, none, PATIENCE_MS, type TestContext, waitFor } from './helpers.js';

// Who the caller is comes from a cache on the hot path, and every change to a session, a user or a
// permission takes effect on the next request — on the instance that made it and, through the database's
// notifications, on every other instance.

let a: TestContext;
let b: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  a = await createTestApp();
  // A second instance on the same database.
  b = await createTestApp({}, { database: a.database });
  admin = await createUser(a, { crm: 'rwd', iam: 'rwd' });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const leads = (ctx: TestContext, token: string) => as(ctx, token).get('/api/crm/leads').then((r) => r.statusCode);
const SESSION_QUERY = /"sessions"/;

/** The notification is delivered at commit; another instance hears it a moment later. */
const soon = (check: () => Promise<boolean>, what: string) => waitFor(check, PATIENCE_MS, what);

describe('the hot path', () => {
  test('a signed-in request after the first reads no session, user or permission row', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(a, user.token)).toBe(200);
    const queries = await countQueries(a.database, /"sessions"|from "users"|"module_access"/, async () => {
      for (let i = 0; i < 5; i++) expect(await leads(a, user.token)).toBe(200);
    });
    expect(queries).toBe(0);
  });

  test('a forged or unknown token is never served from the cache', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(a, user.token)).toBe(200);
    expect(await leads(a, `${user.token}x`)).toBe(401);
    expect(await leads(a, 'not-a-token')).toBe(401);
  });
});

describe('on the instance that made the change, the very next request', () => {
  test('logout', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(a, user.token)).toBe(200);
    expect((await as(a, user).post('/api/auth/logout')).statusCode).toBe(200);
    expect(await leads(a, user.token)).toBe(401);
  });

  test('change of password ends the other sessions', async () => {
    const user = await createUser(a, { crm: 'r' });
    const other = await login(a, user.email, user.password);
    expect(await leads(a, other)).toBe(200);
    const res = await as(a, user).post('/api/auth/change-password', { currentPassword: user.password, newPassword: 'N3w!password' });
    expect(res.statusCode).toBe(200);
    expect(await leads(a, other)).toBe(401);
    expect(await leads(a, user.token)).toBe(200);
  });

  test('password reset ends every session', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(a, user.token)).toBe(200);
    await as(a, none).post('/api/auth/forgot-password', { email: user.email });
    // The token the mailed link carries, as Better Auth keeps it.
    const [verification] = await a.database.db.select({ identifier: verifications.identifier }).from(verifications).where(eq(verifications.value, user.id));
    const token = verification.identifier.replace(/^reset-password:/, '');
    const reset = await as(a, none).post('/api/auth/reset-password', { token, password: 'R3set!password' });
    expect(reset.statusCode).toBe(200);
    expect(await leads(a, user.token)).toBe(401);
  });

  test('an administrator changes the password, takes a permission away, deletes the user', async () => {
    const user = await createUser(a, { crm: 'r' });
    const asAdmin = (method: 'PATCH' | 'DELETE', url: string, payload?: object) => as(a, admin).request(method, url, payload);
    expect(await leads(a, user.token)).toBe(200);
    expect((await asAdmin('PATCH', `/api/iam/users/${user.id}`, { password: 'Adm1n!chosen' })).statusCode).toBe(200);
    expect(await leads(a, user.token)).toBe(401);

    const token = await login(a, user.email, 'Adm1n!chosen');
    expect(await leads(a, token)).toBe(200);
    const [access] = await a.database.db.select({ id: moduleAccess.id }).from(moduleAccess).where(eq(moduleAccess.user_id, user.id));
    expect((await asAdmin('PATCH', `/api/iam/module-access/${access.id}`, { can_read: false })).statusCode).toBe(200);
    expect(await leads(a, token)).toBe(403);

    expect((await asAdmin('PATCH', `/api/iam/module-access/${access.id}`, { can_read: true })).statusCode).toBe(200);
    expect(await leads(a, token)).toBe(200);
    expect((await asAdmin('DELETE', `/api/iam/users/${user.id}`)).statusCode).toBe(200);
    expect(await leads(a, token)).toBe(401);
  });
});

describe('on every other instance, as soon as the database tells it', () => {
  test('a permission taken away on one instance is refused on the other', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(b, user.token)).toBe(200);
    expect(await countQueries(a.database, SESSION_QUERY, () => leads(b, user.token))).toBe(0); // b serves it from its cache
    const [access] = await a.database.db.select({ id: moduleAccess.id }).from(moduleAccess).where(eq(moduleAccess.user_id, user.id));
    expect((await as(a, admin).patch(`/api/iam/module-access/${access.id}`, { can_read: false })).statusCode).toBe(200);
    await soon(async () => (await leads(b, user.token)) === 403, 'instance b to refuse');
  });

  test('a logout on one instance, and a session deleted by hand, end the session on the other', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(b, user.token)).toBe(200);
    expect((await as(a, user).post('/api/auth/logout')).statusCode).toBe(200);
    await soon(async () => (await leads(b, user.token)) === 401, 'instance b to sign the user out');

    const again = await login(a, user.email, user.password);
    expect(await leads(b, again)).toBe(200);
    await a.database.db.delete(sessions).where(eq(sessions.userId, user.id));
    await soon(async () => (await leads(b, again)) === 401, 'instance b to drop the deleted session');
  });
});

describe('exactly what changed is forgotten', () => {
  /** Requests of `token` on `ctx` that read a session row (0: served from the cache). */
  const resolutions = (ctx: TestContext, token: string, times = 3) =>
    countQueries(ctx.database, SESSION_QUERY, async () => {
      for (let i = 0; i < times; i++) expect(await leads(ctx, token)).toBe(200);
    });

  test('signing in again elsewhere leaves the open session cached, on both instances', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(a, user.token)).toBe(200);
    expect(await leads(b, user.token)).toBe(200);
    for (let i = 0; i < 3; i++) await login(a, user.email, user.password);
    // Every notification of those sign-ins has been handled on both instances; nothing of the open session is read again.
    expect(await a.app.principals.heard()).toBe(true);
    expect(await b.app.principals.heard()).toBe(true);
    expect(await resolutions(a, user.token)).toBe(0);
    expect(await resolutions(b, user.token)).toBe(0);
  });

  test("one session's change drops that session only; a user's change drops all of theirs", async () => {
    const user = await createUser(a, { crm: 'r' });
    const phone = await login(a, user.email, user.password);
    expect(await leads(b, user.token)).toBe(200);
    expect(await leads(b, phone)).toBe(200);
    // The phone's session changes behind the service (its expiry moved): instance b reads it again, not the other.
    await a.database.db.update(sessions).set({ expiresAt: new Date(Date.now() + 3600_000) }).where(eq(sessions.token, phone));
    await soon(async () => (await resolutions(b, phone, 1)) === 1, 'instance b to read the changed session again');
    expect(await resolutions(b, user.token)).toBe(0);
    // The user's permission changes: every principal of theirs is resolved again.
    const [access] = await a.database.db.select({ id: moduleAccess.id }).from(moduleAccess).where(eq(moduleAccess.user_id, user.id));
    await a.database.db.update(moduleAccess).set({ can_write: true }).where(eq(moduleAccess.id, access.id));
    await soon(async () => (await resolutions(b, user.token, 1)) === 1, 'instance b to resolve the user again');
    expect(await resolutions(b, phone, 1)).toBe(1);
  });

  test("a principal resolved while another user's or session's change arrived is cached; one whose own changed is not", async () => {
    const cache = new PrincipalCache<string>();
    const stop = await cache.start(a.database).then(() => () => cache.close());
    const owner = (userId: string, sessionId: string) => ({ userId, sessionId });
    const later = new Date(Date.now() + 60_000);
    let version = cache.version;
    cache.forgetUser('someone-else');
    cache.forgetSession('another-session');
    cache.set('calm', owner('u1', 's1'), later, 'calm principal', version);
    expect(cache.get('calm')).toBe('calm principal');
    version = cache.version;
    cache.forgetSession('s2');
    cache.set('changed session', owner('u1', 's2'), later, 'stale', version);
    expect(cache.get('changed session')).toBeUndefined();
    version = cache.version;
    cache.forgetUser('u3');
    cache.set('changed user', owner('u3', 's3'), later, 'stale', version);
    expect(cache.get('changed user')).toBeUndefined();
    // More invalidations than it remembers: it cannot tell, so it does not cache.
    version = cache.version;
    for (let i = 0; i < 1001; i++) cache.forgetUser(`other-${i}`);
    cache.set('too long ago', owner('u4', 's4'), later, 'unknown', version);
    expect(cache.get('too long ago')).toBeUndefined();
    await stop();
  });

  test("while one user's sessions keep changing, everyone else stays cached (no global stall)", async () => {
    const busy = await createUser(a, { crm: 'r' });
    const calm = await createUser(a, { crm: 'r' });
    expect(await leads(b, calm.token)).toBe(200);
    for (let i = 0; i < 5; i++) {
      await a.database.db.update(sessions).set({ expiresAt: new Date(Date.now() + 3600_000 + i) }).where(eq(sessions.userId, busy.id));
      expect(await leads(b, busy.token)).toBe(200);
      expect(await resolutions(b, calm.token, 1)).toBe(0);
    }
  });
});
