import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ListRunner } from '../src/data/list.js';
import type { Executor } from '../src/db/client.js';
import * as schema from '../src/db/schema/index.js';
import { leadResource } from '../src/modules/crm/lead-resource.js';
import { as, createTestApp, createUser, type TestContext } from './helpers.js';

// A page's statement with its LIMIT and OFFSET as parameters was planned anew on every execution (PostgreSQL
// costs a generic plan of such a statement as if a tenth of the rows were read, so it never keeps one): most of a page's
// time in the database whenever the page could not be kept, as while leads were being created. The first pages now
// carry both as constants, so PostgreSQL compares true costs and keeps the generic plan.

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
let client: pg.Client;
let stopSocket: (() => Promise<void>) | undefined;

beforeAll(async () => {
  // Pages are never kept here: every request runs its page statement.
  ctx = await createTestApp({ SLOW_PAGE_MS: '60000' });
  staff = await createUser(ctx, { crm: 'r' });
  await ctx.database.execute(`insert into leads (id, first_name, last_name, email, source, status, created_at, updated_at)
    select gen_random_uuid(), 'First' || g, 'Last' || (g % 500), 'lead' || g || '@example.com', 'website',
      (array['new','contacted','qualified','converted','lost'])[1 + g % 5], now() - g * interval '1 second', now()
    from generate_series(1, 20000) g`);
  await ctx.database.execute('analyze leads');
  let url = (ctx.database as { url?: string }).url;
  if (!url) {
    const server = new PGLiteSocketServer({ db: ctx.database.pglite!, host: '127.0.0.1', port: 0, maxConnections: 5 });
    await server.start();
    url = `postgres://postgres@${server.getServerConn()}/postgres`;
    stopSocket = () => server.stop();
  }
  client = new pg.Client({ connectionString: url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await stopSocket?.();
  await ctx?.close();
});

/** The page statements (they read the leads' rows in order) a request ran. */
async function pageStatementsOf(url: string): Promise<string[]> {
  const texts: string[] = [];
  const observe = (text: string) => void (/from "leads"/.test(text) && /order by/.test(text) && texts.push(text));
  ctx.database.queryObservers.add(observe);
  try {
    const res = await as(ctx, staff).get(url);
    expect(res.statusCode, res.body).toBe(200);
  } finally {
    ctx.database.queryObservers.delete(observe);
  }
  return texts;
}

test('the first pages carry LIMIT and OFFSET as constants; pages further on, as parameters', async () => {
  const early = await pageStatementsOf('/api/crm/leads?status=new&page=3&limit=10&sort=created_at&order=desc');
  expect(early.length).toBeGreaterThan(0);
  expect(early.at(-1)).toMatch(/limit 10 offset 20\b/);
  expect(early.at(-1)).not.toMatch(/limit \$\d/);

  const later = await pageStatementsOf('/api/crm/leads?status=new&page=25&limit=10&sort=created_at&order=desc');
  expect(later.at(-1)).toMatch(/limit \$\d+ offset \$\d+/);

  // Either way, the page is the rows the database orders there.
  const idsAt = async (offset: number) => (await ctx.database.execute(
    `select id from leads where status = 'new' order by created_at desc, id desc offset ${offset} limit 100`)).rows.map((row) => row.id);
  const byConstants = await as(ctx, staff).get('/api/crm/leads?status=new&page=2&limit=100');
  const byParameters = await as(ctx, staff).get('/api/crm/leads?status=new&page=3&limit=100');
  expect(byConstants.json().data.map((row: { id: string }) => row.id)).toEqual(await idsAt(100));
  expect(byParameters.json().data.map((row: { id: string }) => row.id)).toEqual(await idsAt(200));
  expect(byConstants.json().pagination.total).toBe(4000);
});

test('PostgreSQL keeps the generic plan of an early page: it is planned a few times, then only bound', async () => {
  const runner = new ListRunner(drizzle(client, { schema }) as unknown as Executor, { slowPageMs: 60_000 });
  const query = { status: 'new', page: 3, limit: 10, sort: 'created_at', order: 'desc' as const };
  const first = await runner.page(leadResource, query);
  for (let i = 0; i < 9; i++) expect(await runner.page(leadResource, query)).toEqual(first);
  // The statement of the steady state (the very first request, with no total known yet, has one of its own).
  const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
    "select generic_plans, custom_plans from pg_prepared_statements where name like 'page\\_%' order by generic_plans + custom_plans desc limit 1");
  expect(Number(rows[0].generic_plans) + Number(rows[0].custom_plans)).toBe(9);
  // PostgreSQL tries custom plans for the first five executions, then keeps the generic one when it costs no more.
  expect(Number(rows[0].generic_plans)).toBeGreaterThanOrEqual(4);
  expect(Number(rows[0].custom_plans)).toBeLessThanOrEqual(6);
});
