import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, conflict, databaseError, databaseUnavailable, internalError, payloadTooLarge, PG_FOREIGN_KEY_VIOLATION, PG_UNIQUE_VIOLATION, serviceUnavailable, tooManyRequests, unsupportedMediaType, validationError } from '../errors.js';

type AjvError = { instancePath: string; keyword: string; message?: string; params: Record<string, unknown> };

const dotted = (instancePath: string) => instancePath.split('/').filter(Boolean).join('.');

function describe(error: AjvError): string {
  switch (error.keyword) {
    case 'additionalProperties':
      return 'is not an allowed field';
    case 'required':
      return 'is required';
    case 'enum':
      return `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'format':
      return error.params.format === 'email' ? 'must be a valid e-mail address'
        : error.params.format === 'day-or-instant' ? 'must be a day (YYYY-MM-DD) or a date-time with zone (2026-01-31T09:00:00Z)'
          : `must be a valid ${error.params.format}`;
    case 'minLength':
      return error.params.limit === 1 ? 'must not be empty' : `must be at least ${error.params.limit} characters`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** The schema's complaints about one body that are turned into `details` (in the schema's order). */
export const MAX_COMPLAINTS = 1_000;

/**
 * Ajv errors → `{field.path: message}`. For unions (a nullable object, say), the most specific message wins: the
 * union's own complaints ("must be null", "must match a schema in anyOf") are dropped when a branch reported
 * something about the same field or a field inside it.
 */
export function detailsFromAjv(all: AjvError[], context?: string): Record<string, string> {
  // No prototype: a field named `__proto__` or `constructor` is a key like any other.
  const details: Record<string, string> = Object.create(null);
  // Enough for any form; a body of 80,000 unknown fields made an answer of 2.8 MB naming each.
  const errors = all.slice(0, MAX_COMPLAINTS);
  const weak = (e: AjvError) => e.keyword === 'anyOf' || e.keyword === 'oneOf' || (e.keyword === 'type' && e.params.type === 'null');
  const fallback = context === 'body' || !context ? 'body' : context;
  const located = errors.map((error) => {
    let path = dotted(error.instancePath);
    if (error.keyword === 'additionalProperties') path = [path, error.params.additionalProperty].filter(Boolean).join('.');
    if (error.keyword === 'required') path = [path, error.params.missingProperty].filter(Boolean).join('.');
    // A query parameter's values are one field to the caller (`status=new,bogus` → `status`).
    if (context === 'querystring') path = path.split('.')[0];
    return { error, path: path || fallback, weak: weak(error) };
  });
  // Every path a specific complaint is at or inside (each dotted prefix of one): a weak complaint there says less.
  // A set, not a search per complaint: a body of 10,000 bad array items makes 40,000 complaints (seen in the fuzz test).
  const covered = new Set<string>();
  for (const { path, weak: isWeak } of located) {
    if (isWeak) continue;
    covered.add(fallback);
    for (let dot = path.indexOf('.'); dot >= 0; dot = path.indexOf('.', dot + 1)) covered.add(path.slice(0, dot));
    covered.add(path);
  }
  for (const { error, path, weak: isWeak } of [...located].sort((a, b) => Number(a.weak) - Number(b.weak))) {
    if (isWeak && covered.has(path)) continue;
    details[path] ??= describe(error);
  }
  return details;
}

/** Maps every failure to the contract's error bodies; nothing internal reaches the client. */
export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError & { code?: string; constraint?: string; detail?: string }, request, reply) => {
    let http: ApiError;
    if (err instanceof ApiError) {
      http = err;
    } else if (err.validation) {
      http = validationError(detailsFromAjv(err.validation as AjvError[], err.validationContext));
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) {
      http = payloadTooLarge('The request body is larger than the allowed limit');
    } else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 415) {
      http = unsupportedMediaType(`Content type ${request.headers['content-type'] ?? '(none)'} is not supported`);
    } else if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      http = validationError({ body: 'must not be empty when Content-Type is application/json' });
    } else if (err.code?.startsWith('FST_ERR_CTP') || (err instanceof SyntaxError && err.statusCode === 400)) {
      // A body that did not parse; a SyntaxError thrown by the service's own code is not the client's fault (500).
      http = validationError({ body: 'is not valid JSON' });
    } else if (databaseError(err)?.code === PG_UNIQUE_VIOLATION) {
      http = conflict('A record with the same unique value already exists');
    } else if (databaseError(err)?.code === PG_FOREIGN_KEY_VIOLATION) {
      http = conflict('The record is referenced by other records or references a missing one');
    } else if (databaseUnavailable(err)) {
      request.log.error({ err }, 'database unavailable');
      http = serviceUnavailable('The database is busy or cannot be reached right now; try again in a few seconds', 5);
    } else if (err.statusCode === 429) {
      http = tooManyRequests(60);
    } else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      http = new ApiError(err.statusCode, { error: err.statusCode === 404 ? 'Resource not found' : 'Bad request', message: err.message });
    } else {
      request.log.error({ err }, 'unhandled error');
      http = internalError();
    }
    if (http.statusCode >= 500 && err instanceof ApiError) request.log.error({ err }, 'server error');
    return reply.code(http.statusCode).headers(http.headers).send(http.body);
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: 'Resource not found', message: `No route for ${request.method} ${request.url.split('?')[0]}` }),
  );
}
