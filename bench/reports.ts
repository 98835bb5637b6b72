import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { insertUserWithPassword } from '../src/auth/accounts.js';
import { bcryptHasher } from '../src/auth/passwords.js';
import { openDatabase } from '../src/db/client.js';
import { REPORTS } from '../src/modules/crm/reports/index.js';
import type { ReportInput } from '../src/modules/crm/reports/input.js';
import { localDay } from '../src/modules/crm/tasks.js';
import { shiftDay } from '../src/data/stats.js';
import { signIn, startService } from './server.js';
import { ADMIN } from './setup.js';

/**
 * `npm run bench:reports`: the sales reports on PostgreSQL with LEADS leads (1,000,000) spread over the last year, five
 * activities each, a follow-up for every other lead, reservations and sales of 3% of them, every lead routed; each
 * report timed through the API (its default range, the last 30 days, and a whole year) beside its SQL run directly,
 * for an `all` reader and for one agent's `own` scope. Medians of ROUNDS (5) runs, as a Markdown table.
 * DATABASE_URL must name a PostgreSQL server (a database is created on it and dropped at the end; KEEP=1 keeps it).
 */
const leads = Number(process.env.LEADS ?? 1_000_000);
const rounds = Number(process.env.ROUNDS ?? 5);
const TIME_ZONE = 'Asia/Manila';
if (!process.env.DATABASE_URL) throw new Error('bench:reports needs DATABASE_URL (a PostgreSQL server)');

const name = `pms_reports_${Date.now()}`;
const server = new pg.Client({ connectionString: process.env.DATABASE_URL });
await server.connect();
await server.query(`create database ${name}`);
const url = new URL(process.env.DATABASE_URL);
url.pathname = `/${name}`;
const dataDir = mkdtempSync(join(tmpdir(), 'pms-bench-'));
const env = { DATA_DIR: dataDir, DATABASE_URL: url.toString(), ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, NODE_ENV: 'production', AUTH_SECRET: 'bench-secret-0123456789-0123456789-abc', TASK_TIME_ZONE: TIME_ZONE };

const first = await startService(env); // migrates and creates the administrator
await first.stop();

// One agent who signs in (the `own` reader), made as the service makes users; 29 more in plain SQL.
const direct = await openDatabase({ url: url.toString() });
const AGENT_PASSWORD = 'Bench#Agent0rd1';
await insertUserWithPassword(direct.db, { email: 'agent1@bench.example', name: 'Agent 1', emailVerified: true }, await bcryptHasher(10).hash(AGENT_PASSWORD));

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
const counts = (await db.query(`select (select count(*) from leads) as leads, (select count(*) from crm_activities) as activities, (select count(*) from lead_status_changes) as lead_moves,
  (select count(*) from crm_tasks) as tasks, (select count(*) from reservations) as reservations, (select count(*) from unit_status_changes) as unit_moves`)).rows[0];
console.log(counts);
const agent = (await db.query(`select id from users where email = 'agent1@bench.example'`)).rows[0].id as string;
await db.end();

const service = await startService(env);
const token = await signIn(service.url, ADMIN.email, ADMIN.password);
const agentToken = await signIn(service.url, 'agent1@bench.example', AGENT_PASSWORD);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const to = localDay(new Date(), TIME_ZONE).date;
const ranges = { '30 days': { from: shiftDay(to, -29), to }, '366 days': { from: shiftDay(to, -365), to } };
const lines = ['| report | range | reader | API (ms) | SQL alone (ms) |', '|---|---|---|---:|---:|'];
for (const report of REPORTS) {
  for (const [rangeName, range] of Object.entries(ranges)) {
    for (const [reader, who, owners] of [['all', token, undefined], ['own (one agent)', agentToken, [agent]]] as const) {
      const api: number[] = [];
      const bare: number[] = [];
      for (let round = 0; round < rounds; round++) {
        let started = performance.now();
        const res = await fetch(`${service.url}/api/crm/reports/${report.name}?from=${range.from}&to=${range.to}`, { headers: { authorization: `Bearer ${who}` } });
        if (!res.ok) throw new Error(`${report.name}: ${res.status} ${await res.text()}`);
        await res.json();
        api.push(performance.now() - started);
        const input: ReportInput = { ...range, timeZone: TIME_ZONE, owners: owners ? [...owners] : undefined, now: new Date() };
        started = performance.now();
        await report.run(direct.db, input, report.defaultGroupBy);
        bare.push(performance.now() - started);
      }
      lines.push(`| ${report.name} | ${rangeName} | ${reader} | ${median(api).toFixed(0)} | ${median(bare).toFixed(0)} |`);
    }
  }
}
console.log(`\n${leads} leads, ${counts.activities} activities, PostgreSQL; medians of ${rounds} runs\n\n${lines.join('\n')}`);
await direct.close();
await service.stop();
rmSync(dataDir, { recursive: true, force: true });
if (!process.env.KEEP) await server.query(`drop database ${name} with (force)`);
else console.log(`kept ${url}`);
await server.end();
