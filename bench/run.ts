import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort, root, rssMb } from './server.js';
import { ADMIN, seededService } from './setup.js';

/**
 * `npm run bench`: the service on a seeded database beside a bare baseline server (bench/baseline.ts: Fastify + pg,
 * same table, same query, no auth), every scenario in interleaved rounds, medians printed as a Markdown table.
 * DATABASE_URL (PostgreSQL; without it PGlite and no baseline), LEADS (1,000,000), DURATION (s, 10), ROUNDS (3).
 */
const leads = Number(process.env.LEADS ?? 1_000_000);
const duration = Number(process.env.DURATION ?? 10);
const rounds = Number(process.env.ROUNDS ?? 3);

/** ONLY=stats (a substring of scenario names, comma-separated): run just those scenarios, and no export. */
const only = (process.env.ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const service = await seededService(leads);
const auth = { authorization: `Bearer ${service.token}` };
const onServer = Boolean(process.env.DATABASE_URL);
const serviceDatabaseUrl = onServer ? service.env.DATABASE_URL : undefined;

/** The baseline, in its own process like the service. */
async function startBaseline() {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/baseline.ts'], { cwd: root, env: { ...process.env, DATABASE_URL: serviceDatabaseUrl, PORT: String(port) }, stdio: ['ignore', 'inherit', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300 && !(await fetch(`${url}/health`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
  return { url, stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}
const baseline = onServer ? await startBaseline() : undefined;

type Run = { rps: number; p50: number; p99: number; non2xx: number; errors: number; statuses: Record<string, number> };
type Options = autocannon.Options;

async function load(options: Partial<Options> & { url: string }): Promise<Run> {
  const result = await autocannon({ connections: 50, duration, ...options } as Options);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, (stats as { count: number }).count]));
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors + result.timeouts, statuses };
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Runs `scenario` `rounds` times (callers interleave them) and keeps every figure for medians. */
const figures = new Map<string, Run[]>();
const wanted = (name: string) => !only.length || only.some((part) => name.includes(part));
async function measure(name: string, run: () => Promise<Run>) {
  if (!wanted(name)) return;
  const result = await run();
  figures.set(name, [...(figures.get(name) ?? []), result]);
}
const summary = (name: string) => {
  const runs = figures.get(name) ?? [];
  return { rps: median(runs.map((r) => r.rps)), p50: median(runs.map((r) => r.p50)), p99: median(runs.map((r) => r.p99)), non2xx: runs.reduce((n, r) => n + r.non2xx, 0), errors: runs.reduce((n, r) => n + r.errors, 0), statuses: runs.at(-1)?.statuses ?? {} };
};

const PAGE3 = 'status=new&page=3&limit=10';
const DEEP = 'status=new&page=10000&limit=10';
const leadBody = JSON.stringify({ first_name: 'Bench', last_name: 'Writer', email: 'bench.writer@example.com', status: 'new' });
const json = { ...auth, 'content-type': 'application/json' };
/** A write: create a lead, then move it on (it leaves `status=new`): both change the totals readers are served. */
const writeRequests: Options['requests'] = [
  { method: 'POST', path: '/api/crm/leads', headers: json, body: leadBody, onResponse: (_status, body, context) => { (context as { id?: string }).id = JSON.parse(body).id; } },
  { method: 'PATCH', headers: json, setupRequest: (request, context) => ({ ...request, path: `/api/crm/leads/${(context as { id?: string }).id}`, body: JSON.stringify({ status: 'contacted' }) }) },
];

async function countOf(status: string): Promise<number | undefined> {
  if (!serviceDatabaseUrl) return undefined;
  const client = new pg.Client({ connectionString: serviceDatabaseUrl });
  await client.connect();
  const { rows } = await client.query('select count(*)::int as n from leads where status = $1', [status]);
  await client.end();
  return rows[0].n;
}
const servedTotal = async (query: string) => ((await (await fetch(`${service.url}/api/crm/leads?${query}`, { headers: auth })).json()) as { pagination: { total: number } }).pagination.total;

const exactness: string[] = [];
for (let round = 1; round <= rounds; round++) {
  console.error(`round ${round}/${rounds}`);
  if (baseline) {
    await measure('baseline: page 3, no total', () => load({ url: `${baseline.url}/leads?${PAGE3}` }));
    await measure('baseline: page 3 with total', () => load({ url: `${baseline.url}/leads?${PAGE3}&total=1` }));
    await measure('baseline: page 10,000 with total (10 conns)', () => load({ url: `${baseline.url}/leads?${DEEP}&total=1`, connections: 10 }));
  }
  await measure('service: page 3 with exact total', () => load({ url: `${service.url}/api/crm/leads?${PAGE3}`, headers: auth }));
  if (baseline) await measure('baseline: lead stats, grouped counts', () => load({ url: `${baseline.url}/stats`, connections: 10 }));
  await measure('service: GET /api/crm/stats (dashboard)', () => load({ url: `${service.url}/api/crm/stats`, headers: auth, connections: 10 }));
  await measure('service: stats with 5 % writes mixed in', async () => {
    const [reads] = await Promise.all([
      load({ url: `${service.url}/api/crm/stats`, headers: auth, connections: 9 }),
      load({ url: service.url, connections: 1, requests: writeRequests }),
    ]);
    return reads;
  });
  await measure('service: two statuses and a date range, page 3', () => load({ url: `${service.url}/api/crm/leads?status=new,contacted&created_from=2020-01-01&page=3&limit=10`, headers: auth }));
  await measure('service: GET /api/auth/session', () => load({ url: `${service.url}/api/auth/session`, headers: auth }));
  await measure('service: create lead (audited)', () => load({ url: `${service.url}/api/crm/leads`, method: 'POST', headers: json, body: leadBody }));
  if (wanted('service: reads with 5 % writes mixed in')) await (async () => {
    // 95 % reads, 5 % writes: 47 connections read while 3 write (create, then update).
    const [reads, writes] = await Promise.all([
      load({ url: `${service.url}/api/crm/leads?${PAGE3}`, headers: auth, connections: 47 }),
      load({ url: service.url, connections: 3, requests: writeRequests }),
    ]);
    figures.set('service: reads with 5 % writes mixed in', [...(figures.get('service: reads with 5 % writes mixed in') ?? []), reads]);
    figures.set('service: the writes mixed in', [...(figures.get('service: the writes mixed in') ?? []), writes]);
    await new Promise((r) => setTimeout(r, 1000)); // the last writes answer
    const [served, counted] = await Promise.all([servedTotal(PAGE3), countOf('new')]);
    exactness.push(counted === undefined ? `served ${served}` : `served ${served}, count(*) ${counted}: ${served === counted ? 'exact' : 'WRONG'}`);
  })();
  await measure('service: page 10,000 with exact total', () => load({ url: `${service.url}/api/crm/leads?${DEEP}`, headers: auth }));
  await measure('service: q search with exact total', () => load({ url: `${service.url}/api/crm/leads?q=Last42&limit=10`, headers: auth }));
  if (wanted('service: reads during a login storm')) await (async () => {
    // Logins arriving faster than bcrypt (cost 12) can serve them, beside the read load.
    const [reads, logins] = await Promise.all([
      load({ url: `${service.url}/api/crm/leads?${PAGE3}`, headers: auth, connections: 47 }),
      load({ url: `${service.url}/api/auth/login`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN), connections: 40, timeout: 30 }),
    ]);
    figures.set('service: reads during a login storm', [...(figures.get('service: reads during a login storm') ?? []), reads]);
    figures.set('service: the login storm (40 conns)', [...(figures.get('service: the login storm (40 conns)') ?? []), logins]);
  })();
}

/** Streams an export and samples the service's memory meanwhile. */
async function exportRun(query: string) {
  await new Promise((r) => setTimeout(r, 1000));
  const idle = rssMb(service.child.pid!);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(service.child.pid!))), 50);
  const started = Date.now();
  const res = await fetch(`${service.url}/api/crm/leads/export${query}`, { headers: auth });
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) for (const byte of chunk) if (byte === 10) lines++;
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  return { rows: lines - 1, seconds, rowsPerSecond: (lines - 1) / seconds, growthMb: peak - idle };
}
const exportAll = only.length ? undefined : await exportRun('');
const exportNew = only.length ? undefined : await exportRun('?status=new');

await service.stop();
await baseline?.stop();
await service.drop();

// ── Report ────────────────────────────────────────────────────────────────────────────────────────────────
const base = summary('baseline: page 3, no total').rps;
const ratio = (rps: number) => (baseline ? `${(rps / base).toFixed(2)}×` : '—');
const row = (name: string, target = '') => {
  const s = summary(name);
  const codes = Object.entries(s.statuses).map(([code, n]) => `${code}: ${n}`).join(', ');
  return `| ${name} | ${Math.round(s.rps)} | ${ratio(s.rps)} | ${s.p50} | ${s.p99} | ${s.errors} | ${codes} | ${target} |`;
};
console.log(`\n${new Date().toISOString().slice(0, 10)}, ${service.database}, ${leads.toLocaleString('en')} leads, ${duration} s × ${rounds} interleaved rounds (medians), 50 connections unless said\n`);
console.log('| scenario | req/s | × baseline page 3 no total | p50 ms | p99 ms | errors | statuses (last round) | target |');
console.log('|---|---:|---:|---:|---:|---:|---|---|');
for (const name of figures.keys()) {
  const target = {
    'service: page 3 with exact total': '≥ 0.5×, p99 ≤ 50',
    'service: reads with 5 % writes mixed in': '≥ 0.3×, p99 ≤ 100',
    'service: create lead (audited)': '≥ 1,500/s',
    'service: page 10,000 with exact total': '≥ 0.3×',
    'service: q search with exact total': '≥ 0.2×',
    'service: reads during a login storm': '≥ 0.4×, p99 ≤ 50',
  }[name];
  console.log(row(name, target));
}
console.log(`\nTotals after each mixed round: ${exactness.join('; ')}`);
if (exportAll && exportNew) {
  console.log(`\n| export | rows | seconds | rows/s | RSS growth MB |\n|---|---:|---:|---:|---:|`);
  console.log(`| all leads | ${exportAll.rows} | ${exportAll.seconds.toFixed(1)} | ${Math.round(exportAll.rowsPerSecond)} | ${exportAll.growthMb.toFixed(0)} |`);
  console.log(`| status=new | ${exportNew.rows} | ${exportNew.seconds.toFixed(1)} | ${Math.round(exportNew.rowsPerSecond)} | ${exportNew.growthMb.toFixed(0)} |`);
  console.log(`\nExport time ratio all/new: ${(exportAll.seconds / exportNew.seconds).toFixed(2)} for ${(exportAll.rows / exportNew.rows).toFixed(1)}× the rows (target ≤ 5.5 for 5×)`);
}
