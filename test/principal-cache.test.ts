import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { moduleAccess, sessions, verifications } from '../src/db/schema/index.js';
import { countQueries, createTestApp, createUser, login, type TestContext } from './helpers.js';

// Issue 11: who the caller is comes from a cache on the hot path, and every change to a session, a user or a
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

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const leads = (ctx: TestContext, token: string) => ctx.app.inject({ method: 'GET', url: '/api/crm/leads', headers: bearer(token) }).then((r) => r.statusCode);
const SESSION_QUERY = /"sessions"/;

/** The notification is delivered at commit; another instance hears it a moment later. */
async function eventually(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

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
    expect((await a.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(user.token) })).statusCode).toBe(200);
    expect(await leads(a, user.token)).toBe(401);
  });

  test('change of password ends the other sessions', async () => {
    const user = await createUser(a, { crm: 'r' });
    const other = await login(a, user.email, user.password);
    expect(await leads(a, other)).toBe(200);
    const res = await a.app.inject({ method: 'POST', url: '/api/auth/change-password', headers: bearer(user.token), payload: { currentPassword: user.password, newPassword: 'N3w!password' } });
    expect(res.statusCode).toBe(200);
    expect(await leads(a, other)).toBe(401);
    expect(await leads(a, user.token)).toBe(200);
  });

  test('password reset ends every session', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(a, user.token)).toBe(200);
    await a.app.inject({ method: 'POST', url: '/api/auth/forgot-password', payload: { email: user.email } });
    // The token the mailed link carries, as Better Auth keeps it.
    const [verification] = await a.database.db.select({ identifier: verifications.identifier }).from(verifications).where(eq(verifications.value, user.id));
    const token = verification.identifier.replace(/^reset-password:/, '');
    const reset = await a.app.inject({ method: 'POST', url: '/api/auth/reset-password', payload: { token, password: 'R3set!password' } });
    expect(reset.statusCode).toBe(200);
    expect(await leads(a, user.token)).toBe(401);
  });

  test('an administrator changes the password, takes a permission away, deletes the user', async () => {
    const user = await createUser(a, { crm: 'r' });
    const asAdmin = (method: 'PATCH' | 'DELETE', url: string, payload?: object) => a.app.inject({ method, url, headers: admin.headers, payload });
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
    expect((await a.app.inject({ method: 'PATCH', url: `/api/iam/module-access/${access.id}`, headers: admin.headers, payload: { can_read: false } })).statusCode).toBe(200);
    await eventually(async () => (await leads(b, user.token)) === 403, 'instance b to refuse');
  });

  test('a logout on one instance, and a session deleted by hand, end the session on the other', async () => {
    const user = await createUser(a, { crm: 'r' });
    expect(await leads(b, user.token)).toBe(200);
    expect((await a.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(user.token) })).statusCode).toBe(200);
    await eventually(async () => (await leads(b, user.token)) === 401, 'instance b to sign the user out');

    const again = await login(a, user.email, user.password);
    expect(await leads(b, again)).toBe(200);
    await a.database.db.delete(sessions).where(eq(sessions.userId, user.id));
    await eventually(async () => (await leads(b, again)) === 401, 'instance b to drop the deleted session');
  });
});
