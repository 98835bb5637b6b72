import { createAuthEndpoint } from 'better-auth/api';
import { setSessionCookie } from 'better-auth/cookies';
import type { BetterAuthPlugin } from 'better-auth';

/**
 * Signing in with an identity provider ends in a normal Better Auth session (the same guard, session list, sign-out
 * and expiry as a password sign-in). The protocol runs in src/auth/sso.ts; once it has vouched for a user, this
 * server-only endpoint (never mounted: see `basePath` in auth.ts) makes their session and its cookie. Its path is not
 * one of the two-factor plugin's sign-in paths: an SSO sign-in is not asked for the service's TOTP code.
 */
export const ssoSessions = () => ({
  id: 'pms-sso',
  endpoints: {
    ssoSession: createAuthEndpoint('/sso/session', { method: 'POST', metadata: { SERVER_ONLY: true } }, async (ctx) => {
      const { userId } = ctx.body as { userId: string };
      const user = await ctx.context.internalAdapter.findUserById(userId);
      if (!user) throw ctx.error('UNAUTHORIZED', { message: 'No such user' });
      const session = await ctx.context.internalAdapter.createSession(user.id);
      await setSessionCookie(ctx, { session, user });
      return ctx.json({ token: session.token });
    }),
  },
}) satisfies BetterAuthPlugin;
