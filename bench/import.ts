import pg from 'pg';
import { seededService } from './setup.js';

/**
 * Time to import generated leads from CSV through the real service: `npm run bench:import` (PGlite) or with
 * DATABASE_URL=postgres://… (a fresh database on that server, dropped afterwards). IMPORT_ROWS (default 100,000) new
 * leads are imported into a table already holding LEADS (default 0) seeded ones. Prints the dry run's time, the time
 * from upload to the job's completion, and, on PostgreSQL, the plan of the natural-key look-up of one batch.
 */
const rows = Number(process.env.IMPORT_ROWS ?? 100_000);
const existing = Number(process.env.LEADS ?? 0);
const service = await seededService(existing);
const headers = { authorization: `Bearer ${service.token}` };

const SOURCES = ['website', 'referral', 'event', 'social'];
const lines = ['first_name,last_name,email,phone,source,status,interest,notes'];
for (let i = 1; i <= rows; i++) {
  lines.push(`Imported${i},Family${i % 5000},imported${i}@example.org,+1 555 ${String(i).padStart(7, '0')},${SOURCES[i % 4]},new,House and lot,"Row ${i}, from the bench"`);
}
const csv = `${lines.join('\n')}\n`;
console.log(`\n${service.database}: ${rows} leads to import (${(csv.length / 1e6).toFixed(1)} MB of CSV) into a table of ${existing} leads`);

const upload = (dryRun: boolean) => {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'bench-leads.csv');
  return fetch(`${service.url}/api/crm/leads/import${dryRun ? '?dry_run=true' : ''}`, { method: 'POST', headers, body: form });
};

let started = Date.now();
const dry = await upload(true);
const report = (await dry.json()) as { valid_rows: number; invalid_rows: number };
const drySeconds = (Date.now() - started) / 1000;
console.log(`dry run: ${dry.status}, ${report.valid_rows} valid, ${report.invalid_rows} invalid, in ${drySeconds.toFixed(1)} s`);

started = Date.now();
const queued = await upload(false);
const { id } = (await queued.json()) as { id: string };
const acceptedSeconds = (Date.now() - started) / 1000;
let result: { status: string; processed_rows: number; created: number; skipped: number; failed: number; failure_reason: string | null };
for (;;) {
  await new Promise((r) => setTimeout(r, 250));
  result = (await (await fetch(`${service.url}/api/crm/imports/${id}`, { headers })).json()) as typeof result;
  if (result.status === 'completed' || result.status === 'failed') break;
}
const seconds = (Date.now() - started) / 1000;
console.log(`import: ${queued.status} after ${acceptedSeconds.toFixed(1)} s; ${result.status} in ${seconds.toFixed(1)} s: created ${result.created}, skipped ${result.skipped}, failed ${result.failed}${result.failure_reason ? ` (${result.failure_reason})` : ''}; ${Math.round(result.created / seconds)} leads/s`);

if (service.env.DATABASE_URL) {
  const client = new pg.Client({ connectionString: service.env.DATABASE_URL });
  await client.connect();
  await client.query('analyze leads');
  const emails = Array.from({ length: 500 }, (_, i) => `imported${i * 7 + 1}@example.org`);
  const phones = Array.from({ length: 500 }, (_, i) => `+1 555 ${String(i * 7 + 1).padStart(7, '0')}`);
  // The statement the import runs for each batch (src/modules/crm/import-kinds.ts), with its values.
  const list = (from: number) => emails.map((_, i) => `$${from + i}`).join(', ');
  const plan = await client.query(`explain (analyze, costs off) select lower(email), phone from leads where lower(email) in (${list(1)}) or phone in (${list(501)})`, [...emails, ...phones]);
  console.log('natural-key look-up of one batch (500 e-mails, 500 phones):');
  for (const row of plan.rows) console.log(`  ${String(row['QUERY PLAN']).replace(/'\{[^}]*\}'/g, "'{…}'")}`);
  await client.end();
}

await service.stop();
await service.drop();
if (result.status !== 'completed' || result.created !== rows) process.exitCode = 1;
