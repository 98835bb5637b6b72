import { Type } from '@sinclair/typebox';
import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const base: Options = {
  allErrors: true,
  removeAdditional: false, // unknown fields are errors, not silently dropped
  useDefaults: true,
  strict: false,
  keywords: ['example'],
};

function build(options: Options) {
  const ajv = new Ajv.default(options);
  addFormats.default(ajv);
  return ajv;
}

/**
 * Bodies are validated strictly (a string is never a number); query strings and path parameters arrive as
 * text, so there the validator coerces ("2" → 2, "true" → true).
 */
export function registerValidation(app: FastifyInstance) {
  const strict = build({ ...base, coerceTypes: false });
  const coercing = build({ ...base, coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    // Ajv's validate function is what Fastify expects; only their declared types differ.
    (httpPart === 'body' ? strict : coercing).compile(schema as object) as any,
  );
  // CONTRACT §13: an unknown query parameter is a 400 on every route, also where a route reads none. The API's own
  // documentation pages and uploaded files (often fetched with a cache-busting query) are not the API.
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring || /^\/(api\/docs|api\/openapi\.json|uploads\/)/.test(route.url)) return;
    route.schema = { ...route.schema, querystring: Type.Object({}, { additionalProperties: false }) };
  });
  // Strings are trimmed before validation; passwords are taken exactly as typed.
  app.addHook('preValidation', async (request) => {
    if (request.body && typeof request.body === 'object') request.body = trimStrings(request.body);
  });
}

const UNTRIMMED = new Set(['password', 'currentPassword', 'newPassword']);

export function trimStrings(value: unknown, key?: string): unknown {
  if (typeof value === 'string') return key && UNTRIMMED.has(key) ? value : value.trim();
  if (Array.isArray(value)) return value.map((item) => trimStrings(item));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const record = value as Record<string, unknown>;
    for (const k of Object.keys(record)) record[k] = trimStrings(record[k], k);
  }
  return value;
}
