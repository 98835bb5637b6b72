import { STATUS_CODES } from 'node:http';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { SESSION_GUARD } from '../auth/guard.js';
import { rateBucketOf } from './rate-limit.js';
import { exampleOf } from './openapi-examples.js';
import { GenericError } from './schemas.js';

/**
 * The OpenAPI document is generated from the route schemas (@fastify/swagger); this module makes it one a client can
 * be generated from: what each route's guard, rate limit and cache validation really are (per route, from the route's
 * own options), then named schemas, shared error responses, headers and examples (once, on the whole document).
 */

type Json = Record<string, any>;

/**
 * Names a schema: wherever it appears, the document refers to `#/components/schemas/<name>`. The name travels as
 * the schema's `title` (an annotation validation ignores); a schema derived from a named one must be named anew.
 */
export const named = <T extends TSchema>(name: string, schema: T): T => Object.assign(schema, { title: name });

/**
 * Descriptions for routes a factory made (it gives them a summary only), by `METHOD /path` as registered; registered
 * in the plugin before the factory's routes.
 */
export function describeRoutes(app: FastifyInstance, descriptions: Record<string, string>) {
  app.addHook('onRoute', (route) => {
    const description = descriptions[`${route.method} ${route.url}`];
    if (description && route.schema && !route.schema.description) route.schema = { ...route.schema, description };
  });
}

export const SECURITY_SCHEMES = {
  sessionCookie: { type: 'apiKey', in: 'cookie', name: 'better-auth.session_token', description: 'The session cookie set by `POST /api/auth/login` (`__Secure-` prefixed when BASE_URL is https).' },
  sessionToken: { type: 'http', scheme: 'bearer', description: 'The session token (`token` in the answer of `POST /api/auth/login`) as `Authorization: Bearer <token>`.' },
  apiToken: { type: 'http', scheme: 'bearer', bearerFormat: 'pms_…', description: 'An API token (`POST /api/auth/tokens`) as `Authorization: Bearer pms_…`; it has at most its creator\'s permissions.' },
  cronSecret: { type: 'http', scheme: 'bearer', description: 'CRON_SECRET as `Authorization: Bearer <secret>`, for the scheduler calling `/api/cron/*`.' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN as `Authorization: Bearer <token>`, for `GET /api/metrics` (Prometheus).' },
};

const SIGNED_IN = [{ sessionCookie: [] }, { sessionToken: [] }];
const ANY_CREDENTIAL = [...SIGNED_IN, { apiToken: [] }];
const FLAG_WORDS = { GET: 'read', HEAD: 'read', DELETE: 'delete' } as Record<string, string>;

/** Who may call a route, read off its guard; a route whose guard the document cannot tell is refused. */
function accessOf(schema: Json, route: RouteOptions, method: string, url: string): { security: Json[]; text: string } {
  const { modules, flag: routeFlag } = (route.config as { modules?: string[]; flag?: string } | undefined) ?? {};
  if (modules) {
    const flag = routeFlag?.replace(/^can_/, '') ?? FLAG_WORDS[method] ?? 'write';
    return { security: ANY_CREDENTIAL, text: `Needs the ${flag} permission on the ${modules.join(' or ')} module (signed in, or an API token).` };
  }
  const hooks = [route.onRequest].flat().filter(Boolean) as { [SESSION_GUARD]?: { tokens: boolean } }[];
  const guard = hooks.map((hook) => hook[SESSION_GUARD]).find(Boolean);
  if (guard) {
    return guard.tokens
      ? { security: ANY_CREDENTIAL, text: 'Needs a signed-in user or an API token; no module permission.' }
      : { security: SIGNED_IN, text: 'Needs a signed-in user (a session); API tokens are refused with 403.' };
  }
  if (Array.isArray(schema.security)) {
    if (schema.security.length === 0) return { security: [], text: 'Public: no credentials.' };
    const [scheme] = Object.keys(schema.security[0]);
    return { security: schema.security, text: `Needs ${SECURITY_SCHEMES[scheme as keyof typeof SECURITY_SCHEMES]?.description ?? scheme}` };
  }
  throw new Error(`${method} ${url}: its guard is neither a module's nor a session's; declare schema.security for the OpenAPI document`);
}

/** Which generic errors (`errorResponses`) a route can really answer; errors a route declares itself stay. */
function canAnswer(status: string, ctx: { schema: Json; method: string; url: string; secured: boolean; guarded: boolean; limited: boolean }) {
  switch (status) {
    case '400': return Boolean(ctx.schema.body || ctx.schema.querystring || ctx.schema.params);
    case '401': return ctx.secured;
    case '403': return ctx.guarded;
    case '404': return ctx.url.includes(':');
    case '409': return ctx.method !== 'GET';
    case '429': return ctx.limited;
    default: return true;
  }
}

const words = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean);
export const pascal = (text: string) => words(text).map((w) => w[0].toUpperCase() + w.slice(1).toLowerCase()).join('');
const camel = (text: string) => pascal(text).replace(/^./, (c) => c.toLowerCase());

/** `POST /api/auth/two-factor/enable` → `postAuthTwoFactorEnable`, for routes that do not name their operation. */
const operationIdOf = (method: string, url: string) =>
  camel([method, ...url.replace(/^\/api\//, '/').split('/').map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))].join(' '));

/** @fastify/swagger `transform`: one route's operation, with what its options say about access, limits and caching. */
export function describeRoute({ schema, url, route }: { schema: Json; url: string; route: RouteOptions }) {
  if (!schema || schema.hide) return { schema, url };
  const method = String([route.method].flat()[0]).toUpperCase();
  const { security, text } = accessOf(schema, route, method, url);
  const bucket = rateBucketOf(url, method, route.config as Json | undefined);
  const ctx = { schema, method, url, secured: security.length > 0, guarded: security === SIGNED_IN || Boolean((route.config as Json | undefined)?.modules), limited: bucket !== null };
  const response = Object.fromEntries(Object.entries<Json>(schema.response ?? {}).filter(([status, body]) => body !== GenericError || canAnswer(status, ctx)));
  const limits = bucket ? `Rate limit: the ${bucket} bucket (${bucket.toUpperCase()}_RATE_LIMIT requests a minute${bucket === 'auth' ? ' per IP address' : ' per user, API token or IP address'}); see the X-RateLimit-* headers.` : '';
  return {
    url,
    schema: {
      ...schema,
      operationId: schema.operationId ?? operationIdOf(method, url),
      description: [schema.description, text, limits].filter(Boolean).join('\n\n'),
      security,
      response,
      ...(bucket ? { 'x-rate-limit-bucket': bucket } : {}),
      ...((route.config as Json | undefined)?.revalidates ? { 'x-revalidates': true } : {}),
    },
  };
}

const ERROR_RESPONSES: Record<string, [name: string, description: string, example: Json]> = {
  400: ['BadRequest', 'The request is not valid: `details` names each field and what is wrong with it.', { error: 'Validation error', details: { email: 'must be a valid email' } }],
  401: ['Unauthorized', 'No valid credentials: sign in, or send a valid session or API token.', { error: 'Unauthorized' }],
  403: ['Forbidden', 'Signed in, but without the permission this operation needs.', { error: 'Forbidden' }],
  404: ['NotFound', 'No such record.', { error: 'Not found' }],
  409: ['Conflict', 'The change conflicts with the record\'s current state or another record; `message` says which.', { error: 'Conflict', message: 'Email already exists' }],
  413: ['PayloadTooLarge', 'The body or file is larger than allowed.', { error: 'Payload too large', message: 'The file is larger than UPLOAD_MAX_BYTES (10485760 bytes)' }],
  415: ['UnsupportedMediaType', 'The body\'s type is not one this operation takes.', { error: 'Unsupported media type', message: 'Only JPEG, PNG, WebP, GIF and AVIF images are accepted' }],
  429: ['TooManyRequests', 'Too many requests in this minute: wait for the seconds `Retry-After` gives.', { error: 'Too many requests', message: 'Rate limit exceeded, retry in 42 seconds' }],
  503: ['ServiceUnavailable', 'Something the service depends on did not answer (nothing was changed): send the request again a little later.', { error: 'Service unavailable', message: 'The form cannot be checked right now. Please send it again in a few minutes.' }],
};

const HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the current one-minute window of this route\'s bucket.', schema: { type: 'integer', examples: [300] } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', examples: [299] } },
  'X-RateLimit-Reset': { description: 'When the window resets, as Unix time in seconds.', schema: { type: 'integer', examples: [1795430460] } },
  'Retry-After': { description: 'Seconds to wait before the next request.', schema: { type: 'integer', examples: [42] } },
  ETag: { description: 'The validator of this answer; send it back as `If-None-Match` to get 304 when nothing changed.', schema: { type: 'string', examples: ['W/"1f2-9xE0wFQ7m1cnJgqY0uYbGyTnKcI"'] } },
};
const RATE_HEADERS = { 'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'), 'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'), 'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset') };

function ref(kind: string, name: string) {
  return { $ref: `#/components/${kind}/${name}` };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const VALUE_KEYWORDS = new Set(['examples', 'example', 'default', 'enum', 'const']);
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A schema as compared: two uses of one name must be the same schema, whatever examples either carries. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  return `{${Object.keys(value).filter((k) => k !== 'examples' && k !== 'example').sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
}

/** Replaces every named schema (its `title`) by a reference, collecting it into `schemas`. Values are left as they are. */
function hoistNamed(node: unknown, schemas: Json): any {
  if (Array.isArray(node)) return node.map((item) => hoistNamed(item, schemas));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = VALUE_KEYWORDS.has(key) || key === 'properties' ? (key === 'properties' ? mapValues(value, (v) => hoistNamed(v, schemas)) : value) : hoistNamed(value, schemas);
  if (typeof node.title !== 'string' || node.$ref) return out;
  const name = node.title;
  const known = schemas[name];
  if (known && canonical(known) !== canonical(out)) {
    throw new Error(`two different schemas are named ${name}: name the derived one (named(...)):\n${canonical(known)}\n${canonical(out)}`);
  }
  if (!known || (out.examples && !known.examples)) schemas[name] = out;
  return ref('schemas', name);
}

const mapValues = (value: Json, f: (v: unknown) => unknown) => Object.fromEntries(Object.entries(value).map(([k, v]) => [k, f(v)]));

function* operations(doc: Json): Generator<[path: string, method: string, operation: Json]> {
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]) yield [path, method, item[method]];
  }
}

const JSON_TYPE = 'application/json';

/** @fastify/swagger `transformObject`: named schemas, one error body and its responses, headers and examples. */
export function finishDocument({ openapiObject }: { openapiObject: Json }) {
  const doc = structuredClone(openapiObject);
  const schemas: Json = { ...(doc.components?.schemas ?? {}) };
  restoreExamples(doc);
  doc.paths = hoistNamed(doc.paths, schemas);

  for (const [, , op] of operations(doc)) {
    const revalidates = op['x-revalidates'];
    delete op['x-revalidates'];
    answerExample(op, schemas);
    for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
      const content = response.content as Json | undefined;
      if (content && Object.keys(content).length === 1 && content[JSON_TYPE]?.schema?.$ref === '#/components/schemas/Error' && ERROR_RESPONSES[status]) {
        op.responses[status] = ref('responses', ERROR_RESPONSES[status][0]);
        continue;
      }
      if (status === '304') {
        op.responses[status] = ref('responses', 'NotModified');
        continue;
      }
      if (response.description === 'Default Response') response.description = STATUS_CODES[status] ?? status;
      if (/^2/.test(status)) {
        if (op['x-rate-limit-bucket']) response.headers = { ...response.headers, ...RATE_HEADERS };
        if (revalidates) response.headers = { ...response.headers, ETag: ref('headers', 'ETag') };
      }
    }
    for (const parameter of op.parameters ?? []) {
      // A query parameter taking several values (every enum filter): an array, sent repeated (`?status=new&status=lost`,
      // what clients make of an array); the service takes them comma-separated too (src/http/validation.ts).
      if (parameter.in === 'query' && parameter.schema?.type === 'array') Object.assign(parameter, { style: 'form', explode: true });
    }
    if (revalidates) {
      op.parameters = [...(op.parameters ?? []), ref('parameters', 'IfNoneMatch')];
      op.responses['304'] ??= ref('responses', 'NotModified');
    }
    nameInlineBodies(op, schemas);
  }

  for (const [name, schema] of Object.entries<Json>(schemas)) {
    if (!schema.examples) schema.examples = [exampleOf(schema, schemas, name)];
  }
  for (const [, , op] of operations(doc)) {
    for (const [type, media] of mediaOf(op)) {
      if (media.schema && !media.schema.$ref && media.example === undefined && !media.examples && !UNSHOWN.test(type)) media.example = exampleOf(media.schema, schemas);
    }
  }

  doc.components = {
    ...doc.components,
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    responses: {
      ...Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([status, [name, description, example]]) => [name, {
        description,
        ...(status === '429' ? { headers: { 'Retry-After': ref('headers', 'Retry-After'), ...RATE_HEADERS } } : {}),
        content: { [JSON_TYPE]: { schema: ref('schemas', 'Error'), example } },
      }])),
      NotModified: { description: 'Not modified: the `If-None-Match` validator still matches; the cached copy is current.', headers: { ETag: ref('headers', 'ETag') } },
    },
    headers: HEADERS,
    parameters: {
      IfNoneMatch: { name: 'If-None-Match', in: 'header', required: false, description: 'The ETag of a copy held: answered with 304 and no body when it is still current.', schema: { type: 'string' } },
    },
  };
  return doc;
}

/**
 * The answer's own words as its example: `{message: "Project deleted"}`, where the shared `Message` schema's example
 * would name another record. Routes give them as `x-answer-message`: one for every success, or one per status.
 */
function answerExample(op: Json, schemas: Json) {
  const messages = op['x-answer-message'] as string | Record<string, string> | undefined;
  delete op['x-answer-message'];
  for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
    const media = response.content?.[JSON_TYPE];
    const message = typeof messages === 'string' ? messages : messages?.[status];
    if (!/^2/.test(status) || !media || !message) continue;
    const named = schemas[String(media.schema?.$ref).split('/').pop()!] as Json | undefined;
    const example = media.example ?? named?.examples?.[0] ?? exampleOf(media.schema, schemas);
    media.example = { ...example, message };
  }
}

/** @fastify/swagger moves a body schema's own `examples` to its media; a named schema takes them back, to keep them. */
function restoreExamples(doc: Json) {
  for (const [, , op] of operations(doc)) {
    for (const [, media] of mediaOf(op)) {
      if (media.example !== undefined && typeof media.schema?.title === 'string' && !media.schema.examples) media.schema.examples = [media.example];
    }
  }
}

/** Every request and response body of an operation, with its media type. */
export function* mediaOf(op: Json): Generator<[type: string, media: Json]> {
  for (const entry of Object.entries<Json>(op.requestBody?.content ?? {})) yield entry;
  for (const response of Object.values<Json>(op.responses ?? {})) yield* Object.entries<Json>(response.content ?? {});
}

/** Bodies an example cannot show in the document: files. */
export const UNSHOWN = /^(multipart\/|image\/|application\/octet-stream)/;

/** Object bodies nobody named are named after their operation, so every body has a type a client can name. */
function nameInlineBodies(op: Json, schemas: Json) {
  const base = String(op.operationId).replace(/^./, (c) => c.toUpperCase());
  const hoist = (media: Json | undefined, name: string) => {
    if (!media?.schema || media.schema.$ref || media.schema.type !== 'object') return;
    if (schemas[name]) throw new Error(`${op.operationId}: ${name} is already a schema's name`);
    // The schema's own example went to the media (@fastify/swagger moves it); the named schema keeps it too.
    schemas[name] = media.example === undefined ? media.schema : { ...media.schema, examples: [media.example] };
    media.schema = ref('schemas', name);
  };
  hoist(op.requestBody?.content?.[JSON_TYPE], `${base}Request`);
  const answers = Object.keys(op.responses ?? {}).filter((status) => op.responses[status].content?.[JSON_TYPE]);
  for (const status of answers) hoist(op.responses[status].content[JSON_TYPE], answers.length > 1 ? `${base}Response${status}` : `${base}Response`);
}
