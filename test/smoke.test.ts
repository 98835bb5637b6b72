import { afterAll, beforeAll, expect, test } from 'vitest';
import { as, createTestApp, none, type TestContext } from './helpers.js';

let ctx: TestContext;
beforeAll(async () => { ctx = await createTestApp(); });
afterAll(async () => { await ctx?.close(); });

test('health answers ok', async () => {
  const res = await as(ctx, none).get('/api/health');
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ status: 'ok' });
});
