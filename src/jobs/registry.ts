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
  /**
   * Cron expression (UTC) on which the job is queued by itself; or the one the configuration gives (undefined: the
   * job is not scheduled, and a schedule an earlier start left is removed).
   */
  schedule?: string | ((config: Config) => string | undefined);
  /** Options of the jobs the schedule queues (retries, expiry). */
  scheduleOptions?: PgBoss.SendOptions;
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

/** Whether pg-boss's `startAfter` (a date, an ISO string or seconds from now) puts a job in the future. */
function isLater(startAfter: PgBoss.SendOptions['startAfter']) {
  if (startAfter === undefined) return false;
  if (typeof startAfter === 'number') return startAfter > 0;
  return new Date(startAfter).getTime() > Date.now();
}

/** deadlock_detected, unique_violation: how PostgreSQL ends the loser of two concurrent first installs (see `raced`). */
const INSTALL_RACES = new Set(['40P01', '23505']);

/**
 * Runs `attempt` again (up to 5 times) when it lost a race with another instance starting at once on a new database.
 * pg-boss's first install is serialised by an advisory lock, but the instance that waited for it can still fail: it
 * looked for the schema before taking the lock, and its session's catalog cache still says it is missing (a unique
 * violation in `pg_namespace`). Creating a queue inserts its row, then attaches its partition with a foreign key to
 * the queue table: two instances creating queues at once can deadlock. Tried again, each finds the work done.
 */
async function raced<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (!INSTALL_RACES.has((err as { code?: string }).code ?? '') || tries >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50 * tries));
    }
  }
}

/**
 * The job queue: pg-boss on the service's own database (PostgreSQL or PGlite, through our executor), so jobs
 * are durable and several instances share them. Started and stopped by the app; `send` before start (or with
 * jobs off, as in most tests) logs and does nothing.
 */
export class Jobs {
  private boss: PgBoss | null = null;
  private services: Services | null = null;
  /** This instance's worker of each queue, woken when a job is queued here instead of at its next poll. */
  private workers = new Map<string, string>();

  /**
   * `pollingIntervalSeconds`: how often an idle worker looks for due jobs it was not told of (jobs made due by time, or
   * queued by another instance). Tests set it far beyond their length, so that only what they test can start a job.
   */
  constructor(private readonly definitions: JobDefinition<never>[], private readonly log: FastifyBaseLogger, private readonly options: { pollingIntervalSeconds?: number } = {}) {}

  get running() {
    return this.boss !== null;
  }

  async start(services: Omit<Services, 'jobs'>) {
    const { database } = services;
    // A pg-boss whose start failed cannot start again: each attempt has a fresh one (nothing runs before start succeeds).
    const boss = await raced(async () => {
      const attempt = new PgBoss({
        db: { executeSql: (text: string, values: unknown[]) => database.execute(text, values) },
        schema: 'pgboss',
        // PGlite is one connection: poll gently. PostgreSQL can afford the default cadence.
        ...(database.kind === 'pglite' ? { monitorStateIntervalSeconds: 60, maintenanceIntervalSeconds: 120 } : {}),
      } as PgBoss.ConstructorOptions);
      attempt.on('error', (err) => this.log.error({ err }, 'job queue error'));
      await attempt.start();
      return attempt;
    });
    this.boss = boss;
    const all: Services = { ...services, jobs: this };
    this.services = all;
    for (const job of this.definitions) {
      await raced(() => boss.createQueue(job.name));
      const worker: string = await boss.work<object>(job.name, { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 1, includeMetadata: true }, async (batch) => {
        try {
          for (const { data, retryCount, retryLimit } of batch) {
            try {
              await job.handler(data as never, all);
            } catch (err) {
              this.log.error({ err, job: job.name, data, retryCount, retryLimit }, 'job failed');
              if (retryCount >= retryLimit) await job.exhausted?.(data as never, all, err).catch((e: unknown) => this.log.error({ err: e, job: job.name }, 'job failure not recorded'));
              throw err;
            }
          }
        } finally {
          // pg-boss waits a polling interval after every fetch, even one that found work: a queue with a backlog
          // would drain one job a second. A fetch that found a job looks again at once; an empty one waits. (pg-boss
          // records the batch's outcome after this returns: a retry due at once may be found only at the next poll.)
          boss.notifyWorker(worker);
        }
      });
      this.workers.set(job.name, worker);
      const schedule = typeof job.schedule === 'function' ? job.schedule(services.config) : job.schedule;
      if (schedule) await boss.schedule(job.name, schedule, {}, { ...job.scheduleOptions, tz: 'UTC' });
      else if (job.schedule) await boss.unschedule(job.name);
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
    this.workers.clear();
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

  /**
   * Queues a job. One due now starts at once on this instance (its worker is woken, not left to its next poll):
   * an import or a campaign sent from the console begins while the person is still looking. Callers send after
   * their commit, so the job's own reads see what the request wrote.
   */
  async send<D extends object>(job: JobDefinition<D>, data: D, options: PgBoss.SendOptions = {}) {
    const boss = this.boss;
    if (!boss) return this.log.warn({ job: job.name, data }, 'job queue is off: job not queued');
    const sendOptions = { ...job.sendOptions?.(data), ...options };
    await boss.send(job.name, data, sendOptions);
    if (!isLater(sendOptions.startAfter)) this.wake(job);
  }

  /** Looks for due jobs of `job`'s queue now instead of at its worker's next poll (e.g. a job just made due). */
  wake(job: JobDefinition<never>) {
    const worker = this.workers.get(job.name);
    if (worker) this.boss?.notifyWorker(worker);
  }
}
