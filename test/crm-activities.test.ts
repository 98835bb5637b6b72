import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, webhookDeliveries } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

// Activities on a lead — kinds and what each needs, author-only changes, audit, webhook events, paged lists.

let ctx: TestContext;
let agent: Awaited<ReturnType<typeof createUser>>;
let colleague: Awaited<ReturnType<typeof createUser>>;
let admin: Awaited<ReturnType<typeof createUser>>;
let reader: Awaited<ReturnType<typeof createUser>>;
let writerOnly: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  agent = await createUser(ctx, { crm: 'rwd' }, { name: 'Ana Agent' });
  colleague = await createUser(ctx, { crm: 'rwd' }, { name: 'Carl Colleague' });
  admin = await createUser(ctx, { crm: 'rwd', iam: 'rwd' }, { name: 'Ada Admin' });
  reader = await createUser(ctx, { crm: 'r' });
  writerOnly = await createUser(ctx, { crm: 'rw' });
});
afterAll(async () => ctx?.close());

const logsOf = (id: string) => ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'activities'), eq(activityLogs.resource_id, id)));

describe('writing activities on a lead', () => {
  test('each kind with what it needs; the answer shows the author and the time', async () => {
    const lead = await make.lead(ctx);
    const url = `/api/crm/leads/${lead.id}/activities`;
    const note = await as(ctx, agent).post(url, { kind: 'note', body: ' Called the office; prefers e-mail. ' });
    expect(note.statusCode, note.body).toBe(201);
    expect(note.json().message).toBe('Lead activity created');
    const call = await as(ctx, agent).post(url, { kind: 'call', outcome: 'no_answer', body: 'Try Thursday' });
    expect(call.statusCode, call.body).toBe(201);
    const visit = await as(ctx, agent).post(url, { kind: 'site_visit', occurred_at: '2030-05-02T02:00:00+08:00', place: 'Model unit, Tower B' });
    expect(visit.statusCode, visit.body).toBe(201);
    expect((await as(ctx, agent).post(url, { kind: 'email', body: 'Sent the price list' })).statusCode).toBe(201);
    expect((await as(ctx, agent).post(url, { kind: 'meeting', occurred_at: '2030-05-03T10:00:00Z', place: 'Office' })).statusCode).toBe(201);

    const detail = await as(ctx, reader).get(`/api/crm/activities/${note.json().id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({ lead_id: lead.id, kind: 'note', body: 'Called the office; prefers e-mail.', outcome: null, place: null, author: { id: agent.id, name: 'Ana Agent' } });
    expect(Date.parse(detail.json().occurred_at)).not.toBeNaN();
    const site = (await as(ctx, reader).get(`/api/crm/activities/${visit.json().id}`)).json();
    expect(site).toMatchObject({ kind: 'site_visit', place: 'Model unit, Tower B', occurred_at: '2030-05-01T18:00:00.000Z' });

    const list = await as(ctx, reader).get(`${url}?limit=2`);
    expect(list.statusCode).toBe(200);
    expect(list.json().pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3 });
    const calls = (await as(ctx, reader).get(`${url}?kind=call,note&sort=created_at&order=asc`)).json();
    expect(calls.data.map((a: { kind: string }) => a.kind)).toEqual(['note', 'call']);
    // The whole activities list filters by lead.
    const all = (await as(ctx, reader).get(`/api/crm/activities?lead_id=${lead.id}&kind=meeting`)).json();
    expect(all.pagination.total).toBe(1);
  });

  test('what a kind needs and allows is checked, naming the field (400)', async () => {
    const lead = await make.lead(ctx);
    const url = `/api/crm/leads/${lead.id}/activities`;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ kind: 'note' }, 'body', /note needs a body/],
      [{ kind: 'call' }, 'outcome', /answered, no_answer/],
      [{ kind: 'call', outcome: 'maybe' }, 'outcome', /./],
      [{ kind: 'note', body: 'x', outcome: 'busy' }, 'outcome', /only a call/],
      [{ kind: 'meeting', occurred_at: '2030-01-01T10:00:00Z' }, 'place', /needs a place/],
      [{ kind: 'site_visit', place: 'Lobby' }, 'occurred_at', /needs its time/],
      [{ kind: 'email', body: 'x', place: 'Lobby' }, 'place', /only a meeting or a site visit/],
      [{ kind: 'chat', body: 'x' }, 'kind', /./],
      [{ kind: 'note', body: 'x', author_id: agent.id }, 'author_id', /./],
      [{ kind: 'note', body: 'x', occurred_at: '2030-13-01T00:00:00Z' }, 'occurred_at', /./],
    ];
    for (const [body, field, message] of cases) {
      const res = await as(ctx, agent).post(url, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().details?.[field], `${JSON.stringify(body)}: ${res.body}`).toMatch(message);
    }
    expect((await as(ctx, agent).get(url)).json().pagination.total).toBe(0);
  });

  test('an unknown lead is 404 for the list and for writing', async () => {
    const missing = '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d';
    expect((await as(ctx, agent).get(`/api/crm/leads/${missing}/activities`)).json()).toMatchObject({ error: 'Resource not found', message: 'Lead not found' });
    expect((await as(ctx, agent).post(`/api/crm/leads/${missing}/activities`, { kind: 'note', body: 'x' })).statusCode).toBe(404);
    expect((await as(ctx, agent).get('/api/crm/leads/not-a-uuid/activities')).statusCode).toBe(400);
  });

  test('permissions: signed out 401, read to list, write to add, delete to delete', async () => {
    const lead = await make.lead(ctx);
    const url = `/api/crm/leads/${lead.id}/activities`;
    expect((await as(ctx, none).get(url)).statusCode).toBe(401);
    expect((await as(ctx, reader).post(url, { kind: 'note', body: 'x' })).statusCode).toBe(403);
    const own = await as(ctx, writerOnly).post(url, { kind: 'note', body: 'mine' });
    expect(own.statusCode).toBe(201);
    // Its author, without the delete flag, cannot delete it.
    expect((await as(ctx, writerOnly).delete(`/api/crm/activities/${own.json().id}`)).statusCode).toBe(403);
  });
});

describe('changing and deleting: the author only', () => {
  test('the author edits and deletes; a colleague and an administrator get 403 with a message; every change audited', async () => {
    const lead = await make.lead(ctx);
    const created = await as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'call', outcome: 'busy' });
    const id = created.json().id;
    for (const other of [colleague, admin]) {
      const refused = await as(ctx, other).patch(`/api/crm/activities/${id}`, { body: 'overwritten' });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({ error: 'Insufficient permissions', message: 'Only the author of an activity can change or delete it' });
      expect((await as(ctx, other).delete(`/api/crm/activities/${id}`)).statusCode).toBe(403);
    }
    const edited = await as(ctx, agent).patch(`/api/crm/activities/${id}`, { outcome: 'answered', body: 'Interested in Tower B' });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json().message).toBe('Lead activity updated');
    expect((await as(ctx, agent).get(`/api/crm/activities/${id}`)).json()).toMatchObject({ outcome: 'answered', body: 'Interested in Tower B' });
    // The kind's rules hold on PATCH too; the kind itself is not changed.
    expect((await as(ctx, agent).patch(`/api/crm/activities/${id}`, { outcome: null })).json().details.outcome).toMatch(/needs an outcome/);
    expect((await as(ctx, agent).patch(`/api/crm/activities/${id}`, { place: 'Office' })).json().details.place).toMatch(/only a meeting/);
    expect((await as(ctx, agent).patch(`/api/crm/activities/${id}`, { kind: 'note' })).statusCode).toBe(400);

    expect((await as(ctx, agent).delete(`/api/crm/activities/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, agent).get(`/api/crm/activities/${id}`)).statusCode).toBe(404);
    const logs = await logsOf(id);
    expect(logs.map((log) => log.action).sort()).toEqual(['create', 'delete', 'update']);
    expect(logs.every((log) => log.user_id === agent.id && log.module === 'crm')).toBe(true);
    const update = logs.find((log) => log.action === 'update')!;
    expect(update.changes).toEqual({ before: { outcome: 'busy', body: null }, after: { outcome: 'answered', body: 'Interested in Tower B' } });
    // Its history reads the same trail.
    expect((await as(ctx, reader).get(`/api/crm/activities/${id}/history`)).json().pagination.total).toBe(3);
  });

  test('a refused change writes nothing', async () => {
    const lead = await make.lead(ctx);
    const id = (await as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body: 'original' })).json().id;
    expect((await as(ctx, colleague).patch(`/api/crm/activities/${id}`, { body: 'changed' })).statusCode).toBe(403);
    expect((await as(ctx, agent).get(`/api/crm/activities/${id}`)).json().body).toBe('original');
    expect((await logsOf(id)).length).toBe(1);
  });
});

describe('webhook events and the lead\'s deletion', () => {
  test('lead_activity.created|updated|deleted are recorded with the change', async () => {
    const hook = await as(ctx, admin).post('/api/iam/webhooks', { url: 'https://hooks.example.com/crm', events: ['lead_activity.created', 'lead_activity.updated', 'lead_activity.deleted'] });
    expect(hook.statusCode, hook.body).toBe(201);
    const lead = await make.lead(ctx);
    const id = (await as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'email', body: 'Brochure sent' })).json().id;
    await as(ctx, agent).patch(`/api/crm/activities/${id}`, { body: 'Brochure and price list sent' });
    await as(ctx, agent).delete(`/api/crm/activities/${id}`);
    const deliveries = await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpoint_id, hook.json().id));
    const events = deliveries.filter((d) => (d.payload as { data: { id: string } }).data.id === id).map((d) => d.event_type).sort();
    expect(events).toEqual(['lead_activity.created', 'lead_activity.deleted', 'lead_activity.updated']);
    expect((await as(ctx, admin).delete(`/api/iam/webhooks/${hook.json().id}`)).statusCode).toBe(200);
  });

  test('deleting a lead deletes its activities, each delete audited', async () => {
    const lead = await make.lead(ctx);
    const ids: string[] = [];
    for (const body of ['one', 'two']) ids.push((await as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body })).json().id);
    expect((await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`)).statusCode).toBe(200);
    for (const id of ids) {
      expect((await as(ctx, agent).get(`/api/crm/activities/${id}`)).statusCode).toBe(404);
      const deleted = (await logsOf(id)).find((log) => log.action === 'delete');
      expect(deleted?.user_id).toBe(admin.id);
    }
  });
});
