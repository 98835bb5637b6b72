import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { forbidden } from '../errors.js';

const STATE_CHANGING = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
const SESSION_COOKIE = /(?:^|;\s*)(?:__Secure-)?better-auth\.session_token=/;

/** The origin (`scheme://host[:port]`) of a URL, or undefined (unparsable, or an opaque origin such as `null`). */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * Where a browser says a request comes from: the `Origin` header, else the `Referer`'s origin, else, when only
 * `Sec-Fetch-Site` speaks, `foreign` unless it says same-origin or none (typed by the user). `absent` when nothing
 * says: not a browser (a script, curl, a test).
 */
function sourceOf(request: FastifyRequest): { origin: string } | 'foreign' | 'absent' {
  const origin = request.headers.origin;
  if (origin !== undefined) return { origin: originOf(origin) ?? 'null' };
  const referer = request.headers.referer;
  if (referer !== undefined) return { origin: originOf(referer) ?? 'null' };
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return 'foreign';
  return 'absent';
}

/**
 * Cross-site request forgery: the session cookie is SameSite=Lax, so a page of another site on the same registrable
 * domain (or any page, in a browser that ignores SameSite) could make a signed-in browser send a state-changing
 * request that needs no body (a restore, a webhook test, a logout) with the user's authority. So a POST, PATCH, PUT or
 * DELETE that carries the session cookie must come from the service's own origin (BASE_URL, or the Host the request
 * was sent to: the console, also behind the Vite dev server's proxy) or one of ALLOWED_ORIGINS; one from a browser
 * that says nothing of its origin is refused only when Sec-Fetch-Site says it is foreign. A request with an
 * `Authorization` header is not concerned (a page cannot set that header for another origin unless CORS lets it),
 * nor one without the cookie, nor the public website API (it never acts with the session).
 */
export function registerOriginCheck(app: FastifyInstance, config: Config) {
  const allowed = new Set([config.baseUrl, ...config.allowedOrigins].map(originOf).filter((o): o is string => o !== undefined));
  app.addHook('onRequest', async (request) => {
    if (!STATE_CHANGING.has(request.method) || request.headers.authorization !== undefined) return;
    const cookie = request.headers.cookie;
    if (!cookie || !SESSION_COOKIE.test(cookie) || request.url.startsWith('/api/public/')) return;
    const source = sourceOf(request);
    if (source === 'absent') return;
    if (source !== 'foreign') {
      if (allowed.has(source.origin)) return;
      const host = request.headers.host;
      if (host && source.origin !== 'null' && new URL(source.origin).host === host.toLowerCase()) return;
    }
    const from = source === 'foreign' ? 'another site' : source.origin;
    throw forbidden(`Request refused: it carries this service's session cookie but comes from ${from}, not from this service or an origin in ALLOWED_ORIGINS`);
  });
}
