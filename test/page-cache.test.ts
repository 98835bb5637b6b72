import { desc, eq, ilike, or } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clock } from '../src/clock.js';
import { type KeptPage, keptPageIn, PageCache, UNSTABLE_MS } from '../src/data/page-cache.js';
import { parseSnapshot } from '../src/data/changes.js';
import type { Predicate } from '../src/data/filters.js';
import { leads, users } from '../src/db/schema/index.js';
import { as, countQueries, createTestApp, createUser, type TestContext, testConfig } from './helpers.js';
import { make } from './factories.js';

// Slow pages kept: with SLOW_PAGE_MS=0 every page is kept, and served again only while the change log shows
// nothing that could change it. Each answer is compared with what the database says at that moment.

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
let agent: Awaited<ReturnType<typeof createUser>>;
const QUERY = '?q=needle&sort=created_at&order=desc&limit=5';
/** A statement reading the leads table's rows: the page's own query (the check reads only the change log). */
const PAGE_READ = /from "leads"/i;

/**
 * The service's clock, moved by this file alone: each reading is 1 ms after the previous one, whatever the wall clock
 * does, and `pastUnstable` jumps it forward. So a page is "found changed a moment ago" however slow the machine is.
 */
const systemClock = clock.now;
let now = Date.now();

beforeAll(async () => {
  clock.now = () => new Date(++now);
  ctx = await createTestApp({ SLOW_PAGE_MS: '0' });
  staff = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' });
  agent = await createUser(ctx, { crm: 'r' }, { name: 'Agent Smith' });
  for (let i = 0; i < 8; i++) await make.lead(ctx, { first_name: `Needle ${i}`, last_name: 'Hay', assigned_to: agent.id }, staff);
  for (let i = 0; i < 8; i++) await make.lead(ctx, { first_name: `Straw ${i}`, last_name: 'Hay' }, staff);
});
afterAll(async () => {
  await ctx?.close();
  clock.now = systemClock;
});

type Row = { id: string; first_name: string; last_name: string; notes: string | null; assigned_to: { id: string; name: string } | null };
const served = async () => {
  const res = await as(ctx, staff).get(`/api/crm/leads${QUERY}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Row[]; pagination: { total: number } };
};
/** The page and total as the database has them now. */
const truth = async () => {
  const matching = or(ilike(leads.first_name, '%needle%'), ilike(leads.last_name, '%needle%'), ilike(leads.email, '%needle%'), ilike(leads.phone, '%needle%'));
  const rows = await ctx.database.db.select({ id: leads.id, first_name: leads.first_name, notes: leads.notes, agent: users.name }).from(leads)
    .leftJoin(users, eq(users.id, leads.assigned_to)).where(matching).orderBy(desc(leads.created_at), desc(leads.id));
  return { ids: rows.slice(0, 5).map((r) => r.id), names: rows.slice(0, 5).map((r) => r.first_name), notes: rows.slice(0, 5).map((r) => r.notes), agents: rows.slice(0, 5).map((r) => r.agent ?? null), total: rows.length };
};
/** Reads the page and checks it against the database; answers how many times the page's own query ran for it. */
/** A page found changed is not kept again for a second (src/data/page-cache.ts, UNSTABLE_MS): moves the clock past it. */
const pastUnstable = async () => {
  now += UNSTABLE_MS;
};

/**
 * The page is served from what was kept, without its query. Polled: on a PostgreSQL server shared with other databases
 * (the test run's own), another database's open transaction holds back the cluster-wide xmin the check reads changes
 * from, so it may see older changes and read the page once more (conservatively: never a wrong page; the clock then
 * moves past the time it is not kept) before it is kept. The deadline only turns a page never kept into a failure.
 */
const expectKeptHit = (what?: string) => expect.poll(async () => {
  const reads = await expectExact();
  if (reads > 0) await pastUnstable();
  return reads;
}, { timeout: 30_000, interval: 50, message: what }).toBe(0);

const expectExact = async () => {
  let page: Awaited<ReturnType<typeof served>> | undefined;
  const reads = await countQueries(ctx.database, PAGE_READ, async () => (page = await served()));
  const expected = await truth();
  expect(page!.data.map((r) => r.id)).toEqual(expected.ids);
  expect(page!.data.map((r) => r.first_name)).toEqual(expected.names);
  expect(page!.data.map((r) => r.notes)).toEqual(expected.notes);
  expect(page!.data.map((r) => r.assigned_to?.name ?? null)).toEqual(expected.agents);
  expect(page!.pagination.total).toBe(expected.total);
  return reads;
};

describe('a kept page', () => {
  test('is served again without its query while nothing it shows changed, also after changes elsewhere', async () => {
    await expectExact();
    await expectKeptHit();
    await make.lead(ctx, { first_name: 'Straw new', last_name: 'Hay' }, staff); // the search does not take it
    await make.project(ctx, {}, staff); // another resource
    await expectKeptHit();
  });

  test('is read again after each change that could alter it, and is then exact', async () => {
    const [first] = (await served()).data;
    const straw = await make.lead(ctx, { first_name: 'Straw later', last_name: 'Hay' }, staff);
    const changes: [string, () => Promise<unknown>][] = [
      ['a new row the search takes', () => make.lead(ctx, { first_name: 'Needle new', last_name: 'Hay' }, staff)],
      ['a row of the page changed in a field the search does not read', () => as(ctx, staff).patch(`/api/crm/leads/${first.id}`, { notes: 'edited' })],
      ['the user a row of the page names, renamed', () => as(ctx, staff).patch(`/api/iam/users/${agent.id}`, { name: 'Agent Jones' })],
      ['a row outside it now taken by the search', () => as(ctx, staff).patch(`/api/crm/leads/${straw.id}`, { last_name: 'Needlework' })],
      ['a row of the page deleted', () => as(ctx, staff).delete(`/api/crm/leads/${first.id}`)],
      ['a row the search takes, inserted with plain SQL behind the API', () => ctx.database.execute("insert into leads (id, first_name, last_name) values (gen_random_uuid(), 'Needle sql', 'Hay')")],
    ];
    for (const [what, change] of changes) {
      await served(); // kept
      await change();
      expect(await expectExact(), what).toBeGreaterThan(0);
      expect(await expectExact(), `${what}: not kept again at once`).toBeGreaterThan(0);
      await pastUnstable();
      await expectExact(); // read, and kept again
      await expectKeptHit(`${what}, then kept again`);
    }
  });

  test('a page past offset 1,000 is kept too, and read again after a row enters before it', async () => {
    await ctx.database.db.insert(leads).values(Array.from({ length: 1030 }, (_, i) => ({ first_name: `Deep ${i}`, last_name: 'Kept', status: 'lost' as const })));
    const deepQuery = '?status=lost&sort=created_at&order=desc&page=102&limit=10'; // offset 1,010
    const expected = async () => (await ctx.database.db.select({ id: leads.id }).from(leads).where(eq(leads.status, 'lost'))
      .orderBy(desc(leads.created_at), desc(leads.id)).limit(10).offset(1010)).map((row) => row.id);
    const exact = async () => {
      let page: { data: { id: string }[]; pagination: { total: number } } | undefined;
      const reads = await countQueries(ctx.database, PAGE_READ, async () => (page = (await as(ctx, staff).get(`/api/crm/leads${deepQuery}`)).json()));
      expect(page!.data.map((row) => row.id)).toEqual(await expected());
      expect(page!.pagination.total).toBe(await ctx.database.db.$count(leads, eq(leads.status, 'lost')));
      return reads;
    };
    await exact();
    await expect.poll(() => exact(), { timeout: 15_000, interval: 250, message: 'served kept' }).toBe(0);
    // A new lead comes first in this order: every row of page 102 moves one place on.
    await make.lead(ctx, { first_name: 'Deep new', last_name: 'Kept', status: 'lost' }, staff);
    expect(await exact()).toBeGreaterThan(0);
  });

  test('while 20 requests write and 30 read at once, every answer is a page the database had, and the last is exact', async () => {
    const writes = Array.from({ length: 20 }, (_, i) => (i % 2
      ? make.lead(ctx, { first_name: `Needle burst ${i}`, last_name: 'Hay' }, staff)
      : make.lead(ctx, { first_name: `Straw burst ${i}`, last_name: 'Hay' }, staff)));
    const reads = Array.from({ length: 30 }, () => served());
    const answers = await Promise.all([...writes, ...reads]);
    for (const answer of answers.slice(20) as Awaited<ReturnType<typeof served>>[]) {
      expect(answer.data.length).toBe(5);
      expect(answer.data.every((row) => /needle/i.test(`${row.first_name} ${row.last_name}`))).toBe(true);
    }
    await expectExact();
    await pastUnstable();
    await expectExact(); // kept again
    await expectKeptHit();
  });

  test('30 requests for it at once share its checks, and a request after a write sees the write', async () => {
    await expectKeptHit();
    const expected = await truth();
    let answers: Awaited<ReturnType<typeof served>>[] = [];
    const checks = await countQueries(ctx.database, /as probe/i, async () => (answers = await Promise.all(Array.from({ length: 30 }, () => served()))));
    expect(checks).toBeGreaterThan(0);
    expect(checks).toBeLessThan(30);
    for (const answer of answers) {
      expect(answer.data.map((r) => r.id)).toEqual(expected.ids);
      expect(answer.pagination.total).toBe(expected.total);
    }
    // Requests sent while a check is in flight, right after a write committed: none is answered from before it.
    const first = served();
    await make.lead(ctx, { first_name: 'Needle after', last_name: 'Hay' }, staff);
    const later = await Promise.all(Array.from({ length: 10 }, () => served()));
    await first;
    const now = await truth();
    for (const answer of later) {
      expect(answer.data.map((r) => r.id)).toEqual(now.ids);
      expect(answer.pagination.total).toBe(now.total);
    }
  });
});

describe('other resources', () => {
  test("a kept page of projects follows a change of its own rows", async () => {
    const project = await make.project(ctx, { name: 'Needle Heights' }, staff);
    const first = (await as(ctx, staff).get('/api/cms/projects?q=needle')).json();
    expect(first.data.map((p: { id: string }) => p.id)).toContain(project.id);
    expect((await as(ctx, staff).patch(`/api/cms/projects/${project.id}`, { name: 'Needle Towers' })).statusCode).toBe(200);
    const second = (await as(ctx, staff).get('/api/cms/projects?q=needle')).json();
    expect(second.data.find((p: { id: string }) => p.id === project.id).name).toBe('Needle Towers');
  });
});

describe('what is kept', () => {
  test('by default (no SLOW_PAGE_MS) every page is kept, however fast it was to read', async () => {
    expect(testConfig().slowPageMs).toBe(0);
    const plain = await createTestApp();
    try {
      const reader = await createUser(plain, { crm: 'rw' });
      for (const email of ['kept-1@example.com', 'kept-2@example.com']) expect((await as(plain, reader).post('/api/crm/newsletters', { email })).statusCode).toBe(201);
      // A list that joins no other resource: a change to a joined one (a user made just before, for leads' assignee)
      // is told by transaction id from the snapshot's xmin, which another database's open transaction on a shared
      // server can hold back, so whether that page is read again would depend on what else the server was doing.
      const url = '/api/crm/newsletters?status=subscribed&page=1&limit=10';
      const first = await as(plain, reader).get(url);
      expect(first.statusCode).toBe(200);
      expect(first.json().data).toHaveLength(2);
      // The second read is the kept page's check alone: the subscriptions are not read again.
      expect(await countQueries(plain.database, /from "newsletter_subscriptions"/i, async () => expect((await as(plain, reader).get(url)).json()).toEqual(first.json()))).toBe(0);
    } finally {
      await plain.close();
    }
  });

  test('at most 20,000 rows are kept across pages: the least recently kept go first', () => {
    const cache = new PageCache();
    const page = (rows: number): KeptPage => ({ rows: Array.from({ length: rows }, (_, i) => ({ id: String(i) })), ids: new Set(), readAt: parseSnapshot('1:1:'), snapshot: parseSnapshot('1:1:'), at: Date.now() });
    cache.keep('a', page(9_000));
    cache.keep('b', page(9_000));
    expect(cache.get('a', 60_000)).toBeDefined();
    cache.keep('c', page(9_000)); // 27,000 rows: a goes
    expect(cache.get('a', 60_000)).toBeUndefined();
    expect(cache.get('b', 60_000)).toBeDefined();
    expect(cache.get('c', 60_000)).toBeDefined();
    cache.keep('b', page(100)); // kept again, smaller: it replaces its own rows
    cache.keep('d', page(10_000)); // 19,100 rows with c and b: nothing else goes
    expect(['b', 'c', 'd'].map((key) => cache.get(key, 60_000) !== undefined)).toEqual([true, true, true]);
  });
});

describe('a check against a kept page', () => {
  // Read in snapshot 100:100 (everything before 100 committed), then found exact by a later check in 105:105.
  const kept = (): KeptPage => ({ rows: [{ id: 'a' }], ids: new Set(['a']), readAt: parseSnapshot('100:100:'), snapshot: parseSnapshot('105:105:'), at: Date.now() });
  const elsewhere = { xid: 106, rowId: 'z', before: null, after: { status: 'lost' } };
  const onThePage = { xid: 106, rowId: 'a', before: { status: 'new' }, after: { status: 'lost' } };
  /** The list of new leads: a lead that is lost before and after a change cannot enter it. */
  const newLeads = { test: (row: Record<string, unknown>) => row.status === 'new' } as unknown as Predicate;

  test('a newer snapshot: exact when no change could alter the page, else not', () => {
    expect(keptPageIn(kept(), parseSnapshot('107:107:'), [elsewhere], newLeads)).toBe('newer');
    expect(keptPageIn(kept(), parseSnapshot('107:107:'), [onThePage], newLeads)).toBe(false);
  });

  test("a snapshot taken before a concurrent check moved the page on, but after its reading: exact there too", () => {
    // Transactions 103 and 104 were still running for this request: between the reading (100) and the last check (105).
    expect(keptPageIn(kept(), parseSnapshot('103:105:103,104'), [], undefined)).toBe('within');
    expect(keptPageIn(kept(), parseSnapshot('104:104:'), [], undefined)).toBe('within');
  });

  test('a snapshot older than the reading, or one neither before nor after the last check, is not', () => {
    expect(keptPageIn(kept(), parseSnapshot('99:99:'), [], undefined)).toBe(false);
    // Sees 106 (not seen by the last check) but not 102 (seen by it): comparable with neither end.
    expect(keptPageIn(kept(), parseSnapshot('102:107:102'), [], undefined)).toBe(false);
  });
});
