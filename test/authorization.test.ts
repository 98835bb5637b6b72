import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { App } from '../src/app.js';
import { moduleRoutes } from '../src/auth/guard.js';
import { IdParams, Strict } from '../src/http/schemas.js';
import { createTestApp, createUser, type TestContext } from './helpers.js';

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
const inject = (method: Method, url: string, headers: Record<string, string> = {}, payload?: object) => ctx.app.inject({ method, url, headers, payload });

/** Per module: a fresh record to PATCH/DELETE each time, and valid requests for each method. */
const targets: Record<'cms' | 'crm' | 'iam', { base: string; body: () => object; fresh: () => Promise<string> }> = {
  cms: {
    base: '/api/cms/amenities',
    body: () => ({ name: `Pool ${Math.random()}` }),
    fresh: async () => (await inject('POST', '/api/cms/amenities', admin.headers, { name: `Gym ${Math.random()}` })).json().id,
  },
  crm: {
    base: '/api/crm/guard-probe',
    body: () => ({ name: 'x' }),
    fresh: async () => '0190a0a0-0000-7000-8000-000000000001',
  },
  iam: {
    base: '/api/iam/departments',
    body: () => ({ name: `Dept ${Math.random()}` }),
    fresh: async () => (await inject('POST', '/api/iam/departments', admin.headers, { name: `Dept ${Math.random()}` })).json().id,
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
      GET: (await inject('GET', base, user.headers)).statusCode,
      POST: (await inject('POST', base, user.headers, body())).statusCode,
      PATCH: (await inject('PATCH', `${base}/${await fresh()}`, user.headers, body())).statusCode,
      DELETE: (await inject('DELETE', `${base}/${await fresh()}`, user.headers)).statusCode,
    };
    expect(statuses).toEqual(expected[letters]);
    const denied = (Object.keys(statuses) as Method[]).find((m) => expected[letters][m] === 403);
    if (denied) {
      const res = await inject(denied, denied === 'GET' || denied === 'POST' ? base : `${base}/${await fresh()}`, user.headers, denied === 'POST' || denied === 'PATCH' ? body() : undefined);
      expect(res.json()).toEqual({ error: 'Insufficient permissions' });
    }
  });

  test('no session → 401 on every method', async () => {
    const { base } = targets[module];
    for (const [method, url] of [['GET', base], ['POST', base], ['PATCH', `${base}/0190a0a0-0000-7000-8000-000000000001`], ['DELETE', `${base}/0190a0a0-0000-7000-8000-000000000001`]] as const) {
      const res = await inject(method, url, {}, method === 'POST' || method === 'PATCH' ? { name: 'x' } : undefined);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication required' });
    }
    expect((await inject('GET', base, { authorization: 'Bearer not-a-session' })).statusCode).toBe(401);
  });

  test('an invalid body or id without permission → 403, not 400; with permission → 400', async () => {
    const reader = await createUser(ctx, { [module]: 'r' });
    const { base } = targets[module];
    expect((await inject('POST', base, reader.headers, { bogus: 1 })).statusCode).toBe(403);
    expect((await inject('PATCH', `${base}/not-a-uuid`, reader.headers, { bogus: 1 })).statusCode).toBe(403);
    expect((await inject('DELETE', `${base}/not-a-uuid`, reader.headers)).statusCode).toBe(403);
    const bad = await inject('PATCH', `${base}/not-a-uuid`, admin.headers, { name: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.id).toEqual(expect.any(String));
    expect((await inject('DELETE', `${base}/not-a-uuid`, admin.headers)).json().details.id).toEqual(expect.any(String));
    expect((await inject('POST', base, admin.headers, { bogus: 1 })).statusCode).toBe(400);
  });
});

test('a permission granted through POST /api/iam/module-access applies on the next request, and its removal too', async () => {
  const user = await createUser(ctx, {});
  expect((await inject('GET', '/api/cms/amenities', user.headers)).statusCode).toBe(403);
  const grant = await inject('POST', '/api/iam/module-access', admin.headers, { user_id: user.id, module: 'cms', can_read: true });
  expect(grant.statusCode).toBe(201);
  expect(grant.json()).toEqual({ id: expect.any(String), message: expect.any(String) });
  expect((await inject('GET', '/api/cms/amenities', user.headers)).statusCode).toBe(200);
  expect((await inject('POST', '/api/cms/amenities', user.headers, { name: 'Nope' })).statusCode).toBe(403);
  expect((await inject('PATCH', `/api/iam/module-access/${grant.json().id}`, admin.headers, { can_read: false, can_write: true })).statusCode).toBe(200);
  expect((await inject('GET', '/api/cms/amenities', user.headers)).statusCode).toBe(403);
  expect((await inject('POST', '/api/cms/amenities', user.headers, { name: 'Now allowed' })).statusCode).toBe(201);
  expect((await inject('DELETE', `/api/iam/module-access/${grant.json().id}`, admin.headers)).statusCode).toBe(200);
  expect((await inject('POST', '/api/cms/amenities', user.headers, { name: 'Not any more' })).statusCode).toBe(403);
});

describe('module access endpoints', () => {
  test('GET per user, defaults false, duplicate 409, unknown user 400 details.user_id, bad module 400, unknown ids 404', async () => {
    const user = await createUser(ctx, {});
    expect((await inject('GET', `/api/iam/module-access/${user.id}`, admin.headers)).json()).toEqual({ data: [] });
    const created = await inject('POST', '/api/iam/module-access', admin.headers, { user_id: user.id, module: 'crm', can_write: true });
    expect(created.statusCode).toBe(201);
    expect((await inject('GET', `/api/iam/module-access/${user.id}`, admin.headers)).json()).toEqual({
      data: [{ id: created.json().id, module: 'crm', can_read: false, can_write: true, can_delete: false }],
    });
    const dup = await inject('POST', '/api/iam/module-access', admin.headers, { user_id: user.id, module: 'crm', can_read: true });
    expect(dup.statusCode).toBe(409);
    const unknown = await inject('POST', '/api/iam/module-access', admin.headers, { user_id: '0190a0a0-0000-7000-8000-000000000002', module: 'crm' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().details.user_id).toEqual(expect.any(String));
    const badModule = await inject('POST', '/api/iam/module-access', admin.headers, { user_id: user.id, module: 'hr' });
    expect(badModule.json().details.module).toEqual(expect.any(String));
    expect((await inject('GET', '/api/iam/module-access/0190a0a0-0000-7000-8000-000000000002', admin.headers)).statusCode).toBe(404);
    expect((await inject('GET', '/api/iam/module-access/nope', admin.headers)).json().details.userId).toEqual(expect.any(String));
    expect((await inject('PATCH', '/api/iam/module-access/0190a0a0-0000-7000-8000-000000000002', admin.headers, { can_read: true })).statusCode).toBe(404);
    expect((await inject('PATCH', `/api/iam/module-access/${created.json().id}`, admin.headers, { module: 'cms' })).statusCode).toBe(400);
  });
});

describe('departments', () => {
  test('list ordered by name, duplicate (any case) 409, delete 409 while users belong to it', async () => {
    const b = (await inject('POST', '/api/iam/departments', admin.headers, { name: 'Zeta Dept' })).json().id;
    const a = (await inject('POST', '/api/iam/departments', admin.headers, { name: 'Alpha Dept' })).json().id;
    const names = (await inject('GET', '/api/iam/departments', admin.headers)).json().data.map((d: any) => d.name);
    expect(names).toEqual([...names].sort((x: string, y: string) => (x < y ? -1 : 1)));
    expect(names.indexOf('Alpha Dept')).toBeLessThan(names.indexOf('Zeta Dept'));
    expect((await inject('POST', '/api/iam/departments', admin.headers, { name: 'alpha DEPT' })).statusCode).toBe(409);
    expect((await inject('PATCH', `/api/iam/departments/${b}`, admin.headers, { name: 'ALPHA dept' })).statusCode).toBe(409);
    const member = await inject('POST', '/api/iam/users', admin.headers, { email: 'member@example.com', name: 'Member', password: 'Str0ng!pass', department_id: a });
    expect((await inject('DELETE', `/api/iam/departments/${a}`, admin.headers)).statusCode).toBe(409);
    expect((await inject('PATCH', `/api/iam/users/${member.json().id}`, admin.headers, { department_id: null })).statusCode).toBe(200);
    expect((await inject('DELETE', `/api/iam/departments/${a}`, admin.headers)).statusCode).toBe(200);
    expect((await inject('GET', `/api/iam/departments/${a}`, admin.headers)).statusCode).toBe(404);
  });
});
