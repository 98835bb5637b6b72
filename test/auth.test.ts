import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { as, createTestApp, createUser, login, none, type TestContext } from './helpers.js';

/** One Set-Cookie header, parsed: name, value and attributes (lower-cased names). */
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

const sessionCookieOf = (header: string | string[] | number | undefined) => setCookies(header).find((c) => c.name.endsWith('session_token'));

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestApp();
});
afterAll(async () => {
  await ctx?.close();
});


describe('login', () => {
  test('answers {user, session} and sets an HttpOnly, SameSite=Lax, Path=/ session cookie without Secure in development', async () => {
    const user = await createUser(ctx, {}, { name: 'Login Shape' });
    const res = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['session', 'user']);
    expect(body.user).toEqual({ id: user.id, email: user.email, name: 'Login Shape' });
    expect(Object.keys(body.session).sort()).toEqual(['expiresAt', 'token']);
    expect(typeof body.session.token).toBe('string');
    expect(body.session.token.length).toBeGreaterThanOrEqual(16);
    expect(body.session.expiresAt).toMatch(ISO_MS);
    // Default SESSION_TTL_HOURS is 168: the session expires about a week from now.
    const ttl = new Date(body.session.expiresAt).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(167 * 3600 * 1000);
    expect(ttl).toBeLessThanOrEqual(168 * 3600 * 1000 + 60_000);

    const cookie = sessionCookieOf(res.headers['set-cookie']);
    expect(cookie, 'a cookie whose name ends in session_token').toBeDefined();
    expect(cookie!.value).not.toBe('');
    expect(cookie!.attributes.httponly).toBe(true);
    expect(String(cookie!.attributes.samesite).toLowerCase()).toBe('lax');
    expect(cookie!.attributes.path).toBe('/');
    expect(cookie!.attributes.secure).toBeUndefined();
    expect(cookie!.name.startsWith('__Secure-')).toBe(false);
  });

  test('e-mail addresses are compared case-insensitively', async () => {
    const user = await createUser(ctx);
    const res = await as(ctx, none).post('/api/auth/login', { email: user.email.toUpperCase(), password: user.password });
    expect(res.statusCode).toBe(200);
    expect(res.json().user.email).toBe(user.email);
  });

  test('wrong password and unknown e-mail get the same 401 body and no session cookie', async () => {
    const user = await createUser(ctx);
    const wrong = await as(ctx, none).post('/api/auth/login', { email: user.email, password: 'Wrong-passw0rd' });
    const unknown = await as(ctx, none).post('/api/auth/login', { email: 'nobody-here@example.com', password: user.password });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'Invalid email or password' });
    expect(unknown.body).toBe(wrong.body);
    expect(sessionCookieOf(wrong.headers['set-cookie'])).toBeUndefined();
    expect(sessionCookieOf(unknown.headers['set-cookie'])).toBeUndefined();
  });

  test('missing fields are 400 Validation error naming the field', async () => {
    const noPassword = await as(ctx, none).post('/api/auth/login', { email: 'someone@example.com' });
    expect(noPassword.statusCode).toBe(400);
    expect(noPassword.json().error).toBe('Validation error');
    expect(noPassword.json().details).toHaveProperty('password');

    const noEmail = await as(ctx, none).post('/api/auth/login', { password: 'Passw0rd!' });
    expect(noEmail.statusCode).toBe(400);
    expect(noEmail.json().error).toBe('Validation error');
    expect(noEmail.json().details).toHaveProperty('email');

    const empty = await as(ctx, none).post('/api/auth/login', {});
    expect(empty.statusCode).toBe(400);
    expect(Object.keys(empty.json().details)).toEqual(expect.arrayContaining(['email', 'password']));
  });

  test('the session token works as a bearer token and the cookie works on its own', async () => {
    const user = await createUser(ctx);
    const res = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    const { token } = res.json().session;
    const cookie = sessionCookieOf(res.headers['set-cookie'])!;

    const byBearer = await as(ctx, token).get('/api/auth/session');
    expect(byBearer.statusCode).toBe(200);
    expect(byBearer.json().user.id).toBe(user.id);

    const byCookie = await as(ctx, none, { headers: { cookie: `${cookie.name}=${cookie.value}` } }).get('/api/auth/session');
    expect(byCookie.statusCode).toBe(200);
    expect(byCookie.json().user.id).toBe(user.id);
  });

  test('a made-up bearer token or cookie is 401', async () => {
    const bearer = await as(ctx, 'not-a-real-session-token').get('/api/auth/session');
    expect(bearer.statusCode).toBe(401);
    expect(bearer.json()).toEqual({ error: 'Authentication required' });
    const cookie = await as(ctx, none, { headers: { cookie: 'better-auth.session_token=forged.signature' } }).get('/api/auth/session');
    expect(cookie.statusCode).toBe(401);
    expect(cookie.json()).toEqual({ error: 'Authentication required' });
  });
});

describe('GET /api/auth/session', () => {
  test('answers user, session and permissions as CONTRACT §4 says', async () => {
    const user = await createUser(ctx, { cms: 'rw', crm: 'r', iam: 'rwd' }, { name: 'Session Shape' });
    const res = await as(ctx, user).get('/api/auth/session');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['permissions', 'session', 'user']);
    expect(body.user).toEqual({
      id: user.id,
      email: user.email,
      name: 'Session Shape',
      image: null,
      emailVerified: true,
      twoFactorEnabled: false,
      department: null,
    });
    expect(body.user.id).toMatch(UUID);
    expect(Object.keys(body.session)).toEqual(['expiresAt']);
    expect(body.session.expiresAt).toMatch(ISO_MS);
    expect(new Date(body.session.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const byModule = [...body.permissions].sort((a: any, b: any) => a.module.localeCompare(b.module));
    expect(byModule).toEqual([
      { module: 'cms', can_read: true, can_write: true, can_delete: false },
      { module: 'crm', can_read: true, can_write: false, can_delete: false },
      { module: 'iam', can_read: true, can_write: true, can_delete: true },
    ]);
  });

  test('a user without grants gets an empty permissions list', async () => {
    const user = await createUser(ctx);
    const res = await as(ctx, user).get('/api/auth/session');
    expect(res.statusCode).toBe(200);
    expect(res.json().permissions).toEqual([]);
  });

  test('without a session: 401 Authentication required', async () => {
    const res = await as(ctx, none).get('/api/auth/session');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Authentication required' });
  });
});

describe('logout', () => {
  test('ends the session server-side: the old bearer token is 401 afterwards', async () => {
    const user = await createUser(ctx);
    const res = await as(ctx, user).post('/api/auth/logout');
    expect(res.statusCode).toBe(200);
    expect(typeof res.json().message).toBe('string');
    expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(401);
    // And the session is gone for good: logging out again is 401.
    const again = await as(ctx, user).post('/api/auth/logout');
    expect(again.statusCode).toBe(401);
  });

  test('with the cookie: clears the cookie and the old cookie is 401 afterwards', async () => {
    const user = await createUser(ctx);
    const signedIn = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    const cookie = sessionCookieOf(signedIn.headers['set-cookie'])!;
    const cookieHeader = { cookie: `${cookie.name}=${cookie.value}` };
    expect((await as(ctx, none, { headers: cookieHeader }).get('/api/auth/session')).statusCode).toBe(200);

    const res = await as(ctx, none, { headers: cookieHeader }).post('/api/auth/logout');
    expect(res.statusCode).toBe(200);
    const cleared = sessionCookieOf(res.headers['set-cookie']);
    expect(cleared, 'logout clears the session cookie').toBeDefined();
    expect(cleared!.name).toBe(cookie.name);
    expect(cleared!.value === '' || cleared!.attributes['max-age'] === '0' || new Date(String(cleared!.attributes.expires)).getTime() <= Date.now()).toBe(true);

    expect((await as(ctx, none, { headers: cookieHeader }).get('/api/auth/session')).statusCode).toBe(401);
    // The bearer form of the same session is dead too.
    expect((await as(ctx, signedIn.json().session.token).get('/api/auth/session')).statusCode).toBe(401);
    // Other sessions of the user are untouched.
    expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(200);
  });

  test('without a session: 401', async () => {
    const res = await as(ctx, none).post('/api/auth/logout');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Authentication required' });
  });
});

describe('no self-registration', () => {
  test.each(['/api/auth/sign-up/email', '/api/auth/sign-in/email'])('POST %s is 404', async (url) => {
    const res = await as(ctx, none).post(url, { email: 'new-person@example.com', password: 'Passw0rd!', name: 'New Person' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('Resource not found');
    // And nobody was created: that address cannot sign in.
    const attempt = await as(ctx, none).post('/api/auth/login', { email: 'new-person@example.com', password: 'Passw0rd!' });
    expect(attempt.statusCode).toBe(401);
  });
});

describe('change-password', () => {
  test('wrong currentPassword is 400 details.currentPassword', async () => {
    const user = await createUser(ctx);
    const res = await as(ctx, user).post('/api/auth/change-password', { currentPassword: 'Not-the-passw0rd', newPassword: 'N3w-Passw0rd!' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Validation error');
    expect(res.json().details).toHaveProperty('currentPassword');
    // Nothing changed.
    expect(await login(ctx, user.email, user.password)).toEqual(expect.any(String));
  });

  test.each(['short1!', 'alllowercase1!', 'ALLUPPERCASE1!', 'NoDigitsHere!', 'NoSpecial123'])('weak newPassword %s is 400 details.newPassword', async (weak) => {
    const user = await createUser(ctx);
    const res = await as(ctx, user).post('/api/auth/change-password', { currentPassword: user.password, newPassword: weak });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Validation error');
    expect(res.json().details).toHaveProperty('newPassword');
    expect(await login(ctx, user.email, user.password)).toEqual(expect.any(String));
  });

  test('without a session: 401', async () => {
    const res = await as(ctx, none).post('/api/auth/change-password', { currentPassword: 'Passw0rd!', newPassword: 'N3w-Passw0rd!' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Authentication required' });
  });

  test('success: the calling session stays valid, the other sessions end, the new password works', async () => {
    const user = await createUser(ctx);
    const otherToken = await login(ctx, user.email, user.password);
    expect((await as(ctx, otherToken).get('/api/auth/session')).statusCode).toBe(200);

    const res = await as(ctx, user).post('/api/auth/change-password', { currentPassword: user.password, newPassword: 'Changed-Passw0rd!' });
    expect(res.statusCode).toBe(200);
    expect(typeof res.json().message).toBe('string');

    const mine = await as(ctx, user).get('/api/auth/session');
    expect(mine.statusCode).toBe(200);
    expect(mine.json().user.id).toBe(user.id);
    expect((await as(ctx, otherToken).get('/api/auth/session')).statusCode).toBe(401);

    const oldPassword = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(oldPassword.statusCode).toBe(401);
    const newPassword = await as(ctx, none).post('/api/auth/login', { email: user.email, password: 'Changed-Passw0rd!' });
    expect(newPassword.statusCode).toBe(200);
    expect(newPassword.json().user.id).toBe(user.id);
  });
});

describe('in production', () => {
  let prod: TestContext;
  beforeAll(async () => {
    prod = await createTestApp({ NODE_ENV: 'production', AUTH_SECRET: 'production-secret-that-is-long-enough-0123456789' });
  });
  afterAll(async () => {
    await prod?.close();
  });

  test('the session cookie is Secure (HttpOnly, SameSite=Lax, Path=/ still) and it and the bearer token work', async () => {
    const user = await createUser(prod);
    const res = await as(prod, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(res.statusCode).toBe(200);
    const cookie = sessionCookieOf(res.headers['set-cookie']);
    expect(cookie).toBeDefined();
    expect(cookie!.attributes.secure).toBe(true);
    expect(cookie!.attributes.httponly).toBe(true);
    expect(String(cookie!.attributes.samesite).toLowerCase()).toBe('lax');
    expect(cookie!.attributes.path).toBe('/');

    const byCookie = await as(prod, none, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } }).get('/api/auth/session');
    expect(byCookie.statusCode).toBe(200);
    const byBearer = await as(prod, res.json().session.token).get('/api/auth/session');
    expect(byBearer.statusCode).toBe(200);
  });
});
