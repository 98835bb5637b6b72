import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import type { Database } from '../db/client.js';

export type Worker = { name: string; handler: (jobs: PgBoss.Job<any>[]) => Promise<unknown>; options?: PgBoss.WorkOptions };
export type Schedule = { name: string; cron: string };

/**
 * pg-boss on the service's own database (PostgreSQL or PGlite, through our executor): durable jobs, retries
 * and cron schedules; several instances coordinate through the same tables.
 */
export async function startQueue(database: Database, log: FastifyBaseLogger, workers: Worker[], schedules: Schedule[]) {
  const boss = new PgBoss({
    db: { executeSql: (text: string, values: unknown[]) => database.execute(text, values) },
    schema: 'pgboss',
    // PGlite is one connection: poll gently. PostgreSQL can afford the default cadence.
    ...(database.kind === 'pglite' ? { monitorStateIntervalSeconds: 60, maintenanceIntervalSeconds: 120 } : {}),
  } as PgBoss.ConstructorOptions);
  boss.on('error', (err) => log.error({ err }, 'job queue error'));
  await boss.start();
  for (const worker of workers) {
    await boss.createQueue(worker.name);
    await boss.work(worker.name, { pollingIntervalSeconds: 1, ...worker.options }, worker.handler as any);
  }
  for (const schedule of schedules) await boss.schedule(schedule.name, schedule.cron, {}, { tz: 'UTC' });
  return boss;
}
