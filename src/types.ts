import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { ListRunner } from './http/list.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    lists: ListRunner;
  }
}
