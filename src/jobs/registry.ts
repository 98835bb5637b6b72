import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Mailer } from '../mail/mailer.js';

/** What a job handler works with: plain services, no request and no Fastify instance. */
export type Services = { config: Config; database: Database; mailer: Mailer; log: FastifyBaseLogger; jobs: Jobs };

export type JobDefinition<D extends object = object> = {
  name: string;
  handler: (data: D, services: Services) => Promise<void>;
  /** Cron expression (UTC) on which the job is queued by itself. */
  schedule?: string;
  /** Options every `send` of this job gets (retries, expiry, singleton key…). */
  sendOptions?: (data: D) => PgBoss.SendOptions;
  /** Runs when the job failed its last retry: record the failure where people see it (nothing stays pending). */
  exhausted?: (data: D, services: Services, error: unknown) => Promise<void>;
  /** Runs once the queue is up (e.g. resume work a crash interrupted). */
  onStart?: (services: Services) => Promise<void>;
  /** Runs when the queue stops, before its workers do (end work of the job's own, timers, connections). */
  onStop?: (services: Services) => Promise<void>;
};

/** A job, declared once: its name, handler and options. Every job is listed in `jobs/index.ts`. */
export const defineJob = <D extends object = object>(name: string, handler: JobDefinition<D>['handler'], options: Omit<JobDefinition<D>, 'name' | 'handler'> = {}): JobDefinition<D> =>
  ({ name, handler, ...options });

/**
 * The job queue: pg-boss on the service's own database (PostgreSQL or PGlite, through our executor), so jobs
 * are durable and several instances share them. Started and stopped by the app; `send` before start (or with
 * jobs off, as in most tests) logs and does nothing.
 */
export class Jobs {
  private boss: PgBoss | null = null;
  private services: Services | null = null;

  constructor(private readonly definitions: JobDefinition<never>[], private readonly log: FastifyBaseLogger) {}

  get running() {
    return this.boss !== null;
  }

  async start(services: Omit<Services, 'jobs'>) {
    const { database } = services;
    const boss = new PgBoss({
      db: { executeSql: (text: string, values: unknown[]) => database.execute(text, values) },
      schema: 'pgboss',
      // PGlite is one connection: poll gently. PostgreSQL can afford the default cadence.
      ...(database.kind === 'pglite' ? { monitorStateIntervalSeconds: 60, maintenanceIntervalSeconds: 120 } : {}),
    } as PgBoss.ConstructorOptions);
    boss.on('error', (err) => this.log.error({ err }, 'job queue error'));
    await boss.start();
    this.boss = boss;
    const all: Services = { ...services, jobs: this };
    this.services = all;
    for (const job of this.definitions) {
      await boss.createQueue(job.name);
      await boss.work<object>(job.name, { pollingIntervalSeconds: 1, includeMetadata: true }, async (batch) => {
        for (const { data, retryCount, retryLimit } of batch) {
          try {
            await job.handler(data as never, all);
          } catch (err) {
            this.log.error({ err, job: job.name, data, retryCount, retryLimit }, 'job failed');
            if (retryCount >= retryLimit) await job.exhausted?.(data as never, all, err).catch((e: unknown) => this.log.error({ err: e, job: job.name }, 'job failure not recorded'));
            throw err;
          }
        }
      });
      if (job.schedule) await boss.schedule(job.name, job.schedule, {}, { tz: 'UTC' });
    }
    for (const job of this.definitions) {
      await job.onStart?.(all).catch((err: unknown) => this.log.error({ err, job: job.name }, 'job start-up work failed'));
    }
  }

  async stop() {
    const boss = this.boss;
    const services = this.services;
    this.boss = null;
    this.services = null;
    if (services) {
      for (const job of this.definitions) await job.onStop?.(services).catch((err: unknown) => this.log.error({ err, job: job.name }, 'job stop work failed'));
    }
    await boss?.stop({ graceful: true, wait: true, timeout: 10_000 });
  }

  /**
   * Per queue: jobs waiting to run (created or due for a retry) and jobs running now; null while the queue is off.
   * Two counts per queue through pg-boss's own `getQueueSize`.
   */
  async queueSizes(): Promise<{ queue: string; waiting: number; active: number }[] | null> {
    const boss = this.boss;
    if (!boss) return null;
    return Promise.all(this.definitions.map(async ({ name }) => {
      const [waiting, unfinished] = await Promise.all([boss.getQueueSize(name), boss.getQueueSize(name, { before: 'completed' })]);
      return { queue: name, waiting, active: Math.max(0, unfinished - waiting) };
    }));
  }

  /** Queues a job. */
  async send<D extends object>(job: JobDefinition<D>, data: D, options: PgBoss.SendOptions = {}) {
    if (!this.boss) return this.log.warn({ job: job.name, data }, 'job queue is off: job not queued');
    await this.boss.send(job.name, data, { ...job.sendOptions?.(data), ...options });
  }
}
