import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import { activityLogs, users } from '../src/db/schema/index.js';
import { ensureFirstAdmin } from '../src/modules/iam/users.js';
import { as, createTestApp, createTestDatabase, createUser, eventually, login, none, PATIENCE_MS, testConfig, type TestContext } from './helpers.js';

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await createUser(ctx, { iam: 'rwd' }, { name: 'Admin' });
});
afterAll(async () => {
  await ctx?.close();
});

const STRONG = 'Str0ng!pass';
let counter = 0;
async function createViaApi(fields: Record<string, unknown> = {}) {
  const email = (fields.email as string) ?? `api${++counter}-${Date.now()}@example.com`;
  const res = await as(ctx, admin).post('/api/iam/users', { email, name: `Api User ${counter}`, password: STRONG, ...fields });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().id as string, email: email.toLowerCase() };
}

async function outboxMailTo(address: string, timeoutMs = PATIENCE_MS): Promise<string> {
  const dir = join(ctx.config.dataDir, 'outbox');
  return eventually(() => {
    const files = (() => { try { return readdirSync(dir); } catch { return []; } })().filter((f) => f.endsWith('.eml'));
    return files.map((f) => readFileSync(join(dir, f), 'utf8')).find((text) => text.includes(`To: ${address}`));
  }, `a mail to ${address}`, timeoutMs);
}

describe('create', () => {
  test('201 {id, message}, a welcome mail with the login URL and never the password', async () => {
    const password = 'W3lcome!Secret';
    const res = await as(ctx, admin).post('/api/iam/users', { email: 'New.Person@Example.com', name: 'New Person', password });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ id: expect.any(String), message: expect.any(String) });
    const mail = await outboxMailTo('new.person@example.com');
    expect(mail).toContain('http://localhost:3000/login');
    expect(mail).not.toContain(password);
    const detail = await as(ctx, admin).get(`/api/iam/users/${res.json().id}`);
    expect(detail.json().email).toBe('new.person@example.com');
    // The new user can sign in with that password.
    expect(await login(ctx, 'new.person@example.com', password)).toEqual(expect.any(String));
  });

  test('duplicate e-mail → 409, also in another case', async () => {
    const { email } = await createViaApi();
    for (const variant of [email, email.toUpperCase()]) {
      const res = await as(ctx, admin).post('/api/iam/users', { email: variant, name: 'Dup', password: STRONG });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('Conflict');
    }
  });

  test('weak password → 400 details.password; missing fields → 400; unknown department → 400 details.department_id', async () => {
    const weak = await as(ctx, admin).post('/api/iam/users', { email: 'weak@example.com', name: 'Weak', password: 'password' });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().details.password).toEqual(expect.any(String));
    const missing = await as(ctx, admin).post('/api/iam/users', { email: 'missing@example.com' });
    expect(missing.statusCode).toBe(400);
    expect(Object.keys(missing.json().details).sort()).toEqual(['name', 'password']);
    const dept = await as(ctx, admin).post('/api/iam/users', { email: 'dept@example.com', name: 'Dept', password: STRONG, department_id: '0190a0a0-0000-7000-8000-000000000000' });
    expect(dept.statusCode).toBe(400);
    expect(dept.json().details.department_id).toEqual(expect.any(String));
  });
});

describe('list and detail', () => {
  let sales: string;
  let ids: string[];
  beforeAll(async () => {
    sales = (await as(ctx, admin).post('/api/iam/departments', { name: 'Sales Team' })).json().id;
    ids = [
      (await createViaApi({ email: 'zed.listing@example.com', name: 'Zed Listing', department_id: sales, emailVerified: true })).id,
      (await createViaApi({ email: 'amy.listing@example.com', name: 'Amy Listing', department_id: sales })).id,
      (await createViaApi({ email: 'bob.listing@example.com', name: 'Bob Listing', emailVerified: true })).id,
    ];
  });

  test('detail has the SPEC shape, never a password or hash', async () => {
    const res = await as(ctx, admin).get(`/api/iam/users/${ids[0]}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['createdAt', 'department', 'email', 'emailVerified', 'id', 'image', 'name', 'sso_required', 'updatedAt']);
    expect(body).toMatchObject({ id: ids[0], email: 'zed.listing@example.com', name: 'Zed Listing', image: null, emailVerified: true, department: { id: sales, name: 'Sales Team' } });
    expect(body.createdAt).toMatch(/Z$/);
    expect(res.body).not.toMatch(/password|hash/i);
    expect((await as(ctx, admin).get(`/api/iam/users/${ids[2]}`)).json().department).toBeNull();
    expect((await as(ctx, admin).get('/api/iam/users/0190a0a0-0000-7000-8000-000000000000')).statusCode).toBe(404);
  });

  test('filter department by name (any case) and by id', async () => {
    for (const department of ['sales team', 'SALES TEAM', sales]) {
      const res = await as(ctx, admin).get(`/api/iam/users?department=${encodeURIComponent(department)}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((u: any) => u.id).sort()).toEqual([ids[0], ids[1]].sort());
      expect(res.json().pagination.total).toBe(2);
    }
    expect((await as(ctx, admin).get('/api/iam/users?department=nobody')).json().pagination.total).toBe(0);
  });

  test('renaming a department changes what the name filter finds (totals are not stale)', async () => {
    const other = (await as(ctx, admin).post('/api/iam/departments', { name: 'Ops' })).json().id;
    const user = await createViaApi({ department_id: other });
    expect((await as(ctx, admin).get('/api/iam/users?department=ops')).json().pagination.total).toBe(1);
    expect((await as(ctx, admin).patch(`/api/iam/departments/${other}`, { name: 'Operations' })).statusCode).toBe(200);
    expect((await as(ctx, admin).get('/api/iam/users?department=ops')).json().pagination.total).toBe(0);
    const renamed = await as(ctx, admin).get('/api/iam/users?department=operations');
    expect(renamed.json().data.map((u: any) => u.id)).toEqual([user.id]);
    expect(renamed.json().data[0].department).toEqual({ id: other, name: 'Operations' });
  });

  test('filter emailVerified, q over name and email, sort and pagination', async () => {
    const verified = await as(ctx, admin).get('/api/iam/users?emailVerified=true&q=listing');
    expect(verified.json().data.map((u: any) => u.id).sort()).toEqual([ids[0], ids[2]].sort());
    const unverified = await as(ctx, admin).get('/api/iam/users?emailVerified=false&q=listing');
    expect(unverified.json().data.map((u: any) => u.id)).toEqual([ids[1]]);
    expect((await as(ctx, admin).get('/api/iam/users?q=BOB.LISTING@')).json().data.map((u: any) => u.id)).toEqual([ids[2]]);

    const byName = await as(ctx, admin).get('/api/iam/users?q=listing&sort=name&order=asc');
    expect(byName.json().data.map((u: any) => u.name)).toEqual(['Amy Listing', 'Bob Listing', 'Zed Listing']);
    const byEmailDesc = await as(ctx, admin).get('/api/iam/users?q=listing&sort=email&order=desc');
    expect(byEmailDesc.json().data.map((u: any) => u.email)).toEqual(['zed.listing@example.com', 'bob.listing@example.com', 'amy.listing@example.com']);
    const newest = await as(ctx, admin).get('/api/iam/users?q=listing');
    expect(newest.json().data.map((u: any) => u.id)).toEqual([...ids].reverse());

    const page2 = await as(ctx, admin).get('/api/iam/users?q=listing&sort=name&order=asc&limit=2&page=2');
    expect(page2.json()).toMatchObject({ data: [{ name: 'Zed Listing' }], pagination: { page: 2, limit: 2, total: 3, totalPages: 2 } });
    expect((await as(ctx, admin).get('/api/iam/users?sort=created_at')).statusCode).toBe(400);
    expect((await as(ctx, admin).get('/api/iam/users?emailVerified=maybe')).statusCode).toBe(400);
  });
});

describe('update', () => {
  test('only sent fields change; updatedAt moves', async () => {
    const { id } = await createViaApi({ name: 'Patch Me', image: 'uploads/a.png' });
    const before = (await as(ctx, admin).get(`/api/iam/users/${id}`)).json();
    const res = await as(ctx, admin).patch(`/api/iam/users/${id}`, { name: 'Patched', emailVerified: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: expect.any(String) });
    const after = (await as(ctx, admin).get(`/api/iam/users/${id}`)).json();
    expect(after).toMatchObject({ name: 'Patched', emailVerified: true, email: before.email, image: 'uploads/a.png', createdAt: before.createdAt });
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect((await as(ctx, admin).patch(`/api/iam/users/${id}`, { password: 'weak' })).json().details.password).toEqual(expect.any(String));
    expect((await as(ctx, admin).patch(`/api/iam/users/${id}`, { email: admin.email.toUpperCase() })).statusCode).toBe(409);
    expect((await as(ctx, admin).patch(`/api/iam/users/${id}`, { createdAt: new Date().toISOString() })).statusCode).toBe(400);
  });

  test('a new password ends their sessions and works for login; the old one no longer does', async () => {
    const user = await createUser(ctx, { cms: 'r' });
    expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(200);
    const res = await as(ctx, admin).patch(`/api/iam/users/${user.id}`, { password: 'N3w!Password' });
    expect(res.statusCode).toBe(200);
    expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(401);
    expect(await login(ctx, user.email, 'N3w!Password')).toEqual(expect.any(String));
    const old = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(old.statusCode).toBe(401);
  });
});

describe('delete', () => {
  test('ends their sessions; then 404, not listed, e-mail reusable', async () => {
    const user = await createUser(ctx, { cms: 'rwd', iam: 'r' }, { name: 'Leaving Soon' });
    expect((await as(ctx, admin).get('/api/iam/users?q=leaving soon')).json().pagination.total).toBe(1);
    const res = await as(ctx, admin).delete(`/api/iam/users/${user.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: expect.any(String) });
    expect((await as(ctx, user).get('/api/cms/amenities')).statusCode).toBe(401);
    expect((await as(ctx, admin).get(`/api/iam/users/${user.id}`)).statusCode).toBe(404);
    expect((await as(ctx, admin).delete(`/api/iam/users/${user.id}`)).statusCode).toBe(404);
    expect((await as(ctx, admin).patch(`/api/iam/users/${user.id}`, { name: 'Ghost' })).statusCode).toBe(404);
    expect((await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).statusCode).toBe(404);
    expect((await as(ctx, admin).get('/api/iam/users?q=leaving soon')).json()).toMatchObject({ data: [], pagination: { total: 0 } });
    const login = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(login.statusCode).toBe(401);
    // The address can be used again.
    const again = await createViaApi({ email: user.email });
    expect(again.id).not.toBe(user.id);
  });

  test('self-delete → 409', async () => {
    const res = await as(ctx, admin).delete(`/api/iam/users/${admin.id}`);
    expect(res.statusCode).toBe(409);
    expect((await as(ctx, admin).get(`/api/iam/users/${admin.id}`)).statusCode).toBe(200);
  });

  test('the last iam writer cannot be deleted nor lose iam write', async () => {
    const own = await createTestApp();
    try {
      const a = await createUser(own, { iam: 'rwd' });
      const b = await createUser(own, { iam: 'rd' });
      // b (iam read+delete, no write) tries to delete a, the only iam writer.
      const del = await as(own, b).delete(`/api/iam/users/${a.id}`);
      expect(del.statusCode).toBe(409);
      const rows = (await as(own, a).get(`/api/iam/module-access/${a.id}`)).json().data;
      const iamRow = rows.find((r: any) => r.module === 'iam');
      const patch = await as(own, a).patch(`/api/iam/module-access/${iamRow.id}`, { can_write: false });
      expect(patch.statusCode).toBe(409);
      expect((await as(own, a).delete(`/api/iam/module-access/${iamRow.id}`)).statusCode).toBe(409);
      // Another writer makes both possible.
      const bRow = (await as(own, a).get(`/api/iam/module-access/${b.id}`)).json().data[0];
      expect((await as(own, a).patch(`/api/iam/module-access/${bRow.id}`, { can_write: true })).statusCode).toBe(200);
      expect((await as(own, a).patch(`/api/iam/module-access/${iamRow.id}`, { can_write: false })).statusCode).toBe(200);
      expect((await as(own, a).get(`/api/iam/module-access/${a.id}`)).json().data[0]).toMatchObject({ module: 'iam', can_read: true, can_write: false, can_delete: true });
      // Now b is the only writer: a (read+delete) cannot delete b, but b can delete a.
      expect((await as(own, a).delete(`/api/iam/users/${b.id}`)).statusCode).toBe(409);
      expect((await as(own, b).delete(`/api/iam/users/${a.id}`)).statusCode).toBe(200);
    } finally {
      await own.close();
    }
  });
});

test('first-admin creation with the iam audit callback leaves a create log without the password', async () => {
  const database = await createTestDatabase();
  const config = testConfig({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'R00t!password' });
  try {
    const log = { info: () => {}, warn: () => {} } as any;
    await ensureFirstAdmin(database, config, log);
    const [root] = await database.db.select().from(users).where(eq(users.email, 'root@example.com'));
    const logs = await database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, root.id));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ action: 'create', module: 'iam', resource: 'users', user_id: root.id, changes: { before: {}, after: { id: root.id, email: 'root@example.com' } } });
    expect(JSON.stringify(logs[0].changes)).not.toContain('R00t!password');
  } finally {
    await database.close();
    rmSync(config.dataDir, { recursive: true, force: true });
  }
});
