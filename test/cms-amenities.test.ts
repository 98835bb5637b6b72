import { afterAll, beforeAll, expect, test } from 'vitest';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';
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

test('amenities: create → detail → list by name (unpaginated) → PATCH → DELETE → 404, audited', async () => {
  const pool = await as(ctx, editor).post('/api/cms/amenities', { name: 'Pool', icon: 'pool', category: 'Leisure' });
  expect(pool.statusCode).toBe(201);
  const gym = await as(ctx, editor).post('/api/cms/amenities', { name: 'Gym' });
  const id = pool.json().id;
  expect((await as(ctx, editor).get(`/api/cms/amenities/${id}`)).json()).toEqual({
    id, name: 'Pool', description: null, icon: 'pool', category: 'Leisure', cover_photo: null, cover_photo_variants: null, created_at: expect.any(String),
  });
  const list = (await as(ctx, editor).get('/api/cms/amenities')).json();
  expect(Object.keys(list)).toEqual(['data']);
  expect(list.data.map((a: any) => a.name)).toEqual(['Gym', 'Pool']);
  expect((await as(ctx, editor).get('/api/cms/amenities?page=1')).statusCode).toBe(400);
  expect((await as(ctx, editor).patch(`/api/cms/amenities/${id}`, { description: 'Olympic size' })).statusCode).toBe(200);
  expect((await as(ctx, editor).get(`/api/cms/amenities/${id}`)).json()).toMatchObject({ name: 'Pool', icon: 'pool', description: 'Olympic size' });
  expect((await as(ctx, editor).post('/api/cms/amenities', { icon: 'x' })).json().details).toHaveProperty('name');
  expect((await as(ctx, editor).patch(`/api/cms/amenities/${UNKNOWN_ID}`, { name: 'x' })).statusCode).toBe(404);
  expect((await as(ctx, editor).delete(`/api/cms/amenities/${id}`)).statusCode).toBe(200);
  expect((await as(ctx, editor).get(`/api/cms/amenities/${id}`)).statusCode).toBe(404);
  await expectLogs(ctx, 'amenities', id, ['create', 'update', 'delete'], editor.id);
  await expectLogs(ctx, 'amenities', gym.json().id, ['create'], editor.id);
});
