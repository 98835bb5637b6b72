import autocannon from 'autocannon';
import { rssMb } from './server.js';
import { seededService } from './setup.js';

/** Load runs against a real service on a seeded database: `npm run bench` (LEADS, DURATION, CONNECTIONS). */
const leads = Number(process.env.LEADS ?? 100_000);
const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 20);

const service = await seededService(leads);
const headers = { authorization: `Bearer ${service.token}` };
const [sample] = ((await (await fetch(`${service.url}/api/crm/leads?limit=1`, { headers })).json()) as any).data;

const scenarios: [string, string][] = [
  ['health', '/api/health'],
  ['leads, first page', '/api/crm/leads'],
  ['leads, status filter', '/api/crm/leads?status=qualified&limit=20'],
  ['leads, sorted by last name', '/api/crm/leads?sort=last_name&order=asc'],
  ['leads, deep page (offset 50,000)', `/api/crm/leads?page=${Math.floor(50_000 / 100)}&limit=100`],
  ['leads, search q', '/api/crm/leads?q=last42'],
  ['lead detail', `/api/crm/leads/${sample?.id}`],
];

console.log(`\n${service.database}, ${leads} leads, ${connections} connections, ${duration} s each\n`);
console.log('| scenario | req/s | p50 ms | p99 ms | non-2xx | RSS MB |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, path] of scenarios) {
  const result = await autocannon({ url: `${service.url}${path}`, connections, duration, headers });
  console.log(`| ${name} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx} | ${rssMb(service.child.pid!).toFixed(0)} |`);
}
await service.stop();
