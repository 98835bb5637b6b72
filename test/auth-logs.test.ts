import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { LOG_REDACTIONS } from '../src/app.js';
import { as, createTestApp, createUser, eventually, none, type TestContext } from './helpers.js';

/** Every line the app's pino logger writes. */
const lines: string[] = [];
const capture = new Writable({
  write(chunk, _encoding, callback) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    callback();
  },
});
const logText = () => lines.join('\n');

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestApp(
    { LOG_LEVEL: 'trace' },
    {
      // The service's own redaction, at the most talkative level.
      logger: { level: 'trace', stream: capture, redact: { paths: LOG_REDACTIONS, censor: '[redacted]' } },
    },
  );
});
afterAll(async () => {
  await ctx?.close();
});


/** The session cookie (name=value) a response sets, if any. */
const sessionCookie = (header: string | string[] | number | undefined) =>
  ([] as string[])
    .concat((header as string | string[] | undefined) ?? [])
    .map((c) => c.split(';')[0])
    .find((c) => c.split('=')[0].endsWith('session_token') && c.split('=')[1] !== '');

async function outboxToken(email: string): Promise<string> {
  const dir = join(ctx.config.dataDir, 'outbox');
  return eventually(() => {
    const files = existsSync(dir) ? readdirSync(dir) : [];
    for (const file of files) {
      const raw = readFileSync(join(dir, file), 'utf8');
      if (!raw.includes(`To: ${email}`)) continue;
      // Undo quoted-printable soft breaks and =3D, enough to read the link.
      const text = raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      const match = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(text);
      if (match) return match[1];
    }
    return undefined;
  }, `a reset mail for ${email}`);
}

test('no password, session token, reset token, TOTP secret or backup code is ever logged', async () => {
  const secrets: Record<string, string> = {};
  const password = 'Logged-Passw0rd-never!';
  const user = await createUser(ctx, { cms: 'rwd' }, { password });
  secrets.password = password;
  secrets.createdUserToken = user.token;

  // Failed logins carry passwords too.
  secrets.wrongPassword = 'Wrong-Passw0rd-never!';
  expect((await as(ctx, none).post('/api/auth/login', { email: user.email, password: secrets.wrongPassword })).statusCode).toBe(401);
  expect((await as(ctx, none).post('/api/auth/login', { email: 'unknown-person@example.com', password: secrets.wrongPassword })).statusCode).toBe(401);

  // Login: password in, session token and cookie out.
  const signedIn = await as(ctx, none).post('/api/auth/login', { email: user.email, password });
  expect(signedIn.statusCode).toBe(200);
  secrets.loginToken = signedIn.json().session.token;
  const cookie = sessionCookie(signedIn.headers['set-cookie'])!;
  expect(cookie).toBeDefined();
  secrets.loginCookie = decodeURIComponent(cookie.split('=').slice(1).join('='));
  expect((await as(ctx, none, { headers: { cookie } }).get('/api/auth/session')).statusCode).toBe(200);
  expect((await as(ctx, secrets.loginToken).get('/api/auth/session')).statusCode).toBe(200);

  // Two-factor: enable (wrong password first), confirm, a challenge answered with a backup code.
  expect((await as(ctx, secrets.loginToken).post('/api/auth/two-factor/enable', { password: secrets.wrongPassword })).statusCode).toBe(400);
  const enabled = await as(ctx, secrets.loginToken).post('/api/auth/two-factor/enable', { password });
  expect(enabled.statusCode).toBe(200);
  const { totpURI, backupCodes } = enabled.json() as { totpURI: string; backupCodes: string[] };
  const totp = OTPAuth.URI.parse(totpURI) as OTPAuth.TOTP;
  secrets.totpSecretBase32 = totp.secret.base32;
  secrets.totpSecretLatin1 = totp.secret.latin1;
  secrets.totpURI = totpURI;
  backupCodes.forEach((code, i) => (secrets[`backupCode${i}`] = code));
  expect((await as(ctx, secrets.loginToken).post('/api/auth/two-factor/confirm', { code: totp.generate() })).statusCode).toBe(200);

  const challenge = await as(ctx, none).post('/api/auth/login', { email: user.email, password });
  expect(challenge.json()).toEqual({ twoFactorRequired: true });
  // The one cookie the challenge sets (the others it sends clear the session cookies).
  const challengeCookie = ([] as string[])
    .concat(challenge.headers['set-cookie'] as string[])
    .filter((c) => !/max-age=0/i.test(c))
    .map((c) => c.split(';')[0])
    .find((c) => c.split('=')[1] !== '')!;
  expect(challengeCookie).toBeDefined();
  expect((await as(ctx, none, { headers: { cookie: challengeCookie } }).post('/api/auth/verify-2fa', { backupCode: 'wrong-backup-code' })).statusCode).toBe(401);
  const verified = await as(ctx, none, { headers: { cookie: challengeCookie } }).post('/api/auth/verify-2fa', { backupCode: backupCodes[0] });
  expect(verified.statusCode).toBe(200);
  secrets.twoFactorToken = verified.json().session.token;
  expect((await as(ctx, secrets.loginToken).post('/api/auth/two-factor/disable', { password })).statusCode).toBe(200);

  // change-password: a wrong current password, a weak new one, then success.
  const changed = 'Changed-Passw0rd-never!';
  secrets.changedPassword = changed;
  secrets.weakPassword = 'weakpasswordnever';
  expect((await as(ctx, secrets.loginToken).post('/api/auth/change-password', { currentPassword: secrets.wrongPassword, newPassword: changed })).statusCode).toBe(400);
  expect((await as(ctx, secrets.loginToken).post('/api/auth/change-password', { currentPassword: password, newPassword: secrets.weakPassword })).statusCode).toBe(400);
  expect((await as(ctx, secrets.loginToken).post('/api/auth/change-password', { currentPassword: password, newPassword: changed })).statusCode).toBe(200);

  // Forgot / reset: the token goes through the outbox; a weak attempt, then success, then a reuse.
  expect((await as(ctx, none).post('/api/auth/forgot-password', { email: user.email })).statusCode).toBe(200);
  expect((await as(ctx, none).post('/api/auth/forgot-password', { email: 'unknown-person@example.com' })).statusCode).toBe(200);
  secrets.resetToken = await outboxToken(user.email);
  const reset = 'Reset-Passw0rd-never!';
  secrets.resetPassword = reset;
  expect((await as(ctx, none).post('/api/auth/reset-password', { token: secrets.resetToken, password: secrets.weakPassword })).statusCode).toBe(400);
  expect((await as(ctx, none).post('/api/auth/reset-password', { token: secrets.resetToken, password: reset })).statusCode).toBe(200);
  expect((await as(ctx, none).post('/api/auth/reset-password', { token: secrets.resetToken, password: reset })).statusCode).toBe(400);

  // Login with the final password and log out.
  const last = await as(ctx, none).post('/api/auth/login', { email: user.email, password: reset });
  expect(last.statusCode).toBe(200);
  secrets.lastToken = last.json().session.token;
  expect((await as(ctx, secrets.lastToken).post('/api/auth/logout')).statusCode).toBe(200);

  // The capture works and saw all of it (so an empty log cannot pass this test).
  const text = logText();
  expect(lines.length).toBeGreaterThan(30);
  for (const url of ['/api/auth/login', '/api/auth/verify-2fa', '/api/auth/two-factor/enable', '/api/auth/reset-password', '/api/auth/change-password']) {
    expect(text).toContain(url);
  }
  expect(text).toContain('mail written to outbox');
  for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();

  for (const [name, secret] of Object.entries(secrets)) {
    expect(secret.length, name).toBeGreaterThanOrEqual(8);
    expect(text.includes(secret), `${name} appears in the log`).toBe(false);
    // Not even percent-encoded (as in a cookie or a URL).
    expect(text.includes(encodeURIComponent(secret)), `${name} (URL-encoded) appears in the log`).toBe(false);
  }
});

test('query values never reach the logs: an unsubscribe link is logged as token=[redacted] (CONTRACT §13)', async () => {
  const token = `tok${Date.now()}SECRETVALUE`;
  await as(ctx, none).get(`/api/public/newsletter/unsubscribe?token=${token}`);
  await as(ctx, none).get(`/api/public/projects?q=${token}`);
  expect(logText()).not.toContain(token);
  expect(logText()).toContain('/api/public/newsletter/unsubscribe?token=[redacted]');
});
