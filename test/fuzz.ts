import fc from 'fast-check';
import type { InjectOptions } from 'fastify';

/**
 * Requests generated from the OpenAPI document (CONTRACT §13): for each operation, plausible values from its own
 * schemas mixed with values no field expects (wrong types, boundary numbers, NUL, lone surrogates, huge and deep
 * values, unknown fields and parameters, malformed JSON, percent-encoding and multipart).
 */

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
};
type Parameter = { in: 'path' | 'query' | 'header' | 'cookie'; name: string; schema: JsonSchema };
export type Operation = {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { type: 'json' | 'multipart'; schema: JsonSchema };
};

/** What the generated requests may point at: ids and slugs of records that exist. */
export type Pools = { ids: string[]; slugs: string[] };

/** A generated request, and a short account of it for a failure message. */
export type FuzzRequest = { inject: InjectOptions; summary: string };

/** The operations of an OpenAPI 3 document. */
export function operationsOf(document: { paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>> }): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const content = op.requestBody?.content ?? {};
      const body = content['application/json'] ? { type: 'json' as const, schema: content['application/json'].schema }
        : content['multipart/form-data'] ? { type: 'multipart' as const, schema: content['multipart/form-data'].schema }
        : undefined;
      operations.push({ method: method.toUpperCase(), path, parameters: op.parameters ?? [], body });
    }
  }
  return operations;
}

// ---------------------------------------------------------------------------------------------
// Values

const deep = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
};

const EVIL_STRINGS = [
  '', ' ', '   ', '\u0000', 'a\u0000b', 'x\ud800y', '\udfff', '\ud83d', '💥🏠', 'a'.repeat(70_000), `${'x'.repeat(600)}\u0000`,
  "' OR 1=1 --", "'; drop table leads; --", '%', '_', '\\', '%00', '<script>alert(1)</script>', '../../etc/passwd', '=cmd|" /C calc"!A0',
  '2030-06-30T23:59:60Z', '2024-13-01T00:00:00Z', '2024-02-30', '0000-01-01', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z',
  '+275760-09-13T00:00:00Z', '-000001-01-01T00:00:00Z', '2024-01-01T00:00:00', 'NaN', 'Infinity', '-0', '1e309', '99999999999999999999',
  '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0190a000-0000-7000-8000-00000000000g', 'true', 'null', '[]', '{}',
  'admin@example.com', 'A@B.C', '@', 'a@b', `${'a'.repeat(300)}@example.com`, 'http://', 'javascript:alert(1)', 'data:text/html,x',
  '\u202e\u0301', '\r\nBcc: x@example.com', 'ℌ𝔢𝔩𝔩𝔬', '\t\n\r', ' padded ',
];
const EVIL_NUMBERS = [0, -0, -1, 1, 0.5, -0.5, 1e13, -1e13, 1e308, -1e308, 2 ** 53 + 2, -(2 ** 53) - 2, 5e-324, 1e11, 1e20, 2 ** 31, -(2 ** 31) - 1, 1.005, 123456789012.345];

/** Any JSON value, weighted towards the ones that break services. */
const evil: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...EVIL_STRINGS) },
  { weight: 3, arbitrary: fc.constantFrom(...EVIL_NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': 1 }, ['a', 'a'], { a: { b: { c: '\u0000' } } }) },
  { weight: 1, arbitrary: fc.constantFrom(deep(31), deep(33), deep(40), deep(3000)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

const first = <T>(value: T | T[] | undefined): T | undefined => (Array.isArray(value) ? value.find((v) => v !== 'null') : value);

/** Text any field takes: starts with a letter, within the length bounds. */
const plainText = (schema: JsonSchema) => fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz 0123456789-'), maxLength: Math.min(schema.maxLength ?? 60, 60) - 1 })
  .map((text) => `F${text}`.slice(0, schema.maxLength ?? 60));

/** Strings a field of this format and length could hold (and, unless clean, its boundaries). */
function stringFor(schema: JsonSchema, pools: Pools, clean: boolean): fc.Arbitrary<string> {
  const max = schema.maxLength ?? 80;
  const lengths = fc.constantFrom(...[schema.minLength ?? 0, max, max + 1, Math.max(0, (schema.minLength ?? 1) - 1)].map((n) => 'x'.repeat(Math.min(n, 600_000))));
  switch (schema.format) {
    case 'email': return fc.oneof(fc.emailAddress(), fc.constantFrom('Mixed.Case@Example.COM', 'a@b.co'));
    case 'uuid': return clean ? fc.constantFrom(...pools.ids) : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pools.ids) }, { weight: 1, arbitrary: fc.uuid() });
    case 'date-time': return fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'date': return fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'uri': return clean ? fc.webUrl() : fc.oneof(fc.webUrl(), fc.constantFrom('/uploads/x.png', 'ftp://x'));
    default:
      if (clean && schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter((text) => text.length >= (schema.minLength ?? 0) && text.length <= max);
      return clean ? plainText(schema) : fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: Math.min(max, 60) }) }, { weight: 1, arbitrary: lengths }, { weight: 1, arbitrary: fc.constantFrom(...pools.slugs) });
  }
}

/** Numbers in (and, unless clean, just outside) the schema's bounds. */
function numberFor(schema: JsonSchema, integer: boolean, clean: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? -(2 ** 31);
  const max = schema.maximum ?? 2 ** 31;
  const inside = integer ? fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) }) : fc.double({ min, max, noNaN: true });
  if (clean) return inside;
  return fc.oneof({ weight: 3, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, max + 1, max + 0.001, min - 0.001) });
}

/**
 * A value for `schema`. Clean: one the schema accepts (required fields present, nothing undeclared), so requests
 * reach the handlers and the database. Otherwise mostly plausible, sometimes anything.
 */
export function valueFor(schema: JsonSchema, pools: Pools, clean: boolean, depth = 0): fc.Arbitrary<unknown> {
  if (clean) return plausible(schema, pools, true, depth);
  return fc.oneof({ weight: 5, arbitrary: plausible(schema, pools, false, depth) }, { weight: 1, arbitrary: evil });
}

function plausible(schema: JsonSchema, pools: Pools, clean: boolean, depth: number): fc.Arbitrary<unknown> {
  if (depth > 5) return clean ? fc.constant(null) : evil;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s) => plausible(s, pools, clean, depth)));
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (first(schema.type)) {
    case 'object': {
      const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, valueFor(s, pools, clean, depth + 1)]));
      const known = fc.record(properties, { requiredKeys: clean ? (schema.required ?? []) : [] });
      if (clean) return known;
      // Sometimes every required field, sometimes a field nobody declared.
      return fc.tuple(known, fc.option(fc.constantFrom('unknown_field', 'id', 'created_at', '__proto__', 'constructor', ''), { freq: 4 }), evil)
        .map(([value, extra, extraValue]) => (extra === null ? value : { ...value, [extra]: extraValue }));
    }
    case 'array': {
      const item = valueFor(schema.items ?? {}, pools, clean, depth + 1);
      const maxLength = Math.min(schema.maxItems ?? 4, 4);
      if (clean) return fc.array(item, { minLength: schema.minItems ?? 0, maxLength: Math.max(maxLength, schema.minItems ?? 0) });
      return fc.oneof({ weight: 4, arbitrary: fc.array(item, { maxLength }) }, {
        weight: 1,
        arbitrary: item.map((v) => Array.from({ length: Math.min((schema.maxItems ?? 4) + 1, 20_000) }, () => v)),
      });
    }
    case 'string': return stringFor(schema, pools, clean);
    case 'integer': return numberFor(schema, true, clean);
    case 'number': return numberFor(schema, false, clean);
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    default: return clean ? fc.constant(null) : evil;
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

const MALFORMED_ENCODINGS = ['%', '%zz', '%ED%A0%80', '%C0%80', '%FF', '%00', '%E2%82', '%%', '%u0000'];

/** A query value as text: strings as they are, numbers and booleans printed, anything else as JSON. */
const asText = (value: unknown): string => (typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value) ?? '');

/** Percent-encodes what URLs cannot carry; lone surrogates (which encodeURIComponent refuses) as raw bytes of U+FFFD. */
const encode = (text: string) => {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
  }
};

function queryFor(op: Operation, pools: Pools, clean: boolean): fc.Arbitrary<string> {
  const declared = op.parameters.filter((p) => p.in === 'query');
  const one = (p: Parameter) => valueFor(p.schema, pools, clean).map((v) => [[p.name, asText(v)]]);
  const pairs = declared.map((p) => fc.option(clean ? one(p) : fc.oneof(
    { weight: 4, arbitrary: one(p) },
    // Repeated: a=1&a=2.
    { weight: 1, arbitrary: fc.tuple(valueFor(p.schema, pools, false), valueFor(p.schema, pools, false)).map(([a, b]) => [[p.name, asText(a)], [p.name, asText(b)]]) },
  ), { freq: 2 }));
  if (clean) {
    return fc.tuple(...pairs).map((chosen) => {
      const parts = chosen.filter((c): c is string[][] => c !== null).flat().map(([k, v]) => `${encode(k)}=${encode(v)}`);
      return parts.length ? `?${parts.join('&')}` : '';
    });
  }
  const unknown = fc.option(fc.tuple(fc.constantFrom('colour', 'page[size]', '__proto__', 'constructor', 'a.b', '', 'Page', 'limit '), fc.constantFrom(...EVIL_STRINGS.slice(0, 20))), { freq: 5 });
  const raw = fc.option(fc.tuple(fc.constantFrom(...declared.map((p) => p.name), 'q', 'x'), fc.constantFrom(...MALFORMED_ENCODINGS)), { freq: 8 });
  return fc.tuple(fc.tuple(...pairs), unknown, raw).map(([chosen, extra, malformed]) => {
    const parts = chosen.filter((c): c is string[][] => c !== null).flat().map(([k, v]) => `${encode(k)}=${encode(v)}`);
    if (extra) parts.push(`${encode(extra[0])}=${encode(extra[1])}`);
    if (malformed) parts.push(`${encode(malformed[0])}=${malformed[1]}`);
    return parts.length ? `?${parts.join('&')}` : '';
  });
}

function pathFor(op: Operation, pools: Pools, clean: boolean): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'path');
  const existing = (p: Parameter) => (p.name === 'slug' ? fc.constantFrom(...pools.slugs) : fc.constantFrom(...pools.ids)).map(encode);
  const values = params.map((p) => clean ? existing(p) : fc.oneof(
    { weight: 6, arbitrary: existing(p) },
    { weight: 1, arbitrary: fc.uuid().map(encode) },
    { weight: 2, arbitrary: fc.constantFrom(...EVIL_STRINGS).map(encode) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_ENCODINGS, '..', '.', '%2e%2e', '%2F', 'a%2Fb', '%20') },
  ));
  return fc.tuple(...values).map((chosen) => params.reduce((path, p, i) => path.replace(`{${p.name}}`, chosen[i] || 'x'), op.path));
}

const RAW_BODIES = ['', '{', '[', '"x"', 'null', '1', '[]', 'true', '{"a":}', '{"a":1,"a":2}', '\u0000', '[' .repeat(100_000), '{"a":'.repeat(20_000), `{"x":"${'\\u0000'}"}`, '{"x":"\\ud800"}', '\ufeff{}'];
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'application/json; charset=latin1', ''];

/** A JSON body: from the schema, raw text that is not quite JSON, or a body the route does not take. */
function jsonBodyFor(op: Operation, pools: Pools, clean: boolean): fc.Arbitrary<{ payload?: string; contentType?: string }> {
  const fromSchema = op.body ? valueFor(op.body.schema, pools, clean) : fc.constant(undefined);
  if (clean) return fromSchema.map((v) => (v === undefined ? {} : { payload: JSON.stringify(v), contentType: 'application/json' }));
  return fc.oneof(
    { weight: 8, arbitrary: fromSchema.map((v) => (v === undefined ? {} : { payload: JSON.stringify(v), contentType: 'application/json' })) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((payload) => ({ payload, contentType: 'application/json' })) },
    { weight: 1, arbitrary: fc.tuple(fromSchema, fc.constantFrom(...CONTENT_TYPES)).map(([v, contentType]) => ({ payload: JSON.stringify(v ?? {}), contentType })) },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

/** Multipart bodies: well-formed or not, with names, types and contents nobody should send. */
function multipartFor(): fc.Arbitrary<{ payload?: Buffer; contentType?: string }> {
  const part = fc.record({
    field: fc.constantFrom('file', 'file', 'files', 'other', '', 'file\u0000'),
    filename: fc.constantFrom('photo.png', '../../etc/passwd', 'a\u0000.png', 'x\ud800.png', '', 'a'.repeat(2000), 'ℌ.png', 'photo.PNG.exe'),
    type: fc.constantFrom('image/png', 'image/jpeg', 'text/html', 'application/octet-stream', '', 'image/svg+xml'),
    content: fc.oneof(fc.constant(PNG), fc.uint8Array({ maxLength: 256 }).map((a) => Buffer.from(a)), fc.constant(Buffer.from('<svg onload="alert(1)"/>'))),
  });
  return fc.oneof(
    { weight: 5, arbitrary: fc.array(part, { minLength: 0, maxLength: 3 }).map((parts) => {
      const boundary = 'fuzzboundary';
      const chunks = parts.flatMap((p) => [
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"; filename="${p.filename}"\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`),
        p.content, Buffer.from('\r\n'),
      ]);
      return { payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
    }) },
    { weight: 1, arbitrary: fc.constantFrom(
      { payload: Buffer.from('--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc'), contentType: 'multipart/form-data; boundary=x' },
      { payload: Buffer.from('garbage'), contentType: 'multipart/form-data' },
      { payload: Buffer.from('garbage'), contentType: 'multipart/form-data; boundary=' },
      { payload: PNG, contentType: 'image/png' },
      {},
    ) },
  );
}

/**
 * Requests for one operation, as a caller with the given headers: two in five clean (valid by the schemas, so they
 * reach the handlers), the others with something wrong (and now and then signed out).
 */
export function requestsFor(op: Operation, pools: Pools, auth: Record<string, string>): fc.Arbitrary<FuzzRequest> {
  return fc.oneof({ weight: 2, arbitrary: requestOf(op, pools, auth, true) }, { weight: 3, arbitrary: requestOf(op, pools, auth, false) });
}

function requestOf(op: Operation, pools: Pools, auth: Record<string, string>, clean: boolean): fc.Arbitrary<FuzzRequest> {
  const body = op.body?.type === 'multipart' ? multipartFor() : jsonBodyFor(op, pools, clean);
  const headers = clean ? fc.constant({ signedOut: false, requestId: null, cookie: null }) : fc.record({
    signedOut: fc.boolean().map((b) => b && Math.random() < 0.2),
    requestId: fc.option(fc.constantFrom('ok-id', 'bad id', 'x'.repeat(100), '\u00e9'), { freq: 4 }),
    cookie: fc.option(fc.constantFrom('better-auth.session_token=forged', 'better-auth.two_factor=x.y', '=;=;', 'a'.repeat(4000)), { freq: 6 }),
  });
  return fc.tuple(pathFor(op, pools, clean), queryFor(op, pools, clean), body, headers).map(([path, query, { payload, contentType }, h]) => {
    const sent: Record<string, string> = { ...(h.signedOut ? {} : auth) };
    if (contentType !== undefined && payload !== undefined) sent['content-type'] = contentType;
    if (h.requestId) sent['x-request-id'] = h.requestId;
    if (h.cookie) sent.cookie = h.cookie;
    const url = `${path}${query}`;
    const shown = typeof payload === 'string' ? payload.slice(0, 300) : payload ? `<${payload.length} bytes>` : '';
    return {
      inject: { method: op.method as InjectOptions['method'], url, headers: sent, ...(payload !== undefined ? { payload } : {}) },
      summary: `${op.method} ${url.slice(0, 300)} ${sent['content-type'] ?? ''} ${shown}`,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Answers

const isMessageMap = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0 && Object.values(value).every((v) => typeof v === 'string' && v.length > 0);

/**
 * What is wrong with an answer, or null: never a 5xx; every 4xx a JSON error body of the contract's shape
 * (400 `{error: "Validation error", details}`, 409/413/415/429 `{error, message}`, others `{error}`).
 */
export function answerProblem(status: number, contentType: string | undefined, body: string): string | null {
  if (status >= 500) return `answered ${status}: ${body.slice(0, 500)}`;
  if (status < 400) return null;
  if (!contentType?.startsWith('application/json')) return `a ${status} answered as ${contentType}: ${body.slice(0, 200)}`;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body);
  } catch {
    return `a ${status} whose body is not JSON: ${body.slice(0, 200)}`;
  }
  const keys = Object.keys(json).sort().join(',');
  if (typeof json.error !== 'string' || !json.error) return `a ${status} without an error: ${body.slice(0, 200)}`;
  if (status === 400) {
    if (json.error !== 'Validation error' || keys !== 'details,error' || !isMessageMap(json.details)) return `a 400 not shaped {error: "Validation error", details}: ${body.slice(0, 300)}`;
  } else if (status === 409) {
    // A conflict may name the fields that stand in the way, as a 400 names its fields.
    const named = keys === 'details,error,message' && isMessageMap(json.details);
    if ((keys !== 'error,message' && !named) || typeof json.message !== 'string') return `a 409 not shaped {error, message, details?}: ${body.slice(0, 300)}`;
  } else if ([413, 415, 429].includes(status)) {
    if (keys !== 'error,message' || typeof json.message !== 'string') return `a ${status} not shaped {error, message}: ${body.slice(0, 300)}`;
  } else if (keys !== 'error' && keys !== 'error,message') {
    return `a ${status} with other fields: ${body.slice(0, 300)}`;
  }
  return null;
}
