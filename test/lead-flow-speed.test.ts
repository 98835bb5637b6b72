import { and, eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { clock, tickingClock } from '../src/clock.js';
import { activityLogs, departments, leadFlowAway, leadFlowRules, leadGroupMembers, leadGroups, leadRouting, leads, moduleAccess, notifications, users, webhookDeliveries } from '../src/db/schema/index.js';
import { notifyFollowUpsDue } from '../src/modules/crm/lead-flow/follow-ups-due.js';
import { enforceSpeedLimits } from '../src/modules/crm/lead-flow/speed.js';
import { LEAD_FLOW_SWEEPS } from '../src/modules/crm/lead-flow/sweep.js';
import { make } from './factories.js';
import { as, clockAt, createTestApp, createUser, ok, type TestContext, eventually } from './helpers.js';

// Speed to lead: the first contact stops the clock; a late lead's assignee is reminded, then their manager told,
// then (with `reassign`) the lead goes to the group's fallback — each step once, however many sweeps run. Follow-ups
// falling due are announced once. Working time: 09:00-18:00, Monday to Friday, Asia/Manila; 2030-01-14 is a Monday.

type User = Awaited<ReturnType<typeof createUser>>;
let ctx: TestContext;
let admin: User;
let agent: User;
let colleague: User;
let fallback: User;
let manager: User;
let groupId: string;
let remindRule: string;
let reassignRule: string;

beforeAll(async () => {
  ctx = await createTestApp();
  const { db } = ctx.database;
  admin = await createUser(ctx, { crm: 'rwd', iam: 'rwd' }, { name: 'Ada Admin' });
  agent = await createUser(ctx, { crm: 'rw' }, { name: 'Maria Agent' });
  colleague = await createUser(ctx, { crm: 'rw' }, { name: 'Carl Colleague' });
  fallback = await createUser(ctx, { crm: 'rw' }, { name: 'Fiona Fallback' });
  manager = await createUser(ctx, { crm: 'rw' }, { name: 'Mona Manager' });
  const [sales] = await db.insert(departments).values({ name: 'Sales', manager_id: manager.id }).returning();
  await db.update(users).set({ departmentId: sales.id }).where(eq(users.id, agent.id));
  const [group] = await db.insert(leadGroups).values({ name: 'Website agents', kind: 'round_robin', fallback_user_id: fallback.id }).returning();
  groupId = group.id;
  await db.insert(leadGroupMembers).values([{ group_id: group.id, user_id: agent.id, position: 0 }, { group_id: group.id, user_id: colleague.id, position: 1 }]);
  [{ id: remindRule }, { id: reassignRule }] = await db.insert(leadFlowRules).values([
    { name: 'Referrals', position: 1, source: 'referral', assign_group_id: group.id, speed_limit_minutes: 15, on_speed_limit: 'remind' },
    { name: 'Website', position: 2, channel: 'website', assign_group_id: group.id, speed_limit_minutes: 15, on_speed_limit: 'reassign' },
  ]).returning();
});
afterAll(async () => ctx?.close());
afterEach(() => {
  clock.now = tickingClock();
});

const sweepAt = async (iso: string) => {
  clockAt(iso);
  let steps = 0;
  for (const sweep of LEAD_FLOW_SWEEPS) steps += await sweep.run(ctx.app, new Date(iso));
  return steps;
};
const routingOf = async (leadId: string) => (await ctx.database.db.select().from(leadRouting).where(eq(leadRouting.lead_id, leadId)))[0];
const noticesOf = (user: User, kind: 'speed_to_lead' | 'lead_assigned' | 'follow_up_due', recordId: string) =>
  ctx.database.db.select().from(notifications).where(and(eq(notifications.user_id, user.id), eq(notifications.kind, kind), eq(notifications.record_id, recordId)));

/** A lead the rule routed (its routing row), then assigned to `to` at `at` (a person's assignment: the routing rule still sets the limit). */
async function routedLead(rule: string, to: User, at: string) {
  const lead = await make.lead(ctx);
  await ctx.database.db.insert(leadRouting).values({ lead_id: lead.id, rule_id: rule, channel: 'website' }).onConflictDoUpdate({ target: leadRouting.lead_id, set: { rule_id: sql`excluded.rule_id`, channel: sql`excluded.channel`, claim_deadline: sql`excluded.claim_deadline`, assigned_at: sql`excluded.assigned_at`, first_contact_at: sql`excluded.first_contact_at`, speed_due_at: sql`excluded.speed_due_at` } });
  clockAt(at);
  await ok(as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: to.id }));
  return lead;
}

describe('speed to lead', () => {
  test('the limit counts in working time from the assignment', async () => {
    const monday = await routedLead(reassignRule, agent, '2030-01-14T10:00:00+08:00');
    expect((await routingOf(monday.id)).speed_due_at?.toISOString().slice(0, 19)).toBe('2030-01-14T02:15:00');
    const friday = await routedLead(reassignRule, agent, '2030-01-18T17:55:00+08:00');
    expect((await routingOf(friday.id)).speed_due_at?.toISOString().slice(0, 19)).toBe(new Date('2030-01-21T09:10:00+08:00').toISOString().slice(0, 19));
    const saturday = await routedLead(reassignRule, agent, '2030-01-19T11:00:00+08:00');
    expect((await routingOf(saturday.id)).speed_due_at?.toISOString().slice(0, 19)).toBe(new Date('2030-01-21T09:15:00+08:00').toISOString().slice(0, 19));
  });

  test('remind the assignee, then tell their manager, then reassign to the fallback: each once, each when due', async () => {
    // An endpoint hears of assignments (nothing listens there: the delivery is only recorded).
    await ok(as(ctx, admin).post('/api/iam/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['lead.assigned'] }), 201);
    const lead = await routedLead(reassignRule, agent, '2030-02-04T10:00:00+08:00');
    await sweepAt('2030-02-04T10:14:00+08:00');
    expect((await routingOf(lead.id)).speed_stage).toBe(0);
    await sweepAt('2030-02-04T10:16:00+08:00');
    expect((await routingOf(lead.id)).speed_stage).toBe(1);
    const [reminder] = await noticesOf(agent, 'speed_to_lead', lead.id);
    expect(reminder).toMatchObject({ title: `Contact Lead ${lead.last_name} now`, resource: 'leads' });
    // Sweeping again, however often and from however many instances at once, does not repeat a step.
    await Promise.all([sweepAt('2030-02-04T10:17:00+08:00'), enforceSpeedLimits(ctx.app, new Date('2030-02-04T10:17:00+08:00'))]);
    expect(await noticesOf(agent, 'speed_to_lead', lead.id)).toHaveLength(1);
    expect(await noticesOf(manager, 'speed_to_lead', lead.id)).toHaveLength(0);

    await sweepAt('2030-02-04T10:31:00+08:00');
    expect((await routingOf(lead.id)).speed_stage).toBe(2);
    const [told] = await noticesOf(manager, 'speed_to_lead', lead.id);
    expect(told.body).toContain('Maria Agent');
    await sweepAt('2030-02-04T10:32:00+08:00');
    expect(await noticesOf(manager, 'speed_to_lead', lead.id)).toHaveLength(1);

    await Promise.all([sweepAt('2030-02-04T10:46:00+08:00'), enforceSpeedLimits(ctx.app, new Date('2030-02-04T10:46:00+08:00'))]);
    expect((await routingOf(lead.id)).speed_stage).toBe(3);
    const [now] = await ctx.database.db.select({ assigned_to: leads.assigned_to }).from(leads).where(eq(leads.id, lead.id));
    expect(now.assigned_to).toBe(fallback.id);
    // Told after the reassignment committed, as every assignee is.
    await eventually(async () => ((await noticesOf(fallback, 'lead_assigned', lead.id)).length === 1) || undefined, 'the fallback told of the lead');
    const [log] = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'leads'), eq(activityLogs.resource_id, lead.id), eq(activityLogs.action, 'update'))).orderBy(activityLogs.created_at).then((rows) => rows.slice(-1));
    expect(log).toMatchObject({ user_id: null, changes: { before: { assigned_to: agent.id }, after: { assigned_to: fallback.id } } });
    const events = (await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.event_type, 'lead.assigned'))).map((d) => (d.payload as { data: Record<string, unknown> }).data);
    expect(events).toContainEqual({ lead_id: lead.id, assigned_to: fallback.id, previous: agent.id, how: 'speed_limit' });
    expect(events).toContainEqual({ lead_id: lead.id, assigned_to: agent.id, previous: null, how: 'manual' });
    // Done: nothing more, ever.
    await sweepAt('2030-02-05T17:00:00+08:00');
    expect(await routingOf(lead.id)).toMatchObject({ speed_stage: 3 });
    // Told after the reassignment committed, as every assignee is.
    await eventually(async () => ((await noticesOf(fallback, 'lead_assigned', lead.id)).length === 1) || undefined, 'the fallback told of the lead');
  });

  test('with `remind`, the manager is the last step; the whole way in one sweep when it ran late', async () => {
    const lead = await routedLead(remindRule, agent, '2030-02-11T10:00:00+08:00');
    await sweepAt('2030-02-12T10:00:00+08:00');
    expect((await routingOf(lead.id)).speed_stage).toBe(2);
    expect(await noticesOf(agent, 'speed_to_lead', lead.id)).toHaveLength(1);
    expect(await noticesOf(manager, 'speed_to_lead', lead.id)).toHaveLength(1);
    const [still] = await ctx.database.db.select({ assigned_to: leads.assigned_to }).from(leads).where(eq(leads.id, lead.id));
    expect(still.assigned_to).toBe(agent.id);
  });

  test('the fallback skips someone away; no fallback user: the next member of the round robin', async () => {
    const { db } = ctx.database;
    await db.insert(leadFlowAway).values({ user_id: fallback.id });
    try {
      const lead = await routedLead(reassignRule, agent, '2030-02-18T10:00:00+08:00');
      await sweepAt('2030-02-18T11:00:00+08:00');
      const [now] = await db.select({ assigned_to: leads.assigned_to }).from(leads).where(eq(leads.id, lead.id));
      expect(now.assigned_to).toBe(colleague.id);
    } finally {
      await db.delete(leadFlowAway).where(eq(leadFlowAway.user_id, fallback.id));
    }
    const [group] = await db.select().from(leadGroups).where(eq(leadGroups.id, groupId));
    expect(group.next_position).toBe(2);
  });

  test('the first call, e-mail, meeting or site visit stops the clock; a note does not', async () => {
    const lead = await routedLead(reassignRule, agent, '2030-02-25T10:00:00+08:00');
    clockAt('2030-02-25T10:05:00+08:00');
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body: 'Looked them up' }), 201);
    expect((await routingOf(lead.id)).first_contact_at).toBeNull();
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'call', outcome: 'answered', occurred_at: '2030-02-25T02:03:00Z' }), 201);
    expect((await routingOf(lead.id)).first_contact_at?.toISOString()).toBe('2030-02-25T02:03:00.000Z');
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'email', occurred_at: '2030-02-25T02:01:00Z' }), 201);
    expect((await routingOf(lead.id)).first_contact_at?.toISOString()).toBe('2030-02-25T02:03:00.000Z'); // the first stays
    const flow = await ok(as(ctx, agent).get(`/api/crm/leads/${lead.id}/flow`));
    expect(flow).toMatchObject({
      rule: { id: reassignRule, name: 'Website' }, channel: 'website', pool: null, claim_deadline: null, first_contact_at: '2030-02-25T02:03:00.000Z',
      minutes_to_first_contact: 3, speed_stage: 0, plans: [],
    });
    expect(flow.speed_due_at.slice(0, 19)).toBe('2030-02-25T02:15:00');
    await sweepAt('2030-02-26T10:00:00+08:00');
    expect((await routingOf(lead.id)).speed_stage).toBe(0);
    expect(await noticesOf(agent, 'speed_to_lead', lead.id)).toHaveLength(0);
    // Reassigned after the first contact: no new clock.
    const due = (await routingOf(lead.id)).speed_due_at;
    clockAt('2030-02-26T11:00:00+08:00');
    await ok(as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: colleague.id }));
    expect((await routingOf(lead.id)).speed_due_at).toEqual(due);
  });

  test('a meeting booked for later counts from now; a lead no rule routed gets its routing row', async () => {
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    clockAt('2030-03-04T10:00:00+08:00');
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'meeting', place: 'Model unit', occurred_at: '2030-03-09T10:00:00+08:00' }), 201);
    const routing = await routingOf(lead.id);
    expect(routing).toMatchObject({ channel: 'api', rule_id: null, speed_due_at: null });
    expect(routing.first_contact_at?.toISOString().slice(0, 19)).toBe('2030-03-04T02:00:00');
    // Its flow: no rule, no limit; assigned when it was created (with its assignee), first contact counted from then.
    const flow = await ok(as(ctx, agent).get(`/api/crm/leads/${lead.id}/flow`));
    expect(flow).toMatchObject({ rule: null, channel: 'api', speed_due_at: null });
    expect(Date.parse(flow.assigned_at)).toBeLessThanOrEqual(Date.parse(flow.first_contact_at));
    expect(flow.minutes_to_first_contact).toBeGreaterThanOrEqual(0);
    // A lead that never had a routing row (written behind the API) reads as such.
    const plain = await make.lead(ctx, { assigned_to: agent.id });
    await ctx.database.db.delete(leadRouting).where(eq(leadRouting.lead_id, plain.id));
    expect(await ok(as(ctx, agent).get(`/api/crm/leads/${plain.id}/flow`))).toEqual({
      rule: null, channel: null, pool: null, claim_deadline: null, assigned_at: null, first_contact_at: null, minutes_to_first_contact: null, speed_due_at: null, speed_stage: 0, plans: [],
    });
    const scoped = await createUser(ctx, { crm: 'rw' });
    await ctx.database.db.update(moduleAccess).set({ scope: 'own' }).where(eq(moduleAccess.user_id, scoped.id));
    expect((await as(ctx, scoped).get(`/api/crm/leads/${plain.id}/flow`)).statusCode).toBe(404);
  });

  test('a new assignment before any contact restarts the clock', async () => {
    const lead = await routedLead(reassignRule, agent, '2030-03-11T10:00:00+08:00');
    await sweepAt('2030-03-11T10:20:00+08:00');
    expect((await routingOf(lead.id)).speed_stage).toBe(1);
    clockAt('2030-03-11T10:30:00+08:00');
    await ok(as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: colleague.id }));
    const routing = await routingOf(lead.id);
    expect(routing.speed_stage).toBe(0);
    expect(routing.speed_due_at?.toISOString().slice(0, 19)).toBe('2030-03-11T02:45:00');
  });
});

describe('follow-ups falling due', () => {
  test('announced to the assignee once, when due; not before, not when done', async () => {
    clockAt('2030-04-01T09:00:00+08:00');
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    const due = await ok(as(ctx, agent).post('/api/crm/tasks', { title: 'Call about the reservation fee', due_at: '2030-04-01T10:00:00+08:00', lead_id: lead.id }), 201);
    const done = await ok(as(ctx, agent).post('/api/crm/tasks', { title: 'Already done', due_at: '2030-04-01T10:00:00+08:00', done: true }), 201);
    expect(await notifyFollowUpsDue(ctx.app, new Date('2030-04-01T09:59:00+08:00'))).toBe(0);
    await Promise.all([sweepAt('2030-04-01T10:01:00+08:00'), notifyFollowUpsDue(ctx.app, new Date('2030-04-01T10:01:00+08:00'))]);
    const told = await noticesOf(agent, 'follow_up_due', due.id);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ title: 'Follow-up due: Call about the reservation fee', body: `About Lead ${lead.last_name}: Call about the reservation fee`, resource: 'tasks' });
    await sweepAt('2030-04-01T10:02:00+08:00');
    expect(await noticesOf(agent, 'follow_up_due', due.id)).toHaveLength(1);
    expect(await noticesOf(agent, 'follow_up_due', done.id)).toHaveLength(0);
  });
});
