import { request as httpRequest, type ClientRequest } from 'node:http';
import autocannon from 'autocannon';
import { signIn } from './server.js';
import { ADMIN, seededService } from './setup.js';

/**
 * `npm run bench:live`: what live streams cost and how fast they tell. On a seeded database (DATABASE_URL: PostgreSQL,
 * else PGlite; LEADS, default 1,000,000):
 * (1) list reads per second of `GET /api/crm/leads` (page 3 of `status=new`, 50 connections) with no stream open and
 *     with STREAMS (500) open on the same instance, in interleaved rounds (ROUNDS, 3; DURATION s each, 10);
 * (2) the time from a website inquiry arriving (`POST /api/public/inquiries`) to U's stream receiving the
 *     `notification` of the lead it made, routed to U by a lead-flow rule (and the lead's `change`), SAMPLES (20)
 *     times, one at a time.
 */
const leads = Number(process.env.LEADS ?? 1_000_000);
const duration = Number(process.env.DURATION ?? 10);
const rounds = Number(process.env.ROUNDS ?? 3);
const streamCount = Number(process.env.STREAMS ?? 500);
const samples = Number(process.env.SAMPLES ?? 20);
/** Streams a user may hold (the service's LIVE_STREAMS_PER_USER): the streams are spread over enough users. */
const PER_USER = 100;
process.env.LIVE_STREAMS_PER_USER = String(PER_USER);
// The inquiries are sent as a script sends them: no form token (the bench measures their way to the stream).
process.env.PUBLIC_FORM_TOKEN = 'off';

const service = await seededService(leads);
const admin = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = admin) {
  const res = await fetch(`${service.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A staff user with crm read (every record; `write`: crm write too), signed in: their bearer token. */
async function agent(n: number, write = false): Promise<{ id: string; token: string }> {
  const email = `live-bench-${n}-${Date.now()}@example.com`;
  const password = 'Live#Bench-Passw0rd';
  const user = await api('POST', '/api/iam/users', { email, name: `Live Bench ${n}`, password });
  await api('POST', '/api/iam/module-access', { user_id: user.id, module: 'crm', can_read: true, can_write: write, can_delete: false });
  return { id: user.id, token: await signIn(service.url, email, password) };
}

type Listener = { request: ClientRequest; events: { event: string; data: any; at: number }[] };

/** An open stream, its events parsed as they arrive (with the moment each arrived). */
function listen(token: string): Promise<Listener> {
  return new Promise((resolve, reject) => {
    const listener: Listener = { request: undefined as unknown as ClientRequest, events: [] };
    listener.request = httpRequest(`${service.url}/api/live`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /api/live: ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) listener.events.push({ event, data: JSON.parse(data), at: performance.now() });
        }
      });
      res.on('error', () => undefined);
      resolve(listener);
    });
    listener.request.on('error', () => undefined);
    listener.request.end();
  });
}

async function reads(): Promise<{ rps: number; p99: number; errors: number }> {
  const result = await autocannon({ url: `${service.url}/api/crm/leads?status=new&page=3&limit=10`, headers: { authorization: admin.authorization }, connections: 50, duration });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)];

// (1) reads with and without open streams.
const listeners = await Promise.all(Array.from({ length: Math.ceil(streamCount / PER_USER) }, (_, i) => agent(i)));
const without: Awaited<ReturnType<typeof reads>>[] = [];
const withStreams: Awaited<ReturnType<typeof reads>>[] = [];
for (let round = 1; round <= rounds; round++) {
  console.error(`round ${round}/${rounds}`);
  // Alternately first and second, so warming up favours neither.
  if (round % 2) without.push(await reads());
  const open = await Promise.all(Array.from({ length: streamCount }, (_, i) => listen(listeners[Math.floor(i / PER_USER)].token)));
  withStreams.push(await reads());
  for (const stream of open) stream.request.destroy();
  await new Promise((r) => setTimeout(r, 500));
  if (!(round % 2)) without.push(await reads());
}

// (2) from a website inquiry to the notification of its routed lead on the assignee's stream.
const u = await agent(9999, true);
await api('POST', '/api/crm/lead-flow/rules', { name: 'Website inquiries to the bench agent', channel: 'website', assign_user_id: u.id });
const stream = await listen(u.token);
await new Promise((r) => setTimeout(r, 500));
const toNotification: number[] = [];
const toChange: number[] = [];
for (let i = 0; i < samples; i++) {
  const started = performance.now();
  const name = `Live Bench${i}x`;
  await api('POST', '/api/public/inquiries', { name, email: `live.bench.${i}.${Date.now()}@example.com`, subject: 'Price list', message: 'Please send the price list' }, { 'content-type': 'application/json' });
  const deadline = Date.now() + 30_000;
  let note: Listener['events'][number] | undefined;
  while (!(note = stream.events.find((e) => e.event === 'notification' && String(e.data.title).includes(name))) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  if (!note) throw new Error(`no notification for the lead of ${name} within 30 s`);
  const change = stream.events.find((e) => e.event === 'change' && e.data.resource === 'leads' && e.data.id === note.data.record?.id);
  toNotification.push(note.at - started);
  if (change) toChange.push(change.at - started);
  await new Promise((r) => setTimeout(r, 100 + Math.random() * 300)); // not in step with the reader's polls
}
stream.request.destroy();

await service.stop();
await service.drop();

const ratio = median(withStreams.map((r) => r.rps)) / median(without.map((r) => r.rps));
console.log(`\n${new Date().toISOString().slice(0, 10)}, ${service.database}, ${leads.toLocaleString('en')} leads, ${duration} s × ${rounds} interleaved rounds (medians)\n`);
console.log('| scenario | req/s | p99 ms | errors | target |');
console.log('|---|---:|---:|---:|---|');
console.log(`| page 3 of status=new, no stream open | ${Math.round(median(without.map((r) => r.rps)))} | ${median(without.map((r) => r.p99))} | ${without.reduce((n, r) => n + r.errors, 0)} | |`);
console.log(`| the same with ${streamCount} streams open | ${Math.round(median(withStreams.map((r) => r.rps)))} | ${median(withStreams.map((r) => r.p99))} | ${withStreams.reduce((n, r) => n + r.errors, 0)} | ≥ 0.9× (${ratio.toFixed(3)}×) |`);
console.log(`\nEach round (req/s), no stream / ${streamCount} streams: ${without.map((r, i) => `${Math.round(r.rps)} / ${Math.round(withStreams[i].rps)}`).join(', ')}`);
const ms = (values: number[]) => `${Math.round(median(values))} / ${Math.round(percentile(values, 95))} / ${Math.round(Math.max(...values))}`;
console.log(`\n| website inquiry → its routed lead's notification on the assignee's stream (${samples} samples) | median / p95 / max ms | target |`);
console.log('|---|---|---|');
console.log(`| \`notification\` event | ${ms(toNotification)} | < 1,000 |`);
if (toChange.length) console.log(`| \`change\` event of the lead | ${ms(toChange)} | |`);
if (ratio < 0.9 || Math.max(...toNotification) >= 1000) process.exitCode = 1;
