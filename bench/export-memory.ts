import { rssMb } from './server.js';
import { seededService } from './setup.js';

/**
 * Resident memory of the service while it streams a large CSV export: `npm run bench:export` (LEADS, default 200,000).
 * Prints the idle RSS, the peak during the export and the difference.
 */
const leads = Number(process.env.LEADS ?? 200_000);
const service = await seededService(leads);
const pid = service.child.pid!;
const headers = { authorization: `Bearer ${service.token}` };

// Warm up the route and let the process settle, then take the idle level.
await (await fetch(`${service.url}/api/crm/leads?limit=100`, { headers })).arrayBuffer();
await new Promise((r) => setTimeout(r, 1000));
const idle = rssMb(pid);

let peak = idle;
const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)); }, 25);
const started = Date.now();
const res = await fetch(`${service.url}/api/crm/leads/export`, { headers });
let bytes = 0;
let lines = 0;
for await (const chunk of res.body as any as AsyncIterable<Uint8Array>) {
  bytes += chunk.length;
  for (const b of chunk) if (b === 10) lines++;
}
clearInterval(sampler);
const seconds = (Date.now() - started) / 1000;
console.log(`\n${service.database}: exported ${lines - 1} rows (${(bytes / 1e6).toFixed(1)} MB) in ${seconds.toFixed(1)} s, status ${res.status}`);
console.log(`RSS idle ${idle.toFixed(1)} MB, peak ${peak.toFixed(1)} MB, growth ${(peak - idle).toFixed(1)} MB`);
await service.stop();
await service.drop();
if (peak - idle > 60) process.exitCode = 1;
