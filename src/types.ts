import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { Auth } from './auth/auth.js';
import type PgBoss from 'pg-boss';
import type { ListRunner } from './http/list.js';
import type { Worker } from './jobs/queue.js';
import type { Mailer } from './mail/mailer.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    lists: ListRunner;
    auth: Auth;
    mailer: Mailer;
    /** Job workers modules contribute before the app is ready. */
    workers: Worker[];
    /** The running queue (null when jobs are off). */
    queue: PgBoss | null;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Rate-limit bucket of the route (CONTRACT §6); derived from the method when absent. */
    rateBucket?: 'auth' | 'read' | 'write';
  }
}
