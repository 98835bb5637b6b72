import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { insertUserWithPassword } from '../src/auth/accounts.js';
import { bcryptHasher } from '../src/auth/passwords.js';
import { openDatabase } from '../src/db/client.js';
import { REPORTS } from '../src/modules/crm/reports/index.js';
import { localDay } from '../src/modules/crm/tasks.js';
import { shiftDay } from '../src/data/stats.js';
import { signIn, startService } from './server.js';
import { BARE_SQL } from './reports-bare.js';
import { ADMIN } from './setup.js';

/**
 * `npm run bench:reports`: the sales reports on PostgreSQL with LEADS leads (1,000,000) spread over the last year, five
 * activities each, a follow-up for every other lead, reservations and sales of 3% of them, every lead routed. Each
 * report, for its default range (the last 30 days), a quarter and a year, for an `all` reader and for one agent's `own`
 * scope: its answer through HTTP beside the same aggregate written plainly (bench/reports-bare.ts) run through `pg`;
 * median and p95 of ROUNDS (7) runs, as a Markdown table, and a check that both give the same totals.
 * DATABASE_URL must name a PostgreSQL server; the seeded database (BENCH_DATABASE, pms_reports_bench) is kept for the
 * next run.
 */
const leads = Number(process.env.LEADS ?? 1_000_000);
const rounds = Number(process.env.ROUNDS ?? 7);
const TIME_ZONE = 'Asia/Manila';
if (!process.env.DATABASE_URL) throw new Error('bench:reports needs DATABASE_URL (a PostgreSQL server)');

// The seeded database is kept and reused: seeding a million leads takes minutes. A database marked seeded (its comment)
// with as many leads is measured as it stands; a fresh one is made and seeded. FRESH=1 drops it first.
const name = process.env.BENCH_DATABASE ?? 'pms_reports_bench';
if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error('BENCH_DATABASE: a lower-case PostgreSQL name');
const marker = `bench:reports ${leads} leads`;
const server = new pg.Client({ connectionString: process.env.DATABASE_URL });
await server.connect();
if (process.env.FRESH) await server.query(`drop database if exists ${name} with (force)`);
const existing = await server.query(`select shobj_description(oid, 'pg_database') as comment from pg_database where datname = $1`, [name]);
const reuse = existing.rows[0]?.comment === marker;
if (!existing.rowCount) await server.query(`create database ${name}`);
else if (!reuse) throw new Error(`${name} exists but was not seeded with ${leads} leads by this benchmark: drop it, or run with FRESH=1`);
const url = new URL(process.env.DATABASE_URL);
url.pathname = `/${name}`;
const dataDir = mkdtempSync(join(tmpdir(), 'pms-bench-'));
const env = { DATA_DIR: dataDir, DATABASE_URL: url.toString(), ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, NODE_ENV: 'production', AUTH_SECRET: 'bench-secret-0123456789-0123456789-abc', TASK_TIME_ZONE: TIME_ZONE };

const first = await startService(env); // migrates (a reused database gets any new migration) and creates the administrator
await first.stop();
const direct = await openDatabase({ url: url.toString() });
const AGENT_PASSWORD = 'Bench#Agent0rd1';
const db = new pg.Client({ connectionString: url.toString() });
await db.connect();
const step = async (what: string, text: string) => {
  const started = Date.now();
  const result = await db.query(text);
  console.log(`  ${what}: ${result.rowCount ?? ''} rows in ${Date.now() - started} ms`);
};
/** Indexes of `table` dropped now and built again by the function returned (much faster than kept up to date row by row). */
async function withoutIndexes(table: string) {
  const { rows } = await db.query(`select indexname, indexdef from pg_indexes where tablename = $1 and indexdef not like '%UNIQUE%'`, [table]);
  for (const index of rows) await db.query(`drop index ${index.indexname}`);
  return async () => {
    for (const index of rows) await db.query(index.indexdef);
  };
}
if (!reuse) await seed();
else console.log(`reusing ${name}, seeded earlier (FRESH=1 seeds again)`);

async function seed() {
// One agent who signs in (the `own` reader), made as the service makes users; 29 more in plain SQL.
await insertUserWithPassword(direct.db, { email: 'agent1@bench.example', name: 'Agent 1', emailVerified: true }, await bcryptHasher(10).hash(AGENT_PASSWORD));

const seeding = Date.now();
console.log(`seeding ${leads} leads into ${name}`);
await step('departments', `insert into departments (id, name) select gen_random_uuid(), 'Bench department ' || g from generate_series(1, 3) g`);
await step('agents', `insert into users (id, name, email, email_verified)
  select gen_random_uuid(), 'Agent ' || g, 'agent' || g || '@bench.example', true from generate_series(2, 30) g`);
await step('their departments', `update users u set department_id = (select id from departments order by name offset (regexp_replace(u.email, '[^0-9]', '', 'g')::int % 3) limit 1)
  where u.email like 'agent%@bench.example'`);
await step('agents\' access', `insert into module_access (id, user_id, module, can_read, can_write, can_delete, scope)
  select gen_random_uuid(), id, 'crm', true, true, false, 'own' from users where email like 'agent%@bench.example'`);
await step('projects', `insert into projects (id, name, slug, status, type)
  select gen_random_uuid(), 'Bench Project ' || g, 'bench-project-' || g, 'active', 'residential' from generate_series(1, 40) g`);
await step('units', `insert into inventory_units (id, project_id, inventory_code, block, lot, price, created_at, updated_at)
  select gen_random_uuid(), p.id, 'BP' || p.n || '-' || g, 'B' || (g / 50), 'L' || g, 1500000 + (g % 20) * 100000, now() - interval '400 days', now() - interval '400 days'
  from (select id, row_number() over (order by name) as n from projects) p, generate_series(1, 1000) g`);
await step('a routing rule', `insert into lead_flow_rules (id, name, position, is_default, assign_user_id, speed_limit_minutes)
  select gen_random_uuid(), 'Bench default', 1, true, id, 60 from users where email = 'agent1@bench.example'`);

// Leads: new at creation (the trigger records it), then moved on as a year of work would, each move a statement the
// status trigger records. The history's index stays: the insert trigger looks up each lead's last status there.
const restoreLeadIndexes = await withoutIndexes('leads');
for (let offset = 0; offset < leads; offset += 100_000) {
  const n = Math.min(100_000, leads - offset);
  await step(`leads ${offset + 1}–${offset + n}`, `
    with agents as (select array_agg(id order by email) as ids from users where email like 'agent%@bench.example'),
    names as (select array_agg(name order by name) as names from projects)
    insert into leads (id, first_name, last_name, email, phone, source, status, interest, assigned_to, created_at, updated_at)
    select gen_random_uuid(), 'First' || g, 'Last' || (g % 5000), 'lead' || g || '@example.com', g::text,
      (array['website','referral','event','social'])[1 + g % 4], 'new',
      case when g % 10 < 7 then 'A house at ' || names.names[1 + g % 40] else 'House and lot' end,
      agents.ids[1 + g % 30], born, born
    from agents, names, generate_series(${offset + 1}, ${offset + n}) g, lateral (select now() - ((g::bigint * 7919) % (365 * 24 * 60)) * interval '1 minute' as born) t`);
}
await step('contacted', `update leads set status = 'contacted', updated_at = created_at + ((phone::int % 72) + 1) * interval '1 hour' where phone::int % 10 < 6`);
await step('qualified', `update leads set status = 'qualified', updated_at = created_at + ((phone::int % 7) + 4) * interval '1 day' where phone::int % 10 < 3`);
await step('lost', `update leads set status = 'lost', updated_at = created_at + 20 * interval '1 day' where phone::int % 10 in (6, 7)`);
await step('converted', `update leads set status = 'converted', updated_at = created_at + 40 * interval '1 day' where phone::int % 100 < 3`);
await restoreLeadIndexes();

// Activities, follow-ups and routing without their foreign-key and change-log triggers (the rows are consistent).
await db.query(`set session_replication_role = replica`);
const restoreActivityIndexes = await withoutIndexes('crm_activities');
await step('activities', `insert into crm_activities (id, lead_id, kind, outcome, occurred_at, author_id, created_at, updated_at)
  select gen_random_uuid(), l.id, (array['call','call','email','meeting','site_visit','note'])[1 + (k + l.phone::int) % 6],
    case when (k + l.phone::int) % 6 < 2 then (array['answered','no_answer','busy','voicemail','wrong_number'])[1 + l.phone::int % 5] end,
    l.created_at + k * interval '1 day', l.assigned_to, l.created_at + k * interval '1 day', l.created_at + k * interval '1 day'
  from leads l, generate_series(1, 5) k`);
await restoreActivityIndexes();
const restoreTaskIndexes = await withoutIndexes('crm_tasks');
await step('follow-ups', `insert into crm_tasks (id, title, due_at, assigned_to, lead_id, done_at, done_by, created_at, updated_at)
  select gen_random_uuid(), 'Call back', l.created_at + interval '2 days', l.assigned_to, l.id,
    case when l.phone::int % 5 <> 0 then l.created_at + interval '1 day' end, case when l.phone::int % 5 <> 0 then l.assigned_to end, l.created_at, l.created_at
  from leads l where l.phone::int % 2 = 0`);
await restoreTaskIndexes();
await step('routing', `insert into lead_routing (lead_id, rule_id, channel, assigned_at, first_contact_at, speed_due_at)
  select l.id, (select id from lead_flow_rules limit 1), 'api', l.created_at + interval '1 minute',
    case when l.phone::int % 5 <> 0 then l.created_at + ((l.phone::int % 180) + 1) * interval '1 minute' end, l.created_at + interval '61 minutes'
  from leads l`);
await db.query(`set session_replication_role = origin`);

// Reservations of 3% of the leads, each of its own unit (the units' trigger records reserved, sold, released).
await step('reservations', `
  with picked as (select l.*, row_number() over (order by l.created_at, l.id) as n from leads l where l.phone::int % 100 < 3),
  units as (select u.id, row_number() over (order by u.inventory_code) as n from inventory_units u)
  insert into reservations (id, inventory_id, client_name, contact_number, reservation_date, status, payment_status, created_by, lead_id, created_at, updated_at)
  select gen_random_uuid(), u.id, p.first_name || ' ' || p.last_name, p.phone, p.created_at + interval '10 days',
    case when p.phone::int % 1000 < 3 then 'cancelled' when p.phone::int % 2 = 0 then 'confirmed' else 'pending' end,
    case when p.phone::int % 2 = 0 then 'paid' else 'unpaid' end, p.assigned_to, p.id, p.created_at + interval '10 days', p.created_at + interval '10 days'
  from picked p join units u on u.n = p.n`);
await step('units reserved', `update inventory_units u set status = 'reserved', sold_to = r.id, updated_at = r.created_at from reservations r where r.inventory_id = u.id`);
await step('units sold', `update inventory_units u set status = 'sold', updated_at = r.created_at + interval '20 days' from reservations r where r.id = u.sold_to and r.status = 'confirmed'`);
await step('units released', `update inventory_units u set status = 'available', sold_to = null, updated_at = r.created_at + interval '5 days' from reservations r where r.id = u.sold_to and r.status = 'cancelled'`);
await step('vacuum analyze', 'vacuum analyze');
console.log(`seeded in ${Math.round((Date.now() - seeding) / 1000)} s`);
await db.query(`comment on database ${name} is '${marker}'`);
}
const counts = (await db.query(`select (select count(*) from leads) as leads, (select count(*) from crm_activities) as activities, (select count(*) from lead_status_changes) as lead_moves,
  (select count(*) from crm_tasks) as tasks, (select count(*) from reservations) as reservations, (select count(*) from unit_status_changes) as unit_moves`)).rows[0];
console.log(counts);
const agent = (await db.query(`select id from users where email = 'agent1@bench.example'`)).rows[0].id as string;

const running = await startService(env);
process.once('exit', () => running.child.kill()); // also when a step below fails
const token = await signIn(running.url, ADMIN.email, ADMIN.password);
const agentToken = await signIn(running.url, 'agent1@bench.example', AGENT_PASSWORD);

// Each report for each range and reader: its answer through HTTP and its plain statement through `pg` (bench/reports-bare.ts),
// interleaved, after one round not counted; the totals of the two must agree.
const sorted = (values: number[]) => [...values].sort((x, y) => x - y);
const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)];
const p95 = (values: number[]) => sorted(values)[Math.ceil(values.length * 0.95) - 1];
const to = localDay(new Date(), TIME_ZONE).date;
// The default range is asked for as a client would: no from, no to.
const ranges: [string, { from: string; to: string }, string][] = [
  ['30 days (default)', { from: shiftDay(to, -29), to }, ''],
  ['quarter (91 days)', { from: shiftDay(to, -90), to }, `?from=${shiftDay(to, -90)}&to=${to}`],
  ['year (366 days)', { from: shiftDay(to, -365), to }, `?from=${shiftDay(to, -365)}&to=${to}`],
];
const bare = new pg.Client({ connectionString: url.toString() });
await bare.connect();
// The settings the service's report statements run with (reportRows): no JIT compilation, room to sort and hash in memory.
await bare.query(`set jit = off; set work_mem = '64MB'`);
const lines = ['| report | range | reader | service ms (median / p95) | plain SQL ms (median / p95) | ratio |', '|---|---|---|---:|---:|---:|'];
const disagreements: string[] = [];
for (const report of REPORTS) {
  for (const [rangeName, range, query] of ranges) {
    for (const [reader, who, owner] of [['all', token, null], ['own (one agent)', agentToken, agent]] as const) {
      const service: number[] = [];
      const plain: number[] = [];
      for (let round = 0; round <= rounds; round++) {
        let started = performance.now();
        const res = await fetch(`${running.url}/api/crm/reports/${report.name}${query}`, { headers: { authorization: `Bearer ${who}` } });
        if (!res.ok) throw new Error(`${report.name}: ${res.status} ${await res.text()}`);
        const answer = await res.json() as { range: { from: string; to: string }; totals: Record<string, number | null> };
        const serviceMs = performance.now() - started;
        started = performance.now();
        const text = BARE_SQL[report.name];
        const { rows } = await bare.query(text, [range.from, range.to, owner, new Date().toISOString()].slice(0, text.includes('$4') ? 4 : 3));
        const bareMs = performance.now() - started;
        if (round === 0) {
          if (answer.range.from !== range.from || answer.range.to !== range.to) throw new Error(`${report.name}: range ${JSON.stringify(answer.range)}, expected ${JSON.stringify(range)}`);
          const totals = rows.find((row) => row.key === null) ?? {};
          for (const [figure, value] of Object.entries(totals)) {
            if (figure === 'key' || !(figure in answer.totals)) continue;
            const expected = value === null ? null : Math.round(Number(value) * 10) / 10;
            const got = answer.totals[figure] === null ? null : Math.round(Number(answer.totals[figure]) * 10) / 10;
            if (got !== expected) disagreements.push(`${report.name}, ${rangeName}, ${reader}: ${figure} ${got} from the service, ${expected} from the plain SQL`);
          }
          continue; // the warm-up round is not counted
        }
        service.push(serviceMs);
        plain.push(bareMs);
      }
      const line = `| ${report.name} | ${rangeName} | ${reader} | ${median(service).toFixed(0)} / ${p95(service).toFixed(0)} | ${median(plain).toFixed(0)} / ${p95(plain).toFixed(0)} | ${(median(service) / median(plain)).toFixed(2)}× |`;
      console.log(line);
      lines.push(line);
    }
  }
}
await bare.end();
console.log(`\n${leads} leads, ${counts.activities} activities, PostgreSQL; ${rounds} runs each after one not counted\n\n${lines.join('\n')}`);
if (disagreements.length) console.log(`\nTHE SERVICE AND THE PLAIN SQL DISAGREE:\n${disagreements.join('\n')}`);
else console.log('\nEvery total of the service equals the plain SQL\'s.');
await direct.close();
await running.stop();
if (disagreements.length) process.exitCode = 1;
rmSync(dataDir, { recursive: true, force: true });
await db.end();
await server.end();
console.log(`kept ${name} for the next run`);
