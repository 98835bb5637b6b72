import { Type } from '@sinclair/typebox';
import { APIError } from 'better-auth/api';
import { and, eq, isNull, lt, ne } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import type { Executor } from '../db/client.js';
import { accounts, departments, sessions, twoFactors, usedTotpCodes, users } from '../db/schema/index.js';
import { audited } from '../data/mutations.js';
import { ApiError, conflict, unauthorized, validationError } from '../errors.js';
import { actorOf } from '../http/actor.js';
import { revokeTokensOf } from '../modules/iam/api-token-resource.js';
import { named } from '../http/openapi.js';
import { Email, ErrorBody, GenericError, Message, Nullable, Strict, Timestamp, Uuid } from '../http/schemas.js';
import { authHeaders, resetRequest } from './auth.js';
import { authCall } from './context-hooks.js';
import { currentPrincipal, requireSession } from './guard.js';
import { hashing, passwordProblem, withPasswordChecked } from './passwords.js';
import { requiresSso, resetTokenHolder, userRequiresSso } from './sso.js';

const SessionAnswer = named('SignedIn', Strict({
  user: Strict({ id: Uuid(), email: Type.String(), name: Type.String() }),
  session: Strict({ token: Type.String(), expiresAt: Timestamp() }),
}));
const Password = Type.String({ minLength: 1, maxLength: 1024 });
const SSO_ONLY = () => new ApiError(403, { error: 'Single sign-on required', message: 'Your account signs in with single sign-on: use the "Sign in with …" button instead of a password' });
const errors = { 400: GenericError, 401: GenericError, 403: GenericError, 409: GenericError, 429: GenericError };
const SESSION_COOKIE = /(?:^|;\s*)((?:__Secure-)?better-auth\.session_token)=([^;]*)/;

/** Forwards the cookies Better Auth set (session, two-factor challenge, their expiry) to the client. */
function forwardCookies(reply: FastifyReply, headers: Headers, skip?: (cookie: string) => boolean) {
  const cookies = headers.getSetCookie().filter((cookie) => !skip?.(cookie));
  if (cookies.length) reply.header('set-cookie', cookies);
}

/** Better Auth's code for a failure, if it is one of its errors (its error body is untyped: library boundary). */
const codeOf = (err: unknown) => (err instanceof APIError ? String((err.body as any)?.code ?? err.status) : undefined);

const headersWithout = (request: FastifyRequest, keep: RegExp) => {
  const headers = authHeaders(request);
  headers.delete('authorization');
  const cookie = request.headers.cookie ?? '';
  headers.set('cookie', cookie.split(/;\s*/).filter((c) => keep.test(c)).join('; '));
  return headers;
};

/**
 * Better Auth failed to decrypt a stored two-factor secret or backup-code list: it was encrypted with an AUTH_SECRET this
 * instance does not have (changed without AUTH_SECRET_PREVIOUS naming the former one). Its cipher's own errors, not an
 * APIError: anything else (a database failure) stays a 500.
 */
const unreadableSecret = (err: unknown) =>
  !(err instanceof APIError) && err instanceof Error && /^(invalid tag|hex string expected|Cannot decrypt)/i.test(err.message);

/** A TOTP code is good for at most three 30-second steps (the previous, the current and the next). */
const TOTP_WINDOW_MS = 120_000;

/** Records that a user's TOTP code was accepted; false when it already was, within its window. */
async function claimTotpCode(db: Executor, userId: string, code: string): Promise<boolean> {
  await db.delete(usedTotpCodes).where(and(eq(usedTotpCodes.user_id, userId), lt(usedTotpCodes.used_at, new Date(Date.now() - TOTP_WINDOW_MS))));
  const claimed = await db.insert(usedTotpCodes).values({ user_id: userId, code }).onConflictDoNothing().returning({ code: usedTotpCodes.code });
  return claimed.length > 0;
}

/** The stored password hash of the account signing in with `email` (as Better Auth finds it), if it has one. */
async function storedPasswordOf(db: Executor, email: string): Promise<string | undefined> {
  const [row] = await db.select({ password: accounts.password }).from(accounts).innerJoin(users, eq(users.id, accounts.userId))
    .where(and(eq(users.email, email.toLowerCase()), isNull(users.deletedAt), eq(accounts.providerId, 'credential'))).limit(1);
  return row?.password ?? undefined;
}

/** CONTRACT §4: thin adapters over Better Auth's server API; no other Better Auth endpoint is reachable. */
export default async function authRoutes(app: App) {
  const { auth, database } = app;
  const tags = ['auth'];

  const sessionAnswer = async (token: string, user: { id: string; email: string; name: string }) => {
    const [row] = await database.db.select({ expiresAt: sessions.expiresAt }).from(sessions).where(eq(sessions.token, token));
    return { user: { id: user.id, email: user.email, name: user.name }, session: { token, expiresAt: row?.expiresAt ?? new Date() } };
  };

  app.post('/api/auth/login', {
    config: { rateBucket: 'auth' },
    schema: {
      tags, summary: 'Sign in with e-mail and password', security: [],
      description: 'An account that must sign in with single sign-on (`sso_required`) is refused with 403 `Single sign-on required`, after its password was checked '
        + '(a wrong password answers 401 as for anyone). Single sign-on itself starts at `GET /api/auth/sso/{provider}`.',
      body: Strict({ email: Email(), password: Password }),
      response: {
        200: named('LoginResult', Type.Union([SessionAnswer, named('TwoFactorRequired', Strict({ twoFactorRequired: Type.Literal(true) }))])),
        ...errors, 401: ErrorBody,
      },
    },
  }, async (request, reply) => {
    const { email, password } = request.body;
    try {
      const { headers, response } = await hashing.admit(async () => withPasswordChecked(await storedPasswordOf(database.db, email), password, () => auth.api.signInEmail({
        body: { email: email.toLowerCase(), password },
        headers: headersWithout(request, /^$/),
        returnHeaders: true,
      })));
      // The right password of an account that must use single sign-on: refused, with no session or challenge kept.
      if (await requiresSso(database, email)) {
        const made = (response as { token?: string }).token;
        if (made) await database.db.delete(sessions).where(eq(sessions.token, made));
        throw SSO_ONLY();
      }
      forwardCookies(reply, headers);
      // Better Auth's two-factor plugin adds this field; the endpoint's declared type does not know it.
      if ((response as any).twoFactorRedirect) return { twoFactorRequired: true as const };
      const signedIn = response as { token: string; user: { id: string; email: string; name: string } };
      return await sessionAnswer(signedIn.token, signedIn.user);
    } catch (err) {
      if (err instanceof APIError) throw unauthorized('Invalid email or password');
      throw err;
    }
  });

  app.post('/api/auth/verify-2fa', {
    config: { rateBucket: 'auth' },
    schema: {
      tags, summary: 'Complete a two-factor sign-in with a TOTP code or a backup code', security: [],
      body: Strict({ code: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })), backupCode: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }),
      response: { 200: SessionAnswer, ...errors, 401: ErrorBody },
    },
  }, async (request, reply) => {
    const { code, backupCode } = request.body;
    if ((code === undefined) === (backupCode === undefined)) throw validationError({ code: 'send either code or backupCode' });
    // Only the challenge cookie: a signed-in caller must not turn this into a two-factor confirmation.
    const headers = headersWithout(request, /^(?:__Secure-)?better-auth\.two_factor=/);
    try {
      const result = code !== undefined
        ? await auth.api.verifyTOTP({ body: { code }, headers, returnHeaders: true })
        : await auth.api.verifyBackupCode({ body: { code: backupCode! }, headers, returnHeaders: true });
      const verified = result.response as { token: string; user: { id: string; email: string; name: string } };
      // A TOTP code is accepted once (CONTRACT §13): a replay loses the session Better Auth just made for it.
      if (code !== undefined && !(await claimTotpCode(database.db, verified.user.id, code))) {
        await database.db.delete(sessions).where(eq(sessions.token, verified.token));
        throw unauthorized('Invalid code');
      }
      forwardCookies(reply, result.headers);
      return await sessionAnswer(verified.token, verified.user);
    } catch (err) {
      const failure = codeOf(err);
      if (failure === 'INVALID_CODE' || failure === 'INVALID_BACKUP_CODE') throw unauthorized('Invalid code');
      if (failure) throw unauthorized('Two-factor challenge missing, expired or locked: sign in again');
      if (unreadableSecret(err)) {
        request.log.warn({ err: { message: (err as Error).message } }, 'two-factor secret unreadable with AUTH_SECRET (see AUTH_SECRET_PREVIOUS)');
        throw unauthorized('Your two-factor authentication cannot be checked: ask an administrator to turn it off for your account, then sign in and set it up again');
      }
      throw err;
    }
  });

  app.post('/api/auth/logout', {
    onRequest: requireSession(app),
    schema: { 'x-answer-message': 'Signed out', tags, summary: 'End the current session', response: { 200: Message, ...errors } },
  }, async (request, reply) => {
    const { headers } = await auth.api.signOut({ headers: authHeaders(request), returnHeaders: true });
    forwardCookies(reply, headers);
    return { message: 'Signed out' };
  });

  app.post('/api/auth/forgot-password', {
    config: { rateBucket: 'auth' },
    schema: { 'x-answer-message': 'If the address belongs to an account, a password reset link has been sent to it', tags, summary: 'E-mail a password reset link (same answer whether or not the address exists)', security: [], body: Strict({ email: Email() }), response: { 200: Message, ...errors } },
  }, async (request) => {
    try {
      // An account that signs in with single sign-on has no password to reset: no mail (the answer stays the same).
      if (await requiresSso(database, request.body.email)) return { message: 'If the address belongs to an account, a password reset link has been sent to it' };
      await auth.api.requestPasswordReset({ body: { email: request.body.email.toLowerCase(), redirectTo: `${app.config.baseUrl}/reset-password` } });
    } catch (err) {
      request.log.error({ err: { message: (err as Error).message } }, 'password reset request failed');
    }
    return { message: 'If the address belongs to an account, a password reset link has been sent to it' };
  });

  app.post('/api/auth/reset-password', {
    config: { rateBucket: 'auth' },
    schema: { 'x-answer-message': 'Password updated; sign in with the new password', tags, summary: 'Set a new password with a reset token; ends every session of the user and revokes their API tokens', security: [], body: Strict({ token: Type.String({ minLength: 1, maxLength: 512 }), password: Password }), response: { 200: Message, ...errors } },
  }, async (request) => {
    const problem = passwordProblem(request.body.password);
    if (problem) throw validationError({ password: problem }); // checked first: a refused attempt keeps the token usable
    const holder = await resetTokenHolder(database, request.body.token);
    if (holder && (await userRequiresSso(database, holder))) throw validationError({ token: 'belongs to an account that signs in with single sign-on: it has no password to reset' });
    try {
      const actor = await actorOf(app, request);
      await authCall(() => resetRequest.run(actor, () => hashing.admit(() => auth.api.resetPassword({ body: { token: request.body.token, newPassword: request.body.password } }))));
    } catch (err) {
      if (err instanceof APIError) throw validationError({ token: 'is invalid, already used or expired' });
      throw err;
    }
    return { message: 'Password updated; sign in with the new password' };
  });

  app.post('/api/auth/change-password', {
    config: { rateBucket: 'auth' },
    onRequest: requireSession(app),
    schema: { 'x-answer-message': 'Password changed', tags, summary: "Change the signed-in user's password; their other sessions end and their API tokens are revoked", body: Strict({ currentPassword: Password, newPassword: Password }), response: { 200: Message, ...errors } },
  }, async (request) => {
    const principal = await currentPrincipal(app, request);
    const problem = passwordProblem(request.body.newPassword);
    if (problem) throw validationError({ newPassword: problem });
    try {
      await hashing.admit(() => auth.api.changePassword({ body: { currentPassword: request.body.currentPassword, newPassword: request.body.newPassword, revokeOtherSessions: false }, headers: authHeaders(request) }));
    } catch (err) {
      if (codeOf(err) === 'INVALID_PASSWORD') throw validationError({ currentPassword: 'is not the current password' });
      throw err;
    }
    // Other sessions end; the calling one stays valid (Better Auth's own revocation would rotate it too). The user's API
    // tokens are revoked, each audited.
    await audited(database.db, await actorOf(app, request), async (work) => {
      await work.tx.delete(sessions).where(and(eq(sessions.userId, principal.user.id), ne(sessions.id, principal.session.id)));
      await revokeTokensOf(work, principal.user.id);
    });
    return { message: 'Password changed' };
  });

  app.get('/api/auth/session', {
    onRequest: requireSession(app, { tokens: true }),
    schema: {
      tags, summary: 'The signed-in user, their session and their module permissions',
      response: {
        200: named('CurrentSession', Strict({
          user: Strict({
            id: Uuid(), email: Type.String(), name: Type.String(), image: Nullable(Type.String()), emailVerified: Type.Boolean(),
            twoFactorEnabled: Type.Boolean(), department: Nullable(Strict({ id: Uuid(), name: Type.String() })),
          }),
          session: Strict({ expiresAt: Timestamp() }),
          permissions: Type.Array(Strict({ module: Type.String(), can_read: Type.Boolean(), can_write: Type.Boolean(), can_delete: Type.Boolean() })),
        })),
        ...errors,
      },
    },
  }, async (request) => {
    const principal = await currentPrincipal(app, request);
    const [row] = await database.db
      .select({ department: { id: departments.id, name: departments.name } })
      .from(users)
      .leftJoin(departments, eq(departments.id, users.departmentId))
      .where(eq(users.id, principal.user.id));
    return {
      user: { ...principal.user, department: row?.department ?? null },
      session: { expiresAt: principal.session.expiresAt },
      permissions: principal.permissions,
    };
  });

  /**
   * Better Auth replaces the session when two-factor is confirmed or disabled; the caller keeps theirs
   * (a bearer client could not follow the new cookie): the new session row takes the old token.
   */
  const keepCallerSession = async (callerToken: string, headers: Headers) => {
    const rotated = headers.getSetCookie().map((c) => SESSION_COOKIE.exec(c)?.[2]).find(Boolean);
    const newToken = rotated ? decodeURIComponent(rotated).split('.')[0] : undefined;
    if (newToken) await database.db.update(sessions).set({ token: callerToken }).where(eq(sessions.token, newToken));
  };

  const twoFactorPassword = async (request: FastifyRequest, call: () => Promise<unknown>) => {
    try {
      return await call();
    } catch (err) {
      if (codeOf(err) === 'INVALID_PASSWORD') throw validationError({ password: 'is not the current password' });
      throw err;
    }
  };

  app.post('/api/auth/two-factor/enable', {
    config: { rateBucket: 'auth' },
    onRequest: requireSession(app),
    schema: {
      tags, summary: 'Start enabling two-factor: returns the TOTP URI and 10 backup codes; pending until confirmed',
      body: Strict({ password: Password }),
      response: { 200: Strict({ totpURI: Type.String(), backupCodes: Type.Array(Type.String()) }), ...errors },
    },
  }, async (request) => {
    const principal = await currentPrincipal(app, request);
    if (principal.user.twoFactorEnabled) throw conflict('Two-factor authentication is already enabled; disable it first to set it up again');
    const result = (await twoFactorPassword(request, () =>
      auth.api.enableTwoFactor({ body: { password: request.body.password }, headers: authHeaders(request) }),
    )) as { totpURI: string; backupCodes: string[] };
    return { totpURI: result.totpURI, backupCodes: result.backupCodes };
  });

  app.post('/api/auth/two-factor/confirm', {
    config: { rateBucket: 'auth' },
    onRequest: requireSession(app),
    schema: { 'x-answer-message': 'Two-factor authentication enabled', tags, summary: 'Confirm two-factor with a code from the authenticator; from now on sign-in asks for a code', body: Strict({ code: Type.String({ minLength: 1, maxLength: 32 }) }), response: { 200: Message, ...errors } },
  }, async (request, reply) => {
    const principal = await currentPrincipal(app, request);
    if (principal.user.twoFactorEnabled) throw conflict('Two-factor authentication is already enabled');
    const [pending] = await database.db.select({ id: twoFactors.id }).from(twoFactors).where(eq(twoFactors.userId, principal.user.id));
    if (!pending) throw conflict('Start with POST /api/auth/two-factor/enable');
    let headers: Headers;
    try {
      ({ headers } = await auth.api.verifyTOTP({ body: { code: request.body.code }, headers: authHeaders(request), returnHeaders: true }));
    } catch (err) {
      if (codeOf(err) === 'INVALID_CODE') throw validationError({ code: 'is not the current code of the authenticator' });
      if (unreadableSecret(err)) throw conflict('This two-factor set-up can no longer be read: start again with POST /api/auth/two-factor/enable');
      throw err;
    }
    // The confirming code is spent too: it cannot sign in a second time (CONTRACT §13).
    await claimTotpCode(database.db, principal.user.id, request.body.code);
    await keepCallerSession(principal.session.token, headers);
    forwardCookies(reply, headers, (cookie) => SESSION_COOKIE.test(cookie));
    return { message: 'Two-factor authentication enabled' };
  });

  app.post('/api/auth/two-factor/disable', {
    config: { rateBucket: 'auth' },
    onRequest: requireSession(app),
    schema: { 'x-answer-message': 'Two-factor authentication disabled', tags, summary: 'Disable two-factor authentication', body: Strict({ password: Password }), response: { 200: Message, ...errors } },
  }, async (request, reply) => {
    const principal = await currentPrincipal(app, request);
    const { headers } = (await twoFactorPassword(request, () =>
      auth.api.disableTwoFactor({ body: { password: request.body.password }, headers: authHeaders(request), returnHeaders: true }),
    )) as { headers: Headers };
    await keepCallerSession(principal.session.token, headers);
    forwardCookies(reply, headers, (cookie) => SESSION_COOKIE.test(cookie));
    return { message: 'Two-factor authentication disabled' };
  });
}


