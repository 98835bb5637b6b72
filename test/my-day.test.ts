import { and, eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { clock, tickingClock } from '../src/clock.js';
import { activityLogs, leadFlowAway, leadGroupMembers, leadGroups, leadRouting, leads, moduleAccess } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { as, clockAt, createTestApp, createUser, none, ok, type TestContext } from './helpers.js';

// My day: the caller's own leads to claim, leads to contact, overdue and today's follow-ups and today's site visits,
// read with their record scope, bounded, with counts. And `away` in the user's preferences.

type User = Awaited<ReturnType<typeof createUser>>;
let ctx: TestContext;
let admin: User;
let agent: User;
let colleague: User;
let ownAgent: User;

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await createUser(ctx, { crm: 'rwd', iam: 'rwd' }, { name: 'Ada Admin' });
  agent = await createUser(ctx, { crm: 'rw' }, { name: 'Maria Agent' });
  colleague = await createUser(ctx, { crm: 'rw' }, { name: 'Carl Colleague' });
  ownAgent = await createUser(ctx, { crm: 'rw' }, { name: 'Olive Own' });
  await ctx.database.db.update(moduleAccess).set({ scope: 'own' }).where(and(eq(moduleAccess.user_id, ownAgent.id), eq(moduleAccess.module, 'crm')));
});
afterAll(async () => ctx?.close());
afterEach(() => {
  clock.now = tickingClock();
});

const myDay = (who: User) => ok(as(ctx, who).get('/api/crm/my-day'));

describe('my day', () => {
  test('each list holds the caller\'s own items, most urgent first, with its count', async () => {
    const { db } = ctx.database;
    clockAt('2030-05-06T08:00:00+08:00'); // a Monday
    // Leads to claim: in a first-to-claim group and a pond the agent belongs to; not in a group they are not in.
    const [claimGroup, pond, elsewhere] = await db.insert(leadGroups).values([
      { name: 'Website first to claim', kind: 'first_to_claim', claim_minutes: 10 }, { name: 'Open house leads', kind: 'pond' }, { name: 'Another pond', kind: 'pond' },
    ]).returning();
    await db.insert(leadGroupMembers).values([
      { group_id: claimGroup.id, user_id: agent.id, position: 0 }, { group_id: pond.id, user_id: agent.id, position: 0 },
      { group_id: claimGroup.id, user_id: ownAgent.id, position: 1 }, { group_id: elsewhere.id, user_id: colleague.id, position: 0 },
    ]);
    const pooled = await make.lead(ctx, { first_name: 'Pia', interest: 'Two-bedroom unit' });
    const ponded = await make.lead(ctx, { first_name: 'Pond' });
    const notMine = await make.lead(ctx, { first_name: 'Other' });
    await db.update(leads).set({ pool_id: claimGroup.id }).where(eq(leads.id, pooled.id));
    await db.update(leads).set({ pool_id: pond.id }).where(eq(leads.id, ponded.id));
    await db.update(leads).set({ pool_id: elsewhere.id }).where(eq(leads.id, notMine.id));
    await db.insert(leadRouting).values({ lead_id: pooled.id, channel: 'website', claim_deadline: new Date('2030-05-06T08:10:00+08:00') }).onConflictDoUpdate({ target: leadRouting.lead_id, set: { rule_id: sql`excluded.rule_id`, channel: sql`excluded.channel`, claim_deadline: sql`excluded.claim_deadline`, assigned_at: sql`excluded.assigned_at`, first_contact_at: sql`excluded.first_contact_at`, speed_due_at: sql`excluded.speed_due_at` } });

    // Leads not contacted: routed to the agent, one late; one contacted; one lost.
    const late = await make.lead(ctx, { assigned_to: agent.id, first_name: 'Late' });
    const fresh = await make.lead(ctx, { assigned_to: agent.id, first_name: 'Fresh' });
    const contacted = await make.lead(ctx, { assigned_to: agent.id, first_name: 'Called' });
    const lost = await make.lead(ctx, { assigned_to: agent.id, first_name: 'Lost', status: 'lost' });
    await db.insert(leadRouting).values([
      { lead_id: late.id, channel: 'website', assigned_at: new Date('2030-05-06T07:00:00+08:00'), speed_due_at: new Date('2030-05-06T07:15:00+08:00') },
      { lead_id: fresh.id, channel: 'import', assigned_at: new Date('2030-05-06T07:30:00+08:00') },
      { lead_id: contacted.id, channel: 'api', assigned_at: new Date('2030-05-06T07:30:00+08:00'), first_contact_at: new Date('2030-05-06T07:40:00+08:00') },
      { lead_id: lost.id, channel: 'api', assigned_at: new Date('2030-05-06T07:30:00+08:00') },
    ]).onConflictDoUpdate({ target: leadRouting.lead_id, set: { rule_id: sql`excluded.rule_id`, channel: sql`excluded.channel`, claim_deadline: sql`excluded.claim_deadline`, assigned_at: sql`excluded.assigned_at`, first_contact_at: sql`excluded.first_contact_at`, speed_due_at: sql`excluded.speed_due_at` } });

    // Follow-ups: overdue, today, tomorrow; done; a colleague's.
    const task = (title: string, due_at: string, who = agent, extra: Record<string, unknown> = {}) => ok(as(ctx, who).post('/api/crm/tasks', { title, due_at, ...extra }), 201);
    const older = await task('Older', '2030-05-03T10:00:00+08:00');
    const overdue = await task('Overdue', '2030-05-06T07:00:00+08:00');
    const today = await task('Today', '2030-05-06T15:00:00+08:00', agent, { lead_id: late.id });
    await task('Tomorrow', '2030-05-07T10:00:00+08:00');
    await task('Done', '2030-05-06T07:00:00+08:00', agent, { done: true });
    await task('Theirs', '2030-05-06T07:00:00+08:00', colleague);

    // Site visits today: on the agent's lead, logged by a colleague; yesterday's and tomorrow's are not today's.
    // (A site visit is a contact: on a lead of its own here.)
    const visited = await make.lead(ctx, { assigned_to: agent.id, first_name: 'Visiting' });
    const visit = await ok(as(ctx, colleague).post(`/api/crm/leads/${visited.id}/activities`, { kind: 'site_visit', place: 'Model unit, Tower B', occurred_at: '2030-05-06T14:00:00+08:00' }), 201);
    await ok(as(ctx, agent).post(`/api/crm/leads/${visited.id}/activities`, { kind: 'site_visit', place: 'Showroom', occurred_at: '2030-05-07T14:00:00+08:00' }), 201);

    clockAt('2030-05-06T08:00:00+08:00');
    const day = await myDay(agent);
    expect(day.to_claim).toEqual([
      { lead: { id: pooled.id, first_name: 'Pia', last_name: pooled.last_name, source: 'website', interest: 'Two-bedroom unit' }, pool: { id: claimGroup.id, name: 'Website first to claim', kind: 'first_to_claim' }, claim_deadline: '2030-05-06T00:10:00.000Z' },
      { lead: expect.objectContaining({ id: ponded.id }), pool: { id: pond.id, name: 'Open house leads', kind: 'pond' }, claim_deadline: null },
    ]);
    expect(day.not_contacted.map((row: { lead: { id: string } }) => row.lead.id)).toEqual([late.id, fresh.id]);
    expect(day.not_contacted[0]).toMatchObject({ assigned_at: '2030-05-05T23:00:00.000Z', speed_due_at: '2030-05-05T23:15:00.000Z', minutes_waiting: 60 });
    expect(day.overdue.map((t: { id: string }) => t.id)).toEqual([older.id, overdue.id]);
    expect(day.overdue[0]).toMatchObject({ title: 'Older', assigned_to: { id: agent.id, name: 'Maria Agent' }, done_at: null });
    expect(day.today.map((t: { id: string }) => t.id)).toEqual([today.id]);
    expect(day.site_visits).toEqual([{ id: visit.id, lead: expect.objectContaining({ id: visited.id, first_name: 'Visiting' }), occurred_at: '2030-05-06T06:00:00.000Z', place: 'Model unit, Tower B' }]);
    expect(day.counts).toEqual({ to_claim: 2, not_contacted: 2, overdue: 2, today: 1, site_visits: 1 });

    // The colleague: none of it but their own follow-up, the site visit they logged and the lead in their own pond.
    const theirs = await myDay(colleague);
    expect(theirs.to_claim.map((row: { lead: { id: string } }) => row.lead.id)).toEqual([notMine.id]);
    expect(theirs.counts).toEqual({ to_claim: 1, not_contacted: 0, overdue: 1, today: 0, site_visits: 1 });
    // A member of the claim group whose record scope is own sees the lead waiting in their group all the same.
    expect((await myDay(ownAgent)).to_claim.map((row: { lead: { id: string } }) => row.lead.id)).toEqual([pooled.id]);
  });

  test('each list shows at most 50, the count tells how many there are', async () => {
    const many = await createUser(ctx, { crm: 'rw' });
    clockAt('2030-06-03T12:00:00+08:00');
    await Promise.all(Array.from({ length: 55 }, (_, i) => ok(as(ctx, many).post('/api/crm/tasks', { title: `Overdue ${i}`, due_at: `2030-06-0${1 + (i % 2)}T10:${String(i).padStart(2, '0')}:00+08:00` }), 201)));
    const day = await myDay(many);
    expect(day.overdue).toHaveLength(50);
    expect(day.counts.overdue).toBe(55);
    const dues = day.overdue.map((t: { due_at: string }) => t.due_at);
    expect([...dues].sort()).toEqual(dues);
  });

  test('signed in with crm read: needed', async () => {
    expect((await as(ctx, none).get('/api/crm/my-day')).statusCode).toBe(401);
    expect((await as(ctx, await createUser(ctx, { cms: 'rw' })).get('/api/crm/my-day')).statusCode).toBe(403);
    expect((await as(ctx, admin).get('/api/crm/my-day?x=1')).statusCode).toBe(400);
  });
});

describe('away', () => {
  test('the user marks themselves away and back; audited as a change of the user; other settings untouched', async () => {
    expect((await ok(as(ctx, agent).get('/api/auth/preferences'))).away).toBe(false);
    expect(await ok(as(ctx, agent).patch('/api/auth/preferences', { away: true }))).toMatchObject({ away: true, task_digest: true });
    expect((await ok(as(ctx, agent).get('/api/auth/preferences'))).away).toBe(true);
    expect(await ctx.database.db.select().from(leadFlowAway).where(eq(leadFlowAway.user_id, agent.id))).toHaveLength(1);
    await ok(as(ctx, agent).patch('/api/auth/preferences', { away: true })); // again: nothing changes
    await ok(as(ctx, agent).patch('/api/auth/preferences', { away: false }));
    expect(await ctx.database.db.select().from(leadFlowAway).where(eq(leadFlowAway.user_id, agent.id))).toHaveLength(0);
    const logs = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'users'), eq(activityLogs.resource_id, agent.id))).orderBy(activityLogs.created_at);
    expect(logs.map((log) => log.changes)).toEqual([
      expect.objectContaining({ before: expect.objectContaining({ away: false }), after: expect.objectContaining({ away: true }) }),
      expect.objectContaining({ before: expect.objectContaining({ away: true }), after: expect.objectContaining({ away: false }) }),
    ]);
    const bad = await as(ctx, agent).patch('/api/auth/preferences', { away: 'yes' });
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json().details)).toEqual(['away']);
  });
});
