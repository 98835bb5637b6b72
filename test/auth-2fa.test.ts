import * as OTPAuth from 'otpauth';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

type SetCookie = { name: string; value: string; attributes: Record<string, string | true> };

function setCookies(header: string | string[] | number | undefined): SetCookie[] {
  if (header === undefined || typeof header === 'number') return [];
  return (Array.isArray(header) ? header : [header]).map((line) => {
    const [pair, ...rest] = line.split(';');
    const eq = pair.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const part of rest) {
      const [key, ...value] = part.trim().split('=');
      if (key) attributes[key.toLowerCase()] = value.length ? value.join('=') : true;
    }
    return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
  });
}

/** A cookie that actually sets something (not one that clears it). */
const live = (c: SetCookie) => c.value !== '' && c.attributes['max-age'] !== '0';
const sessionCookieOf = (header: string | string[] | number | undefined) =>
  setCookies(header).find((c) => c.name.endsWith('session_token') && live(c));
const challengeCookieOf = (header: string | string[] | number | undefined) =>
  setCookies(header).find((c) => !c.name.endsWith('session_token') && live(c));

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => {
  await ctx?.close();
});

// Codes are made and checked in one process (app.inject): with the clock held in the middle of a 30-second step,
// the step a code is made for is the step it is checked in, however long the machine takes between the two.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Math.floor(Date.now() / 30_000) * 30_000 + 15_000);
});
afterEach(() => {
  vi.useRealTimers();
});


/** Signs in a two-factor user up to the challenge; returns the challenge cookie header. */
async function challenge(email: string, password: string) {
  const res = await as(ctx, none).post('/api/auth/login', { email, password });
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ twoFactorRequired: true });
  expect(sessionCookieOf(res.headers['set-cookie'])).toBeUndefined();
  const cookie = challengeCookieOf(res.headers['set-cookie']);
  expect(cookie, 'a challenge cookie').toBeDefined();
  return { cookie: cookie!, headers: { cookie: `${cookie!.name}=${cookie!.value}` } };
}

/** A user with two-factor enabled and confirmed. */
/** A user with two-factor on, confirmed with the code of `confirmStep` (30-second steps from now). */
async function twoFactorUser(confirmStep = -1) {
  const user = await createUser(ctx);
  const enabled = await as(ctx, user).post('/api/auth/two-factor/enable', { password: user.password });
  expect(enabled.statusCode).toBe(200);
  const { totpURI, backupCodes } = enabled.json() as { totpURI: string; backupCodes: string[] };
  const totp = OTPAuth.URI.parse(totpURI) as OTPAuth.TOTP;
  // By default the previous step's code (still accepted): the code spent here cannot sign in, and tests sign in with
  // the current one.
  const confirmed = await as(ctx, user).post('/api/auth/two-factor/confirm', { code: totp.generate({ timestamp: Date.now() + confirmStep * 30_000 }) });
  expect(confirmed.statusCode).toBe(200);
  return { ...user, totp, backupCodes };
}

describe('two-factor, end to end', () => {
  test('enable → confirm → login asks for a code → verify-2fa → disable', async () => {
    const user = await createUser(ctx, { cms: 'r' });

    // Wrong password: 400 details.password, nothing enabled.
    const wrong = await as(ctx, user).post('/api/auth/two-factor/enable', { password: 'Not-the-passw0rd' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toBe('Validation error');
    expect(wrong.json().details).toHaveProperty('password');

    const enabled = await as(ctx, user).post('/api/auth/two-factor/enable', { password: user.password });
    expect(enabled.statusCode).toBe(200);
    const body = enabled.json();
    expect(Object.keys(body).sort()).toEqual(['backupCodes', 'totpURI']);
    expect(body.totpURI).toMatch(/^otpauth:\/\/totp\//);
    expect(body.backupCodes).toHaveLength(10);
    expect(new Set(body.backupCodes).size).toBe(10);
    for (const code of body.backupCodes) expect(code).toEqual(expect.any(String));
    const totp = OTPAuth.URI.parse(body.totpURI) as OTPAuth.TOTP;
    expect(totp).toBeInstanceOf(OTPAuth.TOTP);
    // CONTRACT §4: SHA-1, 6 digits, 30-second steps.
    expect(totp.algorithm).toBe('SHA1');
    expect(totp.digits).toBe(6);
    expect(totp.period).toBe(30);

    // Pending until confirmed: login stays plain, session says not enabled.
    const plain = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(plain.statusCode).toBe(200);
    expect(plain.json().session.token).toEqual(expect.any(String));
    expect(sessionCookieOf(plain.headers['set-cookie'])).toBeDefined();
    expect((await as(ctx, user).get('/api/auth/session')).json().user.twoFactorEnabled).toBe(false);

    // Confirm with a wrong code: refused, still pending.
    const badConfirm = await as(ctx, user).post('/api/auth/two-factor/confirm', { code: totp.generate().startsWith('0') ? '111111' : '000000' });
    expect(badConfirm.statusCode).toBe(400);
    expect((await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password })).json().session).toBeDefined();

    // The previous step's code: the current one stays unspent for the sign-in below.
    const confirmed = await as(ctx, user).post('/api/auth/two-factor/confirm', { code: totp.generate({ timestamp: Date.now() - 30_000 }) });
    expect(confirmed.statusCode).toBe(200);
    expect(typeof confirmed.json().message).toBe('string');

    // The bearer token that confirmed still works and the session reports two-factor on.
    const after = await as(ctx, user).get('/api/auth/session');
    expect(after.statusCode).toBe(200);
    expect(after.json().user.twoFactorEnabled).toBe(true);
    expect(after.json().permissions).toEqual([{ module: 'cms', can_read: true, can_write: false, can_delete: false }]);

    // Login now answers {twoFactorRequired: true}, with a challenge cookie (≤ 10 minutes) and no session.
    const first = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ twoFactorRequired: true });
    expect(sessionCookieOf(first.headers['set-cookie'])).toBeUndefined();
    const cookies = setCookies(first.headers['set-cookie']).filter(live);
    expect(cookies).toHaveLength(1);
    const challengeCookie = cookies[0];
    expect(challengeCookie.attributes.httponly).toBe(true);
    const maxAge = Number(challengeCookie.attributes['max-age']);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(600);
    const challengeHeaders = { cookie: `${challengeCookie.name}=${challengeCookie.value}` };
    // The challenge cookie is not a session.
    expect((await as(ctx, none, { headers: challengeHeaders }).get('/api/auth/session')).statusCode).toBe(401);

    // Wrong code: 401 Invalid code, and the challenge survives it.
    const current = totp.generate();
    const wrongCode = await as(ctx, none, { headers: challengeHeaders }).post('/api/auth/verify-2fa', { code: current === '123456' ? '654321' : '123456' });
    expect(wrongCode.statusCode).toBe(401);
    expect(wrongCode.json()).toEqual({ error: 'Invalid code' });
    expect(sessionCookieOf(wrongCode.headers['set-cookie'])).toBeUndefined();

    const right = await as(ctx, none, { headers: challengeHeaders }).post('/api/auth/verify-2fa', { code: totp.generate() });
    expect(right.statusCode).toBe(200);
    const signedIn = right.json();
    expect(signedIn.user).toEqual({ id: user.id, email: user.email, name: user.name });
    expect(Object.keys(signedIn.session).sort()).toEqual(['expiresAt', 'token']);
    const sessionCookie = sessionCookieOf(right.headers['set-cookie']);
    expect(sessionCookie).toBeDefined();
    expect(sessionCookie!.attributes.httponly).toBe(true);
    expect(String(sessionCookie!.attributes.samesite).toLowerCase()).toBe('lax');
    expect(sessionCookie!.attributes.path).toBe('/');
    expect((await as(ctx, signedIn.session.token).get('/api/auth/session')).statusCode).toBe(200);
    expect((await as(ctx, none, { headers: { cookie: `${sessionCookie!.name}=${sessionCookie!.value}` } }).get('/api/auth/session')).statusCode).toBe(200);

    // Disable: wrong password refused, right password → login plain again.
    const badDisable = await as(ctx, user).post('/api/auth/two-factor/disable', { password: 'Not-the-passw0rd' });
    expect(badDisable.statusCode).toBe(400);
    expect(badDisable.json().details).toHaveProperty('password');
    expect((await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password })).json()).toEqual({ twoFactorRequired: true });

    const disabled = await as(ctx, user).post('/api/auth/two-factor/disable', { password: user.password });
    expect(disabled.statusCode).toBe(200);
    expect(typeof disabled.json().message).toBe('string');
    const again = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(again.statusCode).toBe(200);
    expect(again.json().user.id).toBe(user.id);
    expect(again.json().session.token).toEqual(expect.any(String));
    expect(sessionCookieOf(again.headers['set-cookie'])).toBeDefined();
    expect((await as(ctx, user).get('/api/auth/session')).json().user.twoFactorEnabled).toBe(false);
  });

  test('a cookie client keeps its session through enable, confirm and disable', async () => {
    const user = await createUser(ctx);
    const signedIn = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    const cookie = sessionCookieOf(signedIn.headers['set-cookie'])!;
    const headers = { cookie: `${cookie.name}=${cookie.value}` };

    const enabled = await as(ctx, none, { headers }).post('/api/auth/two-factor/enable', { password: user.password });
    expect(enabled.statusCode).toBe(200);
    expect((await as(ctx, none, { headers }).get('/api/auth/session')).statusCode).toBe(200);

    const totp = OTPAuth.URI.parse(enabled.json().totpURI) as OTPAuth.TOTP;
    expect((await as(ctx, none, { headers }).post('/api/auth/two-factor/confirm', { code: totp.generate() })).statusCode).toBe(200);
    const afterConfirm = await as(ctx, none, { headers }).get('/api/auth/session');
    expect(afterConfirm.statusCode).toBe(200);
    expect(afterConfirm.json().user.twoFactorEnabled).toBe(true);

    const disabled = await as(ctx, none, { headers }).post('/api/auth/two-factor/disable', { password: user.password });
    expect(disabled.statusCode).toBe(200);
    const afterDisable = await as(ctx, none, { headers }).get('/api/auth/session');
    expect(afterDisable.statusCode).toBe(200);
    expect(afterDisable.json().user.twoFactorEnabled).toBe(false);
    // The bearer session created with the user is still there as well.
    expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(200);
  });

  test('the two-factor management endpoints need a session', async () => {
    for (const [url, payload] of [
      ['/api/auth/two-factor/enable', { password: 'Passw0rd!' }],
      ['/api/auth/two-factor/confirm', { code: '123456' }],
      ['/api/auth/two-factor/disable', { password: 'Passw0rd!' }],
    ] as const) {
      const res = await as(ctx, none).post(url, payload);
      expect(res.statusCode, url).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication required' });
    }
  });

  test('verify-2fa without a challenge cookie is 401 with an error', async () => {
    const user = await twoFactorUser();
    await challenge(user.email, user.password);
    const res = await as(ctx, none).post('/api/auth/verify-2fa', { code: user.totp.generate() });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toEqual(expect.any(String));
    expect(sessionCookieOf(res.headers['set-cookie'])).toBeUndefined();

    // A session (bearer) is no substitute for the challenge.
    const withSession = await as(ctx, user).post('/api/auth/verify-2fa', { code: user.totp.generate() });
    expect(withSession.statusCode).toBe(401);

    // A forged challenge cookie neither.
    const forged = await as(ctx, none, { headers: { cookie: 'better-auth.two_factor=forged.value' } }).post('/api/auth/verify-2fa', { code: user.totp.generate() });
    expect(forged.statusCode).toBe(401);
  });

  test('a challenge completes once: it cannot mint a second session', async () => {
    const user = await twoFactorUser();
    const { headers } = await challenge(user.email, user.password);
    expect((await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code: user.totp.generate() })).statusCode).toBe(200);
    const replay = await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code: user.totp.generate() });
    expect(replay.statusCode).toBe(401);
  });

  test('a TOTP code accepted once is refused when the same user presents it again, even with a new challenge (CONTRACT §13)', async () => {
    const user = await twoFactorUser();
    const code = user.totp.generate();
    const first = await challenge(user.email, user.password);
    expect((await as(ctx, none, { headers: first.headers }).post('/api/auth/verify-2fa', { code })).statusCode).toBe(200);
    const second = await challenge(user.email, user.password);
    const replay = await as(ctx, none, { headers: second.headers }).post('/api/auth/verify-2fa', { code });
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toEqual({ error: 'Invalid code' });
    expect(sessionCookieOf(replay.headers['set-cookie'])).toBeUndefined();
    // Another user's identical code is theirs to use.
    const other = await twoFactorUser();
    const otherChallenge = await challenge(other.email, other.password);
    expect((await as(ctx, none, { headers: otherChallenge.headers }).post('/api/auth/verify-2fa', { code: other.totp.generate() })).statusCode).toBe(200);
  });

  test('the code that confirmed two-factor is spent: it cannot complete a sign-in', async () => {
    const user = await createUser(ctx);
    const { totpURI } = (await as(ctx, user).post('/api/auth/two-factor/enable', { password: user.password })).json();
    const totp = OTPAuth.URI.parse(totpURI) as OTPAuth.TOTP;
    const code = totp.generate();
    expect((await as(ctx, user).post('/api/auth/two-factor/confirm', { code })).statusCode).toBe(200);
    const { headers } = await challenge(user.email, user.password);
    const replay = await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code });
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toEqual({ error: 'Invalid code' });
  });

  test('the code of the previous and of the next 30-second step are accepted, older ones are not', async () => {
    const user = await twoFactorUser(0);
    const previous = await as(ctx, none, { headers: (await challenge(user.email, user.password)).headers }).post('/api/auth/verify-2fa', { code: user.totp.generate({ timestamp: Date.now() - 30_000 }) });
    expect(previous.statusCode).toBe(200);
    expect(previous.json().user.id).toBe(user.id);

    const next = await as(ctx, none, { headers: (await challenge(user.email, user.password)).headers }).post('/api/auth/verify-2fa', { code: user.totp.generate({ timestamp: Date.now() + 30_000 }) });
    expect(next.statusCode).toBe(200);

    // Three steps back is outside the one-step tolerance (unless it collides with a valid code by chance).
    const { headers } = await challenge(user.email, user.password);
    const stale = user.totp.generate({ timestamp: Date.now() - 90_000 });
    const valid = [-1, 0, 1].map((step) => user.totp.generate({ timestamp: Date.now() + step * 30_000 }));
    if (!valid.includes(stale)) {
      const res = await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code: stale });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Invalid code' });
    }
  });

  test('each backup code works once', async () => {
    const user = await twoFactorUser();
    const [first, second] = user.backupCodes;

    const used = await as(ctx, none, { headers: (await challenge(user.email, user.password)).headers }).post('/api/auth/verify-2fa', { backupCode: first });
    expect(used.statusCode).toBe(200);
    expect(used.json().user.id).toBe(user.id);
    expect(sessionCookieOf(used.headers['set-cookie'])).toBeDefined();
    expect((await as(ctx, used.json().session.token).get('/api/auth/session')).statusCode).toBe(200);

    const reused = await as(ctx, none, { headers: (await challenge(user.email, user.password)).headers }).post('/api/auth/verify-2fa', { backupCode: first });
    expect(reused.statusCode).toBe(401);
    expect(reused.json()).toEqual({ error: 'Invalid code' });
    expect(sessionCookieOf(reused.headers['set-cookie'])).toBeUndefined();

    const bogus = await as(ctx, none, { headers: (await challenge(user.email, user.password)).headers }).post('/api/auth/verify-2fa', { backupCode: 'not-a-backup-code' });
    expect(bogus.statusCode).toBe(401);
    expect(bogus.json()).toEqual({ error: 'Invalid code' });

    const another = await as(ctx, none, { headers: (await challenge(user.email, user.password)).headers }).post('/api/auth/verify-2fa', { backupCode: second });
    expect(another.statusCode).toBe(200);
  });

  test('verify-2fa needs exactly one of code and backupCode', async () => {
    const user = await twoFactorUser();
    const { headers } = await challenge(user.email, user.password);
    const neither = await as(ctx, none, { headers }).post('/api/auth/verify-2fa', {});
    expect(neither.statusCode).toBe(400);
    expect(neither.json().error).toBe('Validation error');
    const both = await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code: user.totp.generate(), backupCode: user.backupCodes[0] });
    expect(both.statusCode).toBe(400);
    // Neither refusal used up the challenge.
    expect((await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code: user.totp.generate() })).statusCode).toBe(200);
  });

  test('two-factor login with the cookie of a different user challenge does not cross users', async () => {
    const alice = await twoFactorUser();
    const bob = await twoFactorUser();
    const { headers } = await challenge(alice.email, alice.password);
    // Bob's code on Alice's challenge is (almost surely) wrong.
    const bobCode = bob.totp.generate();
    if (bobCode !== alice.totp.generate()) {
      expect((await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code: bobCode })).statusCode).toBe(401);
    }
    const res = await as(ctx, none, { headers }).post('/api/auth/verify-2fa', { code: alice.totp.generate() });
    expect(res.statusCode).toBe(200);
    expect(res.json().user.id).toBe(alice.id);
  });
});
