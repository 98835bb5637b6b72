import { and, eq, ilike, or, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, leads, type LEAD_STATUSES } from '../src/db/schema/index.js';
import { as, countQueries, createTestApp, createUser, type TestContext } from './helpers.js';

// Exact totals under writes: a cached total is brought forward by the changes logged since it was counted,
// without counting again, and stays equal to count(*) while many requests write and read at once.

type Status = (typeof LEAD_STATUSES)[number];
let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
const COUNT = /count\(\*\)/i;

beforeAll(async () => {
  // Pages are never kept here (test/page-cache.test.ts covers that): these tests count the statements a page reads.
  ctx = await createTestApp({ SLOW_PAGE_MS: '60000' });
  staff = await createUser(ctx, { crm: 'rwd', iam: 'r' });
});
afterAll(() => ctx.close());

const list = async (query: string) => {
  const res = await as(ctx, staff).get(`/api/crm/leads${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().pagination.total as number;
};
const createLead = async (n: number, status: Status, extra: Record<string, unknown> = {}) => {
  const res = await as(ctx, staff).post('/api/crm/leads', { first_name: `Total${n}`, last_name: 'Counter', email: `total${n}@example.com`, status, ...extra });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
};
const patchLead = async (id: string, body: Record<string, unknown>) => {
  const res = await as(ctx, staff).patch(`/api/crm/leads/${id}`, body);
  expect(res.statusCode).toBe(200);
};
const deleteLead = async (id: string) => {
  const res = await as(ctx, staff).delete(`/api/crm/leads/${id}`);
  expect(res.statusCode).toBe(200);
};

/** What the database says, directly. */
const counted = async (where?: ReturnType<typeof and>) => Number((await ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(leads).where(where))[0].n);

describe('totals are brought forward, not recounted', () => {
  test('creates, updates and deletes through the API move every cached total without a count', async () => {
    const first = await createLead(1, 'new');
    // Count each filter once.
    expect(await list('?status=new')).toBe(await counted(eq(leads.status, 'new')));
    expect(await list('?status=contacted')).toBe(await counted(eq(leads.status, 'contacted')));
    expect(await list('?q=total')).toBe(await counted(or(ilike(leads.first_name, '%total%'), ilike(leads.email, '%total%'))));
    expect(await list('')).toBe(await counted());

    const writes = async () => {
      const second = await createLead(2, 'new');
      await createLead(3, 'contacted');
      await patchLead(first, { status: 'contacted' }); // moves from one filter to the other
      await patchLead(second, { first_name: 'Renamed', email: 'renamed@example.com' }); // leaves the q filter
      await deleteLead(second);
    };
    await writes();
    const queries = await countQueries(ctx.database, COUNT, async () => {
      expect(await list('?status=new')).toBe(await counted(eq(leads.status, 'new')));
      expect(await list('?status=contacted')).toBe(await counted(eq(leads.status, 'contacted')));
      expect(await list('?q=total')).toBe(await counted(or(ilike(leads.first_name, '%total%'), ilike(leads.email, '%total%'))));
      expect(await list('')).toBe(await counted());
    });
    // The four `counted` calls above are the only counts: no list counted again.
    expect(queries).toBe(4);
  });

  test('the activity-log list follows every audited change without a count', async () => {
    const logs = async () => {
      const res = await as(ctx, staff).get('/api/iam/activity-logs?module=crm');
      return res.json().pagination.total as number;
    };
    const crmLogs = async () => Number((await ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(activityLogs).where(eq(activityLogs.module, 'crm')))[0].n);
    expect(await logs()).toBe(await crmLogs());
    await createLead(10, 'new');
    expect(await countQueries(ctx.database, COUNT, async () => expect(await logs()).toBe(await crmLogs()))).toBe(1);
  });

  test('a row written behind the API is in the next total, brought forward from the change log its trigger wrote', async () => {
    await list('?status=lost');
    await ctx.database.db.insert(leads).values({ first_name: 'Behind', last_name: 'Insert', email: 'behind@example.com', status: 'lost' });
    // One count: the test's own `counted`; the list's total is brought forward.
    expect(await countQueries(ctx.database, COUNT, async () => expect(await list('?status=lost')).toBe(await counted(eq(leads.status, 'lost'))))).toBe(1);
  });

  test('a bulk write behind the API (more rows than a total would test) is logged as one entry and makes the next total a count', async () => {
    await list('?status=lost');
    const logged = async () => Number((await ctx.database.execute("select count(*)::int as n from change_log where resource = 'leads'")).rows[0].n);
    const before = await logged();
    await ctx.database.execute("insert into leads (id, first_name, last_name, status) select gen_random_uuid(), 'Bulk', 'Insert' || i, 'lost' from generate_series(1, 250) i");
    expect(await logged()).toBe(before + 1);
    expect(await countQueries(ctx.database, COUNT, async () => expect(await list('?status=lost')).toBe(await counted(eq(leads.status, 'lost'))))).toBe(2);
  });

  test('a user list filtered by department (a condition on another table) is counted again when a user changes', async () => {
    const iam = as(ctx, await createUser(ctx, { iam: 'rwd' }));
    const department = (await iam.post('/api/iam/departments', { name: 'Totals' })).json().id as string;
    const member = await createUser(ctx, {});
    const inDepartment = async () => (await iam.get('/api/iam/users?department=Totals')).json().pagination.total as number;
    expect(await inDepartment()).toBe(0);
    expect((await iam.patch(`/api/iam/users/${member.id}`, { department_id: department })).statusCode).toBe(200);
    expect(await countQueries(ctx.database, COUNT, async () => expect(await inDepartment()).toBe(1))).toBe(1);
    expect(await countQueries(ctx.database, COUNT, async () => expect(await inDepartment()).toBe(1))).toBe(0);
  });
});

describe('exact under concurrency', () => {
  test('while 40 requests create, move and delete leads and 60 read, every total equals count(*) once the writes end', async () => {
    const filters = ['', '?status=new', '?status=contacted', '?status=qualified', '?q=conc', '?status=new&q=conc'];
    for (const filter of filters) await list(filter);
    const created: string[] = [];
    const statuses: Status[] = ['new', 'contacted', 'qualified'];
    const writers = Array.from({ length: 40 }, async (_, i) => {
      const id = await createLead(1000 + i, statuses[i % 3], { first_name: `Conc${i}` });
      created.push(id);
      if (i % 4 === 0) await patchLead(id, { status: statuses[(i + 1) % 3] });
      if (i % 5 === 0) await deleteLead(id);
    });
    const readers = Array.from({ length: 60 }, (_, i) => list(filters[i % filters.length]));
    await Promise.all([...writers, ...readers]);

    const q = or(ilike(leads.first_name, '%conc%'), ilike(leads.last_name, '%conc%'), ilike(leads.email, '%conc%'), ilike(leads.phone, '%conc%'));
    const expected: Record<string, number> = {
      '': await counted(),
      '?status=new': await counted(eq(leads.status, 'new')),
      '?status=contacted': await counted(eq(leads.status, 'contacted')),
      '?status=qualified': await counted(eq(leads.status, 'qualified')),
      '?q=conc': await counted(q),
      '?status=new&q=conc': await counted(and(eq(leads.status, 'new'), q)),
    };
    expect(expected['?q=conc']).toBe(40 - 8);
    for (const filter of filters) expect({ filter, total: await list(filter) }).toEqual({ filter, total: expected[filter] });
  });
});

describe('deep pages', () => {
  const pageOf = async (query: string) => {
    const res = await as(ctx, staff).get(`/api/crm/leads${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: { id: string }[]; pagination: { total: number } };
  };
  /** The page as PostgreSQL answers it by offset, directly. */
  const expectedPage = async (status: Status, offset: number, direction: 'asc' | 'desc') => {
    const { rows } = await ctx.database.execute(
      `select id from leads where status = $1 order by created_at ${direction}, id ${direction} limit 10 offset $2`, [status, offset]);
    return rows.map((row) => String(row.id));
  };

  test('a page past offset 1,000 is the same whether read by offset or from a remembered row, across writes before it', async () => {
    await ctx.database.db.insert(leads).values(Array.from({ length: 1300 }, (_, i) => ({ first_name: `Deep${i}`, last_name: 'Page', email: `deep${i}@example.com`, status: 'qualified' as const })));
    const KEYSET = /\) <= \(|\) >= \(/;
    for (const order of ['desc', 'asc'] as const) {
      const query = `?status=qualified&page=111&limit=10&order=${order}`; // offset 1,100
      const check = async () => expect((await pageOf(query)).data.map((l) => l.id)).toEqual(await expectedPage('qualified', 1100, order));
      await check();
      // The same page again: a keyset step from the row remembered the first time.
      expect(await countQueries(ctx.database, KEYSET, check)).toBe(1);
      // Rows entering before it (new leads come first in descending order), leaving before it, and a row after it.
      await createLead(5000, 'qualified');
      await createLead(5001, 'qualified');
      await check();
      const [early] = await expectedPage('qualified', order === 'desc' ? 5 : 3, order);
      await patchLead(early, { status: 'lost' });
      await check();
      const [late] = await expectedPage('qualified', 1250, order);
      await deleteLead(late);
      await check();
      expect(await countQueries(ctx.database, KEYSET, check)).toBe(1);
      // A page further on starts from the nearest remembered row.
      expect((await pageOf(`?status=qualified&page=115&limit=10&order=${order}`)).data.map((l) => l.id)).toEqual(await expectedPage('qualified', 1140, order));
    }
  });
});

describe('an audited create in one statement', () => {
  test('a lead and its activity log are written by one statement, outside any transaction; the triggers log both', async () => {
    const statements: string[] = [];
    const observe = (text: string) => statements.push(text);
    ctx.database.queryObservers.add(observe);
    try {
      await createLead(7000, 'new');
    } finally {
      ctx.database.queryObservers.delete(observe);
    }
    const writes = statements.filter((text) => /^\s*(with|insert|update|delete|begin)/i.test(text));
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^with created as \(insert into "leads".*insert into "activity_logs"/s);
    expect(writes[0]).not.toMatch(/change_log/);
    const [lead] = await ctx.database.db.select().from(leads).where(eq(leads.email, 'total7000@example.com'));
    const logs = await ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, lead.id));
    expect(logs).toHaveLength(1);
    expect(logs[0].changes).toMatchObject({ before: {}, after: { id: lead.id, first_name: 'Total7000', status: 'new', created_at: lead.created_at.toISOString() } });
    // The change log holds both, by the statement's transaction, from the triggers.
    const logged = await ctx.database.execute('select resource, row_id::text, xid::text, after from change_log where row_id in ($1, $2) order by resource desc', [lead.id, logs[0].id]);
    expect(logged.rows.map((row) => [row.resource, row.row_id])).toEqual([['leads', lead.id], ['activity_logs', logs[0].id]]);
    expect(logged.rows[0].xid).toBe(logged.rows[1].xid);
    expect(logged.rows[0].after).toMatchObject({ first_name: 'Total7000', status: 'new' });
    expect(logged.rows[1].after).not.toHaveProperty('changes');
  });
});
