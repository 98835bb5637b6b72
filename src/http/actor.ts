import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/guard.js';
import type { Actor } from '../data/actor.js';

/** The request's actor: the signed-in user (if any), the client IP (honouring TRUST_PROXY) and user agent. */
export async function actorOf(app: FastifyInstance, request: FastifyRequest): Promise<Actor> {
  const principal = await principalOf(app, request).catch(() => null);
  return {
    userId: principal?.user.id ?? null,
    ip: request.ip ?? null,
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'].slice(0, 1000) : null,
  };
}
