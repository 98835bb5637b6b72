import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { StringEnum } from '../../http/schemas.js';
import { named } from '../../http/openapi.js';

const CHECK_STATES = ['ok', 'failed', 'skipped'] as const;
type CheckState = (typeof CHECK_STATES)[number];
const Check = (description: string) => Type.Optional(StringEnum(CHECK_STATES, { description }));

const Readiness = Type.Object({
  status: StringEnum(['ok', 'unavailable'] as const),
  checks: Type.Object({
    shutdown: StringEnum(['ok', 'in_progress'] as const, { description: 'in_progress once SIGTERM/SIGINT was received: nothing else is checked' }),
    database: Check('the database answers'),
    migrations: Check('every migration of this version is applied (skipped while the database does not answer)'),
    redis: Check('Redis answers (present only when REDIS_URL is set)'),
  }),
});

/** How long a readiness check waits for the database or Redis: below the probe timeout docs/operators/monitoring.md suggests (3 s). */
const CHECK_TIMEOUT_MS = 1500;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Public health: `GET /api/health` (CONTRACT §1), and the probes of an orchestrator: liveness (the process serves;
 * nothing else is looked at, so a database outage never gets the process restarted) and readiness (the database
 * answers, is migrated, Redis answers when configured; 503 as soon as shutdown begins, so a load balancer stops
 * sending). None of them is rate limited or says more than which check failed.
 */
export default async function healthRoutes(app: App) {
  const common = { config: { rateLimit: false } } as const;

  app.get('/api/health', {
    ...common,
    schema: {
      tags: ['system'],
      summary: 'Service health: 200 when the database answers, 503 when it does not',
      security: [],
      response: {
        200: Type.Object({ status: Type.Literal('ok') }),
        503: Type.Object({ status: Type.Literal('unavailable') }),
      },
    },
  }, async (request, reply) => {
    try {
      await app.database.ping();
      return { status: 'ok' as const };
    } catch (err) {
      request.log.warn({ err }, 'health check: database unavailable');
      return reply.code(503).send({ status: 'unavailable' as const });
    }
  });

  app.get('/api/health/live', {
    ...common,
    schema: {
      tags: ['system'],
      summary: 'Liveness probe: 200 while the process serves requests (the database is not consulted)',
      security: [],
      response: { 200: Type.Object({ status: Type.Literal('ok') }) },
    },
  }, async () => ({ status: 'ok' as const }));

  // Migrations never come undone while the process runs: once seen applied, they are not looked up again.
  let migrated = false;
  app.get('/api/health/ready', {
    ...common,
    schema: {
      tags: ['system'],
      summary: 'Readiness probe: 200 when the database answers and is migrated and Redis (if configured) answers',
      description: 'Answers 503 with the failed checks otherwise, and at once from the moment shutdown begins.',
      security: [],
      response: { 200: named('Readiness', Readiness), 503: Readiness },
    },
  }, async (request, reply) => {
    if (app.lifecycle.stopping) return reply.code(503).send({ status: 'unavailable', checks: { shutdown: 'in_progress' } });
    const failed = (what: string) => (err: unknown): CheckState => {
      request.log.warn({ err }, `readiness check: ${what} unavailable`);
      return 'failed';
    };
    const redis = app.redis;
    const [database, redisState] = await Promise.all([
      app.database.ping(CHECK_TIMEOUT_MS).then((): CheckState => 'ok', failed('database')),
      redis
        // Still connecting (just started, or reconnecting): the ping waits for the connection, within the timeout.
        ? (redis.status !== 'end' && redis.status !== 'close' ? withTimeout(redis.ping(), CHECK_TIMEOUT_MS, 'Redis') : Promise.reject(new Error(`Redis connection is ${redis.status}`)))
          .then((): CheckState => 'ok', failed('Redis'))
        : undefined,
    ]);
    let migrations: CheckState = 'skipped';
    if (database === 'ok') {
      migrations = migrated ? 'ok' : await app.database.migrationsApplied(CHECK_TIMEOUT_MS).then((applied): CheckState => {
        if (!applied) request.log.warn('readiness check: database migrations are not all applied');
        return applied ? 'ok' : 'failed';
      }, failed('database (migrations)'));
      migrated = migrations === 'ok';
    }
    const checks = { shutdown: 'ok' as const, database, migrations, ...(redisState ? { redis: redisState } : {}) };
    const ok = database === 'ok' && migrations === 'ok' && (redisState ?? 'ok') === 'ok';
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks });
  });
}
