import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { verifications } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, eventually, login, none, PATIENCE_MS, type TestContext } from './helpers.js';
import { outboxReader, parseMail, resetTokenOf } from './mail.js';

const NEW_PASSWORD = 'Reset-Passw0rd!';

/** A local SMTP server that keeps every message (or refuses them all), on `port` or any free one. */
async function smtpCapture(options: { reject?: boolean; stall?: boolean; port?: number } = {}) {
  const messages: { from: string; to: string[]; raw: string }[] = [];
  const recipients: string[] = [];
  /** With `stall`, the answers to DATA held back until close. */
  const held: (() => void)[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      recipients.push(address.address);
      if (options.reject) {
        const err = Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 });
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        if (options.stall) held.push(() => callback());
        else callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    /** Every RCPT TO the server was asked for, accepted or not. */
    recipients,
    close: () => {
      held.splice(0).forEach((release) => release());
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const forgot = (ctx: TestContext, email: string) =>
  as(ctx, none).post('/api/auth/forgot-password', { email });
const reset = (ctx: TestContext, token: string, password: string) =>
  as(ctx, none).post('/api/auth/reset-password', { token, password });
const sessionStatus = async (ctx: TestContext, headers: Record<string, string>) =>
  (await as(ctx, none, { headers }).get('/api/auth/session')).statusCode;

// ---------------------------------------------------------------------------------------------

describe('with the outbox (no SMTP_URL)', () => {
  let ctx: TestContext;
  let outbox: ReturnType<typeof outboxReader>;
  beforeAll(async () => {
    ctx = await createTestApp();
    outbox = outboxReader(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  test('forgot-password answers the same 200 body for a known and an unknown address; only the known one gets mail', async () => {
    const user = await createUser(ctx);
    const unknownAddress = `nobody-${Date.now()}@example.com`;
    const unknown = await forgot(ctx, unknownAddress);
    const known = await forgot(ctx, user.email);
    expect(unknown.statusCode).toBe(200);
    expect(known.statusCode).toBe(200);
    expect(typeof known.json().message).toBe('string');
    expect(Object.keys(known.json())).toEqual(['message']);
    expect(unknown.body).toBe(known.body);

    const mail = await outbox.next(user.email);
    expect(mail.subject).toMatch(/reset/i);
    expect(resetTokenOf(mail).length).toBeGreaterThanOrEqual(16);
    // The known address's mail has arrived; the unknown one never gets any.
    expect(outbox.unread(unknownAddress)).toEqual([]);
  });

  test('forgot-password matches the address case-insensitively', async () => {
    const user = await createUser(ctx);
    expect((await forgot(ctx, user.email.toUpperCase())).statusCode).toBe(200);
    const mail = await outbox.next(user.email);
    expect(resetTokenOf(mail)).toEqual(expect.any(String));
  });

  test('forgot-password with an invalid or missing e-mail is 400', async () => {
    const invalid = await forgot(ctx, 'not-an-address');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().details).toHaveProperty('email');
    const missing = await as(ctx, none).post('/api/auth/forgot-password', {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details).toHaveProperty('email');
  });

  test('reset: a weak password keeps the token; success ends every session; the token is single-use', async () => {
    const user = await createUser(ctx);
    // Two more signed-in clients: one by bearer, one by cookie.
    const bearer = { authorization: `Bearer ${await login(ctx, user.email, user.password)}` };
    const signedIn = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    const setCookie = ([] as string[]).concat(signedIn.headers['set-cookie'] as string | string[]);
    const sessionCookie = setCookie.map((c) => c.split(';')[0]).find((c) => c.split('=')[0].endsWith('session_token'))!;
    const cookie = { cookie: sessionCookie };
    for (const headers of [user.headers, bearer, cookie]) expect(await sessionStatus(ctx, headers)).toBe(200);

    expect((await forgot(ctx, user.email)).statusCode).toBe(200);
    const token = resetTokenOf(await outbox.next(user.email));

    // The token expires after one hour.
    const [row] = await ctx.database.db.select().from(verifications).where(eq(verifications.identifier, `reset-password:${token}`));
    expect(row).toBeDefined();
    const lifetime = new Date(row.expiresAt).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(58 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(60 * 60_000 + 5_000);

    for (const weak of ['short1!', 'nouppercase1!', 'NOLOWERCASE1!', 'NoDigits!!', 'NoSpecial123', `Aa1!${'x'.repeat(125)}`]) {
      const res = await reset(ctx, token, weak);
      expect(res.statusCode, weak).toBe(400);
      expect(res.json().error).toBe('Validation error');
      expect(res.json().details).toHaveProperty('password');
      expect(res.json().details).not.toHaveProperty('token');
    }
    // Nothing changed yet: sessions alive, old password still works.
    for (const headers of [user.headers, bearer, cookie]) expect(await sessionStatus(ctx, headers)).toBe(200);

    const done = await reset(ctx, token, NEW_PASSWORD);
    expect(done.statusCode).toBe(200);
    expect(typeof done.json().message).toBe('string');

    for (const headers of [user.headers, bearer, cookie]) expect(await sessionStatus(ctx, headers)).toBe(401);
    const old = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
    expect(old.statusCode).toBe(401);
    const fresh = await as(ctx, none).post('/api/auth/login', { email: user.email, password: NEW_PASSWORD });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json().user.id).toBe(user.id);

    const reused = await reset(ctx, token, 'Another-Passw0rd!');
    expect(reused.statusCode).toBe(400);
    expect(reused.json().error).toBe('Validation error');
    expect(reused.json().details).toHaveProperty('token');
    // The refused reuse did not change the password.
    expect(await login(ctx, user.email, NEW_PASSWORD)).toEqual(expect.any(String));
  });

  test('a garbage token is 400 details.token', async () => {
    for (const garbage of ['garbage', 'x'.repeat(24), '../../etc/passwd']) {
      const res = await reset(ctx, garbage, NEW_PASSWORD);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('Validation error');
      expect(res.json().details).toHaveProperty('token');
    }
    const missing = await as(ctx, none).post('/api/auth/reset-password', { password: NEW_PASSWORD });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details).toHaveProperty('token');
  });

  test('an expired token is 400 details.token and changes nothing', async () => {
    const user = await createUser(ctx);
    expect((await forgot(ctx, user.email)).statusCode).toBe(200);
    const token = resetTokenOf(await outbox.next(user.email));
    const expired = await ctx.database.db
      .update(verifications)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(verifications.identifier, `reset-password:${token}`))
      .returning();
    expect(expired).toHaveLength(1);

    const res = await reset(ctx, token, NEW_PASSWORD);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Validation error');
    expect(res.json().details).toHaveProperty('token');
    expect(await sessionStatus(ctx, user.headers)).toBe(200);
    expect(await login(ctx, user.email, user.password)).toEqual(expect.any(String));
  });

  test("one user's token cannot be replayed after a second request, and each token resets only its own user", async () => {
    const alice = await createUser(ctx);
    const bob = await createUser(ctx);
    expect((await forgot(ctx, alice.email)).statusCode).toBe(200);
    const aliceToken = resetTokenOf(await outbox.next(alice.email));
    expect((await forgot(ctx, bob.email)).statusCode).toBe(200);
    const bobToken = resetTokenOf(await outbox.next(bob.email));
    expect(aliceToken).not.toBe(bobToken);

    expect((await reset(ctx, aliceToken, NEW_PASSWORD)).statusCode).toBe(200);
    // Bob is untouched by Alice's reset.
    expect(await sessionStatus(ctx, bob.headers)).toBe(200);
    expect(await login(ctx, bob.email, bob.password)).toEqual(expect.any(String));
    expect(await login(ctx, alice.email, NEW_PASSWORD)).toEqual(expect.any(String));
  });
});

describe('with SMTP_URL', () => {
  let smtp: Awaited<ReturnType<typeof smtpCapture>>;
  let ctx: TestContext;
  beforeAll(async () => {
    smtp = await smtpCapture();
    ctx = await createTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Property Management <no-reply@pms.example>' });
  });
  afterAll(async () => {
    await ctx?.close();
    await smtp?.close();
  });

  test('the reset mail goes through the SMTP server and its token resets the password', async () => {
    const user = await createUser(ctx);
    const other = { authorization: `Bearer ${await login(ctx, user.email, user.password)}` };
    const unknown = await forgot(ctx, `nobody-${Date.now()}@example.com`);
    const res = await forgot(ctx, user.email);
    expect(res.statusCode).toBe(200);
    expect(unknown.body).toBe(res.body);

    const message = await eventually(() => smtp.messages.find((m) => m.to.includes(user.email)), `an SMTP message to ${user.email}`);
    expect(message.from).toBe('no-reply@pms.example');
    expect(smtp.messages.every((m) => !m.to.some((to) => to.startsWith('nobody-')))).toBe(true);
    // Nothing is written to the outbox when SMTP is configured.
    const outbox = join(ctx.config.dataDir, 'outbox');
    expect(existsSync(outbox) ? readdirSync(outbox) : []).toEqual([]);

    const token = resetTokenOf(parseMail(message.raw));
    const weak = await reset(ctx, token, 'weakpassword');
    expect(weak.statusCode).toBe(400);
    expect(weak.json().details).toHaveProperty('password');

    expect((await reset(ctx, token, NEW_PASSWORD)).statusCode).toBe(200);
    expect(await sessionStatus(ctx, user.headers)).toBe(401);
    expect(await sessionStatus(ctx, other)).toBe(401);
    expect(await login(ctx, user.email, NEW_PASSWORD)).toEqual(expect.any(String));
    const reused = await reset(ctx, token, 'Another-Passw0rd!');
    expect(reused.statusCode).toBe(400);
    expect(reused.json().details).toHaveProperty('token');
  });
});

describe('when mail delivery fails', () => {
  // One app for the three failures: its SMTP_URL names a port where each test puts the server it needs (one that
  // refuses, one that stalls, none at all). Every message opens its own connection, so each sees only its server.
  let port: number;
  let ctx: TestContext;
  beforeAll(async () => {
    port = await deadPort();
    ctx = await createTestApp({ SMTP_URL: `smtp://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  test('an SMTP server that refuses the message: forgot-password still answers 200 with the usual body', async () => {
    const smtp = await smtpCapture({ reject: true, port });
    try {
      const user = await createUser(ctx);
      const unknown = await forgot(ctx, `nobody-${Date.now()}@example.com`);
      const res = await forgot(ctx, user.email);
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(unknown.body);
      // Delivery was attempted and refused.
      await eventually(() => (smtp.recipients.includes(user.email) ? true : undefined), 'the refused RCPT TO');
      expect(smtp.messages).toEqual([]);
      // The service is fine afterwards.
      expect(await sessionStatus(ctx, user.headers)).toBe(200);
    } finally {
      await smtp.close();
    }
  });

  test('an SMTP server that stalls does not hold up forgot-password', async () => {
    const smtp = await smtpCapture({ stall: true, port });
    try {
      const user = await createUser(ctx);
      const unknown = await forgot(ctx, `nobody-${Date.now()}@example.com`);
      const answer = forgot(ctx, user.email);
      // The server has the message and keeps the client waiting for its answer to DATA...
      await eventually(() => smtp.messages.find((m) => m.to.includes(user.email)), 'the stalled message');
      // ...yet forgot-password has answered (or answers without the server's reply: it is never given before close).
      const res = await Promise.race([answer, new Promise<'stalled'>((resolve) => setTimeout(() => resolve('stalled'), PATIENCE_MS))]);
      expect(res, 'forgot-password waited for the SMTP server').not.toBe('stalled');
      if (res === 'stalled') return;
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(unknown.body);
    } finally {
      await smtp.close();
    }
  });

  test('an SMTP server that is down: forgot-password still answers 200 with the usual body', async () => {
    const user = await createUser(ctx);
    const unknown = await forgot(ctx, `nobody-${Date.now()}@example.com`);
    const res = await forgot(ctx, user.email);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(unknown.body);
  });
});
