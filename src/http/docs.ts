import { createHash } from 'node:crypto';
import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';
import { describeRoute, finishDocument, SECURITY_SCHEMES } from './openapi.js';

const TAGS = [
  { name: 'auth', description: 'Signing in and out, two-factor authentication, passwords, the signed-in user and their API tokens.' },
  { name: 'cms', description: 'Website content: projects with galleries, articles, careers and amenities.' },
  { name: 'uploads', description: 'Images for the content: uploaded, resized into WebP variants, served with long-lived caching.' },
  { name: 'crm', description: 'Leads, inventory units, reservations, inquiries, newsletter subscriptions, campaigns and imports.' },
  { name: 'iam', description: 'Users, module permissions, departments, API tokens, webhooks and the activity log.' },
  { name: 'public', description: 'What the public website reads and sends: published content, inquiries and newsletter subscriptions. No credentials.' },
  { name: 'system', description: 'Health and readiness probes, metrics and scheduled jobs.' },
];

/** `GET /api/openapi.json` generated from the route schemas and `GET /api/docs`, an interactive reference. */
export async function registerDocs(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Property Management Service',
        version: '1.0.0',
        description: 'Back end of the real-estate web application: cms, crm and iam modules.',
      },
      servers: [{ url: app.config.baseUrl }],
      components: { securitySchemes: SECURITY_SCHEMES },
      tags: TAGS,
    },
    hideUntagged: true,
    transform: describeRoute,
    transformObject: finishDocument,
  } as SwaggerOptions);
  app.get('/api/openapi.json', { config: { rateLimit: false }, schema: { hide: true } }, async () => app.swagger());
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply, payload) => {
      if (typeof payload === 'string' && /^text\/html/.test(String(reply.getHeader('content-type') ?? ''))) {
        reply.header('content-security-policy', docsPolicy(payload, app.config.baseUrl));
      }
      return payload;
    });
    await docs.register(apiReference, {
      routePrefix: '/api/docs',
      configuration: { url: '/api/openapi.json', title: 'Property Management Service API' },
      logLevel: 'warn',
      // The plugin's option type lags its documented `configuration` options: library boundary.
    } as any);
  });
}

/** The inline scripts of an HTML page (`<script>` elements without `src`): their text, as a browser hashes it. */
export function inlineScripts(html: string): string[] {
  return [...html.matchAll(/<script\b(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]);
}

/**
 * The Content-Security-Policy of the reference page: scripts only from this origin (the bundled Scalar script) and
 * the page's own inline start-up script, allowed by its hash (no `'unsafe-inline'` scripts, no eval); styles inline
 * (Scalar injects them at run time), its fonts from fonts.scalar.com, requests to this service only; no plugins,
 * no framing by others, no `<base>` rewriting.
 */
export function docsPolicy(html: string, baseUrl: string): string {
  const hashes = inlineScripts(html).map((script) => `'sha256-${createHash('sha256').update(script).digest('base64')}'`);
  const self = `'self' ${new URL(baseUrl).origin}`;
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: https:",
    "font-src 'self' data: https://fonts.scalar.com",
    `connect-src ${self}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}
