import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { buildApp } from '../src/app.js';
import { clock } from '../src/clock.js';
import { openDatabase } from '../src/db/client.js';
import { liveHubOf } from '../src/live/hub.js';
import { moduleAccess } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, eventually, serverUrl, type TestContext, testConfig } from './helpers.js';

// The live stream through a real listening server (app.inject cannot stream): what each user hears, resuming after
// an event, the per-user bound, sign-out and shutdown, and (on PostgreSQL) a change made through another instance.

type User = Awaited<ReturnType<typeof createUser>>;
type Event = { id?: string; event: string; data: any };

let ctx: TestContext;
let base: string;
let admin: User;

/** A stream as a client reads it: its events as they arrive, the last event id (as EventSource keeps it), whether it ended. */
async function open(who: { token: string } | string, options: { lastEventId?: string; query?: string; url?: string } = {}) {
  const token = typeof who === 'string' ? who : who.token;
  const controller = new AbortController();
  const res = await fetch(`${options.url ?? base}/api/live${options.query ?? ''}`, {
    headers: { authorization: `Bearer ${token}`, ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}) },
    signal: controller.signal,
  });
  const stream = { res, events: [] as Event[], comments: 0, lastId: undefined as string | undefined, ended: false, close: () => controller.abort() };
  if (!res.body) return stream;
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    let block: { id?: string; event?: string; data: string[] } = { data: [] };
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (block.id !== undefined) stream.lastId = block.id;
            if (block.data.length) stream.events.push({ id: block.id, event: block.event ?? 'message', data: JSON.parse(block.data.join('\n')) });
            block = { data: [] };
          } else if (line.startsWith(':')) stream.comments++;
          else {
            const [field, ...rest] = line.split(':');
            const value = rest.join(':').replace(/^ /, '');
            if (field === 'id') block.id = value;
            else if (field === 'event') block.event = value;
            else if (field === 'data') block.data.push(value);
          }
        }
      }
    } catch { /* aborted */ }
    stream.ended = true;
  })();
  return stream;
}
type Stream = Awaited<ReturnType<typeof open>>;

/** The first event of `stream` that `match` accepts, once it arrives. */
const arrives = (stream: Stream, match: (event: Event) => boolean, what: string) => eventually(() => stream.events.find(match), what);
const about = (id: string) => (event: Event) => event.data?.id === id || event.data?.record?.id === id;
const changeOf = (resource: string, id: string, action?: string) => (event: Event) =>
  event.event === 'change' && event.data.resource === resource && event.data.id === id && (!action || event.data.action === action);

async function lead(body: Record<string, unknown>, who: User = admin): Promise<string> {
  const res = await as(ctx, who).post('/api/crm/leads', { first_name: 'Maria', last_name: 'Santos', phone: '+63 917 555 0101', source: 'website', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}
const patchLead = async (id: string, body: Record<string, unknown>) => expect((await as(ctx, admin).patch(`/api/crm/leads/${id}`, body)).statusCode).toBe(200);
async function amenity(): Promise<string> {
  const res = await as(ctx, admin).post('/api/cms/amenities', { name: `Pool ${Math.random()}` });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function setScope(user: User, scope: 'all' | 'department' | 'own') {
  const rows = (await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json().data as { id: string; module: string }[];
  const res = await as(ctx, admin).patch(`/api/iam/module-access/${rows.find((r) => r.module === 'crm')!.id}`, { scope });
  expect(res.statusCode, res.body).toBe(200);
}

beforeAll(async () => {
  ctx = await createTestApp({ LIVE_STREAMS_PER_USER: '2', METRICS_TOKEN: 'live-metrics-token-0123456789abcdef' });
  Object.assign(liveHubOf(ctx.app)!.options, { pollMs: 50, heartbeatMs: 100 });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as { port: number };
  base = `http://127.0.0.1:${port}`;
  admin = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' }, { name: 'Juan dela Cruz' });
});
afterAll(async () => ctx?.close());

describe('opening the stream', () => {
  test('signed in only; an event stream that is not buffered', async () => {
    expect((await as(ctx, '').get('/api/live')).statusCode).toBe(401);
    const user = await createUser(ctx, { crm: 'r' });
    const stream = await open(user);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.res.headers.get('cache-control')).toBe('no-cache');
    expect(stream.res.headers.get('x-accel-buffering')).toBe('no');
    // Its position from the start, for a reconnect before any event.
    await eventually(() => stream.lastId, 'the first position');
    const metrics = await fetch(`${base}/api/metrics`, { headers: { authorization: 'Bearer live-metrics-token-0123456789abcdef' } });
    expect(await metrics.text()).toMatch(/^live_streams [1-9]/m);
    stream.close();
  });

  test('a comment line at each heartbeat, carrying the position reached', async () => {
    const user = await createUser(ctx, { crm: 'r' });
    const stream = await open(user);
    const first = await eventually(() => stream.lastId, 'the first position');
    const beats = stream.comments;
    await eventually(() => stream.comments >= beats + 3 || undefined, 'three heartbeats');
    // Something committed meanwhile (anyone's write moves the reader on): the next heartbeat's id is further on.
    await amenity();
    await eventually(() => (stream.lastId !== first) || undefined, 'a later position');
    expect(stream.events).toEqual([]);
    stream.close();
  });

  test('a Last-Event-ID it cannot read is ignored: the stream opens as new', async () => {
    const user = await createUser(ctx, { crm: 'r' });
    for (const garbage of ['garbage', 'v1;zz;1:2:3;x', 'v1;0;99999999999999999999:1:', `v1;${'9'.repeat(12)};1:2:`, 'v1;1;5:3:', '\u00ff']) {
      const stream = await open(user, { lastEventId: garbage });
      expect(stream.res.status, garbage).toBe(200);
      stream.close();
    }
    const query = await open(user, { query: '?last_event_id=nonsense' });
    expect(query.res.status).toBe(200);
    const id = await lead({ assigned_to: user.id });
    await arrives(query, changeOf('leads', id, 'created'), 'the lead on a stream opened with a garbage id');
    query.close();
  });
});

describe('what a user hears', () => {
  test('a lead assigned to them by someone else: its notification, the change, their unread count', async () => {
    const agent = await createUser(ctx, { crm: 'r' });
    const stream = await open(agent);
    await eventually(() => stream.lastId, 'the stream open');
    const id = await lead({ assigned_to: agent.id });
    const note = await arrives(stream, (e) => e.event === 'notification', 'the notification');
    expect(note.data).toMatchObject({ kind: 'lead_assigned', title: 'Lead assigned to you: Maria Santos', record: { resource: 'leads', id }, read_at: null });
    const listed = (await as(ctx, agent).get('/api/notifications')).json().data[0];
    expect(note.data).toEqual(listed);
    await arrives(stream, changeOf('leads', id, 'created'), 'the change');
    expect((await arrives(stream, (e) => e.event === 'unread', 'the unread count')).data).toEqual({ unread: 1 });
    expect(stream.events.every((event) => event.id)).toBe(true);
    stream.close();
  });

  test('scope own: nothing about another agent\'s leads or their notifications; a lead moving in and out once each', async () => {
    const own = await createUser(ctx, { crm: 'rw' });
    const other = await createUser(ctx, { crm: 'rw' });
    await setScope(own, 'own');
    const stream = await open(own);
    await eventually(() => stream.lastId, 'the stream open');

    const theirs = await lead({ assigned_to: other.id });
    await patchLead(theirs, { notes: 'changed' });
    const movingIn = await lead({ assigned_to: other.id });
    const movingOut = await lead({ assigned_to: own.id });
    await arrives(stream, changeOf('leads', movingOut, 'created'), 'their own lead');
    const before = stream.events.length;
    await patchLead(movingIn, { assigned_to: own.id });
    await arrives(stream, changeOf('leads', movingIn, 'updated'), 'the lead moving into their scope');
    await patchLead(movingOut, { assigned_to: other.id });
    await arrives(stream, changeOf('leads', movingOut, 'updated'), 'the lead leaving their scope');
    await patchLead(movingOut, { notes: 'no longer theirs' });
    expect((await as(ctx, admin).delete(`/api/crm/leads/${theirs}`)).statusCode).toBe(200);
    // Activities are theirs through their lead: one on a lead of theirs is told, one on another's is not.
    const note = async (leadId: string) => (await as(ctx, admin).post(`/api/crm/leads/${leadId}/activities`, { kind: 'note', body: 'Called' })).json().id as string;
    const hidden = await note(movingOut);
    const seen = await note(movingIn);
    await arrives(stream, changeOf('activities', seen, 'created'), 'an activity on their lead');
    const sentinel = await lead({ assigned_to: own.id });
    await arrives(stream, changeOf('leads', sentinel, 'created'), 'the sentinel');

    const heard = stream.events.slice(0);
    for (const id of [theirs, hidden]) expect(heard.filter(about(id)), id).toEqual([]);
    expect(heard.slice(0, before).filter(about(movingIn))).toEqual([]);
    expect(heard.filter(about(movingOut)).map((e) => `${e.event}:${e.data.action ?? e.data.kind}`)).toEqual(['change:created', 'notification:lead_assigned', 'change:updated']);
    // Notifications: their own only (the other agent had one for each lead assigned to them).
    expect(heard.filter((e) => e.event === 'notification').every((e) => [movingOut, movingIn, sentinel].includes(e.data.record.id))).toBe(true);
    expect(heard.filter((e) => e.event === 'change').every((e) => ['leads', 'activities'].includes(e.data.resource))).toBe(true);
    stream.close();
  });

  test('no crm read: no crm event; losing a module while connected stops its events', async () => {
    const reader = await createUser(ctx, { cms: 'r' });
    const both = await createUser(ctx, { cms: 'r', crm: 'r' });
    const streams = [await open(reader), await open(both)];
    await eventually(() => streams.every((s) => s.lastId), 'the streams open');
    const before = await lead({ assigned_to: both.id });
    await arrives(streams[1], changeOf('leads', before, 'created'), 'the lead, while they read crm');
    await ctx.database.db.update(moduleAccess).set({ can_read: false }).where(and(eq(moduleAccess.user_id, both.id), eq(moduleAccess.module, 'crm')));
    const after = await lead({});
    const place = await amenity();
    for (const stream of streams) await arrives(stream, changeOf('amenities', place, 'created'), 'the amenity');
    expect(streams[0].events.filter((e) => e.data.resource !== 'amenities' && e.event === 'change')).toEqual([]);
    expect(streams[1].events.filter(about(after))).toEqual([]);
    streams.forEach((s) => s.close());
  });
});

describe('what a user hears, as it changes', () => {
  test('a record scope narrowed while connected: from then on only their own', async () => {
    const agent = await createUser(ctx, { crm: 'rw' });
    const other = await createUser(ctx, { crm: 'rw' });
    const stream = await open(agent);
    await eventually(() => stream.lastId, 'the stream open');
    const seen = await lead({ assigned_to: other.id });
    await arrives(stream, changeOf('leads', seen, 'created'), 'another agent\'s lead, while their scope is all');
    await setScope(agent, 'own');
    const hidden = await lead({ assigned_to: other.id });
    const sentinel = await lead({ assigned_to: agent.id });
    await arrives(stream, changeOf('leads', sentinel, 'created'), 'their own lead');
    expect(stream.events.filter(about(hidden))).toEqual([]);
    stream.close();
  });

  test('a statement writing many rows: one bulk change, to those who read the module', async () => {
    const reader = await createUser(ctx, { crm: 'r' });
    const outsider = await createUser(ctx, { cms: 'r' });
    const streams = [await open(reader), await open(outsider)];
    await eventually(() => streams.every((s) => s.lastId), 'the streams open');
    await ctx.database.execute(`insert into leads (id, first_name, last_name, phone, source, status)
      select gen_random_uuid(), 'Bulk', 'Lead ' || g, '+63 917 000 ' || g, 'website', 'new' from generate_series(1, 201) g`);
    const place = await amenity();
    await arrives(streams[0], (e) => e.event === 'change' && e.data.resource === 'leads' && e.data.action === 'bulk', 'the bulk change');
    await arrives(streams[1], changeOf('amenities', place, 'created'), 'the amenity');
    expect(streams[1].events.filter((e) => e.data.resource === 'leads')).toEqual([]);
    expect(streams[0].events.find((e) => e.data.action === 'bulk')!.data).toEqual({ resource: 'leads', action: 'bulk' });
    streams.forEach((s) => s.close());
  });
});

describe('bursts', () => {
  test('more changes than one read takes: a bulk change of each resource; a resume past them: reset', async () => {
    const hub = liveHubOf(ctx.app)!;
    const reader = await createUser(ctx, { crm: 'r' });
    const stream = await open(reader);
    const before = await eventually(() => stream.lastId, 'the stream open');
    stream.close();
    const live = await open(reader);
    await eventually(() => live.lastId, 'the second stream open');
    hub.options.batchMax = 3;
    try {
      // Five statements in one transaction: five entries of the log, committed at once.
      await ctx.database.db.transaction(async (tx) => {
        for (let i = 0; i < 5; i++) {
          await tx.execute(sql`insert into leads (id, first_name, last_name, phone, source, status) values (gen_random_uuid(), 'Burst', ${`Lead ${i}`}, ${`+63 917 222 000${i}`}, 'website', 'new')`);
        }
      });
      expect((await arrives(live, (e) => e.event === 'change' && e.data.action === 'bulk', 'the bulk change')).data).toEqual({ resource: 'leads', action: 'bulk' });
      const resumed = await open(reader, { lastEventId: before });
      expect((await arrives(resumed, (e) => e.event === 'reset', 'the reset')).data).toEqual({ reason: 'too_many_changes' });
      resumed.close();
    } finally {
      hub.options.batchMax = 5_000;
    }
    live.close();
  });
});

describe('reconnecting', () => {
  test('from the middle of what one transaction wrote: the rest of it', async () => {
    const agent = await createUser(ctx, { crm: 'r' });
    const stream = await open(agent);
    await eventually(() => stream.lastId, 'the stream open');
    const { rows } = await ctx.database.execute(`insert into leads (id, first_name, last_name, phone, source, status, assigned_to)
      select gen_random_uuid(), 'Twin', 'Lead ' || g, '+63 917 111 ' || g, 'website', 'new', $1::uuid from generate_series(1, 2) g returning id`, [agent.id]);
    const [a, b] = rows.map((row) => String(row.id));
    await arrives(stream, changeOf('leads', b), 'the second');
    await arrives(stream, changeOf('leads', a), 'the first');
    const [first, second] = stream.events.filter((e) => e.event === 'change');
    stream.close();
    const resumed = await open(agent, { lastEventId: first.id });
    const next = await arrives(resumed, (e) => e.event === 'change', 'the rest of the transaction');
    expect(next.data).toEqual(second.data);
    const sentinel = await lead({ assigned_to: agent.id });
    await arrives(resumed, changeOf('leads', sentinel, 'created'), 'a later lead');
    expect(resumed.events.filter((e) => e.event === 'change' && e.data.id === first.data.id)).toEqual([]);
    resumed.close();
  });


  test('Last-Event-ID resumes after that event: nothing missed, nothing twice', async () => {
    const agent = await createUser(ctx, { crm: 'r' });
    const first = await open(agent);
    await eventually(() => first.lastId, 'the stream open');
    const a = await lead({ assigned_to: agent.id });
    const b = await lead({ assigned_to: agent.id });
    await arrives(first, changeOf('leads', b, 'created'), 'b');
    const afterA = first.events.find(changeOf('leads', a, 'created'))!.id!;
    // The unread count is told once for what a resume catches up with, not after each notification.
    const told = (events: Event[]) => events.filter((e) => e.event !== 'unread').map((e) => `${e.event}:${JSON.stringify(e.data)}`);
    const seen = told(first.events.slice(first.events.findIndex((e) => e.id === afterA) + 1));
    const lastId = first.lastId!;
    first.close();
    // Changes while away, then a resume from the last id and one from the middle.
    const c = await lead({ assigned_to: agent.id });
    const d = await lead({});
    await patchLead(a, { notes: 'while away' });
    const resumed = await open(agent, { lastEventId: lastId });
    const middle = await open(agent, { lastEventId: afterA });
    await arrives(resumed, changeOf('leads', a, 'updated'), 'the update made while away');
    await arrives(middle, changeOf('leads', a, 'updated'), 'the update, from the middle');
    const ids = (stream: Stream) => stream.events.filter((e) => e.event === 'change' && e.data.resource === 'leads').map((e) => `${e.data.id}:${e.data.action}`);
    expect(ids(resumed)).toEqual([`${c}:created`, `${d}:created`, `${a}:updated`]);
    expect(ids(middle)).toEqual([`${b}:created`, `${c}:created`, `${d}:created`, `${a}:updated`]);
    expect(told(middle.events).slice(0, seen.length)).toEqual(seen);
    resumed.close();
    middle.close();
  });

  test('a position older than the change log keeps: event reset, then live', async () => {
    const agent = await createUser(ctx, { crm: 'r' });
    const first = await open(agent);
    const id = await eventually(() => first.lastId, 'a position');
    first.close();
    const now = clock.now;
    clock.now = () => new Date(Date.now() + 2 * 60 * 60 * 1000);
    try {
      const late = await open(agent, { lastEventId: id });
      expect((await arrives(late, (e) => e.event === 'reset', 'the reset')).data).toEqual({ reason: 'expired' });
      late.close();
    } finally {
      clock.now = now;
    }
  });
});

describe('closing', () => {
  test('at most LIVE_STREAMS_PER_USER streams a user: one more closes the oldest, saying so', async () => {
    const agent = await createUser(ctx, { crm: 'r' });
    const first = await open(agent);
    await eventually(() => first.lastId, 'the first open');
    const second = await open(agent);
    await eventually(() => second.lastId, 'the second open');
    const third = await open(agent);
    expect((await arrives(first, (e) => e.event === 'closed', 'the oldest closed')).data).toEqual({ reason: 'too_many_streams' });
    await eventually(() => first.ended || undefined, 'the oldest ended');
    const id = await lead({ assigned_to: agent.id });
    for (const stream of [second, third]) await arrives(stream, changeOf('leads', id, 'created'), 'the lead on the open ones');
    expect(second.ended || third.ended).toBe(false);
    second.close();
    third.close();
  });

  test('signing out ends the stream', async () => {
    const agent = await createUser(ctx, { crm: 'r' });
    const stream = await open(agent);
    await eventually(() => stream.lastId, 'the stream open');
    expect((await as(ctx, agent).post('/api/auth/logout')).statusCode).toBe(200);
    expect((await arrives(stream, (e) => e.event === 'closed', 'the close')).data).toEqual({ reason: 'signed_out' });
    await eventually(() => stream.ended || undefined, 'the end');
  });

  test('closing the app ends its streams and does not wait for them', async () => {
    const other = await createTestApp({}, { database: ctx.database });
    await other.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(other.app.server.address() as { port: number }).port}`;
    const stream = await open(admin.token, { url });
    expect(stream.res.status).toBe(200);
    await eventually(() => stream.lastId, 'the stream open');
    await other.close();
    await eventually(() => stream.ended || undefined, 'the end');
  });
});

describe.skipIf(!serverUrl)('two instances on one PostgreSQL database', () => {
  test('a transaction that commits after later ones is still told, once', async () => {
    const agent = await createUser(ctx, { crm: 'r' });
    const stream = await open(agent);
    await eventually(() => stream.lastId, 'the stream open');
    const client = new pg.Client({ connectionString: (ctx.database as { url?: string }).url! });
    await client.connect();
    try {
      await client.query('begin');
      // Logged now (its change-log id is the lower), committed last.
      const { rows } = await client.query(`insert into leads (id, first_name, last_name, phone, source, status, assigned_to)
        values (gen_random_uuid(), 'Late', 'Commit', '+63 917 333 0001', 'website', 'new', $1) returning id`, [agent.id]);
      const early = await lead({ assigned_to: agent.id });
      await arrives(stream, changeOf('leads', early, 'created'), 'the lead committed first');
      const heardBefore = stream.lastId;
      await client.query('commit');
      await arrives(stream, changeOf('leads', rows[0].id, 'created'), 'the lead committed late');
      const resumed = await open(agent, { lastEventId: heardBefore });
      await arrives(resumed, changeOf('leads', rows[0].id, 'created'), 'the late one, resuming from before its commit');
      const sentinel = await lead({ assigned_to: agent.id });
      for (const s of [stream, resumed]) await arrives(s, changeOf('leads', sentinel, 'created'), 'a later lead');
      for (const s of [stream, resumed]) expect(s.events.filter(changeOf('leads', rows[0].id)).length).toBe(1);
      expect(resumed.events.filter(changeOf('leads', early))).toEqual([]);
      resumed.close();
    } finally {
      await client.end();
      stream.close();
    }
  });

  test('a lead created through one reaches a stream of the other', async () => {
    const database = await openDatabase({ url: (ctx.database as { url?: string }).url! });
    const other = await buildApp({ config: testConfig(), database, logger: false, jobs: false });
    try {
      liveHubOf(other)!.options.pollMs = 50;
      await other.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(other.server.address() as { port: number }).port}`;
      const agent = await createUser(ctx, { crm: 'r' });
      const stream = await open(agent, { url });
      await eventually(() => stream.lastId, 'the stream open');
      const id = await lead({ assigned_to: agent.id });
      expect((await arrives(stream, (e) => e.event === 'notification', 'the notification')).data.record.id).toBe(id);
      await arrives(stream, changeOf('leads', id, 'created'), 'the change');
      stream.close();
    } finally {
      await other.close();
      await database.close();
    }
  });
});
