import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalProblem } from './address.js';

/** What came of one POST: the status code when an answer came, and why it failed when it did. */
export type Outcome = { ok: boolean; statusCode: number | null; error: string | null; interrupted?: boolean };

/** What of an error answer's body is kept in `last_error`. */
const BODY_KEPT = 300;

/**
 * POSTs a JSON body once: no redirect followed (a 3xx is a failure), `timeoutMs` for the whole exchange, addresses
 * checked after DNS resolution unless `allowPrivate`. A 2xx answer is a success; nothing here throws.
 */
export function postJson(target: string, body: string, headers: Record<string, string>, options: { timeoutMs: number; allowPrivate: boolean; signal?: AbortSignal }): Promise<Outcome> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return resolve({ ok: false, statusCode: null, error: 'the URL does not parse' });
    }
    const refused = literalProblem(url, options.allowPrivate);
    if (refused) return resolve({ ok: false, statusCode: null, error: refused });
    const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
    if (!client) return resolve({ ok: false, statusCode: null, error: `unsupported protocol ${url.protocol}` });
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', interrupt);
      resolve(outcome);
    };
    const interrupt = () => {
      finish({ ok: false, statusCode: null, error: 'interrupted', interrupted: true });
      request.destroy();
    };
    const request = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'property-management-service-webhooks/1.0' },
      lookup: guardedLookup(options.allowPrivate) as never,
      agent: false,
    }, (response) => {
      const statusCode = response.statusCode ?? 0;
      const ok = statusCode >= 200 && statusCode < 300;
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size < BODY_KEPT) chunks.push(chunk);
        size += chunk.length;
      });
      const done = () => {
        if (ok) return finish({ ok, statusCode, error: null });
        const text = Buffer.concat(chunks).toString('utf8').slice(0, BODY_KEPT).replace(/\s+/g, ' ').trim();
        const redirect = statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : '';
        finish({ ok, statusCode, error: `HTTP ${statusCode}${redirect}${text ? `: ${text}` : ''}` });
      };
      response.on('end', done);
      response.on('error', (err) => finish({ ok: false, statusCode, error: err.message }));
      response.on('aborted', () => finish({ ok: false, statusCode, error: 'the answer was cut off' }));
    });
    const timer = setTimeout(() => {
      finish({ ok: false, statusCode: null, error: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    if (options.signal?.aborted) interrupt();
    else options.signal?.addEventListener('abort', interrupt);
    request.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, statusCode: null, error: err.message || err.code || 'request failed' }));
    request.end(body);
  });
}
