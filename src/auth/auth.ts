import { AsyncLocalStorage } from 'node:async_hooks';
import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { pgTable } from 'drizzle-orm/pg-core';
import { bearer, twoFactor } from 'better-auth/plugins';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config.js';
import { type Actor, SYSTEM } from '../data/actor.js';
import { audited } from '../data/mutations.js';
import type { Database } from '../db/client.js';
import { accounts, sessions, twoFactors, userColumns, verifications } from '../db/schema/index.js';
import type { BackgroundWork } from '../background.js';
import type { Mailer } from '../mail/mailer.js';
import { passwordResetMail } from '../mail/templates.js';
import { revokeTokensOf } from '../modules/iam/api-token-resource.js';
import { countCalls, trackStorages } from './context-hooks.js';
import { bcryptHasher } from './passwords.js';
import { ssoSessions } from './sso-plugin.js';

/** The request a password reset comes from (its IP and agent), for the audit of what the reset revokes. */
export const resetRequest = new AsyncLocalStorage<Actor>();

/** Header through which we hand Better Auth the client IP Fastify resolved (honouring TRUST_PROXY). */
const CLIENT_IP_HEADER = 'x-pms-client-ip';

/**
 * Users that are not deleted (an updatable view over `users`): Better Auth works only through it, so a deleted user
 * cannot sign in, ask for a reset or be found by an old reset token, and never gets a credential again.
 */
const liveUsers = pgTable('live_users', userColumns());

export function createAuth(config: Config, database: Database, mailer: Mailer, log: FastifyBaseLogger, background: BackgroundWork) {
  const auth = betterAuth({
    appName: 'Property Management',
    secret: config.authSecret,
    baseURL: config.baseUrl,
    // Never mounted: our /api/auth routes are adapters over auth.api, so no other Better Auth endpoint is reachable.
    basePath: '/api/auth',
    database: drizzleAdapter(database.db, {
      provider: 'pg',
      schema: { user: liveUsers, session: sessions, account: accounts, verification: verifications, twoFactor: twoFactors },
    }),
    emailAndPassword: {
      enabled: true,
      disableSignUp: true,
      minPasswordLength: 8,
      maxPasswordLength: 128,
      revokeSessionsOnPasswordReset: true,
      // A reset also revokes the user's API tokens (audited as the user, from the request's address).
      onPasswordReset: async ({ user }) => {
        await audited(database.db, { ...(resetRequest.getStore() ?? SYSTEM), userId: user.id }, (work) => revokeTokensOf(work, user.id));
      },
      resetPasswordTokenExpiresIn: 3600,
      password: bcryptHasher(config.bcryptCost),
      sendResetPassword: async ({ user, token }) => {
        const url = `${config.baseUrl}/reset-password?token=${encodeURIComponent(token)}`;
        // Fire and forget: the answer of forgot-password (and its timing) never depends on mail delivery,
        // and a slow or stalled SMTP server must not hold the request (Better Auth awaits this callback).
        background.track(mailer.send({ to: user.email, ...passwordResetMail(user.name, url) }).catch((err: unknown) => {
          log.error({ err: { message: (err as Error).message }, to: user.email }, 'password reset mail failed');
        }));
      },
    },
    session: {
      expiresIn: config.sessionTtlHours * 3600,
      updateAge: Math.min(24 * 3600, Math.floor((config.sessionTtlHours * 3600) / 2)),
    },
    user: { deleteUser: { enabled: false } },
    account: { accountLinking: { enabled: false } },
    rateLimit: { enabled: false }, // our own limiter covers the routes (Better Auth's does not see auth.api calls)
    telemetry: { enabled: false },
    advanced: {
      database: { generateId: () => uuidv7() },
      useSecureCookies: config.production,
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', path: '/' },
    },
    logger: {
      log: (level, message) => {
        const entry = { component: 'better-auth' };
        if (level === 'error') log.error(entry, message);
        else if (level === 'warn') log.warn(entry, message);
        else log.debug(entry, message);
      },
    },
    plugins: [
      twoFactor({
        issuer: 'Property Management',
        totpOptions: { digits: 6, period: 30 },
        backupCodeOptions: { amount: 10 },
        twoFactorCookieMaxAge: 600,
      }),
      bearer(),
      ssoSessions(),
    ],
  });
  // Better Auth's context storages are disabled whenever none of its calls is running (see context-hooks.ts).
  void trackStorages([resetRequest]);
  return Object.assign(auth, { api: countCalls(auth.api) });
}

export type Auth = ReturnType<typeof createAuth>;

/** The request's headers as a Fetch `Headers`, plus the client IP. */
export function authHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
    else headers.set(name, String(value));
  }
  headers.set(CLIENT_IP_HEADER, request.ip);
  return headers;
}
