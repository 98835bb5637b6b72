import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { Auth } from './auth/auth.js';
import type { ListRunner } from './http/list.js';
import type { Mailer } from './mail/mailer.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    lists: ListRunner;
    auth: Auth;
    mailer: Mailer;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Rate-limit bucket of the route (CONTRACT §6); derived from the method when absent. */
    rateBucket?: 'auth' | 'read' | 'write';
  }
}
