import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { clock } from '../src/clock.js';
import { leadFlowAway, leadRouting } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { as, createTestApp, createUser, CRON_SECRET, type TestContext } from './helpers.js';

/**
 * Lead flow routing: the groups and rules settings, who may change them, how a new lead is routed (round robin, first
 * to claim, pond, a named user, fallbacks), claims and their race, the claim sweep, and where leads arrive (the API,
 * the website's inquiry form, a CSV import).
 */

type User = Awaited<ReturnType<typeof createUser>>;
let ctx: TestContext;
let admin: User;
let agents: User[];
let reader: User;
let writer: User;
let manager: User;

const settle = () => ctx.app.background.settled();

async function group(body: Record<string, unknown>, by: User = admin) {
  const res = await as(ctx, by).post('/api/crm/lead-flow/groups', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}
async function rule(body: Record<string, unknown>, by: User = admin) {
  const res = await as(ctx, by).post('/api/crm/lead-flow/rules', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}
/** Every rule and group gone: lead flow off again. */
async function clearFlow() {
  for (const r of (await as(ctx, admin).get('/api/crm/lead-flow/rules')).json().data) expect((await as(ctx, admin).delete(`/api/crm/lead-flow/rules/${r.id}`)).statusCode).toBe(200);
  await ctx.database.db.delete(leadFlowAway);
  // Leads still waiting in a pool are handed out first, so their groups may go.
  for (const g of (await as(ctx, admin).get('/api/crm/lead-flow/groups')).json().data) {
    if (g.waiting) {
      const waiting = (await as(ctx, admin).get('/api/crm/leads?limit=100')).json().data as { id: string }[];
      for (const lead of waiting) await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: admin.id });
    }
  }
  // Those another group falls back to go after it.
  for (let round = 0; round < 5; round++) {
    const left = (await as(ctx, admin).get('/api/crm/lead-flow/groups')).json().data as { id: string }[];
    if (!left.length) return;
    for (const g of left) await as(ctx, admin).delete(`/api/crm/lead-flow/groups/${g.id}`);
  }
  expect((await as(ctx, admin).get('/api/crm/lead-flow/groups')).json().data).toEqual([]);
}
const lead = async (overrides: Record<string, unknown> = {}, by: User = admin) => (await make.lead(ctx, overrides, by)).id;
const assigneeOf = async (id: string) => (await as(ctx, admin).get(`/api/crm/leads/${id}`)).json().assigned_to?.id ?? null;
const sweep = () => as(ctx, 'unused').post('/api/cron/lead-flow', undefined, { authorization: `Bearer ${CRON_SECRET}` });

async function setScope(user: User, scope: 'all' | 'department' | 'own') {
  const rows = (await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json().data as { id: string; module: string }[];
  const res = await as(ctx, admin).patch(`/api/iam/module-access/${rows.find((r) => r.module === 'crm')!.id}`, { scope });
  expect(res.statusCode, res.body).toBe(200);
}

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' }, { name: 'Admin' });
  agents = [];
  for (const name of ['Ana', 'Ben', 'Cris', 'Dan', 'Eve']) agents.push(await createUser(ctx, { crm: 'rw' }, { name }));
  reader = await createUser(ctx, { crm: 'r' }, { name: 'Reader' });
  writer = await createUser(ctx, { crm: 'rwd' }, { name: 'Writer' });
  manager = await createUser(ctx, { crm: 'rwd' }, { name: 'Manager' });
  const department = await make.department(ctx, {});
  const named = await as(ctx, admin).patch(`/api/iam/departments/${department.id}`, { manager_id: manager.id });
  expect(named.statusCode, named.body).toBe(200);
});
afterAll(async () => ctx?.close());

describe('groups and rules: settings', () => {
  afterEach(clearFlow);

  test('a group answers its members in order, who is next and how many leads wait', async () => {
    const id = await group({ name: 'Tower B', kind: 'round_robin', members: [agents[1].id, agents[0].id] });
    const res = await as(ctx, reader).get(`/api/crm/lead-flow/groups/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      id, name: 'Tower B', kind: 'round_robin', claim_minutes: null, fallback_user_id: null, fallback_group_id: null, waiting: 0, next_user_id: agents[1].id,
      members: [{ user_id: agents[1].id, name: 'Ben', position: 0, away: false, eligible: true }, { user_id: agents[0].id, name: 'Ana', position: 1, away: false, eligible: true }],
    });
    expect((await as(ctx, reader).get('/api/crm/lead-flow/groups')).json().data.map((g: { id: string }) => g.id)).toEqual([id]);
    expect((await as(ctx, reader).get('/api/crm/lead-flow/groups/0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d')).statusCode).toBe(404);
    // The audit trail holds the members with the row.
    const patched = await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${id}`, { members: [agents[2].id] });
    expect(patched.statusCode, patched.body).toBe(200);
    const logs = (await as(ctx, admin).get(`/api/iam/activity-logs?resource=lead_groups&resource_id=${id}`)).json().data;
    expect(logs.map((l: { action: string }) => l.action).sort()).toEqual(['create', 'update']);
    expect(logs.find((l: { action: string }) => l.action === 'update').changes.after.members).toEqual([agents[2].id]);
  });

  test('bad groups: 400 naming the field, 409 for a taken name', async () => {
    const deleted = await createUser(ctx, { crm: 'rw' });
    expect((await as(ctx, admin).delete(`/api/iam/users/${deleted.id}`)).statusCode).toBe(200);
    const bad: [Record<string, unknown>, string][] = [
      [{ name: 'G', kind: 'round_robin', members: [] }, 'members'],
      [{ name: 'G', kind: 'round_robin', members: [reader.id] }, 'members.0'],
      [{ name: 'G', kind: 'round_robin', members: [deleted.id] }, 'members.0'],
      [{ name: 'G', kind: 'round_robin', claim_minutes: 5, members: [agents[0].id] }, 'claim_minutes'],
      [{ name: 'G', kind: 'first_to_claim', claim_minutes: 31, fallback_user_id: agents[0].id, members: [agents[0].id] }, 'claim_minutes'],
      [{ name: 'G', kind: 'first_to_claim', claim_minutes: 0, fallback_user_id: agents[0].id, members: [agents[0].id] }, 'claim_minutes'],
      [{ name: 'G', kind: 'first_to_claim', fallback_user_id: agents[0].id, members: [agents[0].id] }, 'claim_minutes'],
      [{ name: 'G', kind: 'first_to_claim', claim_minutes: 5, members: [agents[0].id] }, 'fallback_user_id'],
      [{ name: 'G', kind: 'pond', fallback_user_id: deleted.id, members: [agents[0].id] }, 'fallback_user_id'],
      [{ name: 'G', kind: 'pond', fallback_user_id: reader.id, members: [agents[0].id] }, 'fallback_user_id'],
      [{ name: 'G', kind: 'pond', fallback_group_id: '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d', members: [agents[0].id] }, 'fallback_group_id'],
      [{ name: '', kind: 'pond', members: [agents[0].id] }, 'name'],
      [{ name: 'G', kind: 'circle', members: [agents[0].id] }, 'kind'],
    ];
    for (const [body, field] of bad) {
      const res = await as(ctx, admin).post('/api/crm/lead-flow/groups', body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(400);
      expect(Object.keys(res.json().details ?? {}), res.body).toContain(field);
    }
    const id = await group({ name: 'Pond A', kind: 'pond', members: [agents[0].id] });
    const self = await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${id}`, { fallback_group_id: id });
    expect(self.statusCode, self.body).toBe(400);
    expect(self.json().details).toHaveProperty('fallback_group_id');
    const taken = await as(ctx, admin).post('/api/crm/lead-flow/groups', { name: 'pond a', kind: 'pond', members: [agents[0].id] });
    expect(taken.statusCode, taken.body).toBe(409);
    // Leaving first to claim drops the claim time by itself.
    const ftc = await group({ name: 'Claimers', kind: 'first_to_claim', claim_minutes: 5, fallback_user_id: agents[0].id, members: [agents[0].id] });
    const toPond = await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${ftc}`, { kind: 'pond' });
    expect(toPond.statusCode, toPond.body).toBe(200);
    expect((await as(ctx, admin).get(`/api/crm/lead-flow/groups/${ftc}`)).json()).toMatchObject({ kind: 'pond', claim_minutes: null });
  });

  test('bad rules: 400 naming the field; a second default and a taken position 409; a group a rule uses is not deleted', async () => {
    const project = await make.project(ctx, { name: 'Azure Residences' });
    const pond = await group({ name: 'Pond', kind: 'pond', members: [agents[0].id] });
    const unknown = '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d';
    const bad: [Record<string, unknown>, string][] = [
      [{ name: 'R' }, 'assign_user_id'],
      [{ name: 'R', assign_user_id: agents[0].id, assign_group_id: pond }, 'assign_user_id'],
      [{ name: 'R', assign_user_id: reader.id }, 'assign_user_id'],
      [{ name: 'R', assign_group_id: unknown }, 'assign_group_id'],
      [{ name: 'R', assign_user_id: agents[0].id, project_id: unknown }, 'project_id'],
      [{ name: 'R', assign_user_id: agents[0].id, action_plan_id: unknown }, 'action_plan_id'],
      [{ name: 'R', assign_user_id: agents[0].id, is_default: true, channel: 'website' }, 'is_default'],
      [{ name: 'R', assign_user_id: agents[0].id, speed_limit_minutes: 0 }, 'speed_limit_minutes'],
      [{ name: 'R', assign_user_id: agents[0].id, channel: 'fax' }, 'channel'],
    ];
    for (const [body, field] of bad) {
      const res = await as(ctx, admin).post('/api/crm/lead-flow/rules', body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(400);
      expect(Object.keys(res.json().details ?? {}), res.body).toContain(field);
    }
    const first = await rule({ name: 'Azure website', channel: 'website', project_id: project.id, assign_group_id: pond });
    await rule({ name: 'Everyone else', is_default: true, assign_user_id: agents[1].id });
    const second = await as(ctx, admin).post('/api/crm/lead-flow/rules', { name: 'Another default', is_default: true, assign_user_id: agents[0].id });
    expect(second.statusCode, second.body).toBe(409);
    const taken = await as(ctx, admin).post('/api/crm/lead-flow/rules', { name: 'Same place', position: 0, assign_user_id: agents[0].id });
    expect(taken.statusCode, taken.body).toBe(409);
    expect((await as(ctx, admin).patch(`/api/crm/lead-flow/rules/${first}`, { is_default: true })).statusCode).toBe(400);
    const used = await as(ctx, admin).delete(`/api/crm/lead-flow/groups/${pond}`);
    expect(used.statusCode, used.body).toBe(409);
    expect(used.json().message).toContain('"Azure website"');
    // The default rule is tried last whatever its position.
    const rules = (await as(ctx, reader).get('/api/crm/lead-flow/rules')).json().data;
    expect(rules.map((r: { name: string }) => r.name)).toEqual(['Azure website', 'Everyone else']);
    expect(rules[0]).toMatchObject({ position: 0, is_default: false, channel: 'website', source: null, project_id: project.id, assign_user_id: null, assign_group_id: pond, on_speed_limit: 'remind' });
    // Naming the other target replaces the first.
    expect((await as(ctx, admin).patch(`/api/crm/lead-flow/rules/${first}`, { assign_user_id: agents[2].id })).statusCode).toBe(200);
    expect((await as(ctx, reader).get(`/api/crm/lead-flow/rules/${first}`)).json()).toMatchObject({ assign_user_id: agents[2].id, assign_group_id: null });
  });

  test('administrators and department managers change the settings; other crm writers and readers only read them', async () => {
    const body = { name: 'By manager', kind: 'round_robin', members: [agents[0].id] };
    const id = await group(body, manager);
    expect((await as(ctx, writer).post('/api/crm/lead-flow/groups', { ...body, name: 'By writer' })).statusCode).toBe(403);
    expect((await as(ctx, reader).post('/api/crm/lead-flow/groups', { ...body, name: 'By reader' })).statusCode).toBe(403);
    expect((await as(ctx, writer).patch(`/api/crm/lead-flow/groups/${id}`, { name: 'Renamed' })).statusCode).toBe(403);
    expect((await as(ctx, writer).delete(`/api/crm/lead-flow/groups/${id}`)).statusCode).toBe(403);
    expect((await as(ctx, writer).post('/api/crm/lead-flow/rules', { name: 'R', assign_group_id: id })).statusCode).toBe(403);
    const ruleId = await rule({ name: 'R', assign_group_id: id }, manager);
    expect((await as(ctx, writer).get(`/api/crm/lead-flow/rules/${ruleId}`)).statusCode).toBe(200);
    expect((await as(ctx, manager).delete(`/api/crm/lead-flow/rules/${ruleId}`)).statusCode).toBe(200);
  });

  test('the people leads can go to: crm writers by name, away and eligible, and whether the caller may change the settings', async () => {
    const away = await createUser(ctx, { crm: 'rw' }, { name: 'Away Agent' });
    expect((await as(ctx, away).patch('/api/auth/preferences', { away: true })).statusCode).toBe(200);
    const gone = await createUser(ctx, { crm: 'rw' }, { name: 'Gone Agent' });
    expect((await as(ctx, admin).delete(`/api/iam/users/${gone.id}`)).statusCode).toBe(200);
    const asManager = await as(ctx, manager).get('/api/crm/lead-flow/people');
    expect(asManager.statusCode, asManager.body).toBe(200);
    const people = asManager.json();
    expect(people.may_manage).toBe(true);
    const byId = new Map(people.data.map((p: { id: string }) => [p.id, p]));
    expect(byId.get(agents[0].id)).toEqual({ id: agents[0].id, name: 'Ana', department: null, away: false, eligible: true });
    expect(byId.get(away.id)).toMatchObject({ name: 'Away Agent', away: true, eligible: false });
    expect(byId.has(reader.id)).toBe(false); // no crm write: no lead goes to them
    expect(byId.has(gone.id)).toBe(false);
    expect((await as(ctx, writer).get('/api/crm/lead-flow/people')).json().may_manage).toBe(false);
    expect((await as(ctx, reader).get('/api/crm/lead-flow/people')).json().may_manage).toBe(false);
    expect((await as(ctx, admin).get('/api/crm/lead-flow/people')).json().may_manage).toBe(true);
    expect((await as(ctx, await createUser(ctx, { cms: 'r' })).get('/api/crm/lead-flow/people')).statusCode).toBe(403);
  });
});

describe('routing a new lead', () => {
  afterEach(clearFlow);

  test('with no rules, a lead stays unassigned as before', async () => {
    const id = await lead();
    expect(await assigneeOf(id)).toBeNull();
    expect(await ctx.database.db.select().from(leadRouting).where(eq(leadRouting.lead_id, id))).toEqual([]);
  });

  test('round robin: members take turns, skipping the away, the deleted and those without crm write', async () => {
    const [ana, ben, cris] = agents;
    const rr = await group({ name: 'RR', kind: 'round_robin', members: [ana.id, ben.id, cris.id] });
    await rule({ name: 'API leads', channel: 'api', assign_group_id: rr });
    const turns = [];
    for (let i = 0; i < 4; i++) turns.push(await assigneeOf(await lead()));
    expect(turns).toEqual([ana.id, ben.id, cris.id, ana.id]);
    await ctx.database.db.insert(leadFlowAway).values({ user_id: ben.id, until: null });
    expect((await as(ctx, reader).get(`/api/crm/lead-flow/groups/${rr}`)).json().members[1]).toMatchObject({ away: true, eligible: false });
    const next = [];
    for (let i = 0; i < 3; i++) next.push(await assigneeOf(await lead()));
    expect(next).toEqual([cris.id, ana.id, cris.id]);
    // Away until a time now past: back in turn.
    await ctx.database.db.update(leadFlowAway).set({ until: new Date(Date.now() - 60_000) }).where(eq(leadFlowAway.user_id, ben.id));
    expect(await assigneeOf(await lead())).toBe(ana.id);
    expect(await assigneeOf(await lead())).toBe(ben.id);
  });

  test('an assignment is audited with how it happened, on the timeline, as a lead.assigned event, and told to the assignee', async () => {
    const hook = await as(ctx, admin).post('/api/iam/webhooks', { url: 'https://hooks.example.com/leads', events: ['lead.assigned'] });
    expect(hook.statusCode, hook.body).toBe(201);
    await rule({ name: 'Ana takes all', is_default: true, assign_user_id: agents[0].id });
    const id = await lead({ first_name: 'Rosa', interest: 'Two-bedroom' });
    expect(await assigneeOf(id)).toBe(agents[0].id);
    const timeline = (await as(ctx, admin).get(`/api/crm/leads/${id}/timeline?type=assigned`)).json().data;
    expect(timeline).toMatchObject([{ type: 'assigned', payload: { from: null, to: { id: agents[0].id, name: 'Ana' }, how: 'rule' } }]);
    const deliveries = (await as(ctx, admin).get(`/api/iam/webhooks/${hook.json().id}/deliveries`)).json().data;
    expect(deliveries.map((d: { event_type: string }) => d.event_type)).toContain('lead.assigned');
    await settle();
    const inbox = (await as(ctx, agents[0]).get('/api/notifications?limit=100')).json().data;
    expect(inbox.some((n: { kind: string; record: { id: string } | null }) => n.kind === 'lead_assigned' && n.record?.id === id)).toBe(true);
    // By hand: the timeline says so.
    expect((await as(ctx, admin).patch(`/api/crm/leads/${id}`, { assigned_to: agents[1].id })).statusCode).toBe(200);
    const after = (await as(ctx, admin).get(`/api/crm/leads/${id}/timeline?type=assigned`)).json().data;
    expect(after[0].payload).toMatchObject({ from: { id: agents[0].id }, to: { id: agents[1].id }, how: 'manual' });
    expect((await as(ctx, admin).delete(`/api/iam/webhooks/${hook.json().id}`)).statusCode).toBe(200);
  });

  test('conditions: channel, source and the project the interest names (case-insensitive); the default catches the rest', async () => {
    const project = await make.project(ctx, { name: 'Azure Residences' });
    await rule({ name: 'Azure', project_id: project.id, assign_user_id: agents[0].id });
    await rule({ name: 'Referrals', source: 'referral', assign_user_id: agents[1].id });
    await rule({ name: 'Website only', channel: 'website', assign_user_id: agents[3].id });
    await rule({ name: 'Default', is_default: true, assign_user_id: agents[2].id });
    expect(await assigneeOf(await lead({ interest: 'A 2BR at azure residences, Tower B', source: 'referral' }))).toBe(agents[0].id);
    expect(await assigneeOf(await lead({ interest: 'Azure', source: 'referral' }))).toBe(agents[1].id);
    expect(await assigneeOf(await lead({ interest: 'Something else' }))).toBe(agents[2].id);
    // A lead sent with an assignee is not routed.
    expect(await assigneeOf(await lead({ assigned_to: agents[4].id }))).toBe(agents[4].id);
  });

  test('a routed lead deleted and restored from the trash comes back with its routing, even when its rule is gone', async () => {
    const ruleId = await rule({ name: 'Ana takes all', is_default: true, assign_user_id: agents[0].id });
    const id = await lead();
    expect((await as(ctx, admin).delete(`/api/crm/leads/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, admin).delete(`/api/crm/lead-flow/rules/${ruleId}`)).statusCode).toBe(200);
    const entry = (await as(ctx, admin).get('/api/crm/trash?resource=leads&limit=100')).json().data.find((e: { record_id: string }) => e.record_id === id);
    const restored = await as(ctx, admin).post(`/api/crm/trash/${entry.id}/restore`);
    expect(restored.statusCode, restored.body).toBe(200);
    expect(await assigneeOf(id)).toBe(agents[0].id);
    const [routing] = await ctx.database.db.select().from(leadRouting).where(eq(leadRouting.lead_id, id));
    expect(routing).toMatchObject({ rule_id: null, channel: 'api' });
  });

  test('a rule\'s user deleted after the rule was made: the next rule takes the lead, nothing fails', async () => {
    const leaving = await createUser(ctx, { crm: 'rw' });
    await rule({ name: 'Leaving', assign_user_id: leaving.id });
    await rule({ name: 'Default', is_default: true, assign_user_id: agents[1].id });
    expect((await as(ctx, admin).delete(`/api/iam/users/${leaving.id}`)).statusCode).toBe(200);
    expect(await assigneeOf(await lead())).toBe(agents[1].id);
  });

  test('a round robin with nobody eligible: its fallback user, else its fallback group; none: unassigned in no pool', async () => {
    const backup = await group({ name: 'Backup', kind: 'round_robin', members: [agents[3].id] });
    const rr = await group({ name: 'Away team', kind: 'round_robin', members: [agents[0].id], fallback_user_id: agents[2].id });
    await rule({ name: 'To the away team', assign_group_id: rr });
    await ctx.database.db.insert(leadFlowAway).values({ user_id: agents[0].id, until: null });
    expect(await assigneeOf(await lead())).toBe(agents[2].id);
    expect((await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${rr}`, { fallback_user_id: null, fallback_group_id: backup })).statusCode).toBe(200);
    const viaGroup = await lead();
    expect(await assigneeOf(viaGroup)).toBe(agents[3].id);
    const timeline = (await as(ctx, admin).get(`/api/crm/leads/${viaGroup}/timeline?type=assigned`)).json().data;
    expect(timeline[0].payload.how).toBe('fallback');
    expect((await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${rr}`, { fallback_group_id: null })).statusCode).toBe(200);
    const stranded = await lead();
    expect(await assigneeOf(stranded)).toBeNull();
    const [routing] = await ctx.database.db.select().from(leadRouting).where(eq(leadRouting.lead_id, stranded));
    expect(routing).toMatchObject({ channel: 'api', claim_deadline: null, assigned_at: null });
  });
});

describe('first to claim, ponds and claims', () => {
  afterEach(async () => {
    clock.now = realNow;
    await clearFlow();
  });
  const realNow = clock.now;

  test('a first-to-claim lead waits for its members (who see it whatever their scope and are told); the first claim wins', async () => {
    const [ana, ben] = agents;
    await setScope(ana, 'own');
    await setScope(writer, 'own');
    try {
      const ftc = await group({ name: 'Claimers', kind: 'first_to_claim', claim_minutes: 10, fallback_user_id: agents[2].id, members: [ana.id, ben.id] });
      await rule({ name: 'Claim them', assign_group_id: ftc });
      const id = await lead({ first_name: 'Pia' });
      expect(await assigneeOf(id)).toBeNull();
      const [routing] = await ctx.database.db.select().from(leadRouting).where(eq(leadRouting.lead_id, id));
      expect(routing.claim_deadline).not.toBeNull();
      expect((await as(ctx, reader).get(`/api/crm/lead-flow/groups/${ftc}`)).json().waiting).toBe(1);
      // Ana's own scope reaches it through her group; the writer's does not.
      expect((await as(ctx, ana).get(`/api/crm/leads/${id}`)).statusCode).toBe(200);
      expect((await as(ctx, ana).get('/api/crm/leads?limit=100')).json().data.map((l: { id: string }) => l.id)).toContain(id);
      expect((await as(ctx, writer).get(`/api/crm/leads/${id}`)).statusCode).toBe(404);
      expect((await as(ctx, writer).post(`/api/crm/leads/${id}/claim`)).statusCode).toBe(404);
      await settle();
      for (const member of [ana, ben]) {
        const inbox = (await as(ctx, member).get('/api/notifications?limit=100')).json().data;
        expect(inbox.some((n: { kind: string; record: { id: string } | null }) => n.kind === 'lead_to_claim' && n.record?.id === id)).toBe(true);
      }
      // Someone who reads every lead but is no member: 403.
      expect((await as(ctx, admin).post(`/api/crm/leads/${id}/claim`)).statusCode).toBe(403);
      const claimed = await as(ctx, ana).post(`/api/crm/leads/${id}/claim`);
      expect(claimed.statusCode, claimed.body).toBe(200);
      expect(claimed.json()).toEqual({ message: 'Lead claimed' });
      expect(await assigneeOf(id)).toBe(ana.id);
      const again = await as(ctx, ben).post(`/api/crm/leads/${id}/claim`);
      expect(again.statusCode).toBe(409);
      expect(again.json().message).toBe('This lead has already been claimed');
      const [after] = await ctx.database.db.select().from(leadRouting).where(eq(leadRouting.lead_id, id));
      expect(after).toMatchObject({ claim_deadline: null });
      expect(after.assigned_at).not.toBeNull();
      const timeline = (await as(ctx, ana).get(`/api/crm/leads/${id}/timeline?type=assigned`)).json().data;
      expect(timeline[0].payload).toMatchObject({ to: { id: ana.id }, how: 'claim' });
    } finally {
      await setScope(ana, 'all');
      await setScope(writer, 'all');
    }
  });

  test('joining or leaving a pond changes what an own-scope agent sees from the next request on', async () => {
    const [ana, ben] = agents;
    await setScope(ben, 'own');
    try {
      const pond = await group({ name: 'Shared pond', kind: 'pond', members: [ana.id] });
      await rule({ name: 'Pond it', assign_group_id: pond });
      const id = await lead();
      expect((await as(ctx, ben).get(`/api/crm/leads/${id}`)).statusCode).toBe(404);
      expect((await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${pond}`, { members: [ana.id, ben.id] })).statusCode).toBe(200);
      expect((await as(ctx, ben).get(`/api/crm/leads/${id}`)).statusCode).toBe(200);
      expect((await as(ctx, ben).get('/api/crm/leads?limit=100')).json().data.map((l: { id: string }) => l.id)).toContain(id);
      expect((await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${pond}`, { members: [ana.id] })).statusCode).toBe(200);
      expect((await as(ctx, ben).get(`/api/crm/leads/${id}`)).statusCode).toBe(404);
      expect((await as(ctx, ben).get('/api/crm/leads?limit=100')).json().data.map((l: { id: string }) => l.id)).not.toContain(id);
      expect((await as(ctx, ben).post(`/api/crm/leads/${id}/claim`)).statusCode).toBe(404);
    } finally {
      await setScope(ben, 'all');
    }
  });

  test('five members claim at once: exactly one wins, four get 409', async () => {
    const ftc = await group({ name: 'Race', kind: 'first_to_claim', claim_minutes: 5, fallback_user_id: agents[0].id, members: agents.map((a) => a.id) });
    await rule({ name: 'Race them', assign_group_id: ftc });
    const id = await lead();
    const answers = await Promise.all(agents.map((agent) => as(ctx, agent).post(`/api/crm/leads/${id}/claim`)));
    const codes = answers.map((res) => res.statusCode).sort();
    expect(codes, answers.map((res) => res.body).join('\n')).toEqual([200, 409, 409, 409, 409]);
    const winner = agents[answers.findIndex((res) => res.statusCode === 200)];
    expect(await assigneeOf(id)).toBe(winner.id);
    for (const res of answers.filter((r) => r.statusCode === 409)) expect(res.json().message).toBe('This lead has already been claimed');
  });

  test('unclaimed in time: the sweep hands it to the fallback user, or into the fallback group', async () => {
    const pond = await group({ name: 'Overflow pond', kind: 'pond', members: [agents[3].id] });
    const ftc = await group({ name: 'Quick', kind: 'first_to_claim', claim_minutes: 5, fallback_user_id: agents[2].id, members: [agents[0].id, agents[1].id] });
    await rule({ name: 'Quick ones', assign_group_id: ftc });
    const id = await lead();
    expect((await sweep()).json().swept.claims_expired).toBe(0);
    expect(await assigneeOf(id)).toBeNull();
    clock.now = () => new Date(realNow().getTime() + 6 * 60_000);
    const swept = await sweep();
    expect(swept.statusCode, swept.body).toBe(200);
    expect(swept.json()).toEqual({ swept: { claims_expired: 1, speed_to_lead: 0, follow_ups_due: 0 }, message: 'Lead flow swept: 1 lead moved' });
    expect(await assigneeOf(id)).toBe(agents[2].id);
    const timeline = (await as(ctx, admin).get(`/api/crm/leads/${id}/timeline?type=assigned`)).json().data;
    expect(timeline[0].payload.how).toBe('fallback');
    clock.now = realNow;
    // Into a pond instead.
    expect((await as(ctx, admin).patch(`/api/crm/lead-flow/groups/${ftc}`, { fallback_user_id: null, fallback_group_id: pond })).statusCode).toBe(200);
    const second = await lead();
    clock.now = () => new Date(realNow().getTime() + 6 * 60_000);
    expect((await sweep()).json().swept.claims_expired).toBe(1);
    expect(await assigneeOf(second)).toBeNull();
    expect((await as(ctx, reader).get(`/api/crm/lead-flow/groups/${pond}`)).json().waiting).toBe(1);
    expect((await as(ctx, agents[3]).post(`/api/crm/leads/${second}/claim`)).statusCode).toBe(200);
    expect((await sweep()).statusCode).toBe(200);
    expect((await as(ctx, admin).post('/api/cron/lead-flow')).statusCode).toBe(401);
  });

  test('a pond keeps its leads for its members to claim; assigning one by hand takes it out of the pond', async () => {
    const pond = await group({ name: 'Pond', kind: 'pond', members: [agents[0].id, agents[1].id] });
    await rule({ name: 'Into the pond', assign_group_id: pond });
    const first = await lead();
    const second = await lead();
    expect((await as(ctx, reader).get(`/api/crm/lead-flow/groups/${pond}`)).json().waiting).toBe(2);
    // No deadline: the sweep leaves a pond alone.
    clock.now = () => new Date(realNow().getTime() + 60 * 60_000);
    expect((await sweep()).json().swept.claims_expired).toBe(0);
    expect((await as(ctx, agents[1]).post(`/api/crm/leads/${first}/claim`)).statusCode).toBe(200);
    expect((await as(ctx, admin).patch(`/api/crm/leads/${second}`, { assigned_to: agents[2].id })).statusCode).toBe(200);
    expect((await as(ctx, reader).get(`/api/crm/lead-flow/groups/${pond}`)).json().waiting).toBe(0);
    expect((await as(ctx, agents[0]).post(`/api/crm/leads/${second}/claim`)).statusCode).toBe(409);
  });
});

describe('where leads arrive', () => {
  afterEach(clearFlow);

  const inquiry = (n: number | string, extra: Record<string, unknown> = {}) =>
    as(ctx, 'unused').post('/api/public/inquiries', { name: `Visitor Number${n}`, email: `visitor-${n}-${Date.now()}@example.com`, subject: 'Azure', message: 'Hello', ...extra });

  test('a website inquiry makes a routed lead, or links the person\'s newest lead without routing it again', async () => {
    await rule({ name: 'Website', channel: 'website', assign_user_id: agents[0].id });
    await rule({ name: 'Default', is_default: true, assign_user_id: agents[1].id });
    const sent = await inquiry('a', { email: 'Rosa.Cruz@Example.com', phone: '+63 917 555 0001' });
    expect(sent.statusCode, sent.body).toBe(201);
    const first = (await as(ctx, admin).get(`/api/crm/inquiries/${sent.json().id}`)).json();
    expect(first.lead_id).toEqual(expect.any(String));
    const made = (await as(ctx, admin).get(`/api/crm/leads/${first.lead_id}`)).json();
    expect(made).toMatchObject({ first_name: 'Visitor', last_name: 'Numbera', email: 'rosa.cruz@example.com', source: 'website', interest: 'Azure', assigned_to: { id: agents[0].id } });
    // The same person again, by phone digits: linked, not routed again.
    expect((await as(ctx, admin).patch(`/api/crm/leads/${made.id}`, { assigned_to: agents[2].id })).statusCode).toBe(200);
    const again = await inquiry('b', { phone: '+63 (917) 555-0001' });
    expect(again.statusCode).toBe(201);
    expect((await as(ctx, admin).get(`/api/crm/inquiries/${again.json().id}`)).json().lead_id).toBe(made.id);
    expect(await assigneeOf(made.id)).toBe(agents[2].id);
  });

  test('an inquiry turned into a lead without an assignee is routed; with one, it is theirs', async () => {
    await rule({ name: 'Default', is_default: true, assign_user_id: agents[3].id });
    const first = await make.inquiry(ctx, {}, admin);
    const routed = await as(ctx, admin).post(`/api/crm/inquiries/${first.id}/convert`, { assigned_to: null, first_name: 'Ina', last_name: 'Reyes' });
    expect(routed.statusCode, routed.body).toBe(201);
    expect(await assigneeOf(routed.json().id)).toBe(agents[3].id);
    const second = await make.inquiry(ctx, {}, admin);
    const kept = await as(ctx, admin).post(`/api/crm/inquiries/${second.id}/convert`, { first_name: 'Ina', last_name: 'Cruz' });
    expect(kept.statusCode, kept.body).toBe(201);
    expect(await assigneeOf(kept.json().id)).toBe(admin.id);
  });

  test('thirty website inquiries at once into a round robin of three: exactly ten each', async () => {
    const members = agents.slice(0, 3);
    const rr = await group({ name: 'Fair', kind: 'round_robin', members: members.map((m) => m.id) });
    await rule({ name: 'Website to Fair', channel: 'website', assign_group_id: rr });
    const sent = await Promise.all(Array.from({ length: 30 }, (_, i) => inquiry(`fair${i}`, { name: `Fairness Guest${i}` })));
    expect(sent.map((res) => res.statusCode)).toEqual(Array(30).fill(201));
    const counts = await Promise.all(members.map(async (m) => (await as(ctx, admin).get(`/api/crm/leads?assigned_to=${m.id}&q=Fairness&limit=1`)).json().pagination.total));
    expect(counts).toEqual([10, 10, 10]);
  });
});
