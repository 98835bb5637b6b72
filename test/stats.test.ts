import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inquiries, inventoryUnits, leads, newsletterSubscriptions, reservations } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { as, countQueries, createTestApp, createUser, type TestContext } from './helpers.js';

// One request per module for a dashboard, exact, guarded by the module's read.

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
/** A list total being counted (not a grouped query): read with the snapshot it is exact in. */
const COUNT = /count\(\*\).*pg_current_snapshot/is;

beforeAll(async () => {
  ctx = await createTestApp();
  staff = await createUser(ctx, { crm: 'rwd', cms: 'rwd' });
  const plan = [
    ['new', 'website', '2026-03-01'], ['new', 'referral', '2026-03-01'], ['contacted', 'event', '2026-03-02'],
    ['qualified', 'social', '2026-03-04'], ['lost', 'website', '2026-02-27'],
  ] as const;
  for (const [status, source, day] of plan) {
    const lead = await make.lead(ctx, { status, source }, staff);
    await ctx.database.db.update(leads).set({ created_at: new Date(`${day}T10:00:00Z`) }).where(eq(leads.id, lead.id));
  }
  const alpha = await make.project(ctx, { name: 'Alpha Homes', published: true }, staff);
  const beta = await make.project(ctx, { name: 'Beta Towers' }, staff);
  const unit = await make.unit(ctx, { project_id: alpha.id }, staff);
  await make.unit(ctx, { project_id: alpha.id }, staff);
  await make.unit(ctx, { project_id: beta.id }, staff);
  await make.reservation(ctx, { inventory_id: unit.id }, staff);
  await make.inquiry(ctx, {}, staff);
  const answered = await make.inquiry(ctx, {}, staff);
  expect((await as(ctx, staff).patch(`/api/crm/inquiries/${answered.id}`, { status: 'closed' })).statusCode).toBe(200);
  await make.newsletter(ctx, {}, staff);
  await make.campaign(ctx, { name: 'Spring launch' }, staff);
  await make.article(ctx, { published: true, type: 'blog' }, staff);
  await make.article(ctx, {}, staff);
  await make.career(ctx, {}, staff);
});
afterAll(() => ctx.close());

const crmStats = async (query = '?from=2026-02-28&to=2026-03-04') => {
  const res = await as(ctx, staff).get(`/api/crm/stats${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
/** count(*) straight from the database, grouped: what the figures must equal. */
const grouped = async (table: typeof leads | typeof inventoryUnits | typeof reservations | typeof inquiries | typeof newsletterSubscriptions, column: string) => {
  const rows = await ctx.database.db.execute(sql`select ${sql.identifier(column)} as key, count(*)::int as n from ${table} group by 1`);
  const list = (Array.isArray(rows) ? rows : (rows as { rows: { key: string; n: number }[] }).rows) as { key: string; n: number }[];
  return Object.fromEntries(list.map((row) => [row.key, Number(row.n)]));
};
const withZeros = (values: string[], counts: Record<string, number>) => Object.fromEntries(values.map((v) => [v, counts[v] ?? 0]));

describe('GET /api/crm/stats', () => {
  test('every figure equals what the database counts', async () => {
    const stats = await crmStats();
    expect(stats.range).toEqual({ from: '2026-02-28', to: '2026-03-04' });
    expect(stats.leads.total).toBe(5);
    expect(stats.leads.by_status).toEqual(withZeros(['new', 'contacted', 'qualified', 'converted', 'lost'], await grouped(leads, 'status')));
    expect(stats.leads.by_source).toEqual(withZeros(['website', 'referral', 'event', 'social'], await grouped(leads, 'source')));
    expect(stats.leads.new_in_range).toBe(4);
    expect(stats.leads.new_per_day).toEqual([
      { day: '2026-02-28', count: 0 }, { day: '2026-03-01', count: 2 }, { day: '2026-03-02', count: 1 }, { day: '2026-03-03', count: 0 }, { day: '2026-03-04', count: 1 },
    ]);
    expect(stats.inventory.by_status).toEqual({ available: 2, reserved: 1, sold: 0 });
    expect(stats.inventory.total).toBe(3);
    expect(stats.inventory.by_project).toEqual([
      { project: { id: expect.any(String), name: 'Alpha Homes' }, total: 2, by_status: { available: 1, reserved: 1, sold: 0 } },
      { project: { id: expect.any(String), name: 'Beta Towers' }, total: 1, by_status: { available: 1, reserved: 0, sold: 0 } },
    ]);
    expect(stats.reservations.by_status).toEqual(withZeros(['pending', 'confirmed', 'cancelled'], await grouped(reservations, 'status')));
    expect(stats.inquiries.by_status).toEqual({ unread: 1, read: 0, responded: 0, closed: 1 });
    expect(stats.inquiries.open).toBe(1);
    expect(stats.newsletter.by_status).toEqual({ subscribed: 1, unsubscribed: 0 });
    expect(stats.recent_campaigns).toEqual([
      { id: expect.any(String), name: 'Spring launch', status: 'draft', scheduled_at: null, sent_at: null, deliveries: { total: 0, sent: 0, failed: 0, pending: 0 } },
    ]);
  });

  test('figures follow changes without counting again', async () => {
    // The first request of a range counts what it has not seen yet (each day of it, at least).
    expect(await countQueries(ctx.database, COUNT, () => crmStats(''))).toBeGreaterThanOrEqual(30);
    const lead = await make.lead(ctx, { status: 'contacted', source: 'event' }, staff);
    expect((await as(ctx, staff).patch(`/api/crm/leads/${lead.id}`, { status: 'converted' })).statusCode).toBe(200);
    let stats: any;
    const counts = await countQueries(ctx.database, COUNT, async () => {
      stats = await crmStats('');
    });
    expect(stats.leads.total).toBe(6);
    expect(stats.leads.by_status.converted).toBe(1);
    expect(stats.leads.by_source.event).toBe(2);
    expect(stats.leads.new_per_day.at(-1).count).toBe(1); // today (the default range ends today)
    // Every figure was brought forward from the change log.
    expect(counts).toBe(0);
  });

  test('the default range is the last 30 days up to today', async () => {
    const stats = await crmStats('');
    expect(stats.leads.new_per_day).toHaveLength(30);
    expect(stats.range.to).toBe(new Date().toISOString().slice(0, 10));
  });

  test('a bad range is a 400 on the field', async () => {
    const cases: [string, Record<string, string>][] = [
      ['?from=2026-03-05&to=2026-03-01', { from: 'must not be after to' }],
      ['?from=2024-01-01&to=2026-03-01', { from: 'must be at most 366 days before to' }],
      ['?from=2024-01-01&to=2025-01-01', { from: 'must be at most 366 days before to' }], // 367 days
      ['?from=0001-01-01&to=9999-12-31', { from: 'must be at most 366 days before to' }], // refused before any day is listed
      ['?from=2026-02-30', { from: 'must be a valid date' }],
      ['?since=2026-01-01', { since: 'is not an allowed field' }],
    ];
    for (const [query, details] of cases) {
      const res = await as(ctx, staff).get(`/api/crm/stats${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().details).toEqual(details);
    }
    // The widest range allowed: 366 days, every one of them listed.
    const widest = await as(ctx, staff).get('/api/crm/stats?from=2024-01-01&to=2024-12-31');
    expect(widest.statusCode, widest.body).toBe(200);
    expect(widest.json().leads.new_per_day).toHaveLength(366);
  });

  test('guarded by crm read', async () => {
    expect((await as(ctx, await createUser(ctx, { cms: 'rwd' })).get('/api/crm/stats')).statusCode).toBe(403);
    expect((await as(ctx, await createUser(ctx, { crm: 'r' })).get('/api/crm/stats')).statusCode).toBe(200);
  });
});

describe('GET /api/cms/stats', () => {
  test('published and draft counts, projects by status, articles by type', async () => {
    const res = await as(ctx, staff).get('/api/cms/stats');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      projects: { total: 2, published: 1, draft: 1, by_status: { active: 2, upcoming: 0, completed: 0, 'on-hold': 0 } },
      articles: { total: 2, published: 1, draft: 1, by_type: { news: 1, announcement: 0, blog: 1 } },
      careers: { total: 1, published: 0, draft: 1 },
    });
  });

  test('guarded by cms read', async () => {
    expect((await as(ctx, await createUser(ctx, { crm: 'rwd' })).get('/api/cms/stats')).statusCode).toBe(403);
  });
});
