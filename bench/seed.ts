import { openDatabase } from '../src/db/client.js';

/**
 * Fills a database with generated data for benchmarks: `leads` leads (statuses and sources spread evenly,
 * every 7th assigned to the first user). Usage: DATABASE_URL=… or DATA_DIR=… node --import tsx bench/seed.ts 200000
 */
export async function seedLeads(options: { url?: string; dataDir?: string; count: number }) {
  const database = await openDatabase({ url: options.url, dataDir: options.dataDir });
  await database.migrate();
  const started = Date.now();
  // Indexes are built once after the rows are in (much faster than keeping them up to date row by row).
  const { rows: indexes } = await database.execute(`select indexname, indexdef from pg_indexes where tablename = 'leads' and indexname <> 'leads_pkey'`);
  for (const index of indexes) await database.execute(`drop index ${index.indexname}`);
  const chunk = 50_000;
  for (let offset = 0; offset < options.count; offset += chunk) {
    const n = Math.min(chunk, options.count - offset);
    await database.execute(`
      insert into leads (id, first_name, last_name, email, phone, source, status, interest, notes, assigned_to, created_at, updated_at)
      select gen_random_uuid(), 'First' || g, 'Last' || (g % 5000), 'lead' || g || '@example.com', '+63 900 ' || g,
             (array['website','referral','event','social'])[1 + g % 4],
             (array['new','contacted','qualified','converted','lost'])[1 + g % 5],
             case when g % 3 = 0 then '=HYPERLINK("x")' else 'House and lot' end, 'Generated lead ' || g,
             case when g % 7 = 0 then (select id from users order by created_at limit 1) end,
             now() - (g || ' seconds')::interval, now()
      from generate_series(${offset + 1}, ${offset + n}) g`);
  }
  for (const index of indexes) await database.execute(String(index.indexdef));
  // Behind the API's back, yet logged: each 50,000-row statement is one bulk entry of the change log (its triggers), so
  // a running service's cached totals of leads are counted again.
  // As autovacuum would: statistics, and the visibility map index-only scans rely on.
  await database.execute('vacuum analyze leads');
  await database.close();
  return Date.now() - started;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.argv[2] ?? 100_000);
  const ms = await seedLeads({ url: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR ? `${process.env.DATA_DIR}/pglite` : undefined, count });
  console.log(`seeded ${count} leads in ${ms} ms`);
}
