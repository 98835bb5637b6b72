import { eq, sql } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, campaignDeliveries, leads, moduleAccess } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { as, countQueries, createTestApp, createUser, login, none, type Reply, type TestContext } from './helpers.js';

// A lead's timeline merges what the service knows about the lead; a reservation names its lead; an
// inquiry becomes a lead in one action.

let ctx: TestContext;
let agent: Awaited<ReturnType<typeof createUser>>;
let manager: Awaited<ReturnType<typeof createUser>>;
let reader: Awaited<ReturnType<typeof createUser>>;
let outsider: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  agent = await createUser(ctx, { crm: 'rwd' }, { name: 'Ana Agent' });
  manager = await createUser(ctx, { crm: 'rwd' }, { name: 'Mia Manager' });
  reader = await createUser(ctx, { crm: 'r' });
  outsider = await createUser(ctx, { cms: 'rwd' });
});
afterAll(async () => ctx?.close());

type Entry = { type: string; at: string; actor: { id: string; name: string } | null; payload: Record<string, any> };
type Timeline = { data: Entry[]; pagination: { page: number; limit: number; total: number; totalPages: number } };

const timeline = async (leadId: string, query = '', who: string | typeof reader = reader): Promise<Timeline> => {
  const res = await as(ctx, who).get(`/api/crm/leads/${leadId}/timeline${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const ok = async (res: Promise<Reply>, status = 200) => {
  const reply = await res;
  expect(reply.statusCode, reply.body).toBe(status);
  return reply;
};

describe('a lead\'s timeline', () => {
  test('merges activities, status changes and assignments, reservations, inquiries, subscription, campaign e-mails and done follow-ups, newest first', async () => {
    const email = `tl-${uuidv7()}@example.com`;
    const lead = await make.lead(ctx, { first_name: 'Tina', last_name: 'Line', email: email.toUpperCase(), phone: '+63 917 555 0101' }, agent);
    await ok(as(ctx, agent).patch(`/api/crm/leads/${lead.id}`, { status: 'contacted' }));
    await ok(as(ctx, manager).patch(`/api/crm/leads/${lead.id}`, { assigned_to: agent.id }));
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'call', outcome: 'answered', body: 'Wants a corner lot' }), 201);
    const reservation = await make.reservation(ctx, { email, inventory_id: (await make.unit(ctx)).id }, agent);
    // Inquiries of the same address (any case) or the same phone (other punctuation); another person's is left out.
    const byMail = await make.inquiry(ctx, { email: email.toUpperCase(), subject: 'Price list' });
    const byPhone = await make.inquiry(ctx, { email: `other-${uuidv7()}@example.com`, phone: '+63 (917) 555-0101', subject: 'Visit' });
    await make.inquiry(ctx, { email: `stranger-${uuidv7()}@example.com`, phone: '+63 917 000 0000', subject: 'Unrelated' });
    const subscription = await make.newsletter(ctx, { email });
    await ok(as(ctx, manager).patch(`/api/crm/newsletters/${subscription.id}`, { status: 'unsubscribed' }));
    const campaign = await make.campaign(ctx, { name: 'November news', subject: 'New units' });
    await ctx.database.db.insert(campaignDeliveries).values({ campaign_id: campaign.id, email, status: 'sent', sent_at: new Date() });
    await ctx.database.db.insert(campaignDeliveries).values({ campaign_id: (await make.campaign(ctx)).id, email, status: 'failed' });
    const task = await ok(as(ctx, agent).post('/api/crm/tasks', { title: 'Send the reservation form', due_at: '2030-01-01T09:00:00Z', lead_id: lead.id }), 201);
    await ok(as(ctx, manager).patch(`/api/crm/tasks/${task.json().id}`, { done: true }));
    await ok(as(ctx, agent).post('/api/crm/tasks', { title: 'Still open', due_at: '2030-01-02T09:00:00Z', lead_id: lead.id }), 201);

    const { data, pagination } = await timeline(lead.id, '?limit=100');
    const types = data.map((entry) => entry.type);
    expect(pagination).toEqual({ page: 1, limit: 100, total: 11, totalPages: 1 });
    expect(types.sort()).toEqual(['activity', 'assigned', 'campaign_email', 'inquiry', 'inquiry', 'lead_created', 'reservation', 'status_changed', 'subscribed', 'task_completed', 'unsubscribed']);
    const at = data.map((entry) => Date.parse(entry.at));
    expect([...at].sort((a, b) => b - a)).toEqual(at);
    const of = (type: string) => data.filter((entry) => entry.type === type);
    expect(of('lead_created')[0]).toMatchObject({ actor: { id: agent.id, name: 'Ana Agent' }, payload: { status: 'new', source: 'website' } });
    expect(of('status_changed')[0]).toMatchObject({ actor: { id: agent.id }, payload: { from: 'new', to: 'contacted' } });
    expect(of('assigned')[0]).toMatchObject({ actor: { id: manager.id, name: 'Mia Manager' }, payload: { from: null, to: { id: agent.id, name: 'Ana Agent' } } });
    expect(of('activity')[0]).toMatchObject({ actor: { id: agent.id }, payload: { kind: 'call', outcome: 'answered', body: 'Wants a corner lot', place: null } });
    expect(of('reservation')[0]).toMatchObject({ actor: { id: agent.id }, payload: { id: reservation.id, status: 'pending' } });
    expect(of('reservation')[0].payload.inventory_code).toEqual(expect.any(String));
    expect(of('inquiry').map((entry) => entry.payload.id).sort()).toEqual([byMail.id, byPhone.id].sort());
    expect(of('inquiry')[0]).toMatchObject({ actor: null, payload: { converted: false } });
    expect(of('unsubscribed')[0].payload).toEqual({ id: subscription.id, status: 'unsubscribed' });
    expect(of('campaign_email')[0].payload).toEqual({ campaign_id: campaign.id, name: 'November news', subject: 'New units' });
    expect(of('task_completed')[0]).toMatchObject({ actor: { id: manager.id }, payload: { id: task.json().id, title: 'Send the reservation form', due_at: '2030-01-01T09:00:00.000Z' } });
    expect(data[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // Pages: the same entries in the same order, no overlap, every page with the exact total.
    const paged: Entry[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await timeline(lead.id, `?limit=3&page=${page}`);
      expect(res.pagination).toEqual({ page, limit: 3, total: 11, totalPages: 4 });
      paged.push(...res.data);
    }
    expect(paged).toEqual((await timeline(lead.id, '?limit=100')).data);
    expect((await timeline(lead.id, '?limit=3&page=9')).data).toEqual([]);
    // `type` narrows it, the total too.
    const narrowed = await timeline(lead.id, '?type=inquiry,activity');
    expect(narrowed.pagination.total).toBe(3);
    expect(new Set(narrowed.data.map((entry) => entry.type))).toEqual(new Set(['inquiry', 'activity']));
  });

  test('one statement for a page of a lead with many entries, exact totals on deep pages', async () => {
    const lead = await make.lead(ctx, { email: `many-${uuidv7()}@example.com` }, agent);
    const db = ctx.database.db;
    await db.execute(sql`insert into crm_activities (id, lead_id, kind, body, occurred_at, author_id, created_at, updated_at)
      select gen_random_uuid(), ${lead.id}, 'note', 'note ' || n, now() - n * interval '1 minute', ${agent.id}, now(), now() from generate_series(1, 3000) n`);
    await db.insert(activityLogs).values(Array.from({ length: 500 }, (_, n) => ({
      action: 'update' as const, module: 'crm' as const, resource: 'leads', resource_id: lead.id, user_id: manager.id,
      changes: { before: { status: 'new' }, after: { status: 'contacted' } }, created_at: new Date(Date.now() - n * 90_000 - 30_000),
    })));
    let first: Timeline | undefined;
    const statements = await countQueries(ctx.database, /crm_activities/, async () => {
      first = await timeline(lead.id, '?limit=50');
    });
    expect(statements).toBe(1);
    expect(first!.pagination).toEqual({ page: 1, limit: 50, total: 3501, totalPages: 71 });
    const last = await timeline(lead.id, '?limit=50&page=71');
    expect(last.data.length).toBe(1);
    expect(last.data[0]).toMatchObject({ type: 'activity', payload: { body: 'note 3000' } });
    expect(first!.data[0].type).toBe('lead_created');
    const middle = await timeline(lead.id, '?limit=100&page=5');
    expect(middle.data.length).toBe(100);
    const times = middle.data.map((entry) => Date.parse(entry.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(middle.data.map((entry) => entry.type))).toEqual(new Set(['activity', 'status_changed']));
  });

  test('a page read again is served while nothing it shows has changed, and read anew after any change, API or raw SQL', async () => {
    const email = `kept-${uuidv7()}@example.com`;
    const lead = await make.lead(ctx, { email, phone: '+63 917 555 0199' }, agent);
    const other = await make.lead(ctx, { email: `kept-other-${uuidv7()}@example.com` }, agent);
    const db = ctx.database.db;
    const pageReads = (fn: () => Promise<unknown>) => countQueries(ctx.database, /with entries as/, fn);
    let page = await timeline(lead.id);
    expect(await pageReads(async () => { page = await timeline(lead.id); })).toBe(0);
    // A change of another lead's activities leaves the page kept.
    await ok(as(ctx, agent).post(`/api/crm/leads/${other.id}/activities`, { kind: 'note', body: 'elsewhere' }), 201);
    expect(await pageReads(() => timeline(lead.id))).toBe(0);
    // Twenty requests at once for a page not kept read it once; those who came while it was read take it kept.
    const fresh = await make.lead(ctx, { email: `burst-${uuidv7()}@example.com` }, agent);
    const burst: Timeline[] = [];
    expect(await pageReads(async () => burst.push(...await Promise.all(Array.from({ length: 20 }, () => timeline(fresh.id)))))).toBe(1);
    expect(new Set(burst.map((t) => JSON.stringify(t))).size).toBe(1);
    expect(burst[0].data.map((e) => e.type)).toEqual(['lead_created']);
    // Twenty requests for the kept page at once share its checks (the change log read, `exists`).
    const checks = await countQueries(ctx.database, /pg_visible_in_snapshot/, () => Promise.all(Array.from({ length: 20 }, () => timeline(lead.id))));
    expect(checks).toBeGreaterThan(0);
    expect(checks).toBeLessThan(20);
    // Each of these changes what the page shows, behind the API or through it: the next read sees it.
    const changes: [string, () => Promise<unknown>, (t: Timeline) => boolean][] = [
      ['a note through the API', () => as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body: 'kept-1' }),
        (t) => t.data.some((e) => e.payload.body === 'kept-1')],
      ['a note by SQL', () => db.execute(sql`insert into crm_activities (id, lead_id, kind, body, occurred_at, created_at, updated_at) values (${uuidv7()}, ${lead.id}, 'note', 'kept-2', now(), now(), now())`),
        (t) => t.data.some((e) => e.payload.body === 'kept-2')],
      ['an inquiry of the same phone by SQL', () => db.execute(sql`insert into inquiries (id, name, email, phone, subject, message, status, created_at, updated_at) values (${uuidv7()}, 'X', 'x-${sql.raw(String(Date.now()))}@example.com', '+63 (917) 555-0199', 'kept-3', 'm', 'unread', now(), now())`),
        (t) => t.data.some((e) => e.payload.subject === 'kept-3')],
      ['the author renamed by SQL', () => db.execute(sql`update users set name = 'Ana Renamed' where id = ${agent.id}`),
        (t) => t.data.some((e) => e.actor?.name === 'Ana Renamed')],
      ['an audit entry of the lead by SQL', () => db.insert(activityLogs).values({ action: 'update', module: 'crm', resource: 'leads', resource_id: lead.id, user_id: manager.id,
        changes: { before: { status: 'new' }, after: { status: 'lost' } } }),
        (t) => t.data.some((e) => e.type === 'status_changed' && e.payload.to === 'lost')],
    ];
    for (const [what, change, seen] of changes) {
      expect(seen(await timeline(lead.id)), what).toBe(false);
      await change();
      expect(seen(await timeline(lead.id)), what).toBe(true);
    }
    await db.execute(sql`update users set name = 'Ana Agent' where id = ${agent.id}`);
    // Deleted, the lead's kept page is not served: 404 as for any unknown lead.
    await ok(as(ctx, manager).delete(`/api/crm/leads/${lead.id}`));
    expect((await as(ctx, reader).get(`/api/crm/leads/${lead.id}/timeline`)).statusCode).toBe(404);
  });

  test('401 signed out, 403 without crm read, 404 for an unknown lead, 400 for bad paging or types', async () => {
    const lead = await make.lead(ctx);
    expect((await as(ctx, none).get(`/api/crm/leads/${lead.id}/timeline`)).statusCode).toBe(401);
    expect((await as(ctx, outsider).get(`/api/crm/leads/${lead.id}/timeline`)).statusCode).toBe(403);
    expect((await as(ctx, reader).get(`/api/crm/leads/${uuidv7()}/timeline`)).json()).toMatchObject({ error: 'Resource not found', message: 'Lead not found' });
    for (const query of ['?page=0', '?limit=101', '?type=phone_call', '?sort=at', '?page=x']) {
      const res = await as(ctx, reader).get(`/api/crm/leads/${lead.id}/timeline${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error).toBe('Validation error');
    }
  });

  test('a caller whose crm scope is own: the timeline and activities of a lead outside it are 404', async () => {
    const scoped = await createUser(ctx, { crm: 'rwd' });
    await ctx.database.db.update(moduleAccess).set({ scope: 'own' }).where(eq(moduleAccess.user_id, scoped.id));
    const token = await login(ctx, scoped.email, scoped.password);
    const mine = await make.lead(ctx, {}, token);
    const theirs = await make.lead(ctx, {}, agent);
    expect((await as(ctx, token).get(`/api/crm/leads/${mine.id}/timeline`)).statusCode).toBe(200);
    expect((await as(ctx, token).post(`/api/crm/leads/${mine.id}/activities`, { kind: 'note', body: 'mine' })).statusCode).toBe(201);
    for (const url of [`/api/crm/leads/${theirs.id}/timeline`, `/api/crm/leads/${theirs.id}/activities`]) {
      expect((await as(ctx, token).get(url)).json(), url).toMatchObject({ error: 'Resource not found', message: 'Lead not found' });
    }
    expect((await as(ctx, token).post(`/api/crm/leads/${theirs.id}/activities`, { kind: 'note', body: 'x' })).statusCode).toBe(404);
    expect((await as(ctx, token).post(`/api/crm/inquiries/${(await make.inquiry(ctx)).id}/convert`, {})).statusCode).toBe(404);
  });

  test('a caller whose crm scope is own: a colleague\'s reservation, an inquiry nobody owns and a colleague\'s done follow-up of the same person stay off the timeline', async () => {
    const scoped = await createUser(ctx, { crm: 'rwd' });
    await ctx.database.db.update(moduleAccess).set({ scope: 'own' }).where(eq(moduleAccess.user_id, scoped.id));
    const token = await login(ctx, scoped.email, scoped.password);
    const email = `scoped-${uuidv7()}@example.com`;
    const lead = await make.lead(ctx, { email }, token);
    const reserve = async (who: string | typeof agent) =>
      (await ok(as(ctx, who).post('/api/crm/reservations', { inventory_id: (await make.unit(ctx)).id, client_name: 'Same Person', email, lead_id: lead.id }), 201)).json() as { id: string };
    const mine = await reserve(token);
    const theirs = await reserve(agent);
    await ok(as(ctx, none).post('/api/public/inquiries', { name: 'Same Person', email, subject: 'Price list', message: 'Please send it' }), 201);
    await ok(as(ctx, agent).post('/api/crm/tasks', { title: 'Colleague called', due_at: '2026-01-05T09:00:00Z', lead_id: lead.id, done: true }), 201);
    await ok(as(ctx, token).post('/api/crm/tasks', { title: 'I called', due_at: '2026-01-05T10:00:00Z', lead_id: lead.id, done: true }), 201);
    const ids = (entries: Timeline['data'], type: string) => entries.filter((entry) => entry.type === type).map((entry) => (entry.payload as { id?: string; title?: string }).id ?? '');
    const seenByScoped = (await timeline(lead.id, '?limit=100', token)).data;
    expect(ids(seenByScoped, 'reservation')).toEqual([mine.id]);
    expect(ids(seenByScoped, 'inquiry')).toEqual([]);
    expect(seenByScoped.filter((entry) => entry.type === 'task_completed').map((entry) => (entry.payload as { title: string }).title)).toEqual(['I called']);
    const seenByAll = (await timeline(lead.id, '?limit=100', agent)).data;
    expect(ids(seenByAll, 'reservation').sort()).toEqual([mine.id, theirs.id].sort());
    expect(ids(seenByAll, 'inquiry')).toHaveLength(1);
    expect(seenByAll.filter((entry) => entry.type === 'task_completed')).toHaveLength(2);
    expect((await timeline(lead.id, '?limit=100', token)).pagination.total).toBe(seenByScoped.length);
  });

  test('a lead back from the trash shows one creation and a restore, not a second creation', async () => {
    const lead = await make.lead(ctx, { email: `restored-${uuidv7()}@example.com`, source: 'referral' }, agent);
    await ok(as(ctx, agent).patch(`/api/crm/leads/${lead.id}`, { status: 'contacted' }));
    await ok(as(ctx, manager).delete(`/api/crm/leads/${lead.id}`));
    const trash = (await ok(as(ctx, manager).get('/api/crm/trash?resource=leads&limit=100'))).json().data as { id: string; deleted_at: string; record_id: string }[];
    const entry = trash.find((item) => item.record_id === lead.id)!;
    await ok(as(ctx, manager).post(`/api/crm/trash/${entry.id}/restore`));

    const { data, pagination } = await timeline(lead.id, '?limit=100');
    expect(data.map((item) => item.type)).toEqual(['lead_restored', 'status_changed', 'lead_created']);
    expect(pagination.total).toBe(3);
    expect(data[0]).toMatchObject({
      actor: { id: manager.id, name: 'Mia Manager' },
      payload: { status: 'contacted', source: 'referral', deleted_at: entry.deleted_at },
    });
    expect(data[2]).toMatchObject({ actor: { id: agent.id }, payload: { status: 'new', source: 'referral' } });
    // Each kind is its own filter.
    expect((await timeline(lead.id, '?type=lead_created')).data.map((item) => item.type)).toEqual(['lead_created']);
    expect((await timeline(lead.id, '?type=lead_restored')).pagination.total).toBe(1);
  });

  test('a lead with nothing but its creation, and one created without an audit trail, answer without error', async () => {
    const lead = await make.lead(ctx, { phone: null, email: `solo-${uuidv7()}@example.com` });
    expect((await timeline(lead.id)).data.map((entry) => entry.type)).toEqual(['lead_created']);
    const [row] = await ctx.database.db.insert(leads).values({ first_name: 'Raw', last_name: 'Row', phone: '---' }).returning();
    expect(await timeline(row.id)).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } });
  });
});

describe('a reservation names its lead', () => {
  test('set from the e-mail when none is named, checked when named, cleared with null, filtered by lead', async () => {
    const email = `res-${uuidv7()}@example.com`;
    const older = await make.lead(ctx, { email });
    const lead = await make.lead(ctx, { email });
    const matched = await make.reservation(ctx, { email: email.toUpperCase() });
    expect((await as(ctx, reader).get(`/api/crm/reservations/${matched.id}`)).json().lead_id).toBe(lead.id);
    const named = await make.reservation(ctx, { email, lead_id: older.id });
    expect((await as(ctx, reader).get(`/api/crm/reservations/${named.id}`)).json().lead_id).toBe(older.id);
    const none_ = await make.reservation(ctx, { email, lead_id: null });
    expect((await as(ctx, reader).get(`/api/crm/reservations/${none_.id}`)).json().lead_id).toBeNull();
    const nobody = await make.reservation(ctx, { email: `nobody-${uuidv7()}@example.com` });
    expect((await as(ctx, reader).get(`/api/crm/reservations/${nobody.id}`)).json().lead_id).toBeNull();

    const unit = await make.unit(ctx);
    const unknown = await as(ctx, agent).post('/api/crm/reservations', { inventory_id: unit.id, client_name: 'X', email, lead_id: uuidv7() });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().details).toEqual({ lead_id: 'must be an existing lead' });
    expect((await as(ctx, agent).get(`/api/crm/inventory/${unit.id}`)).json().status).toBe('available');

    await ok(as(ctx, agent).patch(`/api/crm/reservations/${nobody.id}`, { lead_id: lead.id }));
    expect((await as(ctx, agent).patch(`/api/crm/reservations/${nobody.id}`, { lead_id: uuidv7() })).json().details).toEqual({ lead_id: 'must be an existing lead' });
    const list = (await as(ctx, reader).get(`/api/crm/reservations?lead_id=${lead.id}`)).json();
    expect(list.data.map((r: { id: string }) => r.id).sort()).toEqual([matched.id, nobody.id].sort());
    expect(list.pagination.total).toBe(2);
  });
});

describe('an inquiry becomes a lead', () => {
  test('one action: the lead from the inquiry\'s fields, the link kept, audited; twice is 409', async () => {
    const inquiry = await make.inquiry(ctx, { name: 'Maria  dela Cruz', email: `conv-${uuidv7()}@example.com`, phone: '+63 917 555 0199', subject: 'Two-bedroom unit', message: 'Is Tower B available?' });
    const res = await as(ctx, agent).post(`/api/crm/inquiries/${inquiry.id}/convert`);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().message).toBe('Lead created from the inquiry');
    const leadId = res.json().id;
    const lead = (await as(ctx, reader).get(`/api/crm/leads/${leadId}`)).json();
    expect(lead).toMatchObject({
      first_name: 'Maria dela', last_name: 'Cruz', email: inquiry.email, phone: '+63 917 555 0199', source: 'website', status: 'new',
      interest: 'Two-bedroom unit', notes: 'Is Tower B available?', assigned_to: { id: agent.id, name: 'Ana Agent' },
    });
    expect((await as(ctx, reader).get(`/api/crm/inquiries/${inquiry.id}`)).json().lead_id).toBe(leadId);
    const logs = await ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, leadId));
    expect(logs.map((log) => [log.resource, log.action, log.user_id])).toEqual([['leads', 'create', agent.id]]);
    const inquiryLogs = await ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, inquiry.id));
    expect(inquiryLogs.find((log) => log.action === 'update')?.changes).toEqual({ before: { lead_id: null }, after: { lead_id: leadId } });
    // On the lead's timeline it is its inquiry, converted.
    expect((await timeline(leadId, '?type=inquiry')).data[0].payload).toMatchObject({ id: inquiry.id, converted: true });

    const again = await as(ctx, agent).post(`/api/crm/inquiries/${inquiry.id}/convert`, {});
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: 'Conflict', message: 'This inquiry has already been turned into a lead' });
  });

  test('overrides, a one-word name, unknown inquiry or assignee, permissions', async () => {
    const single = await make.inquiry(ctx, { name: 'Ina' });
    const oneWord = await as(ctx, agent).post(`/api/crm/inquiries/${single.id}/convert`, {});
    expect(oneWord.statusCode).toBe(400);
    expect(oneWord.json().details.last_name).toMatch(/one word: send first_name and last_name/);
    const converted = await as(ctx, agent).post(`/api/crm/inquiries/${single.id}/convert`, { first_name: 'Ina', last_name: 'Reyes', status: 'contacted', source: 'referral', assigned_to: null, interest: null });
    expect(converted.statusCode, converted.body).toBe(201);
    expect((await as(ctx, reader).get(`/api/crm/leads/${converted.json().id}`)).json()).toMatchObject({ last_name: 'Reyes', status: 'contacted', source: 'referral', assigned_to: null, interest: null });

    const other = await make.inquiry(ctx, { name: 'Ben Tan' });
    expect((await as(ctx, agent).post(`/api/crm/inquiries/${other.id}/convert`, { assigned_to: uuidv7() })).json().details).toEqual({ assigned_to: 'must be an existing user' });
    expect((await as(ctx, agent).post(`/api/crm/inquiries/${other.id}/convert`, { email: 'x@example.com' })).statusCode).toBe(400);
    expect((await as(ctx, agent).post(`/api/crm/inquiries/${uuidv7()}/convert`, {})).json()).toMatchObject({ message: 'Inquiry not found' });
    expect((await as(ctx, reader).post(`/api/crm/inquiries/${other.id}/convert`, {})).statusCode).toBe(403);
    expect((await as(ctx, none).post(`/api/crm/inquiries/${other.id}/convert`, {})).statusCode).toBe(401);
    expect((await as(ctx, reader).get(`/api/crm/inquiries/${other.id}`)).json().lead_id).toBeNull();
  });

  test('two conversions at once: one lead', async () => {
    const inquiry = await make.inquiry(ctx, { name: 'Concurrent Person' });
    const answers = await Promise.all([1, 2, 3].map(() => as(ctx, agent).post(`/api/crm/inquiries/${inquiry.id}/convert`, {})));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409]);
    const leads = (await as(ctx, reader).get(`/api/crm/leads?q=${encodeURIComponent(inquiry.email)}`)).json();
    expect(leads.pagination.total).toBe(1);
  });
});
