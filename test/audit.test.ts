import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, departments } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;
const UA = 'audit-test-agent/1.0';
/** Requests of the admin, with a user agent the logs must record. */
const agent = { headers: { 'user-agent': UA } };

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await createUser(ctx, { iam: 'rwd', cms: 'rwd' });
});
afterAll(async () => {
  await ctx?.close();
});


const logsOf = (resourceId: string, c: TestContext = ctx) =>
  c.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, resourceId)).orderBy(activityLogs.created_at);

describe('mutations leave exactly one log each', () => {
  test('department create, patch (changed fields only), delete', async () => {
    const created = await as(ctx, admin, agent).post('/api/iam/departments', { name: 'Audited' });
    const id = created.json().id;
    let logs = await logsOf(id);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      user_id: admin.id, action: 'create', module: 'iam', resource: 'departments', resource_id: id,
      changes: { before: {}, after: { id, name: 'Audited' } }, ip_address: '127.0.0.1', user_agent: UA,
    });

    expect((await as(ctx, admin, agent).patch(`/api/iam/departments/${id}`, { name: 'Audited Renamed' })).statusCode).toBe(200);
    logs = await logsOf(id);
    expect(logs).toHaveLength(2);
    expect(logs[1]).toMatchObject({ user_id: admin.id, action: 'update', resource: 'departments', changes: { before: { name: 'Audited' }, after: { name: 'Audited Renamed' } } });
    // Only the changed field: not the id, not the timestamps.
    expect(Object.keys((logs[1].changes as any).after)).toEqual(['name']);

    expect((await as(ctx, admin, agent).delete(`/api/iam/departments/${id}`)).statusCode).toBe(200);
    logs = await logsOf(id);
    expect(logs).toHaveLength(3);
    expect(logs[2]).toMatchObject({ action: 'delete', resource: 'departments', changes: { before: { id, name: 'Audited Renamed' }, after: {} } });
  });

  test('user create, patch and delete are logged under resource users', async () => {
    const res = await as(ctx, admin, agent).post('/api/iam/users', { email: 'logged@example.com', name: 'Logged', password: 'Str0ng!pass' });
    const id = res.json().id;
    expect((await as(ctx, admin, agent).patch(`/api/iam/users/${id}`, { name: 'Logged Again', image: 'uploads/x.png' })).statusCode).toBe(200);
    expect((await as(ctx, admin, agent).delete(`/api/iam/users/${id}`)).statusCode).toBe(200);
    const logs = await logsOf(id);
    expect(logs.map((l) => [l.action, l.resource, l.module])).toEqual([['create', 'users', 'iam'], ['update', 'users', 'iam'], ['delete', 'users', 'iam']]);
    expect(logs[0].changes).toMatchObject({ after: { email: 'logged@example.com', name: 'Logged', emailVerified: false } });
    expect(logs[1].changes).toEqual({ before: { name: 'Logged', image: null }, after: { name: 'Logged Again', image: 'uploads/x.png' } });
    expect((logs[2].changes as any).before).toMatchObject({ email: 'logged@example.com', name: 'Logged Again' });
  });

  test('a failed mutation leaves no log', async () => {
    await as(ctx, admin, agent).post('/api/iam/departments', { name: 'Taken' });
    const before = await ctx.database.db.select().from(activityLogs);
    expect((await as(ctx, admin, agent).post('/api/iam/departments', { name: 'TAKEN' })).statusCode).toBe(409);
    expect((await as(ctx, admin, agent).post('/api/iam/users', { email: admin.email, name: 'Dup', password: 'Str0ng!pass' })).statusCode).toBe(409);
    expect((await as(ctx, admin, agent).patch('/api/iam/departments/0190a0a0-0000-7000-8000-000000000009', { name: 'Nobody' })).statusCode).toBe(404);
    expect((await as(ctx, admin, agent).delete(`/api/iam/users/${admin.id}`)).statusCode).toBe(409);
    expect(await ctx.database.db.select().from(activityLogs)).toHaveLength(before.length);
  });

  test('no password or hash ever appears in changes', async () => {
    const password = 'Pl4in!Secret';
    const res = await as(ctx, admin, agent).post('/api/iam/users', { email: 'secretive@example.com', name: 'Secretive', password });
    const id = res.json().id;
    const newPassword = 'N3w!Secret';
    expect((await as(ctx, admin, agent).patch(`/api/iam/users/${id}`, { password: newPassword })).statusCode).toBe(200);
    const logs = await logsOf(id);
    expect(logs).toHaveLength(2);
    expect(logs[1].action).toBe('update');
    const all = JSON.stringify((await ctx.database.db.select().from(activityLogs)).map((l) => l.changes));
    expect(all).not.toContain(password);
    expect(all).not.toContain(newPassword);
    expect(all).not.toMatch(/"[^"]*(password|hash)[^"]*":/i);
    expect(all).not.toContain('$2');
  });
});

test('with TRUST_PROXY=true the X-Forwarded-For address is recorded', async () => {
  const own = await createTestApp({ TRUST_PROXY: 'true' });
  try {
    const user = await createUser(own, { iam: 'rw' });
    const res = await as(own, user, { headers: { 'x-forwarded-for': '203.0.113.7', 'user-agent': UA } }).post('/api/iam/departments', { name: 'Proxied' });
    expect(res.statusCode).toBe(201);
    const [log] = await logsOf(res.json().id, own);
    expect(log).toMatchObject({ ip_address: '203.0.113.7', user_agent: UA, user_id: user.id });
  } finally {
    await own.close();
  }
});

test('a failing audit insert rolls the change back', async () => {
  const own = await createTestApp();
  try {
    const user = await createUser(own, { iam: 'rw' });
    await own.database.execute(`alter table activity_logs add constraint reject_departments check (resource <> 'departments')`);
    const res = await as(own, user).post('/api/iam/departments', { name: 'Doomed' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Internal server error', message: 'An unexpected error occurred' });
    expect(await own.database.db.select().from(departments).where(eq(departments.name, 'Doomed'))).toHaveLength(0);
    // Users are unaffected by the constraint: their change and log are kept together.
    const created = await as(own, user).post('/api/iam/users', { email: 'kept@example.com', name: 'Kept', password: 'Str0ng!pass' });
    expect(created.statusCode).toBe(201);
    expect(await logsOf(created.json().id, own)).toHaveLength(1);
  } finally {
    await own.close();
  }
});

describe('activity log endpoints', () => {
  let other: Awaited<ReturnType<typeof createUser>>;
  let own: TestContext;
  let ids: Record<string, string>;
  const day = (iso: string) => new Date(iso);

  beforeAll(async () => {
    own = await createTestApp();
    other = await createUser(own, { iam: 'rwd' }, { name: 'Log Reader', email: 'log.reader@example.com' });
    const rid = '0190a0a0-0000-7000-8000-00000000000a';
    const rows = [
      { key: 'early', user_id: other.id, action: 'create' as const, module: 'cms' as const, created_at: day('2025-03-01T00:00:00.000Z') },
      { key: 'lateFirst', user_id: other.id, action: 'update' as const, module: 'crm' as const, created_at: day('2025-03-01T23:59:59.999Z') },
      { key: 'second', user_id: null, action: 'delete' as const, module: 'iam' as const, created_at: day('2025-03-02T12:00:00.000Z') },
      { key: 'third', user_id: other.id, action: 'create' as const, module: 'iam' as const, created_at: day('2025-03-03T00:00:00.000Z') },
    ];
    ids = {};
    for (const { key, ...row } of rows) {
      const [inserted] = await own.database.db.insert(activityLogs)
        .values({ ...row, resource: 'things', resource_id: rid, changes: { before: {}, after: { key } }, ip_address: '10.0.0.1', user_agent: 'fixture' })
        .returning({ id: activityLogs.id });
      ids[key] = inserted.id;
    }
  });
  afterAll(async () => {
    await own?.close();
  });

  const list = async (query: string) => {
    const res = await as(own, other).get(`/api/iam/activity-logs?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const keys = (body: any) => body.data.map((l: any) => l.changes.after.key);

  test('date_from and date_to are inclusive UTC days', async () => {
    expect(keys(await list('date_from=2025-03-01&date_to=2025-03-01'))).toEqual(['lateFirst', 'early']);
    expect(keys(await list('date_from=2025-03-02&date_to=2025-03-03'))).toEqual(['third', 'second']);
    expect(keys(await list('date_to=2025-03-02'))).toEqual(['second', 'lateFirst', 'early']);
    expect((await list('date_from=2025-03-02&date_to=2025-03-02')).pagination).toEqual({ page: 1, limit: 10, total: 1, totalPages: 1 });
    const bad = await as(own, other).get('/api/iam/activity-logs?date_from=2025-13-45');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.date_from).toEqual(expect.any(String));
  });

  test('filters user_id, module, action; sort only created_at', async () => {
    expect(keys(await list(`user_id=${other.id}&date_to=2025-12-31`))).toEqual(['third', 'lateFirst', 'early']);
    expect(keys(await list('module=iam&date_to=2025-12-31'))).toEqual(['third', 'second']);
    expect(keys(await list('action=create&date_to=2025-12-31&order=asc'))).toEqual(['early', 'third']);
    expect(keys(await list('module=cms&action=update'))).toEqual([]);
    for (const bad of ['sort=action', 'module=hr', 'action=read', 'user_id=x']) {
      expect((await as(own, other).get(`/api/iam/activity-logs?${bad}`)).statusCode).toBe(400);
    }
  });

  test('list item and detail shape; the actor survives deletion, unknown actors are null', async () => {
    const body = await list('date_to=2025-12-31&limit=1');
    expect(body.pagination).toEqual({ page: 1, limit: 1, total: 4, totalPages: 4 });
    expect(body.data[0]).toEqual({
      id: ids.third, user: { id: other.id, name: 'Log Reader', email: 'log.reader@example.com' }, action: 'create', module: 'iam',
      resource: 'things', resource_id: '0190a0a0-0000-7000-8000-00000000000a', changes: { before: {}, after: { key: 'third' } },
      ip_address: '10.0.0.1', user_agent: 'fixture', created_at: '2025-03-03T00:00:00.000Z', restored_from: null,
    });
    const detail = await as(own, other).get(`/api/iam/activity-logs/${ids.second}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({ id: ids.second, user: null, action: 'delete' });
    expect((await as(own, other).get('/api/iam/activity-logs/0190a0a0-0000-7000-8000-00000000000b')).statusCode).toBe(404);
    expect((await as(own, other).post('/api/iam/activity-logs', {})).statusCode).toBeGreaterThanOrEqual(404);

    // A deleted actor keeps their name in the trail.
    const leaver = await createUser(own, { iam: 'rw' }, { name: 'Former Staff' });
    const dept = await as(own, leaver).post('/api/iam/departments', { name: 'Left Behind' });
    expect((await as(own, other).delete(`/api/iam/users/${leaver.id}`)).statusCode).toBe(200);
    const [log] = await own.database.db.select({ id: activityLogs.id }).from(activityLogs).where(and(eq(activityLogs.resource_id, dept.json().id), eq(activityLogs.action, 'create')));
    const kept = await as(own, other).get(`/api/iam/activity-logs/${log.id}`);
    expect(kept.json().user).toMatchObject({ id: leaver.id, name: 'Former Staff' });
    const mine = await list(`user_id=${leaver.id}`);
    expect(mine.data.map((l: any) => l.user.name)).toEqual(['Former Staff']);
  });
});
