import { randomUUID } from 'node:crypto';
import { and, desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs } from '../src/db/schema/index.js';
import { mentioned } from '../src/modules/crm/notices.js';
import { make } from './factories.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';
import { outboxReader } from './mail.js';

// In-app notifications: each kind made by the real action, only for users who may read its record; delivery
// preferences (in_app, email, both, none) per user and kind; the inbox endpoints.

type User = Awaited<ReturnType<typeof createUser>>;
type Item = { id: string; kind: string; title: string; body: string; record: { resource: string; id: string } | null; created_at: string; read_at: string | null };
type Page = { data: Item[]; pagination: { page: number; limit: number; total: number; totalPages: number }; unread: number };

const inquiry = { name: 'Vera Visitor', email: 'vera@example.com', phone: '+63 917 000 1111', subject: 'Two-bedroom units', message: 'Are any left?' };

let ctx: TestContext;
let outbox: ReturnType<typeof outboxReader>;
let admin: User;
let manager: User;
let agent: User;
/** crm write, record scope `own`. */
let ownAgent: User;
/** crm read only: hears of no inquiry, so its inbox holds only what a test sends it. */
let reader: User;

/** Every notice the service started has been written or sent (src/background.ts): no sleeping on it. */
const settle = () => ctx.app.background.settled();

const inbox = async (who: User, query = '') => {
  const res = await as(ctx, who).get(`/api/notifications${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
};
/** The notifications of `who` about record `id` (whatever the page). */
const about = async (who: User, id: string) => (await inbox(who, '?limit=100')).data.filter((n) => n.record?.id === id);

async function setScope(user: User, scope: 'all' | 'department' | 'own') {
  const rows = (await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json().data as { id: string; module: string }[];
  const res = await as(ctx, admin).patch(`/api/iam/module-access/${rows.find((r) => r.module === 'crm')!.id}`, { scope });
  expect(res.statusCode, res.body).toBe(200);
}

async function prefer(who: User, notifications: Record<string, string>) {
  const res = await as(ctx, who).patch('/api/auth/preferences', { notifications });
  expect(res.statusCode, res.body).toBe(200);
}

const assign = async (to: User, by: User = manager, names = { first_name: 'Lara', last_name: `Lead ${randomUUID().slice(0, 6)}` }) => {
  const res = await as(ctx, by).post('/api/crm/leads', { ...names, email: 'lara@example.com', interest: 'Condo', assigned_to: to.id });
  expect(res.statusCode, res.body).toBe(201);
  await settle();
  return res.json().id as string;
};

beforeAll(async () => {
  ctx = await createTestApp();
  outbox = outboxReader(ctx);
  admin = await createUser(ctx, { crm: 'rwd', iam: 'rwd' }, { name: 'Ada Admin' });
  manager = await createUser(ctx, { crm: 'rwd' }, { name: 'Manager Max' });
  agent = await createUser(ctx, { crm: 'rw' }, { name: 'Agent Ann', email: `ann.lee-${Date.now()}@example.com` });
  ownAgent = await createUser(ctx, { crm: 'rw' }, { name: 'Olive Own' });
  reader = await createUser(ctx, { crm: 'r' }, { name: 'Rita Reader' });
  await setScope(ownAgent, 'own');
});
afterAll(async () => ctx?.close());

describe('each kind, made by its action', () => {
  test('a lead assigned to you by someone else: a notification naming the lead, and the e-mail (default both)', async () => {
    const before = (await inbox(agent)).unread;
    const id = await assign(agent, manager, { first_name: 'Lara', last_name: 'Lead' });
    const [notification, ...more] = await about(agent, id);
    expect(more).toEqual([]);
    expect(notification).toMatchObject({
      kind: 'lead_assigned', title: 'Lead assigned to you: Lara Lead', record: { resource: 'leads', id }, read_at: null,
    });
    expect(notification.body).toContain('Manager Max assigned this lead to you.');
    expect(notification.body).toContain('Condo');
    expect((await inbox(agent)).unread).toBe(before + 1);
    expect(outbox.unread(agent.email).map((m) => m.subject)).toEqual(['Lead assigned to you: Lara Lead']);
  });

  test('assigning a lead to yourself makes none', async () => {
    const id = await assign(agent, agent);
    expect(await about(agent, id)).toEqual([]);
    expect(outbox.unread(agent.email)).toEqual([]);
  });

  test('a website inquiry: those who may answer and read it hear of it; an own-scope agent and a reader do not', async () => {
    const res = await as(ctx, none).post('/api/public/inquiries', inquiry);
    expect(res.statusCode).toBe(201);
    const id = res.json().id as string;
    await settle();
    for (const who of [agent, manager, admin]) {
      const [notification, ...more] = await about(who, id);
      expect(more).toEqual([]);
      expect(notification).toMatchObject({ kind: 'inquiry_received', title: 'New inquiry: Two-bedroom units', record: { resource: 'inquiries', id } });
      expect(notification.body).toBe('Vera Visitor <vera@example.com>: Are any left?');
      expect(outbox.unread(who.email).map((m) => m.subject)).toEqual(['New inquiry: Two-bedroom units']);
    }
    // The own-scope agent may write inquiries but cannot read one from the website (it belongs to nobody).
    expect((await as(ctx, ownAgent).get(`/api/crm/inquiries/${id}`)).statusCode).toBe(404);
    expect(await about(ownAgent, id)).toEqual([]);
    expect(outbox.unread(ownAgent.email)).toEqual([]);
    expect(await about(reader, id)).toEqual([]);
  });

  test('an @mention in a note on a lead: by name or e-mail local part, case-insensitive, only to those who may read the lead', async () => {
    const lead = await make.lead(ctx, { first_name: 'Mia', last_name: 'Mention', assigned_to: agent.id }, manager);
    await settle();
    const local = agent.email.split('@')[0];
    const res = await as(ctx, manager).post(`/api/crm/leads/${lead.id}/activities`, {
      kind: 'note', body: `@agent ann and @${local.toUpperCase()}: call her. @Olive Own too. (cc @Manager Max)`,
    });
    expect(res.statusCode, res.body).toBe(201);
    await settle();
    const mentions = (await about(agent, lead.id)).filter((n) => n.kind === 'mention');
    expect(mentions).toHaveLength(1);
    expect(mentions[0]).toMatchObject({ title: 'Manager Max mentioned you on Mia Mention', record: { resource: 'leads', id: lead.id } });
    expect(mentions[0].body).toContain('call her');
    // Default in_app: no mail for a mention.
    expect(outbox.unread(agent.email).filter((m) => m.subject.includes('mentioned'))).toEqual([]);
    // The own-scope agent cannot read the lead: no notification. The author mentioning themselves: none.
    expect((await as(ctx, ownAgent).get(`/api/crm/leads/${lead.id}`)).statusCode).toBe(404);
    expect(await about(ownAgent, lead.id)).toEqual([]);
    expect((await about(manager, lead.id)).filter((n) => n.kind === 'mention')).toEqual([]);

    // On a lead the own-scope agent may read (theirs), the same mention reaches them.
    const theirs = await make.lead(ctx, { first_name: 'Otto', last_name: 'Owned', assigned_to: ownAgent.id }, manager);
    expect((await as(ctx, manager).post(`/api/crm/leads/${theirs.id}/activities`, { kind: 'note', body: 'Over to you, @olive own.' })).statusCode).toBe(201);
    await settle();
    expect((await about(ownAgent, theirs.id)).filter((n) => n.kind === 'mention').map((n) => n.title)).toEqual(['Manager Max mentioned you on Otto Owned']);
  });

  test('no mention from an e-mail address in the text, from another kind of activity, or from a longer word', async () => {
    const lead = await make.lead(ctx, { first_name: 'Nia', last_name: 'Nomention', assigned_to: agent.id }, manager);
    const url = `/api/crm/leads/${lead.id}/activities`;
    expect((await as(ctx, manager).post(url, { kind: 'note', body: `Wrote to ${agent.email}; ask @agent annabel.` })).statusCode).toBe(201);
    expect((await as(ctx, manager).post(url, { kind: 'call', outcome: 'answered', body: '@Agent Ann please follow up' })).statusCode).toBe(201);
    await settle();
    expect((await about(agent, lead.id)).filter((n) => n.kind === 'mention')).toEqual([]);
  });

  test('matching: the longest name at one @ wins', () => {
    const people = [{ id: 'a', name: 'Ann', email: 'ann@example.com' }, { id: 'b', name: 'Bob', email: 'ann.lee@example.com' }];
    expect(mentioned('ping @ann.lee', people)).toEqual(['b']);
    expect(mentioned('ping @ann.', people)).toEqual(['a']);
    expect(mentioned('ping @Ann, @BOB', people).sort()).toEqual(['a', 'b']);
    expect(mentioned('ann@example.com', people)).toEqual([]);
  });
});

describe('delivery preferences', () => {
  test('GET shows every kind with its default; PATCH takes a partial map, answers them all, and is audited', async () => {
    const who = await createUser(ctx, { crm: 'r' });
    const res = await as(ctx, who).get('/api/auth/preferences');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      task_digest: true,
      weekly_report: false,
      notifications: { lead_assigned: 'both', inquiry_received: 'both', mention: 'in_app', lead_to_claim: 'in_app', follow_up_due: 'in_app', speed_to_lead: 'in_app' },
      away: false,
    });
    const patched = await as(ctx, who).patch('/api/auth/preferences', { notifications: { mention: 'both', lead_assigned: 'none' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().notifications).toMatchObject({ lead_assigned: 'none', mention: 'both', inquiry_received: 'both' });
    expect((await as(ctx, who).get('/api/auth/preferences')).json().notifications).toEqual(patched.json().notifications);
    const logs = await ctx.database.db.select().from(activityLogs)
      .where(and(eq(activityLogs.resource, 'users'), eq(activityLogs.resource_id, who.id))).orderBy(desc(activityLogs.created_at));
    expect(logs).toHaveLength(1);
    expect(logs[0].user_id).toBe(who.id);
    expect(logs[0].changes).toMatchObject({ before: { notifications: { lead_assigned: 'both', mention: 'in_app' } }, after: { notifications: { lead_assigned: 'none', mention: 'both' } } });
    // The same values again change nothing: no second log.
    expect((await as(ctx, who).patch('/api/auth/preferences', { notifications: { mention: 'both' } })).statusCode).toBe(200);
    expect(await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'users'), eq(activityLogs.resource_id, who.id)))).toHaveLength(1);
  });

  test('a bad value or an unknown kind is 400 naming notifications.<kind>', async () => {
    const bad = await as(ctx, reader).patch('/api/auth/preferences', { notifications: { lead_assigned: 'sms' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('Validation error');
    expect(Object.keys(bad.json().details)).toEqual(['notifications.lead_assigned']);
    const unknown = await as(ctx, reader).patch('/api/auth/preferences', { notifications: { pigeon: 'both' } });
    expect(unknown.statusCode).toBe(400);
    expect(Object.keys(unknown.json().details)).toEqual(['notifications.pigeon']);
    expect((await as(ctx, reader).get('/api/auth/preferences')).json().notifications.lead_assigned).toBe('both');
  });

  test('none: nothing; email: the mail only; in_app: no mail; both: both', async () => {
    const who = await createUser(ctx, { crm: 'r' });
    const expected = { none: [false, false], email: [false, true], in_app: [true, false], both: [true, true] } as const;
    for (const [delivery, [inApp, mail]] of Object.entries(expected)) {
      await prefer(who, { lead_assigned: delivery });
      const id = await assign(who);
      expect((await about(who, id)).length, delivery).toBe(inApp ? 1 : 0);
      expect(outbox.unread(who.email).length, delivery).toBe(mail ? 1 : 0);
    }
  });

  test('a mention by e-mail uses the generic mail, with the note and a link to the lead', async () => {
    await prefer(agent, { mention: 'email' });
    try {
      const lead = await make.lead(ctx, { first_name: 'Eve', last_name: 'Emailed', assigned_to: agent.id }, manager);
      await settle();
      outbox.unread(agent.email);
      expect((await as(ctx, manager).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body: 'Hey @Agent Ann, she wants <b>Tower B</b>.' })).statusCode).toBe(201);
      await settle();
      const [mail, ...more] = outbox.unread(agent.email);
      expect(more).toEqual([]);
      expect(mail.subject).toBe('Manager Max mentioned you on Eve Emailed');
      expect(mail.text).toContain('she wants <b>Tower B</b>.');
      expect(mail.html).toContain('&lt;b&gt;Tower B&lt;/b&gt;');
      expect(mail.text).toContain(`http://localhost:3000/leads/${lead.id}`);
      expect((await about(agent, lead.id)).filter((n) => n.kind === 'mention')).toEqual([]);
    } finally {
      await prefer(agent, { mention: 'in_app' });
    }
  });
});

describe('the inbox', () => {
  let who: User;
  let ids: string[];
  beforeAll(async () => {
    who = await createUser(ctx, { crm: 'r' }, { name: 'Paula Pager' });
    await prefer(who, { lead_assigned: 'in_app' });
    ids = [];
    for (let i = 0; i < 3; i++) ids.push(await assign(who, manager, { first_name: 'Page', last_name: `Lead${i}` }));
  });

  test('pages newest first with the total and the unread count', async () => {
    const first = await inbox(who, '?limit=2');
    expect(first.data.map((n) => n.record!.id)).toEqual([ids[2], ids[1]]);
    expect(first.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect(first.unread).toBe(3);
    const second = await inbox(who, '?limit=2&page=2');
    expect(second.data.map((n) => n.record!.id)).toEqual([ids[0]]);
    const past = await inbox(who, '?limit=2&page=5');
    expect(past.data).toEqual([]);
    expect(past.pagination).toEqual({ page: 5, limit: 2, total: 3, totalPages: 2 });
  });

  test('read one, then the rest: unread filter, counts and read-all', async () => {
    const [newest] = (await inbox(who)).data;
    const read = await as(ctx, who).post(`/api/notifications/${newest.id}/read`);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual({ message: 'Notification marked read' });
    // Again: still 200, still read at the first time.
    const readAt = (await inbox(who)).data[0].read_at;
    expect(readAt).not.toBeNull();
    expect((await as(ctx, who).post(`/api/notifications/${newest.id}/read`)).statusCode).toBe(200);
    expect((await inbox(who)).data[0].read_at).toBe(readAt);

    expect((await as(ctx, who).get('/api/notifications/unread-count')).json()).toEqual({ unread: 2 });
    const unread = await inbox(who, '?unread=true');
    expect(unread.data.map((n) => n.id)).not.toContain(newest.id);
    expect(unread.pagination.total).toBe(2);
    expect((await inbox(who, '?unread=false')).data.map((n) => n.id)).toEqual([newest.id]);

    const all = await as(ctx, who).post('/api/notifications/read-all');
    expect(all.statusCode).toBe(200);
    expect(all.json()).toEqual({ updated: 2, message: '2 notifications marked read' });
    expect((await as(ctx, who).get('/api/notifications/unread-count')).json()).toEqual({ unread: 0 });
    expect((await as(ctx, who).post('/api/notifications/read-all')).json()).toEqual({ updated: 0, message: '0 notifications marked read' });
  });

  test("another user's notification is 404 exactly like an unknown id, and stays unread", async () => {
    const theirs = (await inbox(agent, '?unread=true')).data[0];
    expect(theirs).toBeDefined();
    const foreign = await as(ctx, who).post(`/api/notifications/${theirs.id}/read`);
    const unknown = await as(ctx, who).post(`/api/notifications/${randomUUID()}/read`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).toBe(unknown.body);
    expect(unknown.json().error).toMatch(/not found/i);
    expect((await inbox(agent)).data.find((n) => n.id === theirs.id)?.read_at).toBeNull();
    // Nor does any list of theirs show it.
    expect((await inbox(who, '?limit=100')).data.map((n) => n.id)).not.toContain(theirs.id);
  });

  test('bad input is 400 naming the field; signed out is 401; an API token of the user reads its inbox', async () => {
    const badId = await as(ctx, who).post('/api/notifications/not-a-uuid/read');
    expect(badId.statusCode).toBe(400);
    expect(Object.keys(badId.json().details)).toEqual(['id']);
    for (const [query, field] of [['?color=red', 'color'], ['?limit=0', 'limit'], ['?page=0', 'page'], ['?unread=maybe', 'unread']]) {
      const res = await as(ctx, who).get(`/api/notifications${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(Object.keys(res.json().details), query).toEqual([field]);
    }
    expect((await as(ctx, who).get('/api/notifications/unread-count?x=1')).json().details).toHaveProperty('x');
    expect((await as(ctx, none).get('/api/notifications')).statusCode).toBe(401);
    expect((await as(ctx, none).get('/api/notifications/unread-count')).statusCode).toBe(401);
    expect((await as(ctx, none).post('/api/notifications/read-all')).statusCode).toBe(401);

    const token = await as(ctx, who).post('/api/auth/tokens', { name: 'Inbox', permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
    expect(token.statusCode, token.body).toBe(201);
    const viaToken = await as(ctx, token.json().token as string).get('/api/notifications');
    expect(viaToken.statusCode, viaToken.body).toBe(200);
    expect(viaToken.json().pagination.total).toBe(3);
  });

  test('the OpenAPI document shows the routes with examples', async () => {
    const doc = (await as(ctx, none).get('/api/openapi.json')).json();
    expect(Object.keys(doc.paths['/api/notifications'])).toEqual(['get']);
    expect(doc.paths['/api/notifications/{id}/read'].post).toBeDefined();
    expect(doc.paths['/api/notifications/read-all'].post).toBeDefined();
    expect(doc.paths['/api/notifications/unread-count'].get).toBeDefined();
    expect(doc.components.schemas.Notification.examples[0]).toMatchObject({ kind: 'lead_assigned' });
    expect(doc.components.schemas.NotificationPreferences.properties.lead_assigned.enum).toEqual(['in_app', 'email', 'both', 'none']);
  });
});

describe('the operator\'s mail switches govern the e-mail half only', () => {
  test('INQUIRY_NOTICE_TO lists addresses: users get the notification, the mail goes to the addresses; ASSIGNMENT_NOTICES=false: no assignment mail', async () => {
    const own = await createTestApp({ INQUIRY_NOTICE_TO: 'desk@example.com', ASSIGNMENT_NOTICES: 'false' });
    try {
      const mails = outboxReader(own);
      const writer = await createUser(own, { crm: 'rw' });
      const boss = await createUser(own, { crm: 'rw' });
      const res = await as(own, none).post('/api/public/inquiries', inquiry);
      expect(res.statusCode).toBe(201);
      expect((await as(own, boss).post('/api/crm/leads', { first_name: 'Quiet', last_name: 'Lead', phone: '+63 900 555 0001', assigned_to: writer.id })).statusCode).toBe(201);
      await own.app.background.settled();
      const kinds = ((await as(own, writer).get('/api/notifications')).json() as Page).data.map((n) => n.kind).sort();
      expect(kinds).toEqual(['inquiry_received', 'lead_assigned']);
      expect(mails.unread('desk@example.com')).toHaveLength(1);
      expect(mails.unread(writer.email)).toEqual([]);
    } finally {
      await own.close();
    }
  });
});
