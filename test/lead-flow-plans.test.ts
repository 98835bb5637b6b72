import { and, eq, inArray, sql } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { clock, tickingClock } from '../src/clock.js';
import { activityLogs, crmTasks, departments, leadActionPlans, leadFlowRules, leadRouting, moduleAccess, planTasks, users } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { as, clockAt, createTestApp, createUser, ok, type Reply, type TestContext } from './helpers.js';

// Action plans: who may change them, what they accept, and running them on leads: started by hand or by the routing
// rule at the lead's first assignment, follow-ups due in working time (09:00-18:00, Monday to Friday, Asia/Manila),
// stopped by hand, by a status the plan does not run in, or with the lead; open follow-ups follow the assignee.

type User = Awaited<ReturnType<typeof createUser>>;
let ctx: TestContext;
let admin: User;
let manager: User;
let writer: User;
let reader: User;
let agent: User;
let other: User;
let ownAgent: User;

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await createUser(ctx, { crm: 'rwd', iam: 'rwd' }, { name: 'Ada Admin' });
  manager = await createUser(ctx, { crm: 'rw' }, { name: 'Mona Manager' });
  writer = await createUser(ctx, { crm: 'rwd' }, { name: 'Walt Writer' });
  reader = await createUser(ctx, { crm: 'r' });
  agent = await createUser(ctx, { crm: 'rw' }, { name: 'Maria Agent' });
  other = await createUser(ctx, { crm: 'rw' }, { name: 'Oscar Other' });
  ownAgent = await createUser(ctx, { crm: 'rw' }, { name: 'Olive Own' });
  await ctx.database.db.update(moduleAccess).set({ scope: 'own' }).where(and(eq(moduleAccess.user_id, ownAgent.id), eq(moduleAccess.module, 'crm')));
  await ctx.database.db.insert(departments).values({ name: 'Sales', manager_id: manager.id });
});
afterAll(async () => ctx?.close());
afterEach(() => {
  clock.now = tickingClock();
});

/** To the second: the clock moves a millisecond a reading, and a request reads it several times. */
const toSecond = (at: Date) => at.toISOString().slice(0, 19);
const refused = async (res: Promise<Reply>, status: number) => {
  const reply = await res;
  expect(reply.statusCode, reply.body).toBe(status);
  return reply.json();
};

let planCount = 0;
const websitePlan = () => ({
  name: `New website lead ${++planCount}`,
  steps: [
    { kind: 'call', title: 'Call now', offset_amount: 0, offset_unit: 'hours' },
    { kind: 'email', title: 'Send the brochure', offset_amount: 1, offset_unit: 'days' },
    { kind: 'call', title: 'Call again', offset_amount: 3, offset_unit: 'days' },
    { kind: 'site_visit', title: 'Invite to a site visit', offset_amount: 4, offset_unit: 'hours' },
  ],
});
const createPlan = async (body: Record<string, unknown> = websitePlan(), who: User = admin) => (await ok(as(ctx, who).post('/api/crm/lead-flow/plans', body), 201)).id as string;
const tasksOfLead = (leadId: string) => ctx.database.db.select().from(crmTasks).where(eq(crmTasks.lead_id, leadId)).orderBy(crmTasks.due_at, crmTasks.title);

describe('action plans', () => {
  test('created, read by any crm reader with steps in order, changed, deleted; each change one audit record with its steps', async () => {
    const id = await createPlan({ ...websitePlan(), name: ' Open house follow-up ', active_statuses: ['new', 'contacted'] });
    const plan = await ok(as(ctx, reader).get(`/api/crm/lead-flow/plans/${id}`));
    expect(plan).toEqual({
      id, name: 'Open house follow-up', active_statuses: ['new', 'contacted'], running: 0, created_at: expect.any(String), updated_at: expect.any(String),
      steps: [
        { id: expect.any(String), position: 0, kind: 'call', title: 'Call now', offset_amount: 0, offset_unit: 'hours' },
        { id: expect.any(String), position: 1, kind: 'email', title: 'Send the brochure', offset_amount: 1, offset_unit: 'days' },
        { id: expect.any(String), position: 2, kind: 'call', title: 'Call again', offset_amount: 3, offset_unit: 'days' },
        { id: expect.any(String), position: 3, kind: 'site_visit', title: 'Invite to a site visit', offset_amount: 4, offset_unit: 'hours' },
      ],
    });
    expect((await ok(as(ctx, reader).get('/api/crm/lead-flow/plans'))).data.map((p: { id: string }) => p.id)).toContain(id);
    // Default statuses.
    const defaults = await createPlan({ name: `Defaults ${planCount}`, steps: [{ kind: 'task', title: 'Check', offset_amount: 2, offset_unit: 'hours' }] });
    expect((await ok(as(ctx, reader).get(`/api/crm/lead-flow/plans/${defaults}`))).active_statuses).toEqual(['new', 'contacted', 'qualified']);

    expect((await ok(as(ctx, manager).patch(`/api/crm/lead-flow/plans/${id}`, { steps: [{ kind: 'meeting', title: 'Meet', offset_amount: 2, offset_unit: 'days' }] }))).message).toBe('Action plan updated');
    const changed = await ok(as(ctx, reader).get(`/api/crm/lead-flow/plans/${id}`));
    expect(changed.steps).toEqual([{ id: expect.any(String), position: 0, kind: 'meeting', title: 'Meet', offset_amount: 2, offset_unit: 'days' }]);
    expect(changed.name).toBe('Open house follow-up');
    await ok(as(ctx, admin).patch(`/api/crm/lead-flow/plans/${id}`, { name: 'Open house' }));

    expect((await ok(as(ctx, admin).delete(`/api/crm/lead-flow/plans/${id}`))).message).toBe('Action plan deleted');
    await refused(as(ctx, reader).get(`/api/crm/lead-flow/plans/${id}`), 404);
    const logs = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'action_plans'), eq(activityLogs.resource_id, id))).orderBy(activityLogs.created_at);
    expect(logs.map((log) => log.action)).toEqual(['create', 'update', 'update', 'delete']);
    expect(logs[0].changes).toMatchObject({ after: { name: 'Open house follow-up', steps: [{ kind: 'call', title: 'Call now' }, {}, {}, {}] } });
    expect(logs[1].changes).toMatchObject({ before: { steps: [{ kind: 'call' }, {}, {}, {}] }, after: { steps: [{ kind: 'meeting', title: 'Meet' }] } });
    expect(logs[1].user_id).toBe(manager.id);
  });

  test('only administrators and department managers change them (403); crm readers read them', async () => {
    const id = await createPlan();
    expect((await refused(as(ctx, writer).post('/api/crm/lead-flow/plans', websitePlan()), 403)).message).toMatch(/administrators and department managers/);
    await refused(as(ctx, writer).patch(`/api/crm/lead-flow/plans/${id}`, { name: 'Mine now' }), 403);
    await refused(as(ctx, writer).delete(`/api/crm/lead-flow/plans/${id}`), 403);
    await refused(as(ctx, reader).post('/api/crm/lead-flow/plans', websitePlan()), 403);
    await createPlan(websitePlan(), manager);
    await ok(as(ctx, reader).get(`/api/crm/lead-flow/plans/${id}`));
    await refused(as(ctx, await createUser(ctx, { cms: 'r' })).get('/api/crm/lead-flow/plans'), 403);
  });

  test('bad input is 400 naming the field; a taken name 409; an unknown plan 404', async () => {
    const base = websitePlan();
    const step = base.steps[0];
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, steps: [{ ...step, offset_amount: -1 }] }, 'steps.0.offset_amount'],
      [{ ...base, steps: [{ ...step, kind: 'fax' }] }, 'steps.0.kind'],
      [{ ...base, steps: [{ ...step, offset_unit: 'weeks' }] }, 'steps.0.offset_unit'],
      [{ ...base, steps: [{ ...step, title: '' }] }, 'steps.0.title'],
      [{ ...base, steps: [] }, 'steps'],
      [{ ...base, active_statuses: [] }, 'active_statuses'],
      [{ ...base, active_statuses: ['new', 'pending'] }, 'active_statuses.1'],
      [{ ...base, name: '' }, 'name'],
      [{ steps: base.steps }, 'name'],
    ];
    for (const [body, field] of cases) {
      const answer = await refused(as(ctx, admin).post('/api/crm/lead-flow/plans', body), 400);
      expect(Object.keys(answer.details), JSON.stringify(body)).toContain(field);
    }
    const id = await createPlan({ ...base, name: 'Unique plan' });
    expect((await refused(as(ctx, admin).post('/api/crm/lead-flow/plans', { ...base, name: 'UNIQUE PLAN' }), 409)).message).toMatch(/already exists/);
    const second = await createPlan();
    await refused(as(ctx, admin).patch(`/api/crm/lead-flow/plans/${second}`, { name: 'unique plan' }), 409);
    await ok(as(ctx, admin).patch(`/api/crm/lead-flow/plans/${id}`, { name: 'Unique Plan' })); // its own name, another case
    await refused(as(ctx, admin).patch(`/api/crm/lead-flow/plans/${id}`, {}), 400);
    await refused(as(ctx, admin).patch(`/api/crm/lead-flow/plans/${uuidv7()}`, { name: 'x' }), 404);
    await refused(as(ctx, admin).delete(`/api/crm/lead-flow/plans/${uuidv7()}`), 404);
    await refused(as(ctx, reader).get(`/api/crm/lead-flow/plans/${uuidv7()}`), 404);
    await refused(as(ctx, reader).get('/api/crm/lead-flow/plans/not-an-id'), 400);
  });
});

describe('running plans', () => {
  test('started by hand: one follow-up per step for the assignee, due in working time; audited; running counted', async () => {
    const planId = await createPlan();
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    clockAt('2030-01-11T16:30:00+08:00'); // a Friday afternoon
    const run = await ok(as(ctx, writer).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 201);
    expect(run.message).toBe('Action plan started');
    const tasks = await tasksOfLead(lead.id);
    expect(tasks.map((t) => [t.title, toSecond(t.due_at), t.assigned_to])).toEqual([
      ['Call now', toSecond(new Date('2030-01-11T16:30:00+08:00')), agent.id],
      ['Invite to a site visit', toSecond(new Date('2030-01-14T11:30:00+08:00')), agent.id], // 1.5 h on Friday, 2.5 h on Monday
      ['Send the brochure', toSecond(new Date('2030-01-14T16:30:00+08:00')), agent.id],
      ['Call again', toSecond(new Date('2030-01-16T16:30:00+08:00')), agent.id],
    ]);
    const links = await ctx.database.db.select().from(planTasks).where(inArray(planTasks.task_id, tasks.map((t) => t.id)));
    expect(links.every((link) => link.lead_plan_id === run.id)).toBe(true);
    const logs = await ctx.database.db.select().from(activityLogs).where(inArray(activityLogs.resource_id, [run.id, ...tasks.map((t) => t.id)]));
    expect(logs.map((log) => `${log.resource} ${log.action}`).sort()).toEqual(['lead_action_plans create', ...tasks.map(() => 'tasks create')].sort());
    expect(logs.every((log) => log.user_id === writer.id)).toBe(true);
    expect((await ok(as(ctx, reader).get(`/api/crm/lead-flow/plans/${planId}`))).running).toBe(1);
    expect((await ok(as(ctx, reader).get(`/api/crm/leads/${lead.id}/flow`))).plans).toEqual([expect.objectContaining({ id: run.id, open_tasks: 4 })]);
    const runs = await ok(as(ctx, reader).get(`/api/crm/leads/${lead.id}/plans`));
    expect(runs.data).toEqual([{ id: run.id, plan_id: planId, name: expect.stringMatching(/^New website lead/), started_at: expect.any(String), stopped_at: null, stop_reason: null, open_tasks: 4 }]);

    // The same plan twice: 409; a plan that does not exist: 400 naming it; no assignee: 409.
    await refused(as(ctx, writer).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 409);
    expect((await refused(as(ctx, writer).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: uuidv7() }), 400)).details).toEqual({ plan_id: 'must be an existing action plan' });
    const unassigned = await make.lead(ctx);
    expect((await refused(as(ctx, writer).post(`/api/crm/leads/${unassigned.id}/plans`, { plan_id: planId }), 409)).message).toMatch(/assign it first/);
    await refused(as(ctx, reader).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 403);
  });

  test('a lead outside the caller\'s record scope is as unknown (404), for starting, stopping and listing', async () => {
    const planId = await createPlan();
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    const run = await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 201);
    const unknown = await refused(as(ctx, ownAgent).post(`/api/crm/leads/${uuidv7()}/plans`, { plan_id: planId }), 404);
    expect(await refused(as(ctx, ownAgent).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 404)).toEqual(unknown);
    await refused(as(ctx, ownAgent).post(`/api/crm/leads/${lead.id}/plans/${run.id}/stop`), 404);
    await refused(as(ctx, ownAgent).get(`/api/crm/leads/${lead.id}/plans`), 404);
    // Their own lead: fine.
    const own = await make.lead(ctx, { assigned_to: ownAgent.id });
    await ok(as(ctx, ownAgent).post(`/api/crm/leads/${own.id}/plans`, { plan_id: planId }), 201);
  });

  test('stopped by hand: its open follow-ups removed (audited), done ones kept; stopping again 409', async () => {
    const planId = await createPlan();
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    const run = await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 201);
    const [first] = await tasksOfLead(lead.id);
    await ok(as(ctx, agent).patch(`/api/crm/tasks/${first.id}`, { done: true }));
    expect((await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans/${run.id}/stop`))).message).toBe('Action plan stopped');
    expect((await tasksOfLead(lead.id)).map((t) => t.id)).toEqual([first.id]);
    const [stopped] = (await ok(as(ctx, agent).get(`/api/crm/leads/${lead.id}/plans`))).data;
    expect(stopped).toMatchObject({ id: run.id, stopped_at: expect.any(String), stop_reason: 'stopped by hand', open_tasks: 0 });
    const removed = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'tasks'), eq(activityLogs.action, 'delete'), eq(activityLogs.user_id, agent.id)));
    expect(removed.length).toBeGreaterThanOrEqual(3);
    await refused(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans/${run.id}/stop`), 409);
    await refused(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans/${uuidv7()}/stop`), 404);
    // A run of another lead, named under this one: unknown.
    const another = await make.lead(ctx, { assigned_to: agent.id });
    await refused(as(ctx, agent).post(`/api/crm/leads/${another.id}/plans/${run.id}/stop`), 404);
  });

  test('a status the plan does not run in stops it; a status it runs in does not', async () => {
    const planId = await createPlan({ ...websitePlan(), active_statuses: ['new', 'contacted'] });
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 201);
    await ok(as(ctx, agent).patch(`/api/crm/leads/${lead.id}`, { status: 'contacted' }));
    expect(await tasksOfLead(lead.id)).toHaveLength(4);
    await ok(as(ctx, agent).patch(`/api/crm/leads/${lead.id}`, { status: 'qualified' }));
    expect(await tasksOfLead(lead.id)).toHaveLength(0);
    expect((await ok(as(ctx, agent).get(`/api/crm/leads/${lead.id}/plans`))).data[0]).toMatchObject({ stop_reason: 'status changed' });
    expect((await ok(as(ctx, reader).get(`/api/crm/lead-flow/plans/${planId}`))).running).toBe(0);
  });

  test('a new assignee takes the open follow-ups of running plans (done ones and stopped plans\' stay)', async () => {
    const planId = await createPlan();
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 201);
    const [first] = await tasksOfLead(lead.id);
    await ok(as(ctx, agent).patch(`/api/crm/tasks/${first.id}`, { done: true }));
    await ok(as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: other.id }));
    const tasks = await tasksOfLead(lead.id);
    expect(tasks.filter((t) => t.done_at === null).map((t) => t.assigned_to)).toEqual([other.id, other.id, other.id]);
    expect(tasks.find((t) => t.id === first.id)!.assigned_to).toBe(agent.id);
    const moves = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'tasks'), eq(activityLogs.action, 'update'), inArray(activityLogs.resource_id, tasks.map((t) => t.id)), eq(activityLogs.user_id, admin.id)));
    expect(moves).toHaveLength(3);
  });

  test('deleting the lead stops its plans: their open follow-ups go too', async () => {
    const planId = await createPlan();
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 201);
    const ids = (await tasksOfLead(lead.id)).map((t) => t.id);
    await ok(as(ctx, admin).delete(`/api/crm/leads/${lead.id}`));
    expect(await ctx.database.db.select().from(crmTasks).where(inArray(crmTasks.id, ids))).toEqual([]);
    expect(await ctx.database.db.select().from(leadActionPlans).where(eq(leadActionPlans.lead_id, lead.id))).toEqual([]);
    // Restored from the trash: the lead and the follow-ups removed with it (the plan's run is not: a person starts it again).
    const [entry] = (await ok(as(ctx, admin).get('/api/crm/trash?limit=100'))).data.filter((e: { record_id: string }) => e.record_id === lead.id);
    await ok(as(ctx, admin).post(`/api/crm/trash/${entry.id}/restore`));
    await ok(as(ctx, admin).get(`/api/crm/leads/${lead.id}`));
    expect((await tasksOfLead(lead.id)).map((t) => t.id).sort()).toEqual([...ids].sort());
    expect((await ok(as(ctx, admin).get(`/api/crm/leads/${lead.id}/plans`))).data).toEqual([]);
  });

  test('deleting a plan stops it wherever it runs', async () => {
    const planId = await createPlan();
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    await ok(as(ctx, agent).post(`/api/crm/leads/${lead.id}/plans`, { plan_id: planId }), 201);
    await ok(as(ctx, admin).delete(`/api/crm/lead-flow/plans/${planId}`));
    expect(await tasksOfLead(lead.id)).toEqual([]);
  });

  test('the routing rule\'s plan starts at the lead\'s first assignment (a claim or a person\'s), once', async () => {
    const planId = await createPlan();
    const [rule] = await ctx.database.db.insert(leadFlowRules).values({ name: `Website ${planCount}`, position: 100 + planCount, channel: 'website', assign_user_id: agent.id, action_plan_id: planId }).returning();
    const lead = await make.lead(ctx);
    await ctx.database.db.insert(leadRouting).values({ lead_id: lead.id, rule_id: rule.id, channel: 'website' }).onConflictDoUpdate({ target: leadRouting.lead_id, set: { rule_id: sql`excluded.rule_id`, channel: sql`excluded.channel`, claim_deadline: sql`excluded.claim_deadline`, assigned_at: sql`excluded.assigned_at`, first_contact_at: sql`excluded.first_contact_at`, speed_due_at: sql`excluded.speed_due_at` } });
    clockAt('2030-01-14T10:00:00+08:00');
    await ok(as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: other.id }));
    const tasks = await tasksOfLead(lead.id);
    expect(tasks.map((t) => [t.assigned_to, toSecond(t.due_at)])[0]).toEqual([other.id, toSecond(new Date('2030-01-14T10:00:00+08:00'))]);
    expect(tasks).toHaveLength(4);
    // Stopped, then assigned again: the rule's plan does not start a second time.
    const [run] = (await ok(as(ctx, admin).get(`/api/crm/leads/${lead.id}/plans`))).data;
    await ok(as(ctx, admin).post(`/api/crm/leads/${lead.id}/plans/${run.id}/stop`));
    await ok(as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: agent.id }));
    expect((await ok(as(ctx, admin).get(`/api/crm/leads/${lead.id}/plans`))).data).toHaveLength(1);
    const [{ assigned_at }] = await ctx.database.db.select({ assigned_at: leadRouting.assigned_at }).from(leadRouting).where(eq(leadRouting.lead_id, lead.id));
    expect(assigned_at).not.toBeNull();
    await ctx.database.db.delete(leadFlowRules).where(eq(leadFlowRules.id, rule.id));
  });

  test('users named as a department\'s manager are managers; the API keeps them so only with crm write', async () => {
    const readerManager = await createUser(ctx, { crm: 'r' });
    await ctx.database.db.update(departments).set({ manager_id: readerManager.id }).where(eq(departments.name, 'Sales'));
    await refused(as(ctx, readerManager).post('/api/crm/lead-flow/plans', websitePlan()), 403);
    await refused(as(ctx, manager).post('/api/crm/lead-flow/plans', websitePlan()), 403);
    await ctx.database.db.update(departments).set({ manager_id: manager.id }).where(eq(departments.name, 'Sales'));
    await createPlan(websitePlan(), manager);
    expect(await ctx.database.db.select({ id: users.id }).from(users).where(eq(users.id, manager.id))).toHaveLength(1);
  });
});
