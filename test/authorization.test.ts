import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { App } from '../src/app.js';
import { moduleRoutes } from '../src/auth/guard.js';
import { IdParams, Strict } from '../src/http/schemas.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

// crm resources are built elsewhere: throwaway crm routes exercise the same guard.
const crmRoutes = moduleRoutes('crm', async (app: App) => {
  const Body = Strict({ name: Type.String({ minLength: 1 }) });
  app.get('/api/crm/guard-probe', async () => ({ data: [] }));
  app.post('/api/crm/guard-probe', { schema: { body: Body } }, async (_request, reply) => reply.code(201).send({ id: 'x', message: 'created' }));
  app.patch('/api/crm/guard-probe/:id', { schema: { params: IdParams, body: Body } }, async () => ({ message: 'updated' }));
  app.delete('/api/crm/guard-probe/:id', { schema: { params: IdParams } }, async () => ({ message: 'deleted' }));
});

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;
beforeAll(async () => {
  ctx = await createTestApp({}, { register: async (app) => { await app.register(crmRoutes); } });
  admin = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' });
});
afterAll(async () => {
  await ctx?.close();
});

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Per module: a fresh record to PATCH/DELETE each time, and valid requests for each method. */
const targets: Record<'cms' | 'crm' | 'iam', { base: string; body: () => object; fresh: () => Promise<string> }> = {
  cms: {
    base: '/api/cms/amenities',
    body: () => ({ name: `Pool ${Math.random()}` }),
    fresh: async () => (await as(ctx, admin).post('/api/cms/amenities', { name: `Gym ${Math.random()}` })).json().id,
  },
  crm: {
    base: '/api/crm/guard-probe',
    body: () => ({ name: 'x' }),
    fresh: async () => '0190a0a0-0000-7000-8000-000000000001',
  },
  iam: {
    base: '/api/iam/departments',
    body: () => ({ name: `Dept ${Math.random()}` }),
    fresh: async () => (await as(ctx, admin).post('/api/iam/departments', { name: `Dept ${Math.random()}` })).json().id,
  },
};

const expected: Record<string, Record<Method, number>> = {
  r: { GET: 200, POST: 403, PATCH: 403, DELETE: 403 },
  w: { GET: 403, POST: 201, PATCH: 200, DELETE: 403 },
  d: { GET: 403, POST: 403, PATCH: 403, DELETE: 200 },
  '': { GET: 403, POST: 403, PATCH: 403, DELETE: 403 },
};

describe.each(['cms', 'crm', 'iam'] as const)('%s module', (module) => {
  test.each(Object.keys(expected))('flags "%s" give the documented statuses', async (letters) => {
    // Grants on the other modules must not help.
    const others = Object.fromEntries((['cms', 'crm', 'iam'] as const).filter((m) => m !== module).map((m) => [m, 'rwd']));
    const user = await createUser(ctx, { ...others, ...(letters ? { [module]: letters } : {}) });
    const { base, body, fresh } = targets[module];
    const statuses: Record<Method, number> = {
      GET: (await as(ctx, user).get(base)).statusCode,
      POST: (await as(ctx, user).post(base, body())).statusCode,
      PATCH: (await as(ctx, user).patch(`${base}/${await fresh()}`, body())).statusCode,
      DELETE: (await as(ctx, user).delete(`${base}/${await fresh()}`)).statusCode,
    };
    expect(statuses).toEqual(expected[letters]);
    const denied = (Object.keys(statuses) as Method[]).find((m) => expected[letters][m] === 403);
    if (denied) {
      const res = await as(ctx, user).request(denied, denied === 'GET' || denied === 'POST' ? base : `${base}/${await fresh()}`, denied === 'POST' || denied === 'PATCH' ? body() : undefined);
      expect(res.json()).toEqual({ error: 'Insufficient permissions' });
    }
  });

  test('no session → 401 on every method', async () => {
    const { base } = targets[module];
    for (const [method, url] of [['GET', base], ['POST', base], ['PATCH', `${base}/0190a0a0-0000-7000-8000-000000000001`], ['DELETE', `${base}/0190a0a0-0000-7000-8000-000000000001`]] as const) {
      const res = await as(ctx, none).request(method, url, method === 'POST' || method === 'PATCH' ? { name: 'x' } : undefined);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication required' });
    }
    expect((await as(ctx, 'not-a-session').get(base)).statusCode).toBe(401);
  });

  test('an invalid body or id without permission → 403, not 400; with permission → 400', async () => {
    const reader = await createUser(ctx, { [module]: 'r' });
    const { base } = targets[module];
    expect((await as(ctx, reader).post(base, { bogus: 1 })).statusCode).toBe(403);
    expect((await as(ctx, reader).patch(`${base}/not-a-uuid`, { bogus: 1 })).statusCode).toBe(403);
    expect((await as(ctx, reader).delete(`${base}/not-a-uuid`)).statusCode).toBe(403);
    const bad = await as(ctx, admin).patch(`${base}/not-a-uuid`, { name: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.id).toEqual(expect.any(String));
    expect((await as(ctx, admin).delete(`${base}/not-a-uuid`)).json().details.id).toEqual(expect.any(String));
    expect((await as(ctx, admin).post(base, { bogus: 1 })).statusCode).toBe(400);
  });
});

test('a permission granted through POST /api/iam/module-access applies on the next request, and its removal too', async () => {
  const user = await createUser(ctx, {});
  expect((await as(ctx, user).get('/api/cms/amenities')).statusCode).toBe(403);
  const grant = await as(ctx, admin).post('/api/iam/module-access', { user_id: user.id, module: 'cms', can_read: true });
  expect(grant.statusCode).toBe(201);
  expect(grant.json()).toEqual({ id: expect.any(String), message: expect.any(String) });
  expect((await as(ctx, user).get('/api/cms/amenities')).statusCode).toBe(200);
  expect((await as(ctx, user).post('/api/cms/amenities', { name: 'Nope' })).statusCode).toBe(403);
  expect((await as(ctx, admin).patch(`/api/iam/module-access/${grant.json().id}`, { can_read: false, can_write: true })).statusCode).toBe(200);
  expect((await as(ctx, user).get('/api/cms/amenities')).statusCode).toBe(403);
  expect((await as(ctx, user).post('/api/cms/amenities', { name: 'Now allowed' })).statusCode).toBe(201);
  expect((await as(ctx, admin).delete(`/api/iam/module-access/${grant.json().id}`)).statusCode).toBe(200);
  expect((await as(ctx, user).post('/api/cms/amenities', { name: 'Not any more' })).statusCode).toBe(403);
});

describe('module access endpoints', () => {
  test('GET per user, defaults false, duplicate 409, unknown user 400 details.user_id, bad module 400, unknown ids 404', async () => {
    const user = await createUser(ctx, {});
    expect((await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json()).toEqual({ data: [] });
    const created = await as(ctx, admin).post('/api/iam/module-access', { user_id: user.id, module: 'crm', can_write: true });
    expect(created.statusCode).toBe(201);
    expect((await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json()).toEqual({
      data: [{ id: created.json().id, module: 'crm', can_read: false, can_write: true, can_delete: false, scope: 'all' }],
    });
    const dup = await as(ctx, admin).post('/api/iam/module-access', { user_id: user.id, module: 'crm', can_read: true });
    expect(dup.statusCode).toBe(409);
    const unknown = await as(ctx, admin).post('/api/iam/module-access', { user_id: '0190a0a0-0000-7000-8000-000000000002', module: 'crm' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().details.user_id).toEqual(expect.any(String));
    const badModule = await as(ctx, admin).post('/api/iam/module-access', { user_id: user.id, module: 'hr' });
    expect(badModule.json().details.module).toEqual(expect.any(String));
    expect((await as(ctx, admin).get('/api/iam/module-access/0190a0a0-0000-7000-8000-000000000002')).statusCode).toBe(404);
    expect((await as(ctx, admin).get('/api/iam/module-access/nope')).json().details.userId).toEqual(expect.any(String));
    expect((await as(ctx, admin).patch('/api/iam/module-access/0190a0a0-0000-7000-8000-000000000002', { can_read: true })).statusCode).toBe(404);
    expect((await as(ctx, admin).patch(`/api/iam/module-access/${created.json().id}`, { module: 'cms' })).statusCode).toBe(400);
  });
});

describe('departments', () => {
  test('list ordered by name, duplicate (any case) 409, delete 409 while users belong to it', async () => {
    const b = (await as(ctx, admin).post('/api/iam/departments', { name: 'Zeta Dept' })).json().id;
    const a = (await as(ctx, admin).post('/api/iam/departments', { name: 'Alpha Dept' })).json().id;
    const names = (await as(ctx, admin).get('/api/iam/departments')).json().data.map((d: any) => d.name);
    expect(names).toEqual([...names].sort((x: string, y: string) => (x < y ? -1 : 1)));
    expect(names.indexOf('Alpha Dept')).toBeLessThan(names.indexOf('Zeta Dept'));
    expect((await as(ctx, admin).post('/api/iam/departments', { name: 'alpha DEPT' })).statusCode).toBe(409);
    expect((await as(ctx, admin).patch(`/api/iam/departments/${b}`, { name: 'ALPHA dept' })).statusCode).toBe(409);
    const member = await as(ctx, admin).post('/api/iam/users', { email: 'member@example.com', name: 'Member', password: 'Str0ng!pass', department_id: a });
    expect((await as(ctx, admin).delete(`/api/iam/departments/${a}`)).statusCode).toBe(409);
    expect((await as(ctx, admin).patch(`/api/iam/users/${member.json().id}`, { department_id: null })).statusCode).toBe(200);
    expect((await as(ctx, admin).delete(`/api/iam/departments/${a}`)).statusCode).toBe(200);
    expect((await as(ctx, admin).get(`/api/iam/departments/${a}`)).statusCode).toBe(404);
  });
});
