import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Redis } from 'ioredis';
import type { Auth } from './auth/auth.js';
import type { TokenUse } from './auth/api-tokens.js';
import type { Principal } from './auth/guard.js';
import type { PrincipalCache } from './auth/principals.js';
import type { Config } from './config.js';
import type { ListRunner } from './data/list.js';
import type { Database } from './db/client.js';
import type { Metrics } from './http/metrics.js';
import type { Jobs } from './jobs/registry.js';
import type { Mailer } from './mail/mailer.js';
import type { BackgroundWork } from './background.js';

/** The service's Fastify instance (built by app.ts): its schemas are TypeBox, its decorations below. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    lists: ListRunner;
    auth: Auth;
    principals: PrincipalCache<Principal>;
    tokenUse: TokenUse;
    mailer: Mailer;
    /** Work started after an answer and not waited for (staff notices, reset mail): see src/background.ts. */
    background: BackgroundWork;
    jobs: Jobs;
    /** The rate-limit store when REDIS_URL is set (readiness checks it), else null. */
    redis: Redis | null;
    /** The app's metrics when METRICS_TOKEN is set, else null (nothing measured). */
    metrics: Metrics | null;
    /** `stopping` turns true when shutdown begins: readiness answers 503 from then on. */
    lifecycle: { stopping: boolean };
  }
  interface FastifyContextConfig {
    /** Rate-limit bucket of the route (CONTRACT §6); derived from the method when absent. */
    rateBucket?: 'auth' | 'read' | 'write';
    /** Answers carry an ETag and `If-None-Match` gets 304 (documented so in the OpenAPI document). */
    revalidates?: boolean;
  }
}
