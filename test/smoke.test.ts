import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestApp, type TestContext } from './helpers.js';

let ctx: TestContext;
beforeAll(async () => { ctx = await createTestApp(); });
afterAll(async () => { await ctx?.close(); });

test('health answers ok', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/api/health' });
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ status: 'ok' });
});
