import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { principalOf } from '../auth/guard.js';
import { tooManyRequests } from '../errors.js';

export type Bucket = 'auth' | 'read' | 'write';

/** Routes that are never limited (CONTRACT §6): health (and its probes), cron, metrics, and the API's own documentation. */
const UNLIMITED = /^\/api\/(health|cron\/|openapi\.json|docs|metrics(?:[/?]|$))/;

/** The bucket a request to `url` counts against, or null for the routes that are never limited. */
export function rateBucketOf(url: string, method: string, config: { rateLimit?: unknown; rateBucket?: Bucket } | undefined): Bucket | null {
  if (UNLIMITED.test(url) || config?.rateLimit === false) return null;
  return config?.rateBucket ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'write');
}

/**
 * CONTRACT §6: three per-minute buckets. Credential endpoints per IP; other reads and writes per user when
 * signed in, per IP otherwise. Runs before the guard, so 401/403 answers count too. Counters live in Redis
 * when REDIS_URL is set (shared by every instance), in memory otherwise.
 */
export async function registerRateLimits(app: FastifyInstance, options: { namespace?: string } = {}): Promise<Redis | undefined> {
  const { config } = app;
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false }) : undefined;
  redis?.on('error', (err) => app.log.warn({ err: { message: err.message } }, 'rate-limit store unavailable'));
  if (redis) app.addHook('onClose', async () => void redis.quit().catch(() => redis.disconnect()));

  await app.register(rateLimit, {
    global: false,
    redis,
    nameSpace: options.namespace ?? 'pms-rate-',
    skipOnError: true, // a Redis outage must not take the API down with it
  });

  const limits: Record<Bucket, number> = { auth: config.authRateLimit, read: config.readRateLimit, write: config.writeRateLimit };

  const handlers = Object.fromEntries(
    (Object.keys(limits) as Bucket[]).map((bucket) => [
      bucket,
      app.rateLimit({
        max: limits[bucket],
        timeWindow: 60_000,
        keyGenerator: async (request: FastifyRequest) => {
          if (bucket === 'auth') return `auth:${request.ip}`;
          const principal = await principalOf(app, request);
          // An API token has buckets of its own: an integration cannot use up its creator's, nor another token's.
          if (principal?.apiToken) return `${bucket}:token:${principal.apiToken.id}`;
          return principal ? `${bucket}:user:${principal.user.id}` : `${bucket}:ip:${request.ip}`;
        },
        errorResponseBuilder: (_request, context) => tooManyRequests(Math.max(1, Math.ceil(context.ttl / 1000))),
      }),
    ]),
  ) as Record<Bucket, (request: FastifyRequest, reply: FastifyReply) => Promise<void>>;

  app.addHook('onRequest', async (request, reply) => {
    const bucket = rateBucketOf(request.url, request.method, request.routeOptions.config);
    if (bucket) await handlers[bucket].call(app, request, reply);
  });

  // The plugin reports seconds until the reset; the contract promises the Unix time of the reset.
  // Synchronous (a callback, not a promise): it runs on every answer.
  app.addHook('onSend', (_request, reply, payload, done) => {
    const reset = reply.getHeader('x-ratelimit-reset');
    if (reset !== undefined && Number(reset) < 1e9) reply.header('x-ratelimit-reset', Math.ceil(Date.now() / 1000) + Number(reset));
    done(null, payload);
  });
  return redis;
}
