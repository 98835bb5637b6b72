import { and, eq } from 'drizzle-orm';
import { getCurrentAuthContextAsyncLocalStorage, getCurrentDBAdapterAsyncLocalStorage, getRequestStateAsyncLocalStorage } from '@better-auth/core/context';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { resetRequest } from '../src/auth/auth.js';
import { hashing } from '../src/auth/passwords.js';
import { activityLogs, apiTokens } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, login, none, type TestContext } from './helpers.js';
import { outboxReader, resetTokenOf } from './mail.js';

// Better Auth's context storages (AsyncLocalStorage) make Node run a hook on every promise while they are enabled;
// they are enabled only while one of its calls runs, and every auth flow still finds its context.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => {
  await ctx?.close();
});

/** Whether any of the storages is enabled: Node's own flag on an AsyncLocalStorage (not in its typings). */
const anyEnabled = async () => {
  const storages = [await getRequestStateAsyncLocalStorage(), await getCurrentAuthContextAsyncLocalStorage(), await getCurrentDBAdapterAsyncLocalStorage(), resetRequest];
  return storages.some((storage) => (storage as unknown as { enabled: boolean }).enabled);
};

test('after sign-ins, session reads and sign-outs, none of the storages stays enabled', async () => {
  const user = await createUser(ctx, { crm: 'r' }, { password: 'Hooks-Pass-12345!' });
  const token = await login(ctx, user.email, 'Hooks-Pass-12345!');
  expect(await anyEnabled()).toBe(false);
  // Twenty at once, each a session read that misses the cache (new sessions) beside sign-ins: every answer right.
  const answers = await Promise.all(Array.from({ length: 10 }, async () => {
    const fresh = await login(ctx, user.email, 'Hooks-Pass-12345!');
    return [(await as(ctx, fresh).get('/api/auth/session')).statusCode, (await as(ctx, token).get('/api/crm/leads')).statusCode];
  }));
  expect(answers.flat().every((status) => status === 200)).toBe(true);
  expect(await anyEnabled()).toBe(false);
  expect((await as(ctx, token).post('/api/auth/logout')).statusCode).toBe(200);
  expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(401);
  expect(await anyEnabled()).toBe(false);
});

test('a password reset among sign-ins is still audited from its own request', async () => {
  const user = await createUser(ctx, { crm: 'r' }, { password: 'Hooks-Pass-12345!' });
  const other = await createUser(ctx, { crm: 'r' }, { password: 'Other-Pass-12345!' });
  const created = await as(ctx, await login(ctx, user.email, 'Hooks-Pass-12345!')).post('/api/auth/tokens', { name: 'Script', permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
  expect(created.statusCode, created.body).toBe(201);
  const outbox = outboxReader(ctx);
  expect((await as(ctx, none).post('/api/auth/forgot-password', { email: user.email })).statusCode).toBe(200);
  const resetToken = resetTokenOf(await outbox.next(user.email));
  const [reset] = await Promise.all([
    as(ctx, none, { remoteAddress: '203.0.113.44' }).post('/api/auth/reset-password', { token: resetToken, password: 'Res3t-hooks-passw0rd!' }, { 'user-agent': 'hooks-agent' }),
    ...Array.from({ length: 5 }, () => login(ctx, other.email, 'Other-Pass-12345!')),
  ]);
  expect(reset.statusCode, reset.body).toBe(200);
  const [log] = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'api_tokens'), eq(activityLogs.action, 'delete'), eq(activityLogs.user_id, user.id)));
  expect(log).toMatchObject({ ip_address: '203.0.113.44', user_agent: 'hooks-agent' });
  expect(await ctx.database.db.select().from(apiTokens).where(eq(apiTokens.user_id, user.id))).toEqual([]);
  expect(await anyEnabled()).toBe(false);
});

test('a sign-in checks its password once, with none of the storages enabled, before the Better Auth call', async () => {
  const user = await createUser(ctx, { crm: 'r' }, { password: 'Waits-Pass-12345!' });
  const verify = hashing.verify.bind(hashing);
  const enabledWhileChecking: boolean[] = [];
  const spy = vi.spyOn(hashing, 'verify').mockImplementation(async (password, hash) => {
    enabledWhileChecking.push(await anyEnabled());
    return verify(password, hash);
  });
  try {
    const answer = await as(ctx, none).post('/api/auth/login', { email: user.email, password: 'Waits-Pass-12345!' });
    expect(answer.statusCode, answer.body).toBe(200);
    const wrong = await as(ctx, none).post('/api/auth/login', { email: user.email, password: 'Waits-Pass-12345?' });
    expect(wrong.statusCode).toBe(401);
    // One bcrypt check per sign-in, each while no Better Auth call (and so no storage) was running.
    expect(enabledWhileChecking).toEqual([false, false]);
  } finally {
    spy.mockRestore();
  }
  expect(await anyEnabled()).toBe(false);
});
