import pg from 'pg';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { openDatabase } from '../src/db/client.js';
import { REPORTS } from '../src/modules/crm/reports/index.js';
import { shiftDay } from '../src/data/stats.js';
import { localDay } from '../src/modules/crm/tasks.js';

/**
 * The plans behind `npm run bench:reports`: each report's statement, as the service builds it, run under
 * `EXPLAIN (ANALYZE, BUFFERS)` on the benchmark's database. DATABASE_URL names that database (pms_reports_bench);
 * REPORT (a name), DAYS (30), OWNER (a user id: an `own` reader), SOURCE (sources, comma-separated) and GROUP_BY narrow it.
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/pms_reports_bench node --import tsx bench/reports-explain.ts
 */
const TIME_ZONE = 'Asia/Manila';
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL: the database bench:reports seeded');
const days = Number(process.env.DAYS ?? 30);
const to = localDay(new Date(), TIME_ZONE).date;
const input = {
  from: shiftDay(to, -(days - 1)), to, timeZone: TIME_ZONE, owners: process.env.OWNER ? [process.env.OWNER] : undefined, source: process.env.SOURCE?.split(','), now: new Date(),
};

const database = await openDatabase({ url });
const client = new pg.Client({ connectionString: url });
await client.connect();
const dialect = new PgDialect();
for (const report of REPORTS.filter((one) => !process.env.REPORT || one.name === process.env.REPORT)) {
  const statements: { sql: string; params: unknown[] }[] = [];
  // The report runs as it does in the service; the statements it executes in its transaction are kept.
  const spy = new Proxy(database.db, {
    get: (target, key) => (key === 'transaction'
      ? (work: (tx: unknown) => Promise<unknown>) => target.transaction((tx) => work(new Proxy(tx, {
        get: (inner, name) => (name === 'execute' ? (query: SQL) => {
          statements.push(dialect.sqlToQuery(query));
          return inner.execute(query);
        } : Reflect.get(inner, name)),
      })))
      : Reflect.get(target, key)),
  });
  await report.run(spy, input, process.env.GROUP_BY ?? report.defaultGroupBy);
  // Replayed in one transaction as the report ran them: its `set local` settings, then its statement explained.
  await client.query('begin');
  let plan: string[] = [];
  for (const statement of statements) {
    if (/^set local/.test(statement.sql)) await client.query(statement.sql, statement.params);
    else {
      const { rows } = await client.query(`explain (analyze, buffers) ${statement.sql}`, statement.params);
      console.log(`\n=== ${report.name}, ${days} days${input.owners ? ', own' : ''}\n${statement.sql}\n${JSON.stringify(statement.params)}\n`);
      plan = rows.map((row) => row['QUERY PLAN']);
    }
  }
  await client.query('rollback');
  console.log(plan.join('\n'));
}
await client.end();
await database.close();
