/**
 * The API's error vocabulary (CONTRACT §2): a status and the body the client receives. Thrown by every layer,
 * the data layer included, and turned into a reply by the HTTP error handler only.
 */
export type ErrorBody = { error: string; message?: string; details?: Record<string, string> };

export class ApiError extends Error {
  constructor(readonly statusCode: number, readonly body: ErrorBody, readonly headers: Record<string, string> = {}) {
    super(body.message ?? body.error);
  }
}

export const validationError = (details: Record<string, string>) => new ApiError(400, { error: 'Validation error', details });
export const unauthorized = (error = 'Authentication required') => new ApiError(401, { error });
export const forbidden = (message?: string) => new ApiError(403, { error: 'Insufficient permissions', ...(message ? { message } : {}) });
export const notFound = (what = 'Resource') => new ApiError(404, { error: 'Resource not found', message: `${what} not found` });
/** 409; `details`: the fields whose value (sent, or the record's own) stands in the way, each with why, as a 400 names them. */
export const conflict = (message: string, details?: Record<string, string>) => new ApiError(409, { error: 'Conflict', message, ...(details ? { details } : {}) });
export const payloadTooLarge = (message: string) => new ApiError(413, { error: 'Payload too large', message });
export const unsupportedMediaType = (message: string) => new ApiError(415, { error: 'Unsupported media type', message });
export const tooManyRequests = (retryAfterSeconds: number, reason = 'Rate limit exceeded') =>
  new ApiError(
    429,
    { error: 'Too many requests', message: `${reason}, retry in ${retryAfterSeconds} seconds` },
    { 'retry-after': String(retryAfterSeconds) },
  );
/** 503: a part of the service failed for a moment (the request itself is fine): trying again may succeed. */
export const serviceUnavailable = (message: string, retryAfterSeconds?: number) =>
  new ApiError(503, { error: 'Service unavailable', message }, retryAfterSeconds ? { 'retry-after': String(retryAfterSeconds) } : {});
export const internalError = () => new ApiError(500, { error: 'Internal server error', message: 'An unexpected error occurred' });

/** The PostgreSQL error behind a failure: drivers throw it directly, drizzle wraps it (DrizzleQueryError.cause). */
export function databaseError(err: unknown): { code: string } | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e as { code: string };
  }
  return undefined;
}

/**
 * Whether `err` says the database could not be reached or had no room for the request (no pooled connection free in
 * time, the connection lost, the server refusing connections or shutting down), not that the request was wrong:
 * trying again shortly may succeed.
 */
export function databaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    // Class 08: connection exceptions; 53300 too many connections; 57P01–57P03: shut down, crashed, starting up.
    if (/^08...$|^53300$|^57P0[123]$|^ECONNREFUSED$|^ECONNRESET$|^ETIMEDOUT$|^EPIPE$/.test(code)) return true;
    if (typeof e.message === 'string' && /^(timeout exceeded when trying to connect|Connection terminated)/.test(e.message)) return true;
  }
  return false;
}

export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';
