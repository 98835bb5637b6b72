import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestApp, createUser, type TestContext } from './helpers.js';
import { expectLogs, UNKNOWN_ID } from './cms-helpers.js';

let ctx: TestContext;
let editor: Awaited<ReturnType<typeof createUser>>;
beforeAll(async () => {
  ctx = await createTestApp();
  editor = await createUser(ctx, { cms: 'rwd' });
});
afterAll(async () => {
  await ctx?.close();
});

const call = (method: string, url: string, payload?: unknown) => ctx.app.inject({ method: method as any, url, payload: payload as any, headers: editor.headers });

test('amenities: create → detail → list by name (unpaginated) → PATCH → DELETE → 404, audited', async () => {
  const pool = await call('POST', '/api/cms/amenities', { name: 'Pool', icon: 'pool', category: 'Leisure' });
  expect(pool.statusCode).toBe(201);
  const gym = await call('POST', '/api/cms/amenities', { name: 'Gym' });
  const id = pool.json().id;
  expect((await call('GET', `/api/cms/amenities/${id}`)).json()).toEqual({
    id, name: 'Pool', description: null, icon: 'pool', category: 'Leisure', cover_photo: null, created_at: expect.any(String),
  });
  const list = (await call('GET', '/api/cms/amenities')).json();
  expect(Object.keys(list)).toEqual(['data']);
  expect(list.data.map((a: any) => a.name)).toEqual(['Gym', 'Pool']);
  expect((await call('GET', '/api/cms/amenities?page=1')).statusCode).toBe(400);
  expect((await call('PATCH', `/api/cms/amenities/${id}`, { description: 'Olympic size' })).statusCode).toBe(200);
  expect((await call('GET', `/api/cms/amenities/${id}`)).json()).toMatchObject({ name: 'Pool', icon: 'pool', description: 'Olympic size' });
  expect((await call('POST', '/api/cms/amenities', { icon: 'x' })).json().details).toHaveProperty('name');
  expect((await call('PATCH', `/api/cms/amenities/${UNKNOWN_ID}`, { name: 'x' })).statusCode).toBe(404);
  expect((await call('DELETE', `/api/cms/amenities/${id}`)).statusCode).toBe(200);
  expect((await call('GET', `/api/cms/amenities/${id}`)).statusCode).toBe(404);
  await expectLogs(ctx, 'amenities', id, ['create', 'update', 'delete'], editor.id);
  await expectLogs(ctx, 'amenities', gym.json().id, ['create'], editor.id);
});
