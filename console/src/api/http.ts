import { HttpError } from 'react-admin';

/** An error body of the API (CONTRACT §2): `{error, message?, details?}`. */
export type ErrorBody = { error?: string; message?: string; details?: Record<string, string> };

export type Query = Record<string, string | number | boolean | null | undefined>;

/** `?a=1&b=x` from the values that are set; empty strings, null and undefined are left out. */
export function queryString(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** "try again in 42 seconds" from a `Retry-After` header (seconds, or an HTTP date). */
export function retryMessage(retryAfter: string | null, now = Date.now()): string {
  let seconds = Number(retryAfter);
  if (!Number.isFinite(seconds)) {
    const at = retryAfter ? Date.parse(retryAfter) : NaN;
    seconds = Number.isFinite(at) ? Math.max(1, Math.ceil((at - now) / 1000)) : 60;
  }
  seconds = Math.max(1, Math.ceil(seconds));
  const when = seconds < 90 ? `${seconds} second${seconds === 1 ? '' : 's'}` : `${Math.ceil(seconds / 60)} minutes`;
  return `Too many requests: try again in ${when}.`;
}

/** "email: must be a valid e-mail address; phone: …" */
export const detailsText = (details: Record<string, string>) =>
  Object.entries(details).map(([field, message]) => `${field}: ${message}`).join('; ');

/** The API's answer as a react-admin HttpError: status, a readable message, the body (400 details kept). */
export async function errorOf(response: Response): Promise<HttpError> {
  const body = (await response.json().catch(() => ({}))) as ErrorBody;
  if (response.status === 429) return new HttpError(retryMessage(response.headers.get('retry-after')), 429, body);
  if (response.status === 400 && body.details) return new HttpError(`Please correct: ${detailsText(body.details)}`, 400, body);
  const message = body.message ?? body.error ?? `The request failed (${response.status})`;
  return new HttpError(message, response.status, body);
}

/** One call to the service (same origin, session cookie): JSON in, JSON out, errors as HttpError. */
export async function api<T = unknown>(
  path: string,
  options: { method?: string; body?: unknown; query?: Query; signal?: AbortSignal; form?: FormData } = {},
): Promise<T> {
  const { method = 'GET', body, query, signal, form } = options;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${path}${queryString(query)}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: form ?? (body !== undefined ? JSON.stringify(body) : undefined),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
}
