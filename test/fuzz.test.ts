import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { make } from './factories.js';
import { answerProblem, type Operation, operationsOf, type Pools, requestsFor } from './fuzz.js';
import { as, createTestApp, createUser, CRON_SECRET, resolvedOpenapi, type TestContext } from './helpers.js';

// CONTRACT §13: generated requests against every operation of /api/openapi.json, as a caller with every permission;
// no answer is a 5xx and every 4xx has the contract's error body. `npm test` sends FUZZ_RUNS (default 25) requests
// per operation, `npm run fuzz` many more; FUZZ_SEED replays a run.
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const ALL = { cms: 'rwd', crm: 'rwd', iam: 'rwd' } as const;
/** Metrics on, so their endpoint is in the document and fuzzed too. */
const METRICS_TOKEN = 'fuzz-metrics-token-0123456789abcdef';

/**
 * A built console, as `npm start` serves: a generated path whose dot segments resolve outside /api and /uploads
 * (`/uploads/%2e%2e` is `/` to inject's URL parser, as to a browser's) is the console's page, which answers 503 only
 * while the console has not been built, a state of the checkout the API's answers must not depend on.
 */
const consoleDir = mkdtempSync(join(tmpdir(), 'pms-fuzz-console-'));
mkdirSync(join(consoleDir, 'assets'));
writeFileSync(join(consoleDir, 'index.html'), '<!doctype html><title>Console</title>');

let ctx: TestContext;
let operations: Operation[];
let pools: Pools;
let caller: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp({ ALLOWED_ORIGINS: 'https://console.example.com', METRICS_TOKEN }, { consoleDir, ...(process.env.FUZZ_LOG ? { logger: { level: 'error' } } : {}) });
  caller = await createUser(ctx, ALL, { name: 'Fuzz Caller' });
  // Records to point at, one or more of each kind.
  const project = await make.project(ctx, { name: 'Fuzz Residences', status: 'active' });
  const gallery = await as(ctx, caller).post(`/api/cms/projects/${project.id}/galleries`, { images: [{ image_url: 'https://cdn.example.com/a.jpg' }] });
  const article = await make.article(ctx, { title: 'Fuzz News', published: true });
  const career = await make.career(ctx, { title: 'Fuzz Career', published: true });
  const unit = await make.unit(ctx, { project_id: project.id });
  const reservation = await make.reservation(ctx, {});
  const user = await make.user(ctx);
  // Another user's permission row: the caller's own could be taken away by a generated PATCH or DELETE.
  const grantee = await createUser(ctx, { cms: 'r' });
  const access = (await as(ctx, caller).get(`/api/iam/module-access/${grantee.id}`)).json().data[0];
  const records = [
    project, article, career, unit, reservation, user, await make.amenity(ctx), await make.department(ctx), await make.lead(ctx, { email: 'fuzz@example.com' }),
    await make.inquiry(ctx), await make.newsletter(ctx), await make.campaign(ctx),
  ];
  // A webhook endpoint (its URL never answers: the queue is off here) and a delivery of it.
  const webhook = (await as(ctx, caller).post('/api/iam/webhooks', { url: 'http://127.0.0.1:9/fuzz', events: ['*'] })).json();
  const delivery = (await as(ctx, caller).post(`/api/iam/webhooks/${webhook.id}/test`)).json();
  const logs = (await as(ctx, caller).get('/api/iam/activity-logs?limit=1')).json().data;
  pools = {
    ids: [...records.map((r) => r.id), ...gallery.json().ids, access.id, logs[0].id, webhook.id, delivery.id],
    slugs: ['fuzz-residences', 'fuzz-news', 'fuzz-career', 'missing-slug'],
  };
  const document = await resolvedOpenapi(ctx);
  // Deletes last, so the other operations find the records.
  // The live stream never ends (inject would wait for it forever); test/live.test.ts sends it bad input through a real server.
  operations = operationsOf(document).filter((op) => op.path !== '/api/live').sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}, 180_000);
afterAll(async () => {
  await ctx?.close();
  rmSync(consoleDir, { recursive: true, force: true });
});

/** Who sends an operation's requests: its own fresh user for the auth routes (they sign out, change passwords…). */
async function callerFor(op: Operation): Promise<Record<string, string>> {
  if (op.path.startsWith('/api/cron/')) return { authorization: `Bearer ${CRON_SECRET}` };
  if (op.path === '/api/metrics') return { authorization: `Bearer ${METRICS_TOKEN}` };
  if (op.path.startsWith('/api/auth/')) return (await createUser(ctx, ALL)).headers;
  return caller.headers;
}

describe('fuzz: every operation of the OpenAPI document', () => {
  test('the document lists the operations', () => {
    expect(operations.length).toBeGreaterThan(90);
  });

  // Deadline: the suite's hang guard (vitest.config.ts), or FUZZ_TIMEOUT_MS (`npm run fuzz`, many more requests).
  test(`${RUNS} generated requests per operation: never a 5xx, every 4xx the contract's error body`, async () => {
    let sent = 0;
    const statuses = new Map<number, number>();
    for (const op of operations) {
      const auth = await callerFor(op);
      let failure = '';
      let current = '';
      // fc.check, not fc.assert: the report is our short account of the request, not a dump of megabyte values.
      const run = await fc.check(fc.asyncProperty(requestsFor(op, pools, auth), async (request) => {
        current = request.summary;
        const res = await ctx.app.inject(request.inject);
        sent++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const problem = answerProblem(res.statusCode, res.headers['content-type'] as string | undefined, res.body);
        if (problem) failure = `${request.summary}\n→ ${problem}`;
        return !problem;
      }), { seed: SEED, numRuns: RUNS, endOnFailure: true });
      if (run.failed) throw new Error(`${op.method} ${op.path} (seed ${SEED}): ${failure || `${current}\n→ ${String(run.errorInstance)}`}`);
    }
    console.log(`fuzz: ${sent} requests over ${operations.length} operations, seed ${SEED}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  }, process.env.FUZZ_TIMEOUT_MS ? Number(process.env.FUZZ_TIMEOUT_MS) : undefined);
});
