import { eq } from 'drizzle-orm';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../app.js';
import { moduleAccess, type ModuleName } from '../db/schema/index.js';
import { forbidden, unauthorized } from '../errors.js';
import { authHeaders } from './auth.js';

export type Flag = 'can_read' | 'can_write' | 'can_delete';
export type Permission = { module: ModuleName; can_read: boolean; can_write: boolean; can_delete: boolean };

/** Who is calling: the signed-in user, their session and their module permissions. */
export type Principal = {
  user: { id: string; email: string; name: string; image: string | null; emailVerified: boolean; twoFactorEnabled: boolean };
  session: { id: string; token: string; expiresAt: Date };
  permissions: Permission[];
};

declare module 'fastify' {
  interface FastifyRequest {
    principalPromise?: Promise<Principal | null>;
  }
  interface FastifyContextConfig {
    /** Modules whose permission guards this route (any one of them suffices). */
    modules?: ModuleName[];
  }
}

/** CONTRACT §5: the flag a method needs. */
export function flagOf(method: string): Flag {
  if (method === 'GET' || method === 'HEAD') return 'can_read';
  if (method === 'DELETE') return 'can_delete';
  return 'can_write';
}

/** The caller's principal (session cookie or bearer token), looked up once per request. */
export function principalOf(app: FastifyInstance, request: FastifyRequest): Promise<Principal | null> {
  request.principalPromise ??= (async () => {
    if (!request.headers.cookie && !request.headers.authorization) return null;
    const found = await app.auth.api.getSession({ headers: authHeaders(request) }).catch(() => null);
    if (!found) return null;
    const permissions = await app.database.db
      .select({ module: moduleAccess.module, can_read: moduleAccess.can_read, can_write: moduleAccess.can_write, can_delete: moduleAccess.can_delete })
      .from(moduleAccess)
      .where(eq(moduleAccess.user_id, found.user.id));
    const user = found.user as Principal['user'];
    return {
      user: { id: user.id, email: user.email, name: user.name, image: user.image ?? null, emailVerified: user.emailVerified, twoFactorEnabled: !!user.twoFactorEnabled },
      session: { id: found.session.id, token: found.session.token, expiresAt: new Date(found.session.expiresAt) },
      permissions,
    };
  })();
  return request.principalPromise;
}

/** The principal of a request that passed a guard. */
export async function currentPrincipal(app: FastifyInstance, request: FastifyRequest): Promise<Principal> {
  const principal = await principalOf(app, request);
  if (!principal) throw unauthorized();
  return principal;
}

export const can = (principal: Principal, modules: ModuleName[], flag: Flag) =>
  principal.permissions.some((p) => modules.includes(p.module) && p[flag]);

/** Hook: a signed-in user is required (no module permission). */
export const requireSession = (app: FastifyInstance) => async (request: FastifyRequest) => {
  if (!(await principalOf(app, request))) throw unauthorized();
};

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
      if (!can(principal, list, flagOf(request.method))) throw forbidden();
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
