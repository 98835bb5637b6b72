import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sessions } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

let ctx: TestContext;
beforeAll(async () => { ctx = await createTestApp({ SESSION_TTL_HOURS: '1' }); });
afterAll(async () => { await ctx?.close(); });

const expiry = async (token: string) => (await ctx.database.db.select().from(sessions).where(eq(sessions.token, token)))[0]?.expiresAt;

test('sessions last SESSION_TTL_HOURS and slide with use (CONTRACT §4)', async () => {
  const user = await createUser(ctx);
  const issued = (await expiry(user.token))!.getTime();
  expect(issued - Date.now()).toBeGreaterThan(59 * 60_000);
  expect(issued - Date.now()).toBeLessThanOrEqual(60 * 60_000);

  // Last refreshed 50 minutes ago (10 left): a use extends it to a full hour again.
  await ctx.database.db.update(sessions).set({ expiresAt: new Date(Date.now() + 10 * 60_000) }).where(eq(sessions.token, user.token));
  expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(200);
  expect((await expiry(user.token))!.getTime() - Date.now()).toBeGreaterThan(59 * 60_000);

  // Unused past its expiry: gone.
  await ctx.database.db.update(sessions).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(sessions.token, user.token));
  expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(401);
});
