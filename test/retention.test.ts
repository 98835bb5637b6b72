import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { retentionBatch } from '../src/audit/retention.js';
import { activityLogs } from '../src/db/schema/index.js';
import { as, CRON_SECRET, createTestApp, createUser, none, type TestContext } from './helpers.js';

const URL = '/api/cron/activity-logs-retention';
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestApp({ ACTIVITY_LOG_RETENTION_DAYS: '90' });
});
afterAll(async () => {
  await ctx?.close();
});

const cron = (authorization?: string, c: TestContext = ctx) =>
  as(c, none, { headers: authorization ? { authorization } : {} }).post(URL);

const count = async (where = sql`true`) =>
  Number((await ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(activityLogs).where(where))[0].n);

describe('authentication', () => {
  test('missing, wrong or non-bearer token → 401 {error: Authentication required}', async () => {
    for (const header of [undefined, 'Bearer wrong', `Bearer ${CRON_SECRET}-but-longer`, CRON_SECRET, `Basic ${CRON_SECRET}`]) {
      const res = await cron(header);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication required' });
    }
  });

  test('a user session is not enough', async () => {
    const admin = await createUser(ctx, { iam: 'rwd' });
    expect((await cron(admin.headers.authorization)).statusCode).toBe(401);
  });

  test('CRON_SECRET unset → 401 for everyone', async () => {
    const own = await createTestApp({ CRON_SECRET: undefined });
    try {
      expect(own.config.cronSecret).toBeFalsy();
      for (const header of [undefined, 'Bearer ', `Bearer ${CRON_SECRET}`, 'Bearer undefined']) {
        const res = await cron(header, own);
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: 'Authentication required' });
      }
    } finally {
      await own.close();
    }
  });
});

describe('purge', () => {
  const insertAged = (n: number, ageDays: number, resource: string) =>
    ctx.database.execute(
      `insert into activity_logs (id, user_id, action, module, resource, resource_id, changes, created_at)
       select gen_random_uuid(), null, 'create', 'cms', $1, gen_random_uuid(), '{"before":{},"after":{}}'::jsonb, now() - make_interval(days => $2::int) - (g * interval '1 second')
       from generate_series(1, $3::int) g`,
      [resource, ageDays, n],
    );

  test('logs older than the retention are deleted, newer ones kept', async () => {
    await insertAged(3, 91, 'old');
    await insertAged(2, 89, 'recent');
    await insertAged(1, 0, 'today');
    const res = await cron(`Bearer ${CRON_SECRET}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: 3, message: expect.any(String) });
    expect(await count(sql`resource = 'old'`)).toBe(0);
    expect(await count(sql`resource = 'recent'`)).toBe(2);
    expect(await count(sql`resource = 'today'`)).toBe(1);
    // Nothing left to purge.
    expect((await cron(`Bearer ${CRON_SECRET}`)).json().deleted).toBe(0);
  });

  test('old rows are deleted in batches; the answer counts them all and recent rows remain', async () => {
    // Five full batches of 100 (the last full one is followed by an empty one) prove the loop as well as 200,000
    // rows in batches of 5,000 did, in a fraction of the time.
    const defaultSize = retentionBatch.size;
    retentionBatch.size = 100;
    onTestFinished(() => {
      retentionBatch.size = defaultSize;
    });
    const OLD = 5 * retentionBatch.size;
    await insertAged(OLD, 120, 'bulk');
    await insertAged(5, 30, 'fresh');
    const admin = await createUser(ctx, { iam: 'r' });
    // The list total is not served stale after the purge.
    const listed = async () => (await as(ctx, admin).get('/api/iam/activity-logs?module=cms')).json().pagination.total;
    const before = await listed();
    expect(before).toBeGreaterThanOrEqual(OLD + 5);
    const res = await cron(`Bearer ${CRON_SECRET}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().deleted).toBe(OLD);
    expect(res.json().message).toContain(String(OLD));
    expect(await count(sql`resource = 'bulk'`)).toBe(0);
    expect(await count(sql`resource = 'fresh'`)).toBe(5);
    expect(await listed()).toBe(before - OLD);
  });
});
