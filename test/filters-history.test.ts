import { and, eq, sql } from 'drizzle-orm';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, leads } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { as, createTestApp, createUser, type TestContext } from './helpers.js';

// Several values per enum filter, date ranges on lists and exports, a record's own history.

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
let crmReader: Awaited<ReturnType<typeof createUser>>;
const ids: Record<string, string> = {};

const DAY = 24 * 3600 * 1000;
const day = (offset: number) => new Date(Date.UTC(2026, 0, 10) + offset * DAY);

beforeAll(async () => {
  ctx = await createTestApp();
  staff = await createUser(ctx, { crm: 'rwd' });
  crmReader = await createUser(ctx, { crm: 'r' });
  const statuses = ['new', 'contacted', 'qualified', 'lost', 'new'] as const;
  for (const [i, status] of statuses.entries()) {
    const res = await as(ctx, staff).post('/api/crm/leads', { first_name: `Filter${i}`, last_name: 'Range', email: `filter${i}@example.com`, status });
    expect(res.statusCode).toBe(201);
    ids[i] = res.json().id;
    // Spread over days 0..4 (2026-01-10 … 2026-01-14), at noon UTC.
    await ctx.database.db.update(leads).set({ created_at: new Date(day(i).getTime() + 12 * 3600 * 1000) }).where(eq(leads.id, ids[i]));
  }
});
afterAll(() => ctx.close());

const names = async (query: string, who = staff) => {
  const res = await as(ctx, who).get(`/api/crm/leads?${query}&q=Range`);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.pagination.total).toBe(body.data.length);
  return (body.data as { first_name: string }[]).map((lead) => lead.first_name).sort();
};

describe('several values for an enum filter', () => {
  test('comma-separated values select any of them', async () => {
    expect(await names('status=new,contacted')).toEqual(['Filter0', 'Filter1', 'Filter4']);
  });

  test('a repeated parameter does the same', async () => {
    expect(await names('status=qualified&status=lost')).toEqual(['Filter2', 'Filter3']);
  });

  test('one value still works, and the total counts what the filter selects', async () => {
    expect(await names('status=new')).toEqual(['Filter0', 'Filter4']);
  });

  test('a bad value among several is a 400 on the parameter, naming the allowed values', async () => {
    const res = await as(ctx, staff).get('/api/crm/leads?status=new,bogus');
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual({ status: expect.stringContaining('must be one of: new, contacted') });
  });

  test('the total follows writes (a cached total is brought forward with the multi-value filter)', async () => {
    expect(await names('status=qualified,converted')).toEqual(['Filter2']);
    expect((await as(ctx, staff).patch(`/api/crm/leads/${ids[3]}`, { status: 'converted' })).statusCode).toBe(200);
    expect(await names('status=qualified,converted')).toEqual(['Filter2', 'Filter3']);
    expect((await as(ctx, staff).patch(`/api/crm/leads/${ids[3]}`, { status: 'lost' })).statusCode).toBe(200);
    expect(await names('status=qualified,converted')).toEqual(['Filter2']);
  });

  test('other lists take several values too (activity logs by action)', async () => {
    const res = await as(ctx, await createUser(ctx, { iam: 'r', crm: 'r' })).get('/api/iam/activity-logs?action=update,delete&resource=leads');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((log: { action: string }) => log.action)).toEqual(['update', 'update']);
  });
});

describe('date ranges', () => {
  test('created_from and created_to take whole days, inclusive (UTC)', async () => {
    expect(await names('created_from=2026-01-11&created_to=2026-01-13')).toEqual(['Filter1', 'Filter2', 'Filter3']);
    expect(await names('created_to=2026-01-10')).toEqual(['Filter0']);
    expect(await names('created_from=2026-01-14')).toEqual(['Filter4']);
  });

  test('bounds may be instants', async () => {
    expect(await names('created_from=2026-01-11T12:00:00Z&created_to=2026-01-12T11:59:59Z')).toEqual(['Filter1']);
    expect(await names('created_from=2026-01-11T13:00:00%2B01:00&created_to=2026-01-11T12:00:00Z')).toEqual(['Filter1']);
  });

  test('ranges combine with several values', async () => {
    expect(await names('status=new,lost&created_from=2026-01-12')).toEqual(['Filter3', 'Filter4']);
  });

  test('a bound that is neither a day nor an instant is a 400 saying what is expected', async () => {
    for (const bad of ['2026-02-30', 'yesterday', '2026-01-11T25:00:00Z', '2026-01-11T10:00:00']) {
      const res = await as(ctx, staff).get(`/api/crm/leads?created_from=${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().details.created_from).toMatch(/YYYY-MM-DD/);
    }
  });

  test('extreme bounds are answered, not failed', async () => {
    expect(await names('created_to=9999-12-31T23:59:59-05:00&created_from=0001-01-01T00:00:00%2B05:00')).toHaveLength(5);
    expect(await names('created_from=9999-12-31')).toEqual([]);
  });

  test('exports take the same filters and ranges', async () => {
    const res = await as(ctx, staff).get('/api/crm/leads/export?q=Range&status=new,qualified&created_to=2026-01-12');
    expect(res.statusCode).toBe(200);
    const rows = parse(res.body, { columns: true }) as { first_name: string }[];
    expect(rows.map((row) => row.first_name).sort()).toEqual(['Filter0', 'Filter2']);
  });

  test('reservations filter by reservation_date, campaigns by scheduled, subscribers by subscribed', async () => {
    const admin = await createUser(ctx, { crm: 'rwd', cms: 'rwd' });
    const reservation = await make.reservation(ctx, { reservation_date: '2026-03-05T10:00:00Z' }, admin);
    const inRange = await as(ctx, admin).get('/api/crm/reservations?reservation_date_from=2026-03-05&reservation_date_to=2026-03-05');
    expect(inRange.json().data.map((r: { id: string }) => r.id)).toEqual([reservation.id]);
    expect((await as(ctx, admin).get('/api/crm/reservations?reservation_date_from=2026-03-06')).json().pagination.total).toBe(0);
    expect((await as(ctx, admin).get('/api/crm/campaigns?scheduled_from=2026-01-01')).statusCode).toBe(200);
    expect((await as(ctx, admin).get('/api/crm/newsletters?subscribed_from=2026-01-01')).statusCode).toBe(200);
    // Each list names the ranges it has: an unknown one is an unknown parameter.
    expect((await as(ctx, admin).get('/api/crm/leads?scheduled_from=2026-01-01')).json().details).toEqual({ scheduled_from: 'is not an allowed field' });
  });
});

describe('a record\'s history', () => {
  test('lists every change of the record, newest first, for a reader of its module', async () => {
    const lead = ids[3];
    const res = await as(ctx, crmReader).get(`/api/crm/leads/${lead}/history`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.map((log: { action: string }) => log.action)).toEqual(['update', 'update', 'create']);
    expect(body.data[0]).toMatchObject({ resource: 'leads', resource_id: lead, module: 'crm', user: { id: staff.id }, changes: { before: { status: 'converted' }, after: { status: 'lost' } } });
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });
  });

  test('pages', async () => {
    const res = await as(ctx, crmReader).get(`/api/crm/leads/${ids[3]}/history?limit=2&page=2`);
    expect(res.json().data.map((log: { action: string }) => log.action)).toEqual(['create']);
  });

  test('a deleted record keeps its history; an id that never existed is a 404', async () => {
    expect((await as(ctx, staff).delete(`/api/crm/leads/${ids[1]}`)).statusCode).toBe(200);
    const res = await as(ctx, crmReader).get(`/api/crm/leads/${ids[1]}/history`);
    expect(res.json().data.map((log: { action: string }) => log.action)).toEqual(['delete', 'create']);
    const missing = await as(ctx, crmReader).get('/api/crm/leads/00000000-0000-4000-8000-000000000000/history');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'Resource not found', message: 'Lead not found' });
  });

  test('guarded by the module\'s read permission, not by iam', async () => {
    const cmsOnly = await createUser(ctx, { cms: 'rwd' });
    expect((await as(ctx, cmsOnly).get(`/api/crm/leads/${ids[0]}/history`)).statusCode).toBe(403);
    const project = await as(ctx, cmsOnly).post('/api/cms/projects', { name: 'History Project', location: 'Here', status: 'active', type: 'residential' });
    expect(project.statusCode, project.body).toBe(201);
    const history = await as(ctx, cmsOnly).get(`/api/cms/projects/${project.json().id}/history`);
    expect(history.statusCode).toBe(200);
    expect(history.json().data).toHaveLength(1);
  });

  test('only this record\'s logs: another record of the same resource is not in it', async () => {
    const res = await as(ctx, crmReader).get(`/api/crm/leads/${ids[0]}/history`);
    expect(res.json().data.every((log: { resource_id: string }) => log.resource_id === ids[0])).toBe(true);
    const [{ n }] = await ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(activityLogs).where(and(eq(activityLogs.resource, 'leads'), eq(activityLogs.resource_id, ids[0])));
    expect(res.json().pagination.total).toBe(Number(n));
  });
});
