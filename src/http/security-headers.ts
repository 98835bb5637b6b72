import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * The headers helmet sets for `options`, read once. With no per-request part (no CSP nonces), helmet's answer is the
 * same for every request, so working it out again for each one (as @fastify/helmet does, building helmet's middleware
 * chain per request) was about a tenth of a list request's CPU.
 */
export function securityHeaders(options: Readonly<HelmetOptions>): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  let finished = false;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish synchronously: its headers cannot be read once');
  return headers;
}

/**
 * Every answer carries the security headers and its request id (a client's, when safe, else a new one: see `genReqId`),
 * set in one synchronous hook that runs before any other, so errors thrown by later hooks (401, 403, 429) carry them too.
 */
export function registerResponseHeaders(app: FastifyInstance, options: Readonly<HelmetOptions>) {
  const headers = securityHeaders(options);
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    reply.header('x-request-id', request.id);
    done();
  });
}
