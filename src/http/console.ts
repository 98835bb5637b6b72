import fastifyStatic from '@fastify/static';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build:console` puts the staff console (beside src/ and dist/, so both find it). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/** Paths the console never answers: the API and uploaded files keep their own 404s. */
const NOT_CONSOLE = /^\/(api|uploads)(\/|$)/;
/**
 * The console's page runs only its own scripts and talks only to this origin. Styles allow inline (the component
 * library injects its styles at run time); images may come from elsewhere (uploads behind a CDN or object storage).
 */
export const CONSOLE_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob: https: http:",
  "font-src 'self' data:", "connect-src 'self'", "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

/** A missing file (an extension in the last segment) is a 404, not the console's page. */
const FILE_LIKE = /\/[^/]*\.[A-Za-z0-9]+$/;

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Staff console not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<h1>The staff console has not been built</h1>
<p>The API is running (<a href="/api/health">/api/health</a>, <a href="/api/docs">/api/docs</a>), but the web console's files are missing.</p>
<p>Build them with <code>npm install &amp;&amp; npm run build:console</code> (or restart with <code>npm start</code>, which builds them when needed), then reload this page.</p>
</body></html>
`;

/**
 * Serves the built staff console: hashed files under /assets/ cached for a year (immutable; the Brotli or gzip copy
 * the build wrote when the browser accepts it), and index.html (never
 * cached) for every other GET outside /api and /uploads, so client-side routes such as /reset-password?token=… and
 * /leads/… open the console. Not rate-limited: loading the page must not spend the user's API allowance. When the
 * console was never built, the API still runs and / answers 503 with a page saying how to build it.
 */
export async function registerConsole(app: FastifyInstance, dir: string = CONSOLE_DIR) {
  const index = join(dir, 'index.html');
  if (existsSync(index)) {
    await app.register(async (assets) => {
      assets.addHook('onRoute', (route) => {
        route.config = { ...route.config, rateLimit: false };
      });
      await assets.register(fastifyStatic, {
        root: join(dir, 'assets'),
        prefix: '/assets/',
        decorateReply: false,
        index: false,
        immutable: true,
        preCompressed: true, // the build writes .br and .gz beside each file
        maxAge: '365d',
        etag: false, // hashed names: the URL is the version
        lastModified: false,
      });
    });
  } else {
    app.log.warn({ dir }, 'the staff console is not built: / answers 503 until `npm run build:console` has run');
  }

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    if (NOT_CONSOLE.test(path) || FILE_LIKE.test(path)) return reply.callNotFound();
    reply.header('cache-control', 'no-cache').header('content-security-policy', CONSOLE_CSP).type('text/html; charset=utf-8');
    // Read on every request (it is small): a rebuilt console is served without a restart, a removed one is a 503.
    const html = await readFile(index).catch(() => undefined);
    return html ? reply.send(html) : reply.code(503).send(NOT_BUILT);
  };
  const options = { config: { rateLimit: false }, schema: { hide: true } } as const;
  app.get('/', options, page);
  app.get('/*', options, page);
}
