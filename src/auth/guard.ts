import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import { allOf } from '../data/filters.js';
import { ownersScope, type ScopeOption } from '../data/list.js';
import { ownersWith, recordScopeOf, type RecordScopeOf } from '../data/owners.js';
import type { Resource } from '../data/resource.js';
import type { Executor } from '../db/client.js';
import { moduleAccess, type ModuleName, users } from '../db/schema/index.js';
import { forbidden, unauthorized } from '../errors.js';
import { clock } from '../clock.js';
import { bearerToken, findTokenHolder } from './api-tokens.js';
import { authHeaders } from './auth.js';

export type Flag = 'can_read' | 'can_write' | 'can_delete';
export type Permission = { module: ModuleName; can_read: boolean; can_write: boolean; can_delete: boolean };

/**
 * Who is calling: the signed-in user, their session and their module permissions; or, for an API token, the user who
 * created it, the token (as `apiToken`; `session` then describes the token) and the token's permissions.
 */
export type Principal = {
  user: { id: string; email: string; name: string; image: string | null; emailVerified: boolean; twoFactorEnabled: boolean };
  session: { id: string; token: string; expiresAt: Date };
  permissions: Permission[];
  apiToken?: { id: string; name: string };
  /**
   * Which crm records the caller sees: their crm access's scope and their department. An API token has its
   * creator's. Administrators (iam write) always see every record, whatever their crm row says.
   */
  recordScope: RecordScopeOf;
};

/** An API token without an expiry, described as a session: it lasts until revoked. */
const NEVER = new Date('9999-12-31T23:59:59.999Z');

declare module 'fastify' {
  interface FastifyRequest {
    principalPromise?: Promise<Principal | null>;
    /** The users whose crm records the caller sees (`ownersOf`), once per request. */
    ownersPromise?: Promise<string[] | undefined>;
  }
  interface FastifyContextConfig {
    /** Modules whose permission guards this route (any one of them suffices). */
    modules?: ModuleName[];
    /** The flag the route needs when it is not its method's (the trash needs delete to read and to restore). */
    flag?: Flag;
  }
}

/** CONTRACT §5: the flag a method needs. */
export function flagOf(method: string): Flag {
  if (method === 'GET' || method === 'HEAD') return 'can_read';
  if (method === 'DELETE') return 'can_delete';
  return 'can_write';
}

const SESSION_COOKIE = /(?:^|;\s*)(?:__Secure-)?better-auth\.session_token=([^;]*)/;

/** What identifies the caller's session in a request, as sent: the bearer header and the session cookie. */
function credentialOf(request: FastifyRequest): string | undefined {
  const bearer = request.headers.authorization;
  const cookie = request.headers.cookie ? SESSION_COOKIE.exec(request.headers.cookie)?.[1] : undefined;
  return bearer || cookie ? `${bearer ?? ''}\n${cookie ?? ''}` : undefined;
}

/** The caller's principal (session cookie or bearer token), looked up once per request and cached across requests. */
export function principalOf(app: FastifyInstance, request: FastifyRequest): Promise<Principal | null> {
  request.principalPromise ??= (async () => {
    const credential = credentialOf(request);
    if (!credential) return null;
    const cached = await app.principals.current(credential);
    if (cached) {
      if (cached.apiToken) app.tokenUse.touch(cached.apiToken.id, clock.now());
      return cached;
    }
    const version = app.principals.version;
    const apiToken = bearerToken(request.headers.authorization);
    if (apiToken) {
      const holder = await findTokenHolder(app.database.db, apiToken, clock.now());
      if (!holder) return null;
      const expiresAt = holder.token.expiresAt ?? NEVER;
      const principal: Principal = {
        user: holder.user,
        session: { id: `token:${holder.token.id}`, token: '', expiresAt },
        permissions: holder.permissions,
        apiToken: { id: holder.token.id, name: holder.token.name },
        recordScope: await recordScopeOf(app.database.db, holder.user.id),
      };
      app.tokenUse.touch(holder.token.id, clock.now());
      app.principals.set(credential, { userId: holder.user.id, sessionId: principal.session.id }, expiresAt, principal, version);
      return principal;
    }
    const found = await app.auth.api.getSession({ headers: authHeaders(request) }).catch(() => null);
    if (!found) return null;
    const [permissions, recordScope] = await Promise.all([
      app.database.db
        .select({ module: moduleAccess.module, can_read: moduleAccess.can_read, can_write: moduleAccess.can_write, can_delete: moduleAccess.can_delete })
        .from(moduleAccess)
        .where(eq(moduleAccess.user_id, found.user.id)),
      recordScopeOf(app.database.db, found.user.id),
    ]);
    const user = found.user as Principal['user'];
    const principal: Principal = {
      user: { id: user.id, email: user.email, name: user.name, image: user.image ?? null, emailVerified: user.emailVerified, twoFactorEnabled: !!user.twoFactorEnabled },
      session: { id: found.session.id, token: found.session.token, expiresAt: new Date(found.session.expiresAt) },
      permissions,
      recordScope,
    };
    app.principals.set(credential, { userId: user.id, sessionId: principal.session.id }, principal.session.expiresAt, principal, version);
    return principal;
  })();
  return request.principalPromise;
}

/** The principal of a request that passed a guard. */
export async function currentPrincipal(app: FastifyInstance, request: FastifyRequest): Promise<Principal> {
  const principal = await principalOf(app, request);
  if (!principal) throw unauthorized();
  return principal;
}

/**
 * The users whose crm records the caller sees: undefined for every record (scope `all`); themselves (`own`,
 * or `department` without a department); everyone now in their department, deleted users included (their records
 * stay the department's). Read once per request and never cached beyond it, so a colleague's move to another
 * department changes what the caller sees from the next request on.
 */
export function ownersOf(app: FastifyInstance, request: FastifyRequest): Promise<string[] | undefined> {
  request.ownersPromise ??= currentPrincipal(app, request).then((principal) => ownersWith(app.database.db, principal.user.id, principal.recordScope));
  return request.ownersPromise;
}

/**
 * The caller's record scope on `resource` for the shared list, detail, export and write machinery: `{}` when they see
 * every record of it (their scope is `all`, or it declares no `ownership`), else the scope `ownersScope` builds.
 */
export async function recordScope(app: FastifyInstance, request: FastifyRequest, resource: Resource): Promise<ScopeOption> {
  if (resource.walledBy) {
    const principal = await currentPrincipal(app, request);
    const readsEveryCrmRecord = principal.recordScope.scope === 'all' && can(principal, ['crm'], 'can_read');
    if (readsEveryCrmRecord || can(principal, ['iam'], 'can_write')) return {};
    return { scope: allOf([resource.scope, resource.walledBy()]), scopeKey: `${resource.name}|crm walled` };
  }
  if (!resource.ownership?.length || resource.module !== 'crm') return {};
  return ownersScope(resource, await ownersOf(app, request));
}

export const can = (principal: Principal, modules: ModuleName[], flag: Flag) =>
  principal.permissions.some((p) => modules.includes(p.module) && p[flag]);

/**
 * Hook: a signed-in user is required (no module permission). The account's own settings (password, two-factor,
 * sessions, tokens) need a real sign-in: an API token is refused there unless `tokens` says it may.
 */
export const requireSession = (app: FastifyInstance, options: { tokens?: boolean } = {}) => Object.assign(async (request: FastifyRequest) => {
  const principal = await principalOf(app, request);
  if (!principal) throw unauthorized();
  if (principal.apiToken && !options.tokens) throw forbidden('API tokens cannot manage accounts: sign in with e-mail and password');
}, { [SESSION_GUARD]: { tokens: options.tokens ?? false } });

/** Marks a `requireSession` hook, so the OpenAPI document reads a route's access off the guard it really has. */
export const SESSION_GUARD = Symbol('session guard');

/**
 * Registers routes of a module: every route inside is guarded by session + the method's flag on one of
 * `modules`, before validation and before any lookup (CONTRACT §5, §12 check order).
 */
export function moduleRoutes(modules: ModuleName | ModuleName[], routes: (app: App) => Promise<void>) {
  const list = Array.isArray(modules) ? modules : [modules];
  return async (app: App) => {
    app.addHook('onRoute', (route) => {
      route.config = { ...route.config, modules: list };
      route.schema = { ...route.schema, tags: route.schema?.tags ?? [list[0]] };
    });
    app.addHook('onRequest', async (request) => {
      const principal = await principalOf(app, request);
      if (!principal) throw unauthorized();
      if (!can(principal, list, request.routeOptions.config.flag ?? flagOf(request.method))) throw forbidden();
    });
    await routes(app);
  };
}

/** Refuses at start-up any module path registered outside moduleRoutes: no route can skip its guard. */
export function enforceModuleGuards(app: FastifyInstance) {
  const guarded = /^\/api\/(cms|crm|iam)(\/|$)|^\/api\/projects\/inventory|^\/api\/uploads/;
  const routes: { url: string; method: unknown; config?: unknown }[] = [];
  app.addHook('onRoute', (route) => {
    if (guarded.test(route.url)) routes.push(route);
  });
  // Checked once every plugin's onRoute hook has had its say.
  app.addHook('onReady', async () => {
    const unguarded = routes.find((route) => !(route.config as { modules?: unknown } | undefined)?.modules);
    if (unguarded) throw new Error(`${unguarded.method} ${unguarded.url} must be registered through moduleRoutes()`);
  });
}

/** Changes the caller's own principal (session, password, two-factor state). */
const CHANGES_CALLER = /^\/api\/auth\/(logout|change-password|two-factor\/)/;
/** May change anyone's principal. */
const CHANGES_ANYONE = /^\/api\/(auth\/(reset-password|tokens)|iam\/(users|module-access|api-tokens))/;

/**
 * This instance forgets a cached principal as soon as its own request changed it, before answering; every instance
 * (this one too) also hears of it from the database at commit.
 */
export function forgetChangedPrincipals(app: FastifyInstance) {
  // Synchronous for reads (a callback, not a promise): it runs on every answer.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.method === 'GET' || request.method === 'HEAD' || reply.statusCode >= 400) return done(null, payload);
    const route = request.routeOptions.url ?? '';
    if (CHANGES_ANYONE.test(route)) app.principals.clear();
    else if (CHANGES_CALLER.test(route) && request.principalPromise) {
      return void request.principalPromise.catch(() => null).then((principal) => {
        if (principal) app.principals.forgetUser(principal.user.id);
        done(null, payload);
      });
    }
    done(null, payload);
  });
}
