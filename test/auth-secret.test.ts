import { and, eq } from 'drizzle-orm';
import * as OTPAuth from 'otpauth';
import { afterAll, afterEach, beforeEach, expect, test, vi } from 'vitest';
import { applySecretRotation } from '../src/auth/secret.js';
import { SYSTEM } from '../src/data/actor.js';
import { activityLogs, apiTokens } from '../src/db/schema/index.js';
import { administration } from '../src/modules/iam/users.js';
import { as, createTestApp, createTestDatabase, createUser, none, type TestContext, type TestEnv } from './helpers.js';

const database = await createTestDatabase();
afterAll(async () => { await database.close(); });

const SECRET_A = 'first-secret-that-is-long-enough-0123456789';
const SECRET_B = 'other-secret-that-is-long-enough-9876543210';
const SECRET_C = 'third-secret-that-is-long-enough-5555555555';
const SECRET_D = 'fourth-secret-that-is-long-enough-777777777';

// Codes are made and checked in one process: with the clock held in the middle of a 30-second step, the step a code
// is made for is the step it is checked in, however long the machine takes between the two.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Math.floor(Date.now() / 30_000) * 30_000 + 15_000);
});
afterEach(() => {
  vi.useRealTimers();
});

/** The app started (as main.ts does) on the shared database with these variables. */
async function start(env: TestEnv) {
  const ctx = await createTestApp(env, { database });
  const rotation = await applySecretRotation(database, ctx.config);
  return Object.assign(ctx, { rotation });
}

/** A user with two-factor on (confirmed with the previous step's code, so the current one is unspent). */
async function twoFactorUser(ctx: TestContext) {
  const user = await createUser(ctx);
  const enabled = await as(ctx, user).post('/api/auth/two-factor/enable', { password: user.password });
  expect(enabled.statusCode).toBe(200);
  const { totpURI, backupCodes } = enabled.json() as { totpURI: string; backupCodes: string[] };
  const totp = OTPAuth.URI.parse(totpURI) as OTPAuth.TOTP;
  const confirmed = await as(ctx, user).post('/api/auth/two-factor/confirm', { code: totp.generate({ timestamp: Date.now() - 30_000 }) });
  expect(confirmed.statusCode).toBe(200);
  return { ...user, totp, backupCodes };
}

/** Signs in up to the two-factor challenge, then answers it with `answer`. */
async function verify(ctx: TestContext, user: { email: string; password: string }, answer: { code: string } | { backupCode: string }) {
  const login = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
  expect(login.json()).toEqual({ twoFactorRequired: true });
  const challenge = [login.headers['set-cookie']].flat().map((c) => String(c).split(';')[0]).find((c) => c.includes('two_factor'));
  expect(challenge, 'a challenge cookie').toBeDefined();
  return as(ctx, none, { headers: { cookie: challenge! } }).post('/api/auth/verify-2fa', answer);
}

test('changing AUTH_SECRET ends every session, bearer and cookie alike (CONTRACT §4)', async () => {
  const first = await start({ AUTH_SECRET: SECRET_A });
  const user = await createUser(first, { cms: 'r' });
  const cookie = `better-auth.session_token=${(await as(first, none).post('/api/auth/login', { email: user.email, password: user.password })).cookies[0].value}`;
  await first.close();

  // Restarting with the same secret keeps the sessions.
  const same = await start({ AUTH_SECRET: SECRET_A });
  expect(same.rotation.sessions).toBe(0);
  expect((await as(same, user).get('/api/auth/session')).statusCode).toBe(200);
  await same.close();

  const changed = await start({ AUTH_SECRET: SECRET_B });
  expect(changed.rotation.sessions).toBeGreaterThan(0);
  expect((await as(changed, user).get('/api/auth/session')).statusCode).toBe(401);
  expect((await as(changed, none, { headers: { cookie } }).get('/api/auth/session')).statusCode).toBe(401);
  // Signing in again works under the new secret.
  const res = await as(changed, none).post('/api/auth/login', { email: user.email, password: user.password });
  expect(res.statusCode).toBe(200);
  await changed.close();
});

test('changing AUTH_SECRET revokes every API token, each audited by the system', async () => {
  const first = await start({ AUTH_SECRET: SECRET_A });
  const user = await createUser(first, { crm: 'r' });
  const created = await as(first, user).post('/api/auth/tokens', { name: 'Sync', permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
  expect(created.statusCode).toBe(201);
  const { id, token } = created.json() as { id: string; token: string };
  expect((await as(first, token).get('/api/crm/leads')).statusCode).toBe(200);
  await first.close();

  // The same secret again: the token lives on.
  const same = await start({ AUTH_SECRET: SECRET_A });
  expect(same.rotation.apiTokens).toBe(0);
  expect((await as(same, token).get('/api/crm/leads')).statusCode).toBe(200);
  await same.close();

  const changed = await start({ AUTH_SECRET: SECRET_B });
  expect(changed.rotation.apiTokens).toBeGreaterThanOrEqual(1);
  expect((await as(changed, token).get('/api/crm/leads')).statusCode).toBe(401);
  expect(await database.db.select().from(apiTokens)).toEqual([]);
  const [log] = await database.db.select().from(activityLogs).where(and(eq(activityLogs.resource_id, id), eq(activityLogs.action, 'delete')));
  expect(log).toMatchObject({ module: 'iam', resource: 'api_tokens', user_id: null });
  await changed.close();
});

test('two-factor survives a change of AUTH_SECRET when the former one is in AUTH_SECRET_PREVIOUS', async () => {
  const first = await start({ AUTH_SECRET: SECRET_A });
  const user = await twoFactorUser(first);
  await first.close();

  const changed = await start({ AUTH_SECRET: SECRET_B, AUTH_SECRET_PREVIOUS: `${SECRET_D},${SECRET_A}` });
  expect(changed.rotation.twoFactorReencrypted).toBeGreaterThanOrEqual(1);
  expect(changed.rotation.twoFactorUnreadable).toBe(0);
  // Sessions end (CONTRACT §4), two-factor does not.
  expect((await as(changed, user).get('/api/auth/session')).statusCode).toBe(401);
  const byCode = await verify(changed, user, { code: user.totp.generate() });
  expect(byCode.statusCode).toBe(200);
  expect(byCode.json().user.id).toBe(user.id);
  const byBackupCode = await verify(changed, user, { backupCode: user.backupCodes[0] });
  expect(byBackupCode.statusCode).toBe(200);
  // The backup code is spent (the list, re-encrypted by Better Auth with the new secret, still reads).
  expect((await verify(changed, user, { backupCode: user.backupCodes[0] })).statusCode).toBe(401);
  expect((await verify(changed, user, { backupCode: user.backupCodes[1] })).statusCode).toBe(200);
  await changed.close();

  // Later starts with AUTH_SECRET_PREVIOUS still set change nothing more.
  const again = await start({ AUTH_SECRET: SECRET_B, AUTH_SECRET_PREVIOUS: SECRET_A });
  expect(again.rotation).toEqual({ sessions: 0, apiTokens: 0, twoFactorReencrypted: 0, twoFactorUnreadable: 0 });
  await again.close();
});

test('a two-factor secret no configured secret opens: 401 telling the user to ask an administrator, never a 500', async () => {
  const first = await start({ AUTH_SECRET: SECRET_C });
  const user = await twoFactorUser(first);
  // A set-up still pending when the secret changes.
  const pending = await createUser(first);
  const enabled = await as(first, pending).post('/api/auth/two-factor/enable', { password: pending.password });
  const pendingTotp = OTPAuth.URI.parse(enabled.json().totpURI) as OTPAuth.TOTP;
  await first.close();

  // Rotated without AUTH_SECRET_PREVIOUS.
  const changed = await start({ AUTH_SECRET: SECRET_D });
  expect(changed.rotation.twoFactorUnreadable).toBeGreaterThanOrEqual(2);
  for (const answer of [{ code: user.totp.generate() }, { backupCode: user.backupCodes[0] }]) {
    const res = await verify(changed, user, answer);
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toMatch(/administrator/);
  }
  // The pending set-up cannot be confirmed any more: 409, start again.
  const session = (await as(changed, none).post('/api/auth/login', { email: pending.email, password: pending.password })).json().session.token;
  const confirm = await as(changed, session).post('/api/auth/two-factor/confirm', { code: pendingTotp.generate() });
  expect(confirm.statusCode).toBe(409);
  expect(confirm.json().message).toMatch(/two-factor\/enable/);
  const restarted = await as(changed, session).post('/api/auth/two-factor/enable', { password: pending.password });
  expect(restarted.statusCode).toBe(200);
  const newTotp = OTPAuth.URI.parse(restarted.json().totpURI) as OTPAuth.TOTP;
  expect((await as(changed, session).post('/api/auth/two-factor/confirm', { code: newTotp.generate() })).statusCode).toBe(200);
  await changed.close();

  // The operator adds the former secret afterwards: the next start re-encrypts, and the code works again.
  const fixed = await start({ AUTH_SECRET: SECRET_D, AUTH_SECRET_PREVIOUS: SECRET_C });
  expect(fixed.rotation.twoFactorReencrypted).toBeGreaterThanOrEqual(1);
  expect((await verify(fixed, user, { code: user.totp.generate() })).statusCode).toBe(200);
  await fixed.close();

  // Or an administrator turns two-factor off: the password alone signs in.
  const other = await start({ AUTH_SECRET: SECRET_C });
  const locked = await twoFactorUser(other);
  await other.close();
  const lost = await start({ AUTH_SECRET: SECRET_A });
  expect((await verify(lost, locked, { code: locked.totp.generate() })).statusCode).toBe(401);
  expect(await administration.disableTwoFactor(database, SYSTEM, locked.email)).toBe(true);
  const plain = await as(lost, none).post('/api/auth/login', { email: locked.email, password: locked.password });
  expect(plain.statusCode).toBe(200);
  expect(plain.json().session.token).toEqual(expect.any(String));
  await lost.close();
});
