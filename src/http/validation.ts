import { Type } from '@sinclair/typebox';
import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import fastJson from 'fast-json-stringify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { validationError } from '../errors.js';

const base: Options = {
  allErrors: true,
  removeAdditional: false, // unknown fields are errors, not silently dropped
  useDefaults: true,
  strict: false,
  keywords: ['example'],
};

/** The first and last instants of years 1–9999 (UTC), to the millisecond the service keeps. */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/i;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar day that exists, in years 1–9999 (what PostgreSQL and JavaScript both hold). */
function isDay(year: number, month: number, day: number): boolean {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  const date = new Date(Date.UTC(2000, month - 1, day)); // a leap year: 29 February exists
  date.setUTCFullYear(year);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A date-time written in years 1–9999 that names a real instant (no leap second, no 31 April, an offset that exists). */
function isWrittenInstant(text: string): boolean {
  const m = INSTANT.exec(text);
  return !!m && isDay(+m[1], +m[2], +m[3]) && +m[4] <= 23 && +m[5] <= 59 && +m[6] <= 59 && (m[7] === undefined || (+m[7] <= 23 && +m[8] <= 59)) && Number.isFinite(Date.parse(text));
}

/**
 * CONTRACT §13: a date-time must be a real instant (no leap second, no 31 April, a zone offset that exists) in years
 * 1–9999; a date (the day filters) likewise. Stricter than ajv-formats, which lets `…T23:59:60Z` and year 0 through.
 */
/**
 * The addresses Better Auth signs in and resets (its zod rule): an address the service stores is one its owner can
 * use. ajv-formats alone lets `a!b@example.com` and `a@b.c` through, and a user created with one could never sign in.
 */
const ADDRESS = /^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$/;

const formats = {
  email: (text: string) => ADDRESS.test(text),
  /** An instant a value can hold: its UTC time is in years 1–9999 too (`0001-01-01T00:00:00+01:00` is in year 0). */
  'date-time': (text: string) => {
    if (!isWrittenInstant(text)) return false;
    const time = Date.parse(text);
    return time >= FIRST_INSTANT && time <= LAST_INSTANT;
  },
  date: (text: string) => {
    const m = DAY.exec(text);
    return !!m && isDay(+m[1], +m[2], +m[3]);
  },
  /**
   * A range bound: a whole day or an instant. A bound need only be written in years 1–9999: one whose UTC time falls
   * just outside (`9999-12-31T23:59:59-05:00`) bounds nothing more, and the filter takes it as the first or last
   * instant (src/data/filters.ts).
   */
  'day-or-instant': (text: string) => formats.date(text) || isWrittenInstant(text),
};

function build(options: Options) {
  const ajv = new Ajv.default(options);
  addFormats.default(ajv);
  for (const [name, validate] of Object.entries(formats)) ajv.addFormat(name, validate);
  return ajv;
}

let bodies: Ajv.default | undefined;
let texts: Ajv.default | undefined;
let strictBodies: Ajv.default | undefined;
let coercingTexts: Ajv.default | undefined;

/**
 * Route schemas compile once per process, by content: a compiled validator or serializer depends on nothing but its
 * schema and the fixed options above. Compiling every route's schemas was most of the cost of building an app (350 of
 * ~450 ms), paid again by every app a process builds (the tests build one or more per file). By content, not by
 * object: routes build their schemas anew each time (the default empty query schema, derived update bodies).
 */
const bodyValidators = new Map<string, unknown>();
const textValidators = new Map<string, unknown>();
const serializers = new Map<string, (data: unknown) => string>();

function compiledOnce<F>(cache: Map<string, F>, schema: unknown, compile: () => F): F {
  const key = JSON.stringify(schema);
  let compiled = cache.get(key);
  if (compiled === undefined) {
    compiled = compile();
    cache.set(key, compiled);
  }
  return compiled;
}

/** A validator of a query string or path outside the app's own compiler (a multipart route validates its body itself). */
export function compileQueryValidator(schema: object) {
  texts ??= build({ ...base, coerceTypes: 'array' });
  return texts.compile(schema);
}

/**
 * A validator of request bodies outside a route (each row of a CSV import is a create body): the very settings and
 * formats routes validate bodies with, so its errors, through `detailsFromAjv`, read as the API's `details`.
 */
export function compileBodyValidator(schema: object) {
  bodies ??= build({ ...base, coerceTypes: false });
  return bodies.compile(schema);
}

/**
 * Bodies are validated strictly (a string is never a number); query strings and path parameters arrive as
 * text, so there the validator coerces ("2" → 2, "true" → true).
 */
export function registerValidation(app: FastifyInstance) {
  strictBodies ??= build({ ...base, coerceTypes: false });
  coercingTexts ??= build({ ...base, coerceTypes: 'array' });
  const [strict, coercing] = [strictBodies, coercingTexts];
  app.setValidatorCompiler(({ schema, httpPart }) =>
    // Ajv's validate function is what Fastify expects; only their declared types differ.
    compiledOnce(httpPart === 'body' ? bodyValidators : textValidators, schema, () => (httpPart === 'body' ? strict : coercing).compile(schema as object)) as any,
  );
  app.setSerializerCompiler(({ schema }) => compiledOnce(serializers, schema, () => fastJson(schema as object)));
  // CONTRACT §13: an unknown query parameter is a 400 on every route, also where a route reads none. The API's own
  // documentation pages, uploaded files (often fetched with a cache-busting query) and the staff console's pages
  // (`/`, `/*` such as /reset-password?token=…, and its /assets/) are not the API.
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring || /^\/(api\/docs|api\/openapi\.json|uploads\/|assets\/|\*?$)/.test(route.url)) return;
    route.schema = { ...route.schema, querystring: Type.Object({}, { additionalProperties: false }) };
  });
  // Before any schema sees them: bodies no deeper than 32 levels, no NUL or lone surrogate anywhere (PostgreSQL cannot
  // store them), strings trimmed (passwords excepted). One place for every route (CONTRACT §13).
  app.addHook('preValidation', async (request) => {
    splitListValues(request);
    for (const values of [request.query, request.params]) {
      for (const [name, value] of Object.entries((values ?? {}) as Record<string, unknown>)) {
        const texts = Array.isArray(value) ? value : [value];
        for (const text of texts) {
          const problem = typeof text === 'string' ? unstorable(text) : undefined;
          if (problem) throw validationError({ [name]: problem });
        }
      }
    }
    if (request.body && typeof request.body === 'object') request.body = cleanBody(request.body);
  });
}

type QuerySchema = { properties?: Record<string, { type?: unknown }> };

/** A query parameter that takes several values takes them comma-separated as well as repeated: `status=new,lost`. */
function splitListValues(request: FastifyRequest) {
  const properties = (request.routeOptions.schema?.querystring as QuerySchema | undefined)?.properties;
  const query = request.query as Record<string, unknown> | undefined;
  if (!properties || !query) return;
  for (const [name, value] of Object.entries(query)) {
    if (properties[name]?.type !== 'array' || (typeof value !== 'string' && !Array.isArray(value))) continue;
    query[name] = (Array.isArray(value) ? value : [value]).flatMap((text) => (typeof text === 'string' ? text.split(',').map((part) => part.trim()) : [text]));
  }
}

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const SURROGATE_MESSAGE = 'must be valid Unicode text: it holds an unpaired surrogate (\\uD800-\\uDFFF)';
/** A lone UTF-16 surrogate, which no UTF-8 text can hold (PostgreSQL's JSON refuses it; its text would get U+FFFD). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why PostgreSQL cannot store `text` as sent, if it cannot. */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(text)) return SURROGATE_MESSAGE;
  return undefined;
}
/** Deeper than this, a JSON body is refused before anything walks it. */
export const MAX_DEPTH = 32;
/**
 * Longer than this, a list in a body is refused before the schema sees it: no route takes more (campaign recipients
 * are the longest, 10,000), and the schema would first report every bad item of it (a 1 MB body of 250,000 numbers
 * made a million complaints, two seconds and 400 MB).
 */
export const MAX_ITEMS = 10_000;
const UNTRIMMED = new Set(['password', 'currentPassword', 'newPassword']);

/**
 * A request body, checked and trimmed: 400 when it nests deeper than MAX_DEPTH (measured without recursion, so a
 * body 100,000 levels deep costs no stack), has a list longer than MAX_ITEMS or holds a NUL or a lone surrogate in any string; strings
 * trimmed, passwords excepted.
 */
export function cleanBody(body: unknown): unknown {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: body, depth: 1, path: '' }];
  while (stack.length) {
    const { value, depth, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_DEPTH) throw validationError({ body: `must not be nested deeper than ${MAX_DEPTH} levels` });
    if (Array.isArray(value) && value.length > MAX_ITEMS) throw validationError({ [path || 'body']: `must not have more than ${MAX_ITEMS} items` });
    for (const [key, item] of Object.entries(value)) if (item !== null && typeof item === 'object') stack.push({ value: item, depth: depth + 1, path: path ? `${path}.${key}` : key });
  }
  return trimStrings(body, '');
}

function trimStrings(value: unknown, path: string, key?: string): unknown {
  if (typeof value === 'string') {
    const problem = unstorable(value);
    if (problem) throw validationError({ [path || 'body']: problem });
    return key && UNTRIMMED.has(key) ? value : value.trim();
  }
  if (Array.isArray(value)) return value.map((item, i) => trimStrings(item, path ? `${path}.${i}` : String(i)));
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const record = value as Record<string, unknown>;
    for (const k of Object.keys(record)) record[k] = trimStrings(record[k], path ? `${path}.${k}` : k, k);
    return record;
  }
  return value;
}
