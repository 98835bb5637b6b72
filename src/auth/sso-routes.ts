import { Type } from '@sinclair/typebox';
import { APIError } from 'better-auth/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as oidc from 'openid-client';
import { v7 as uuidv7 } from 'uuid';
import type { App } from '../types.js';
import { audited } from '../data/mutations.js';
import { databaseError, PG_UNIQUE_VIOLATION } from '../errors.js';
import { actorOf } from '../http/actor.js';
import { named } from '../http/openapi.js';
import { errorResponses, Strict } from '../http/schemas.js';
import { provisionSsoUser } from '../modules/iam/users.js';
import { authHeaders } from './auth.js';
import { clientOf, enabledProvider, enabledProviders, rememberSignIn, redirectUriOf, type SsoProvider, STATE_TTL_MS, takeSignIn, userByEmail } from './sso.js';

/** The cookie that binds a sign-in in progress to the browser that started it (its value is the state). */
const STATE_COOKIE = 'pms_sso_state';
const COOKIE_PATH = '/api/auth/sso';

/** A refused sign-in: what the person reads on the sign-in page, and a short reason for the log. */
class Refusal extends Error {
  constructor(readonly reason: string, readonly said: string) {
    super(said);
  }
}

const REFUSED = {
  unavailable: () => new Refusal('provider unknown or disabled', 'This sign-in option is not available. Sign in another way or ask an administrator.'),
  unreachable: () => new Refusal('discovery failed', 'The identity provider could not be reached. Try again in a moment.'),
  cancelled: () => new Refusal('provider answered an error', 'The identity provider did not sign you in. Try again.'),
  expired: () => new Refusal('state missing, expired, replayed or from another browser', 'This sign-in has expired or was already used. Start again.'),
  invalid: () => new Refusal('answer not valid', 'The identity provider\'s answer could not be verified. Try again, or ask an administrator.'),
  noEmail: () => new Refusal('no e-mail claim', 'Your identity provider did not share your e-mail address. Ask an administrator.'),
  unverified: () => new Refusal('e-mail not verified', 'Your identity provider has not verified your e-mail address. Ask an administrator.'),
  noAccount: () => new Refusal('no active account', 'There is no active account for you here. Ask an administrator to give you access.'),
};

const ProviderParams = Strict({ provider: Type.String({ minLength: 1, maxLength: 100, description: 'The provider\'s id (`oidc` for the one set by environment)' }) });
const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 512 })),
}, { additionalProperties: true, description: 'What the identity provider sends back (code and state, or an error); other parameters are ignored' });
const Redirect = (description: string) => ({ description, type: 'null' });
const SsoProviderList = named('SsoProviderList', Strict({
  data: Type.Array(Strict({ id: Type.String(), name: Type.String() })),
}, { examples: [{ data: [{ id: 'oidc', name: 'Google Workspace' }, { id: '0190f5a2-7c1e-7d3a-9b1c-2f4e6a8b0c1d', name: 'Okta' }] }] }));

const TWO_FACTOR_RULE = 'An SSO sign-in is not asked for the service\'s two-factor code: the identity provider owns authentication and its MFA.';

/** The claims the sign-in needs: from the ID token, else (a provider that keeps them there) the UserInfo endpoint. */
async function identityOf(client: oidc.Configuration, tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>) {
  const claims = tokens.claims();
  if (!claims) throw REFUSED.invalid();
  const found: Record<string, unknown> = { ...claims };
  if (typeof claims.email !== 'string' || claims.email_verified === undefined) {
    // The answer must be about the ID token's subject (openid-client checks it).
    const info = await oidc.fetchUserInfo(client, tokens.access_token, claims.sub).catch(() => undefined);
    for (const claim of ['email', 'email_verified', 'name'] as const) found[claim] ??= info?.[claim];
  }
  const email = typeof found.email === 'string' ? found.email.trim().toLowerCase() : '';
  if (!email || email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email)) throw REFUSED.noEmail();
  // Entra ID sends no email_verified; its `xms_edov` says the e-mail's domain is verified by the tenant.
  const verified = found.email_verified === true || found.email_verified === 'true' || found.xms_edov === true || found.xms_edov === '1';
  if (!verified) throw REFUSED.unverified();
  const name = typeof found.name === 'string' && found.name.trim() ? found.name.trim().slice(0, 200) : email.split('@')[0];
  return { email, name };
}

/**
 * Single sign-on with OpenID Connect (authorization code flow with PKCE, state and nonce; tokens validated by
 * openid-client). A signed-in person gets a normal session; every failure goes back to the sign-in page with a reason.
 */
export default async function ssoRoutes(app: App) {
  const { database, config } = app;
  const tags = ['auth'];
  // The plugin's endpoint declares no body schema (it is server-only): its input is typed here.
  const ssoSession = app.auth.api.ssoSession as unknown as (input: { body: { userId: string }; headers: Headers; returnHeaders: true }) => Promise<{ headers: Headers }>;
  const signInPage = (message: string) => `${config.baseUrl}/login?sso_error=${encodeURIComponent(message)}`;
  const stateCookie = (value: string, maxAgeSeconds: number) =>
    `${STATE_COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${config.production ? '; Secure' : ''}`;

  const refuse = (request: FastifyRequest, reply: FastifyReply, provider: string, refusal: Refusal) => {
    request.log.warn({ sso: { provider, outcome: 'refused', reason: refusal.reason } }, 'sso sign-in refused');
    return reply.header('set-cookie', stateCookie('', 0)).redirect(signInPage(refusal.said), 302);
  };

  app.get('/api/auth/sso', {
    schema: {
      tags, summary: 'The identity providers staff may sign in with', security: [],
      description: 'Enabled providers, for the sign-in page\'s *Sign in with …* buttons: the one set by environment (id `oidc`) first, then those administrators configured, by name. '
        + `Each button opens \`GET /api/auth/sso/{id}\`. ${TWO_FACTOR_RULE}`,
      response: { 200: SsoProviderList, ...errorResponses },
    },
  }, async () => ({ data: await enabledProviders(database, config) }));

  // Starting checks no credential (the read limit bounds it); the callback, which does, counts as a sign-in.
  app.get('/api/auth/sso/:provider', {
    schema: {
      tags, summary: 'Start signing in with an identity provider', security: [], params: ProviderParams,
      description: 'Redirects (302) the browser to the identity provider, with state, nonce and PKCE; the state is single-use, expires after '
        + `${STATE_TTL_MS / 60000} minutes and is bound to this browser by an httpOnly cookie. An unknown or disabled provider, or one that cannot be reached, `
        + 'redirects to the console\'s sign-in page with `sso_error` saying why.',
      response: { 302: Redirect('To the identity provider, or back to the sign-in page with `sso_error`'), ...errorResponses },
    },
  }, async (request, reply) => {
    const id = request.params.provider;
    const provider = await enabledProvider(database, config, id);
    if (!provider) return refuse(request, reply, id, REFUSED.unavailable());
    let client: oidc.Configuration;
    try {
      client = await clientOf(provider, config.production);
    } catch (err) {
      request.log.warn({ err: { message: (err as Error).message }, sso: { provider: id } }, 'sso discovery failed');
      return refuse(request, reply, id, REFUSED.unreachable());
    }
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    await rememberSignIn(database, state, { provider: provider.id, codeVerifier, nonce });
    const target = oidc.buildAuthorizationUrl(client, {
      redirect_uri: redirectUriOf(config, provider.id), scope: provider.scopes, state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
    });
    return reply.header('set-cookie', stateCookie(state, STATE_TTL_MS / 1000)).redirect(target.href, 302);
  });

  app.get('/api/auth/sso/:provider/callback', {
    config: { rateBucket: 'auth' },
    schema: {
      tags, summary: 'Where the identity provider sends the browser back', security: [], params: ProviderParams, querystring: CallbackQuery,
      description: 'Checks the state (single-use, unexpired, this browser\'s), exchanges the code (PKCE) and validates the ID token (issuer, audience, '
        + 'expiry, signature, nonce). The `email` claim must be present and `email_verified` true; it names an existing user (case-insensitively). '
        + 'An unknown e-mail is refused unless the provider provisions users just in time (then the user is created with its default department and '
        + `grants); a deleted user is refused. Success: a session cookie and a redirect to the console. ${TWO_FACTOR_RULE} `
        + 'Any failure redirects to the console\'s sign-in page with `sso_error`, a reason a person can read.',
      response: { 302: Redirect('To the console, signed in; or to the sign-in page with `sso_error`'), ...errorResponses },
    },
  }, async (request, reply) => {
    const id = request.params.provider;
    const query = request.query as Record<string, unknown>;
    const cookieState = request.cookies[STATE_COOKIE];
    const state = typeof query.state === 'string' ? query.state : undefined;
    // Taken whatever happens next, so a state is good for one callback only.
    const pending = state ? await takeSignIn(database, state) : undefined;
    try {
      if (typeof query.error === 'string') throw REFUSED.cancelled();
      if (!state || !pending || cookieState !== state || pending.provider !== id) throw REFUSED.expired();
      const provider = await enabledProvider(database, config, id);
      if (!provider) throw REFUSED.unavailable();
      const client = await clientOf(provider, config.production).catch(() => {
        throw REFUSED.unreachable();
      });
      const redirectUri = redirectUriOf(config, provider.id);
      const here = new URL(redirectUri);
      here.search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      const tokens = await oidc.authorizationCodeGrant(client, here, {
        pkceCodeVerifier: pending.codeVerifier, expectedState: state, expectedNonce: pending.nonce, idTokenExpected: true,
      }, { redirect_uri: redirectUri }).catch((err: unknown) => {
        request.log.warn({ err: { message: (err as Error).message }, sso: { provider: id } }, 'sso answer not valid');
        throw REFUSED.invalid();
      });
      const identity = await identityOf(client, tokens);
      const userId = await signInUser(request, provider, identity);
      // The user deleted a moment ago: Better Auth no longer finds them.
      const { headers } = await ssoSession({ body: { userId }, headers: authHeaders(request), returnHeaders: true }).catch((err: unknown) => {
        if (err instanceof APIError) throw REFUSED.noAccount();
        throw err;
      });
      request.log.info({ sso: { provider: id, outcome: 'signed-in', userId } }, 'sso sign-in');
      return reply.header('set-cookie', [stateCookie('', 0), ...headers.getSetCookie()]).redirect(`${config.baseUrl}/`, 302);
    } catch (err) {
      if (err instanceof Refusal) return refuse(request, reply, id, err);
      throw err;
    }
  });

  /** The user the identity stands for: an existing live one, or (just-in-time provisioning) a new one. */
  async function signInUser(request: FastifyRequest, provider: SsoProvider, identity: { email: string; name: string }): Promise<string> {
    const known = await userByEmail(database, identity.email);
    if (known.live) return known.live;
    // A deleted user stays out, whatever the provider provisions.
    if (known.deleted || !provider.jit) throw REFUSED.noAccount();
    const id = uuidv7();
    const actor = { ...(await actorOf(app, request)), userId: id };
    try {
      await audited(database.db, actor, (work) => provisionSsoUser(work, {
        id, email: identity.email, name: identity.name, departmentId: provider.jitDepartmentId, grants: provider.jitGrants,
      }));
    } catch (err) {
      // The same person's other tab provisioned them a moment ago: theirs is the account.
      const again = databaseError(err)?.code === PG_UNIQUE_VIOLATION ? await userByEmail(database, identity.email) : undefined;
      if (again?.live) return again.live;
      throw err;
    }
    return id;
  }
}
