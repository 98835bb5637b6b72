import { and, eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { groupCounts, holdCreates, queuedCreates } from '../src/data/create-group.js';
import { activityLogs, leadFlowRules, leadRouting, leads, webhookDeliveries, webhookEndpoints } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, PATIENCE_MS, type TestContext, waitFor } from './helpers.js';

// Creates arriving together share one statement and one commit (src/data/create-group.ts). What a caller sees must be
// exactly what a create on its own gives: its row, its activity log, its webhook deliveries, its own error.

let ctx: TestContext;
let agent: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  agent = await createUser(ctx, { crm: 'rwd' });
});
afterAll(async () => ctx?.close());

/** Sends the creates while writing is held, then lets them go together once all of them wait (not left to timing). */
async function together<T>(count: number, send: (n: number) => Promise<T>): Promise<T[]> {
  const release = holdCreates(ctx.database.db);
  try {
    const replies = Array.from({ length: count }, (_, n) => send(n));
    await waitFor(() => queuedCreates(ctx.database.db) === count, PATIENCE_MS, `${count} creates to wait`);
    release();
    return await Promise.all(replies);
  } finally {
    release();
  }
}

const body = (n: number, last = `Group-${n}`) => ({ first_name: `Lead ${n}`, last_name: last, email: `lead${n}@example.com`, source: 'referral' });

test('40 creates at once: each answers its own row, audited once as its caller, all in one statement', async () => {
  const before = { ...groupCounts(ctx.database.db) };
  const replies = await together(40, (n) => as(ctx, agent).post('/api/crm/leads', body(n)));
  expect(replies.map((r) => r.statusCode)).toEqual(Array(40).fill(201));
  // The create's answer (SPEC: id and message) names its own row: read back through the API, each is what was sent.
  const ids = replies.map((r) => r.json().id as string);
  expect(new Set(ids).size).toBe(40);
  for (const [n, id] of ids.entries()) {
    expect((await as(ctx, agent).get(`/api/crm/leads/${id}`)).json()).toMatchObject({ id, first_name: `Lead ${n}`, last_name: `Group-${n}`, email: `lead${n}@example.com`, source: 'referral', status: 'new' });
  }
  const logs = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'leads'), inArray(activityLogs.resource_id, ids)));
  expect(logs).toHaveLength(40);
  for (const log of logs) {
    expect(log).toMatchObject({ action: 'create', module: 'crm', user_id: agent.id });
    const n = ids.indexOf(log.resource_id);
    expect((log.changes as { after: Record<string, unknown> }).after).toMatchObject({ id: log.resource_id, last_name: `Group-${n}`, email: `lead${n}@example.com` });
  }

  const after = groupCounts(ctx.database.db);
  // One statement: all 40 waited together, and a group holds up to 100.
  expect(after.rows - before.rows).toBe(40);
  expect(after.statements - before.statements).toBe(1);
});

test('a group with webhook subscribers records one delivery per create and endpoint', async () => {
  const [endpoint] = await ctx.database.db.insert(webhookEndpoints)
    .values({ url: 'http://203.0.113.9/hook', events: ['lead.created'], secret: `whsec_${Buffer.alloc(32).toString('base64')}`, enabled: true }).returning();
  try {
    const before = { ...groupCounts(ctx.database.db) };
    const replies = await together(20, (n) => as(ctx, agent).post('/api/crm/leads', body(100 + n)));
    expect(replies.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
    expect(groupCounts(ctx.database.db).statements - before.statements).toBe(1);
    const deliveries = await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpoint_id, endpoint.id));
    expect(deliveries).toHaveLength(20);
    const ids = new Set(replies.map((r) => r.json().id));
    for (const delivery of deliveries) {
      const payload = delivery.payload as { type: string; data: { id: string; resource: string; after: Record<string, unknown> } };
      expect(payload.type).toBe('lead.created');
      expect(ids.has(payload.data.id)).toBe(true);
      expect(payload.data.after.id).toBe(payload.data.id);
      expect(delivery.event_type).toBe('lead.created');
    }
  } finally {
    await ctx.database.db.delete(webhookDeliveries).where(eq(webhookDeliveries.endpoint_id, endpoint.id));
    await ctx.database.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
  }
});

test('a group PostgreSQL refuses is written one by one: the create that takes a taken key alone gets the 409', async () => {
  // A unique key for this test only: two creates of the same name in one group make the group's statement fail.
  await ctx.database.db.execute(sql`create unique index test_group_solo on leads (last_name) where last_name like 'Solo-%'`);
  try {
    const before = { ...groupCounts(ctx.database.db) };
    const bodies = Array.from({ length: 24 }, (_, n) => body(200 + n, n === 7 || n === 15 ? 'Solo-1' : `Solo-${n + 100}`));
    const replies = await together(bodies.length, (n) => as(ctx, agent).post('/api/crm/leads', bodies[n]));
    const statuses = replies.map((r) => r.statusCode);
    // Exactly one of the two same-named creates is refused, with the contract's conflict body; every other is created.
    expect([statuses[7], statuses[15]].sort()).toEqual([201, 409]);
    const refused = replies[statuses[7] === 409 ? 7 : 15];
    expect(refused.json()).toMatchObject({ error: 'Conflict', message: expect.stringMatching(/unique/i) });
    statuses.forEach((status, n) => n !== 7 && n !== 15 && expect(status, `create ${n}`).toBe(201));

    const names = bodies.map((b) => b.last_name);
    const rows = await ctx.database.db.select().from(leads).where(inArray(leads.last_name, names));
    expect(rows).toHaveLength(23);
    const logs = await ctx.database.db.select().from(activityLogs).where(inArray(activityLogs.resource_id, rows.map((r) => r.id)));
    expect(logs).toHaveLength(23);
    // The whole group was refused once, then each of its 24 creates was written alone.
    expect(groupCounts(ctx.database.db).retried - before.retried).toBe(24);
  } finally {
    await ctx.database.db.execute(sql`drop index test_group_solo`);
  }
});

test('a lead-flow rule made while creates wait (by plain SQL, as another instance would): none is written plain, every one is routed by it', async () => {
  const db = ctx.database.db;
  const release = holdCreates(db);
  let ruleId: string | undefined;
  try {
    const before = { ...groupCounts(db) };
    const replies = Array.from({ length: 12 }, (_, n) => as(ctx, agent).post('/api/crm/leads', body(300 + n, `Ruled-${n}`)));
    await waitFor(() => queuedCreates(db) === 12, PATIENCE_MS, '12 creates to wait');
    // The plain creates checked for rules before they waited (none then); the rule comes now, before their statement.
    [{ id: ruleId }] = await db.insert(leadFlowRules).values({ name: 'Made while creates wait', position: 950, assign_user_id: agent.id }).returning();
    release();
    const answers = await Promise.all(replies);
    expect(answers.map((r) => r.statusCode)).toEqual(Array(12).fill(201));
    const ids = answers.map((r) => r.json().id as string);
    const rows = await db.select().from(leads).where(inArray(leads.id, ids));
    expect(rows.map((row) => row.assigned_to)).toEqual(Array(12).fill(agent.id));
    const routed = await db.select().from(leadRouting).where(inArray(leadRouting.lead_id, ids));
    expect(routed.map((r) => r.rule_id)).toEqual(Array(12).fill(ruleId));
    // Each audited once (its create), none by the group's statement, which wrote nothing.
    const created = await db.select().from(activityLogs).where(and(eq(activityLogs.action, 'create'), inArray(activityLogs.resource_id, ids)));
    expect(created).toHaveLength(12);
    expect(groupCounts(db).rows - before.rows).toBe(0);

    // The rule gone, the next create is the plain one-statement create again, unassigned.
    await db.delete(leadRouting).where(inArray(leadRouting.lead_id, ids));
    await db.delete(leadFlowRules).where(eq(leadFlowRules.id, ruleId!));
    ruleId = undefined;
    const plain = await as(ctx, agent).post('/api/crm/leads', body(399, 'Plain-again'));
    expect(plain.statusCode).toBe(201);
    expect((await db.select().from(leads).where(eq(leads.id, plain.json().id)))[0].assigned_to).toBeNull();
    expect(groupCounts(db).rows - before.rows).toBe(1);
  } finally {
    release();
    if (ruleId) {
      await db.delete(leadRouting).where(eq(leadRouting.rule_id, ruleId));
      await db.delete(leadFlowRules).where(eq(leadFlowRules.id, ruleId));
    }
  }
});
