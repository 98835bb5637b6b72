import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { as, createTestApp, createUser, PATIENCE_MS, type TestContext, waitFor } from './helpers.js';

// The change log is written by the database. Rows written on a separate connection with plain SQL (no service
// code at all) must show in the next list page, its exact total, a kept page, the crm stats and a record's detail.
// SLOW_PAGE_MS=0 keeps every page read, so every second read of a page is a kept-page check.

let ctx: TestContext;
let sql: pg.Client;
let stopSocket: (() => Promise<void>) | undefined;
let staff: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp({ SLOW_PAGE_MS: '0' });
  staff = await createUser(ctx, { crm: 'rwd', iam: 'r' });
  let url = (ctx.database as { url?: string }).url;
  if (!url) {
    // PGlite: the same embedded database behind its wire-protocol server, so the writer is another connection.
    const server = new PGLiteSocketServer({ db: ctx.database.pglite!, host: '127.0.0.1', port: 0, maxConnections: 5 });
    await server.start();
    url = `postgres://postgres@${server.getServerConn()}/postgres`;
    stopSocket = () => server.stop();
  }
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
});

afterAll(async () => {
  await sql?.end();
  await stopSocket?.();
  await ctx?.close();
});

type Lead = { id: string; first_name: string; status: string };
type ListBody = { data: Lead[]; pagination: { total: number } };

const get = async <T>(url: string, who = staff): Promise<{ status: number; body: T }> => {
  const res = await as(ctx, who).get(url);
  return { status: res.statusCode, body: res.json() as T };
};
const list = async (query: string) => {
  const res = await get<ListBody>(`/api/crm/leads${query}`);
  expect(res.status).toBe(200);
  return res.body;
};
const truth = async (where: string) => Number((await sql.query(`select count(*)::int as n from leads where ${where}`)).rows[0].n);
const stats = async () => (await get<{ leads: { total: number; by_status: Record<string, number> } }>('/api/crm/stats')).body.leads;

describe('writes from another connection with plain SQL', () => {
  test('insert, a move between filters and a delete show in lists, totals, kept pages, stats and details', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await as(ctx, staff).post('/api/crm/leads', { first_name: `Api${i}`, last_name: 'Writer', email: `api${i}@example.com` })).statusCode).toBe(201);
    }
    // Warm every cache: totals, kept pages (read twice: the second is served kept), stats.
    for (let i = 0; i < 2; i++) {
      await list('?status=new');
      await list('?status=contacted');
      await list('?q=Plainsql');
    }
    const statsBefore = await stats();

    // Insert.
    const { rows: [inserted] } = await sql.query("insert into leads (id, first_name, last_name, status) values (gen_random_uuid(), 'Plainsql', 'Row', 'new') returning id::text");
    const id = String(inserted.id);
    const afterInsert = await list('?status=new');
    expect(afterInsert.pagination.total).toBe(await truth("status = 'new'"));
    expect(afterInsert.data[0].id).toBe(id); // newest first: the kept first page was read again
    expect((await list('?q=Plainsql')).data.map((l) => l.id)).toEqual([id]);
    expect((await get<Lead>(`/api/crm/leads/${id}`)).body).toMatchObject({ id, first_name: 'Plainsql', status: 'new' });
    const statsInserted = await stats();
    expect(statsInserted.total).toBe(statsBefore.total + 1);
    expect(statsInserted.by_status.new).toBe(statsBefore.by_status.new + 1);

    // An update that moves the row from one filter to another.
    await list('?status=contacted');
    await sql.query("update leads set status = 'contacted' where id = $1", [id]);
    const news = await list('?status=new');
    const contacted = await list('?status=contacted');
    expect(news.pagination.total).toBe(await truth("status = 'new'"));
    expect(news.data.map((l) => l.id)).not.toContain(id);
    expect(contacted.pagination.total).toBe(await truth("status = 'contacted'"));
    expect(contacted.data.map((l) => l.id)).toContain(id);
    expect((await list('?q=Plainsql')).data[0].status).toBe('contacted'); // the kept search page was read again
    expect((await get<Lead>(`/api/crm/leads/${id}`)).body.status).toBe('contacted');
    const statsMoved = await stats();
    expect(statsMoved.by_status.new).toBe(statsBefore.by_status.new);
    expect(statsMoved.by_status.contacted).toBe(statsBefore.by_status.contacted + 1);

    // Delete.
    await sql.query('delete from leads where id = $1', [id]);
    expect((await list('?status=contacted')).pagination.total).toBe(await truth("status = 'contacted'"));
    expect((await list('')).pagination.total).toBe(await truth('true'));
    expect((await list('?q=Plainsql')).data).toEqual([]);
    expect((await get(`/api/crm/leads/${id}`)).status).toBe(404);
    expect(await stats()).toEqual(statsBefore);
  });

  test('a rolled-back write leaves no trace; a bulk write is one entry and totals stay exact', async () => {
    await list('?status=lost');
    await sql.query('begin');
    await sql.query("insert into leads (id, first_name, last_name, status) values (gen_random_uuid(), 'Never', 'Was', 'lost')");
    await sql.query('rollback');
    expect((await list('?status=lost')).pagination.total).toBe(await truth("status = 'lost'"));

    const entries = async () => Number((await sql.query("select count(*)::int as n from change_log where resource = 'leads'")).rows[0].n);
    const before = await entries();
    await sql.query("insert into leads (id, first_name, last_name, status) select gen_random_uuid(), 'Bulk', 'Row' || i, 'lost' from generate_series(1, 500) i");
    expect(await entries()).toBe(before + 1);
    expect((await list('?status=lost')).pagination.total).toBe(await truth("status = 'lost'"));
    await sql.query("update leads set status = 'qualified' where first_name = 'Bulk'");
    expect((await list('?status=lost')).pagination.total).toBe(await truth("status = 'lost'"));
    expect((await list('?status=qualified')).pagination.total).toBe(await truth("status = 'qualified'"));
    await sql.query("delete from leads where first_name = 'Bulk'");
    expect((await list('?status=qualified')).pagination.total).toBe(await truth("status = 'qualified'"));
  });

  test('a user renamed with plain SQL (camelCase properties, snake_case columns) shows in the users list and its search', async () => {
    const admin = await createUser(ctx, { iam: 'rwd' });
    const users = async (query: string) => (await get<{ data: { id: string; name: string }[]; pagination: { total: number } }>(`/api/iam/users${query}`, admin)).body;
    for (let i = 0; i < 2; i++) await users('?sort=name&order=asc');
    await sql.query("update users set name = 'Aaaa First' where id = $1", [staff.id]);
    expect((await users('?sort=name&order=asc')).data[0]).toMatchObject({ id: staff.id, name: 'Aaaa First' });
    await sql.query('update users set deleted_at = now() where id = $1', [staff.id]);
    const after = await users('?sort=name&order=asc');
    expect(after.data.map((u) => u.id)).not.toContain(staff.id);
    expect(after.pagination.total).toBe(Number((await sql.query('select count(*)::int as n from users where deleted_at is null')).rows[0].n));
    await sql.query('update users set deleted_at = null where id = $1', [staff.id]);
  });
});

describe('regression: an API token\'s last use (written outside the audited path)', () => {
  test('shows in the kept list of tokens right after it is written', async () => {
    const owner = await createUser(ctx, { crm: 'r' });
    const created = await as(ctx, owner).post('/api/auth/tokens', { name: 'Reader', permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
    expect(created.statusCode).toBe(201);
    const { id, token } = created.json() as { id: string; token: string };
    const tokens = async () => (await get<{ data: { id: string; last_used_at: string | null }[] }>('/api/auth/tokens', owner)).body.data.find((t) => t.id === id)!;
    expect((await tokens()).last_used_at).toBeNull();
    expect((await tokens()).last_used_at).toBeNull(); // kept
    const used = await ctx.app.inject({ method: 'GET', url: '/api/crm/leads', headers: { authorization: `Bearer ${token}` } });
    expect(used.statusCode).toBe(200);
    // The last use is written without holding up the request: wait for the row, then the list must show it.
    let written: string | null = null;
    await waitFor(async () => {
      const { rows } = await sql.query('select last_used_at from api_tokens where id = $1', [id]);
      written = rows[0].last_used_at ? new Date(rows[0].last_used_at).toISOString() : null;
      return written !== null;
    }, PATIENCE_MS, 'the last use to be written');
    expect((await tokens()).last_used_at).toBe(written);
  });
});
