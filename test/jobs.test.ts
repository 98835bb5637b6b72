import Fastify from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database } from '../src/db/client.js';
import { defineJob, Jobs, type Services } from '../src/jobs/registry.js';
import { createTestDatabase, PATIENCE_MS, testConfig, waitFor } from './helpers.js';

// The job queue's failure path (CONTRACT §13: a campaign whose delivery fails for any reason shows its deliveries
// failed): a job that fails its last retry hands its failure to `exhausted`, once; earlier failures are retried.

let database: Database;
let jobs: Jobs;
const attempts: number[] = [];
const exhausted: { data: { n: number }; error: string }[] = [];
/** The jobs of the backlog case that ran. */
const ran: number[] = [];
/** No worker looks again on its own within a test: only a job sent here, or the work it just found, makes it look. */
const HOUR_S = 3600;

const failing = defineJob<{ n: number }>('test-always-fails', async ({ n }) => {
  attempts.push(n);
  throw new Error(`attempt ${attempts.length} failed`);
}, {
  sendOptions: () => ({ retryLimit: 2, retryDelay: 0 }),
  exhausted: async (data, _services, err) => {
    exhausted.push({ data, error: (err as Error).message });
  },
});

const counted = defineJob<{ n: number }>('test-backlog', async ({ n }) => {
  ran.push(n);
});

beforeAll(async () => {
  database = await createTestDatabase();
  const log = Fastify({ logger: false }).log; // silent
  jobs = new Jobs([failing as never, counted as never], log, { pollingIntervalSeconds: HOUR_S });
  await jobs.start({ config: testConfig(), database, mailer: { send: async () => {} } as never, log } as Omit<Services, 'jobs'>);
});
afterAll(async () => {
  await jobs?.stop();
  await database?.close();
});

test('a job failing every attempt is retried, then its last failure goes to `exhausted`, once', async () => {
  await jobs.send(failing, { n: 7 });
  // Failed is pg-boss's last state for a job: once the queue shows it, no attempt is left to come.
  const state = async () => (await database.execute(`select state, retry_count from pgboss.job where name = 'test-always-fails'`)).rows;
  // The worker is told to look while the test waits: pg-boss records a failure after the handler has thrown, so the
  // worker's own look right after it may come first (PostgreSQL) and the retry would wait for its next poll (an hour).
  await waitFor(async () => {
    jobs.wake(failing as never);
    return (await state())[0]?.state === 'failed';
  }, PATIENCE_MS, 'the job to fail for good');
  expect(await state()).toEqual([{ state: 'failed', retry_count: 2 }]);
  expect(attempts).toEqual([7, 7, 7]); // the first try and two retries
  expect(exhausted).toEqual([{ data: { n: 7 }, error: 'attempt 3 failed' }]);
});

test('a backlog drains at once: a worker that found a job looks again without waiting for its next poll', async () => {
  // Twenty jobs due now, queued behind the worker's back (as another instance, or the time they were due, would):
  // it learns of them once, and takes them one fetch after another, not one per polling interval (an hour here).
  await database.execute(`insert into pgboss.job (name, data) select 'test-backlog', json_build_object('n', g) from generate_series(1, 20) g`);
  jobs.wake(counted as never);
  await waitFor(() => ran.length === 20, PATIENCE_MS, 'every job of the backlog to run');
  expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
});
