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

const failing = defineJob<{ n: number }>('test-always-fails', async ({ n }) => {
  attempts.push(n);
  throw new Error(`attempt ${attempts.length} failed`);
}, {
  sendOptions: () => ({ retryLimit: 2, retryDelay: 0 }),
  exhausted: async (data, _services, err) => {
    exhausted.push({ data, error: (err as Error).message });
  },
});

beforeAll(async () => {
  database = await createTestDatabase();
  const log = Fastify({ logger: false }).log; // silent
  jobs = new Jobs([failing as never], log);
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
  await waitFor(async () => (await state())[0]?.state === 'failed', PATIENCE_MS, 'the job to fail for good');
  expect(await state()).toEqual([{ state: 'failed', retry_count: 2 }]);
  expect(attempts).toEqual([7, 7, 7]); // the first try and two retries
  expect(exhausted).toEqual([{ data: { n: 7 }, error: 'attempt 3 failed' }]);
});
