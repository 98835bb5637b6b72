import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { sql as drizzleSql, Placeholder } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { changesSince } from '../src/data/changes.js';
import { anyChangeSince } from '../src/data/page-cache.js';
import { leadResource } from '../src/modules/crm/lead-resource.js';
import { createTestApp, type TestContext } from './helpers.js';

// List statements are prepared once per connection and PostgreSQL keeps their generic plan. Planned while the
// change log was nearly empty (a fresh database, or just after a prune), the inline read of the log was a sequential
// scan and a sort, and it stayed one as the log grew: every list request beside a stream of writes scanned the whole
// log. The reads the list runner prepares must stay on the (resource, xid) index whatever the log's size at planning.

let ctx: TestContext;
let client: pg.Client;
let stopSocket: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ctx = await createTestApp();
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

const dialect = new PgDialect();
/** A statement as the list runner prepares it: its text, with `$1…` for its values. */
function statementOf(selection: ReturnType<typeof drizzleSql>) {
  const { sql: text, params } = dialect.sqlToQuery(drizzleSql`select ${selection} as result`);
  return { text, values: (from: string) => params.map((param) => (param instanceof Placeholder ? from : param)) };
}

test('the change-log reads of a statement prepared on an empty log stay on the index as the log grows', async () => {
  // A log as small as a fresh database's, its statistics up to date.
  await client.query('truncate change_log');
  await client.query('analyze change_log');
  // The generic plan at once, as PostgreSQL chooses after a statement's first executions.
  await client.query('set plan_cache_mode = force_generic_plan');
  const reads = [
    { name: 'changes_since', ...statementOf(changesSince(leadResource, drizzleSql.placeholder('from'), 200, ['status'])) },
    { name: 'any_change_since', ...statementOf(anyChangeSince(['users', 'leads'], drizzleSql.placeholder('from'))) },
  ];
  for (const read of reads) {
    for (let i = 0; i < 3; i++) await client.query({ name: read.name, text: read.text, values: read.values('0') });
  }
  await client.query(`insert into change_log (resource, xid, row_id, before, after)
    select 'leads', '1'::xid8, gen_random_uuid(), '{"status":"new"}', '{"status":"lost"}' from generate_series(1, 5000)`);
  await client.query(`insert into change_log (resource, xid, row_id, before, after)
    select 'users', '1'::xid8, gen_random_uuid(), null, '{}' from generate_series(1, 5000)`);

  for (const read of reads) {
    // This session's counts of scans not yet reported: the read's are the difference. In one transaction, because an idle
    // session reports its counts (at most once a second) and they start again from zero: between two statements
    // outside a transaction that can happen or not, as the machine is fast or slow.
    const scans = async () => (await client.query(`select seq_scan::int as seq, idx_scan::int as idx from pg_stat_xact_user_tables where relname = 'change_log'`)).rows[0] as { seq: number; idx: number };
    await client.query('begin');
    const before = await scans();
    const { rows: [result] } = await client.query({ name: read.name, text: read.text, values: read.values('2') });
    const after = await scans();
    await client.query('commit');
    expect(result.result === '[]' || result.result === false, `${read.name} read nothing newer than xid 2`).toBe(true);
    expect(after.seq - before.seq, `${read.name} walks the (resource, xid) index, not the whole log`).toBe(0);
    expect(after.idx - before.idx).toBeGreaterThan(0);
  }
});
