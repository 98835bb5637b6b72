import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type SQL, sql } from 'drizzle-orm';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LOG_REDACTIONS } from '../src/app.js';
import { as, createTestApp, createUser, eventually, none, ok, type Reply, type TestContext } from './helpers.js';
import { make } from './factories.js';
import { idpIssuer, signInAtIdp, startIdp, startSigningStub } from './sso-idp.js';

const BASE = 'http://localhost:3000';
const lines: string[] = [];
const capture = new Writable({
  write(chunk, _encoding, callback) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    callback();
  },
});
/** The rows a statement answers. */
const rowsOf = async <T>(query: SQL) => ((await ctx.database.db.execute(query)) as unknown as { rows: T[] }).rows;
const logged = () => lines.map((line) => JSON.parse(line) as Record<string, any>);

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;
let idp: { close: () => Promise<void> };
let stub: Awaited<ReturnType<typeof startSigningStub>>;
let stubAudience = 'pms-stub';
let issuer: string;
/** Providers configured through the API, by role in these tests. */
const providers: Record<'plain' | 'jit' | 'stub', { id: string; secret: string }> = {} as never;
let department: { id: string };

// People the test identity provider knows, by login.
const people = {
  known: { email: 'Known.Person@Example.com', email_verified: true, name: 'Known Person' },
  stranger: { email: 'stranger@example.com', email_verified: true, name: 'Stranger Person' },
  newcomer: { email: 'newcomer@example.com', email_verified: true, name: 'New Comer' },
  unverified: { email: 'unverified@example.com', email_verified: false, name: 'Unverified Person' },
  nomail: { name: 'No Mail' },
  gone: { email: 'gone@example.com', email_verified: true, name: 'Gone Person' },
  twofactor: { email: 'twofactor@example.com', email_verified: true, name: 'Two Factor' },
  envuser: { email: 'envuser@example.com', email_verified: true, name: 'Env User' },
};

const cookiesOf = (res: Reply) => ([] as string[]).concat((res.headers['set-cookie'] as string[] | string | undefined) ?? []);
const cookieValue = (res: Reply, name: string) => cookiesOf(res).map((c) => c.split(';')[0]).find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1);
const sessionCookie = (res: Reply) => cookiesOf(res).map((c) => c.split(';')[0]).find((c) => /session_token=./.test(c));

/** Starts a sign-in with `provider`: the service's redirect and its state cookie. */
async function start(provider: string) {
  const res = await as(ctx, none).get(`/api/auth/sso/${provider}`);
  expect(res.statusCode, res.body).toBe(302);
  return { location: String(res.headers.location), state: cookieValue(res, 'pms_sso_state') };
}

/** The callback the service receives, with the browser's state cookie (or `cookie` instead). */
const callback = (url: string, cookie: string | undefined) =>
  as(ctx, none).get(url.slice(BASE.length), cookie ? { cookie: `pms_sso_state=${cookie}` } : {});

/** A whole sign-in as `login` at the identity provider through `provider`: the callback's answer. */
async function signIn(provider: string, login: string) {
  const { location, state } = await start(provider);
  return callback(await signInAtIdp(location, login, BASE), state);
}

/** The reason a refused sign-in shows on the sign-in page. */
function refusal(res: Reply) {
  expect(res.statusCode, res.body).toBe(302);
  const location = new URL(String(res.headers.location));
  expect(`${location.origin}${location.pathname}`).toBe(`${BASE}/login`);
  expect(sessionCookie(res)).toBeUndefined();
  return location.searchParams.get('sso_error') ?? '';
}

/** A successful sign-in: redirected to the console, with a session that knows who it is. */
async function signedInAs(res: Reply) {
  expect(res.statusCode, res.body).toBe(302);
  expect(res.headers.location).toBe(`${BASE}/`);
  const cookie = sessionCookie(res);
  expect(cookie).toBeDefined();
  const session = await as(ctx, none, { headers: { cookie: cookie! } }).get('/api/auth/session');
  expect(session.statusCode, session.body).toBe(200);
  return { ...(session.json() as { user: { id: string; email: string }; permissions: { module: string; can_read: boolean; can_write: boolean; can_delete: boolean }[] }), cookie: cookie! };
}

beforeAll(async () => {
  issuer = await idpIssuer();
  stub = await startSigningStub(() => stubAudience);
  ctx = await createTestApp(
    { LOG_LEVEL: 'info', SSO_OIDC_ISSUER: issuer, SSO_OIDC_CLIENT_ID: 'pms-env', SSO_OIDC_CLIENT_SECRET: 'env-secret-0123456789', SSO_OIDC_NAME: 'Company Login' },
    { logger: { level: 'info', stream: capture, redact: { paths: LOG_REDACTIONS, censor: '[redacted]' } } },
  );
  admin = await createUser(ctx, { iam: 'rwd', crm: 'rwd', cms: 'rwd' });
  department = await make.department(ctx, {}, admin);
  const create = async (body: Record<string, unknown>) => {
    const res = await as(ctx, admin).post('/api/iam/sso-providers', body);
    expect(res.statusCode, res.body).toBe(201);
    return { id: res.json().id as string, secret: body.client_secret as string };
  };
  providers.plain = await create({ name: 'Test IdP', issuer, client_id: 'pms-plain', client_secret: 'plain-secret-0123456789' });
  providers.jit = await create({
    name: 'JIT IdP', issuer, client_id: 'pms-jit', client_secret: 'jit-secret-0123456789', jit: true, jit_department_id: department.id,
    jit_grants: [{ module: 'crm', can_read: true, can_write: true, can_delete: false }, { module: 'cms', can_read: true, can_write: false, can_delete: false }],
  });
  providers.stub = await create({ name: 'Stub IdP', issuer: stub.issuer, client_id: 'pms-stub', client_secret: 'stub-secret-0123456789' });
  const client = (id: string, client_id: string, client_secret: string) => ({ client_id, client_secret, redirect_uris: [`${BASE}/api/auth/sso/${id}/callback`] });
  idp = await startIdp(issuer, [
    client(providers.plain.id, 'pms-plain', providers.plain.secret),
    client(providers.jit.id, 'pms-jit', providers.jit.secret),
    client('oidc', 'pms-env', 'env-secret-0123456789'),
  ], people);
  await createUser(ctx, {}, { email: 'known.person@example.com', name: 'Known Person' });
  await createUser(ctx, {}, { email: 'envuser@example.com' });
});

afterAll(async () => {
  await ctx?.close();
  await idp?.close();
  await stub?.close();
});

describe('signing in', () => {
  test('an existing user (e-mail matched case-insensitively) lands signed in the console with a normal session', async () => {
    const res = await signIn(providers.plain.id, 'known');
    const session = await signedInAs(res);
    expect(session.user.email).toBe('known.person@example.com');
    // The state cookie goes with the answer.
    expect(cookiesOf(res).find((c) => c.startsWith('pms_sso_state='))).toMatch(/Max-Age=0/);
    // The session signs out like any other.
    expect((await as(ctx, none, { headers: { cookie: session.cookie } }).post('/api/auth/logout', undefined, { origin: BASE })).statusCode).toBe(200);
    expect((await as(ctx, none, { headers: { cookie: session.cookie } }).get('/api/auth/session')).statusCode).toBe(401);
  });

  test('the provider set by environment signs in too, and the start carries state, nonce and PKCE', async () => {
    const { location, state } = await start('oidc');
    const url = new URL(location);
    expect(url.origin).toBe(issuer);
    expect(url.searchParams.get('client_id')).toBe('pms-env');
    expect(url.searchParams.get('redirect_uri')).toBe(`${BASE}/api/auth/sso/oidc/callback`);
    expect(url.searchParams.get('state')).toBe(state);
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toBeTruthy();
    expect(url.searchParams.get('scope')).toBe('openid email profile');
    const session = await signedInAs(await callback(await signInAtIdp(location, 'envuser', BASE), state));
    expect(session.user.email).toBe('envuser@example.com');
  });

  test('an unknown e-mail is refused (no user made) when the provider does not provision', async () => {
    const reason = refusal(await signIn(providers.plain.id, 'stranger'));
    expect(reason).toMatch(/no active account/i);
    expect(await rowsOf(sql`select id from users where email = 'stranger@example.com'`)).toEqual([]);
  });

  test('just-in-time provisioning creates the user with the default department and grants, audited', async () => {
    const session = await signedInAs(await signIn(providers.jit.id, 'newcomer'));
    expect(session.user.email).toBe('newcomer@example.com');
    const flags = Object.fromEntries(session.permissions.map((p) => [p.module, [p.can_read, p.can_write, p.can_delete]]));
    expect(flags).toEqual({ crm: [true, true, false], cms: [true, false, false] });
    const user = (await as(ctx, admin).get(`/api/iam/users/${session.user.id}`)).json();
    expect(user).toMatchObject({ name: 'New Comer', emailVerified: true, sso_required: true, department: { id: department.id } });
    const logs = (await as(ctx, admin).get(`/api/iam/activity-logs?resource_id=${session.user.id}`)).json().data;
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ action: 'create', resource: 'users', user: { id: session.user.id } });
    // A second sign-in finds the same user.
    expect((await signedInAs(await signIn(providers.jit.id, 'newcomer'))).user.id).toBe(session.user.id);
    // Provisioned users have no password.
    const login = await as(ctx, none).post('/api/auth/login', { email: 'newcomer@example.com', password: 'Anything1!' });
    expect(login.statusCode).toBe(401);
  });

  test('an e-mail the provider has not verified is refused', async () => {
    expect(refusal(await signIn(providers.jit.id, 'unverified'))).toMatch(/not verified your e-mail/i);
  });

  test('no e-mail from the provider is refused', async () => {
    expect(refusal(await signIn(providers.jit.id, 'nomail'))).toMatch(/did not share your e-mail/i);
  });

  test('a deleted user is refused, even by a provider that provisions', async () => {
    const user = await make.user(ctx, { email: 'gone@example.com' }, admin);
    expect((await as(ctx, admin).delete(`/api/iam/users/${user.id}`)).statusCode).toBe(200);
    expect(refusal(await signIn(providers.jit.id, 'gone'))).toMatch(/no active account/i);
    expect(await rowsOf(sql`select id from users where email = 'gone@example.com' and deleted_at is null`)).toEqual([]);
  });

  test('an ID token for another audience is refused; the same provider\'s token for this client signs in', async () => {
    await make.user(ctx, { email: 'stub-person@example.com' }, admin);
    stubAudience = 'someone-else';
    expect(refusal(await signIn(providers.stub.id, 'any'))).toMatch(/could not be verified/i);
    stubAudience = 'pms-stub';
    expect((await signedInAs(await signIn(providers.stub.id, 'any'))).user.email).toBe('stub-person@example.com');
  });

  test('an expired state is refused', async () => {
    const { location, state } = await start(providers.plain.id);
    await ctx.database.db.execute(sql`update verifications set expires_at = now() - interval '1 minute' where identifier = ${`sso-state:${state}`}`);
    expect(refusal(await callback(await signInAtIdp(location, 'known', BASE), state))).toMatch(/expired or was already used/i);
  });

  test('a replayed callback is refused, and so is one from another browser (no state cookie)', async () => {
    const { location, state } = await start(providers.plain.id);
    const back = await signInAtIdp(location, 'known', BASE);
    await signedInAs(await callback(back, state));
    expect(refusal(await callback(back, state))).toMatch(/expired or was already used/i);

    const other = await start(providers.plain.id);
    const otherBack = await signInAtIdp(other.location, 'known', BASE);
    expect(refusal(await callback(otherBack, undefined))).toMatch(/expired or was already used/i);
    expect(refusal(await callback(otherBack, 'a-state-of-another-sign-in'))).toMatch(/expired or was already used/i);
  });

  test('an error from the provider, a bad provider id and a disabled provider go back to the sign-in page', async () => {
    const { state } = await start(providers.plain.id);
    expect(refusal(await callback(`${BASE}/api/auth/sso/${providers.plain.id}/callback?error=access_denied&state=${state}`, state))).toMatch(/did not sign you in/i);
    expect(refusal(await as(ctx, none).get('/api/auth/sso/no-such-provider'))).toMatch(/not available/i);
    expect(refusal(await as(ctx, none).get('/api/auth/sso/0190f5a2-7c1e-7d3a-9b1c-2f4e6a8b0c1d'))).toMatch(/not available/i);
    expect(refusal(await as(ctx, none).get(`/api/auth/sso/${providers.plain.id}/callback`))).toMatch(/expired or was already used/i);
    expect(refusal(await as(ctx, none).get(`/api/auth/sso/${providers.plain.id}/callback?code=x&state=y&session_state=z`))).toMatch(/expired/i);

    const off = await as(ctx, admin).post('/api/iam/sso-providers', { name: 'Off IdP', issuer, client_id: 'off', client_secret: 'off-secret', enabled: false });
    expect(off.statusCode).toBe(201);
    expect(refusal(await as(ctx, none).get(`/api/auth/sso/${off.json().id}`))).toMatch(/not available/i);
  });

  test('an unreachable provider goes back to the sign-in page', async () => {
    const dead = await as(ctx, admin).post('/api/iam/sso-providers', { name: 'Dead IdP', issuer: await idpIssuer(), client_id: 'dead', client_secret: 'dead-secret' });
    expect(refusal(await as(ctx, none).get(`/api/auth/sso/${dead.json().id}`))).toMatch(/could not be reached/i);
    expect((await as(ctx, admin).delete(`/api/iam/sso-providers/${dead.json().id}`)).statusCode).toBe(200);
  });

  test('GET /api/auth/sso lists the enabled providers (environment first) for the sign-in page, signed out', async () => {
    const res = await as(ctx, none).get('/api/auth/sso');
    expect(res.statusCode).toBe(200);
    const data = res.json().data as { id: string; name: string }[];
    expect(data[0]).toEqual({ id: 'oidc', name: 'Company Login' });
    expect(data.map((p) => p.name)).toEqual(expect.arrayContaining(['Test IdP', 'JIT IdP', 'Stub IdP']));
    expect(data.map((p) => p.name)).not.toContain('Off IdP');
    expect(Object.keys(data[1]).sort()).toEqual(['id', 'name']);
  });

  test('an SSO sign-in is not asked for the service\'s two-factor code', async () => {
    const user = await createUser(ctx, {}, { email: 'twofactor@example.com' });
    const enabled = (await as(ctx, user).post('/api/auth/two-factor/enable', { password: user.password })).json();
    const totp = OTPAuth.URI.parse(enabled.totpURI) as OTPAuth.TOTP;
    expect((await as(ctx, user).post('/api/auth/two-factor/confirm', { code: totp.generate() })).statusCode).toBe(200);
    expect((await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password })).json()).toEqual({ twoFactorRequired: true });
    const session = await signedInAs(await signIn(providers.plain.id, 'twofactor'));
    expect(session.user.id).toBe(user.id);
  });

  test('sign-ins and refusals are logged like password sign-ins, never with the code or state', async () => {
    const { location, state } = await start(providers.plain.id);
    const back = await signInAtIdp(location, 'known', BASE);
    await signedInAs(await callback(back, state));
    const code = new URL(back).searchParams.get('code')!;
    const entries = logged();
    expect(entries.some((e) => e.msg === 'sso sign-in' && e.sso?.provider === providers.plain.id && e.sso?.outcome === 'signed-in' && e.sso?.userId)).toBe(true);
    expect(entries.some((e) => e.msg === 'sso sign-in refused' && e.sso?.reason === 'e-mail not verified')).toBe(true);
    expect(entries.some((e) => e.msg === 'sso sign-in refused' && e.sso?.reason === 'no active account')).toBe(true);
    const text = lines.join('\n');
    expect(text).not.toContain(code);
    expect(text).not.toContain(state!);
    for (const secret of ['plain-secret-0123456789', 'jit-secret-0123456789', 'env-secret-0123456789']) expect(text).not.toContain(secret);
  });
});

describe('users that must sign in with single sign-on', () => {
  test('sso_required on create and update; their password sign-in and reset are refused, and turning it on ends their sessions', async () => {
    const res = await as(ctx, admin).post('/api/iam/users', { email: 'required@example.com', name: 'Required', password: 'Str0ng!pass', sso_required: true });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id;
    expect((await as(ctx, admin).get(`/api/iam/users/${id}`)).json().sso_required).toBe(true);
    const login = await as(ctx, none).post('/api/auth/login', { email: 'REQUIRED@example.com', password: 'Str0ng!pass' });
    expect(login.statusCode).toBe(403);
    expect(login.json()).toMatchObject({ error: 'Single sign-on required', message: expect.stringMatching(/single sign-on/) });
    expect(sessionCookie(login)).toBeUndefined();
    // A wrong password says no more than for anyone.
    expect((await as(ctx, none).post('/api/auth/login', { email: 'required@example.com', password: 'Wr0ng!pass' })).json()).toEqual({ error: 'Invalid email or password' });

    // Turned off: the password works again; a reset token asked then dies when it is turned back on.
    expect((await as(ctx, admin).patch(`/api/iam/users/${id}`, { sso_required: false })).statusCode).toBe(200);
    const byPassword = await ok(as(ctx, none).post('/api/auth/login', { email: 'required@example.com', password: 'Str0ng!pass' }));
    expect((await as(ctx, byPassword.session.token).get('/api/auth/session')).statusCode).toBe(200);
    expect((await as(ctx, none).post('/api/auth/forgot-password', { email: 'required@example.com' })).statusCode).toBe(200);
    const token = await outboxToken('required@example.com');
    // Turned on again: the session the password opened ends (they come back through the identity provider).
    expect((await as(ctx, admin).patch(`/api/iam/users/${id}`, { sso_required: true })).statusCode).toBe(200);
    expect((await as(ctx, byPassword.session.token).get('/api/auth/session')).statusCode).toBe(401);
    const reset = await as(ctx, none).post('/api/auth/reset-password', { token, password: 'N3w!password' });
    expect(reset.statusCode).toBe(400);
    expect(reset.json().details.token).toMatch(/single sign-on/);
    expect((await as(ctx, none).post('/api/auth/login', { email: 'required@example.com', password: 'N3w!password' })).statusCode).toBe(401);
    const logs = (await as(ctx, admin).get(`/api/iam/activity-logs?resource_id=${id}`)).json().data as { action: string; changes: any }[];
    expect(logs.some((log) => log.action === 'update' && log.changes.after.sso_required === true && log.changes.before.sso_required === false)).toBe(true);
  });
});

async function outboxToken(email: string): Promise<string> {
  const dir = join(ctx.config.dataDir, 'outbox');
  return eventually(() => {
    for (const file of existsSync(dir) ? readdirSync(dir) : []) {
      const raw = readFileSync(join(dir, file), 'utf8');
      if (!raw.includes(`To: ${email}`)) continue;
      const match = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='));
      if (match) return match[1];
    }
    return undefined;
  }, `a reset mail for ${email}`);
}

describe('providers in iam', () => {
  test('listing, reading and changing need iam read and write', async () => {
    const reader = await createUser(ctx, { iam: 'r' });
    const outsider = await createUser(ctx, { crm: 'rwd' });
    expect((await as(ctx, none).get('/api/iam/sso-providers')).statusCode).toBe(401);
    expect((await as(ctx, outsider).get('/api/iam/sso-providers')).statusCode).toBe(403);
    expect((await as(ctx, reader).get('/api/iam/sso-providers')).statusCode).toBe(200);
    expect((await as(ctx, reader).post('/api/iam/sso-providers', { name: 'X', issuer, client_id: 'x', client_secret: 'y' })).statusCode).toBe(403);
    expect((await as(ctx, reader).patch(`/api/iam/sso-providers/${providers.plain.id}`, { enabled: false })).statusCode).toBe(403);
    expect((await as(ctx, reader).delete(`/api/iam/sso-providers/${providers.plain.id}`)).statusCode).toBe(403);
  });

  test('validation names the field: a bad issuer URL, a missing name, scopes without openid, an unknown department, a module twice', async () => {
    const good = { name: 'Valid', issuer: 'https://accounts.google.com', client_id: 'id', client_secret: 'secret' };
    const details = async (body: Record<string, unknown>) => {
      const res = await as(ctx, admin).post('/api/iam/sso-providers', body);
      expect(res.statusCode, res.body).toBe(400);
      return res.json().details;
    };
    expect(await details({ ...good, issuer: 'not a url' })).toHaveProperty('issuer');
    expect(await details({ ...good, issuer: 'ftp://idp.example.com' })).toHaveProperty('issuer');
    expect(await details({ ...good, issuer: 'https://idp.example.com/?tenant=1' })).toHaveProperty('issuer');
    expect(await details({ ...good, name: undefined })).toHaveProperty('name');
    expect(await details({ ...good, client_secret: '' })).toHaveProperty('client_secret');
    expect(await details({ ...good, scopes: 'email profile' })).toHaveProperty('scopes');
    expect(await details({ ...good, jit_department_id: '0190f5a2-7c1e-7d3a-9b1c-2f4e6a8b0c1d' })).toHaveProperty('jit_department_id');
    expect(await details({ ...good, jit_grants: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }, { module: 'crm', can_read: true, can_write: true, can_delete: false }] })).toHaveProperty('jit_grants');
    expect(await details({ ...good, jit_grants: [{ module: 'hr', can_read: true, can_write: false, can_delete: false }] })).toBeDefined();
    const patch = await as(ctx, admin).patch(`/api/iam/sso-providers/${providers.plain.id}`, { issuer: 'mailto:x@example.com' });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().details).toHaveProperty('issuer');
  });

  test('the client secret is never answered, audited or copied to the change log; replacing it is audited as replaced', async () => {
    const secret = 'never-shown-secret-0123456789';
    const created = await as(ctx, admin).post('/api/iam/sso-providers', { name: 'Secret IdP', issuer: 'https://idp.example.com', client_id: 'sec', client_secret: secret, enabled: false });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    expect(created.body).not.toContain(secret);
    const detail = await as(ctx, admin).get(`/api/iam/sso-providers/${id}`);
    expect(detail.json()).toMatchObject({ id, name: 'Secret IdP', enabled: false, redirect_uri: `${BASE}/api/auth/sso/${id}/callback`, read_only: false });
    expect(detail.json()).not.toHaveProperty('client_secret');
    const list = await as(ctx, admin).get('/api/iam/sso-providers');
    expect(list.json().data[0]).toMatchObject({ id: 'oidc', name: 'Company Login', read_only: true, redirect_uri: `${BASE}/api/auth/sso/oidc/callback` });
    expect(list.body).not.toMatch(/secret-0123456789/);
    const env = await as(ctx, admin).get('/api/iam/sso-providers/oidc');
    expect(env.json()).toEqual(list.json().data[0]);
    const rotated = 'rotated-secret-9876543210';
    expect((await as(ctx, admin).patch(`/api/iam/sso-providers/${id}`, { client_secret: rotated, name: 'Secret IdP 2' })).statusCode).toBe(200);
    expect((await as(ctx, admin).delete(`/api/iam/sso-providers/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, admin).get(`/api/iam/sso-providers/${id}`)).statusCode).toBe(404);
    const logs = (await as(ctx, admin).get(`/api/iam/activity-logs?resource_id=${id}&limit=10`)).json().data as { action: string; changes: any }[];
    expect(logs.map((log) => log.action).sort()).toEqual(['create', 'delete', 'update']);
    expect(logs.find((log) => log.action === 'update')!.changes.after).toMatchObject({ credential: 'replaced', name: 'Secret IdP 2' });
    const history = await as(ctx, admin).get(`/api/iam/sso-providers/${id}/history`);
    const trail = JSON.stringify(logs) + history.body;
    const changeLog = await rowsOf(sql`select coalesce(before::text, '') || coalesce(after::text, '') as text from change_log where resource = 'sso_providers'`);
    for (const text of [trail, JSON.stringify(changeLog)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(rotated);
    }
    expect(changeLog.length).toBeGreaterThan(0);
  });

  test('a disabled provider is hidden from the sign-in page and enabled again shows', async () => {
    expect((await as(ctx, admin).patch(`/api/iam/sso-providers/${providers.plain.id}`, { enabled: false })).statusCode).toBe(200);
    expect((await as(ctx, none).get('/api/auth/sso')).json().data.map((p: { id: string }) => p.id)).not.toContain(providers.plain.id);
    expect((await as(ctx, admin).patch(`/api/iam/sso-providers/${providers.plain.id}`, { enabled: true })).statusCode).toBe(200);
    expect((await as(ctx, none).get('/api/auth/sso')).json().data.map((p: { id: string }) => p.id)).toContain(providers.plain.id);
  });
});
