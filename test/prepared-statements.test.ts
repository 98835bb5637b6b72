import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database } from '../src/db/client.js';
import { executePrepared } from '../src/db/prepared.js';
import { rowsOf } from '../src/webhooks/record.js';
import { createTestDatabase, serverUrl } from './helpers.js';

// The audited writes run as named prepared statements (src/db/prepared.ts): parsed and planned once per connection.
let database: Database;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const statement = (n: number) => sql`with numbers as (select generate_series(1, ${n}::int) as n) select count(*)::int as count, sum(n)::int as total from numbers`;

test('a prepared statement answers as the plain one does, with its own values each time', async () => {
  for (const n of [3, 10, 3]) {
    const prepared = await executePrepared(database.db, statement(n));
    const plain = rowsOf(await database.db.execute(statement(n)));
    expect(prepared.rows).toEqual(plain);
    expect(prepared.rows).toEqual([{ count: n, total: (n * (n + 1)) / 2 }]);
  }
});

test.runIf(serverUrl)('on PostgreSQL the statement is prepared once per connection, under a name made from its text', async () => {
  const names = await database.db.transaction(async (tx) => {
    await executePrepared(tx, statement(1));
    await executePrepared(tx, statement(2));
    await executePrepared(tx, sql`select ${1}::int as one`);
    return rowsOf<{ name: string; statement: string }>(await tx.execute(sql`select name, statement from pg_prepared_statements where name like 'pms\_%' order by statement`));
  });
  expect(names.map((row) => row.statement)).toEqual(['select $1::int as one', expect.stringMatching(/^with numbers as/)]);
  expect(new Set(names.map((row) => row.name)).size).toBe(2);
});
