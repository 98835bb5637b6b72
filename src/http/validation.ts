import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const base: Options = {
  allErrors: true,
  removeAdditional: false, // unknown fields are errors, not silently dropped
  useDefaults: true,
  strict: false,
  keywords: ['example', 'x-sortable'],
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
    (httpPart === 'body' ? strict : coercing).compile(schema as object) as any,
  );
  // Strings are trimmed before validation; passwords are taken exactly as typed.
  app.addHook('preValidation', async (request) => {
    if (request.body && typeof request.body === 'object') request.body = trimStrings(request.body);
  });
}

const UNTRIMMED = new Set(['password', 'currentPassword', 'newPassword']);

export function trimStrings(value: any, key?: string): any {
  if (typeof value === 'string') return key && UNTRIMMED.has(key) ? value : value.trim();
  if (Array.isArray(value)) return value.map((item) => trimStrings(item));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const k of Object.keys(value)) value[k] = trimStrings(value[k], k);
  }
  return value;
}
