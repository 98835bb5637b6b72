import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { departments, leadFlowRules, leadGroupMembers, leadGroups, leadRouting, leads, users } from '../../db/schema/index.js';
import { workSchedule } from '../../modules/crm/lead-flow/schedule.js';
import { addWorkingMinutes } from '../../modules/crm/lead-flow/working-time.js';
import type { Api } from './api.js';
import type { Random } from './random.js';

/**
 * Lead flow in the demo: the action plans (through the API), groups and rules, the Sales department's manager, and
 * the state the newest leads are in: some waiting to be claimed or in the pond, some late for their first contact,
 * some with a plan running. Groups, rules, managers and routing rows are written through the schema until their own
 * API is in this build.
 */

export const DEMO_PLANS = [
  {
    name: 'New website lead',
    steps: [
      { kind: 'call', title: 'Call now: thank them and ask what they are looking for', offset_amount: 0, offset_unit: 'hours' },
      { kind: 'email', title: 'E-mail the brochure and the price list', offset_amount: 1, offset_unit: 'days' },
      { kind: 'call', title: 'Call again about the payment terms', offset_amount: 3, offset_unit: 'days' },
      { kind: 'site_visit', title: 'Invite them to a site visit', offset_amount: 7, offset_unit: 'days' },
    ],
  },
  {
    name: 'Open house follow-up',
    steps: [
      { kind: 'email', title: 'Thank them for coming to the open house', offset_amount: 2, offset_unit: 'hours' },
      { kind: 'call', title: 'Call about the units they liked', offset_amount: 1, offset_unit: 'days' },
      { kind: 'site_visit', title: 'Offer a second, private visit', offset_amount: 5, offset_unit: 'days' },
    ],
  },
  {
    name: 'Re-engage a quiet lead',
    active_statuses: ['contacted', 'qualified'],
    steps: [
      { kind: 'email', title: 'Send the newest promo', offset_amount: 0, offset_unit: 'hours' },
      { kind: 'call', title: 'Check in: still looking?', offset_amount: 3, offset_unit: 'days' },
      { kind: 'task', title: 'Decide: keep or mark lost', offset_amount: 10, offset_unit: 'days' },
    ],
  },
];

type Lead = { id: string; when: Date; status: string; assignee: string | null };

export async function seedLeadFlow(ctx: { api: Api; database: Database; random: Random; adminId: string }, all: Lead[], seeded: Record<string, number>) {
  const { db } = ctx.database;
  const staff = new Map((await db.select({ id: users.id, email: users.email }).from(users)).map((u) => [u.email, u.id]));
  const maria = staff.get('maria.santos@example.com')!;
  const paolo = staff.get('paolo.reyes@example.com')!;
  const jose = staff.get('jose.villanueva@example.com')!;
  await db.update(departments).set({ manager_id: paolo }).where(eq(departments.name, 'Sales'));

  const plans: string[] = [];
  for (const plan of DEMO_PLANS) plans.push((await ctx.api.post('/api/crm/lead-flow/plans', plan)).id);

  const [roundRobin] = await db.insert(leadGroups).values({ name: 'Sales agents', kind: 'round_robin' }).returning();
  const [firstToClaim] = await db.insert(leadGroups).values({ name: 'Website leads, first to claim', kind: 'first_to_claim', claim_minutes: 10, fallback_group_id: roundRobin.id }).returning();
  const [pond] = await db.insert(leadGroups).values({ name: 'Open house leads', kind: 'pond' }).returning();
  await db.insert(leadGroupMembers).values([
    { group_id: roundRobin.id, user_id: maria, position: 0 }, { group_id: roundRobin.id, user_id: paolo, position: 1 },
    { group_id: firstToClaim.id, user_id: maria, position: 0 }, { group_id: firstToClaim.id, user_id: paolo, position: 1 }, { group_id: firstToClaim.id, user_id: jose, position: 2 },
    { group_id: pond.id, user_id: maria, position: 0 }, { group_id: pond.id, user_id: paolo, position: 1 }, { group_id: pond.id, user_id: jose, position: 2 },
  ]);
  const [website, imported, fallback] = await db.insert(leadFlowRules).values([
    { name: 'Website leads: first to claim', position: 1, channel: 'website', assign_group_id: firstToClaim.id, action_plan_id: plans[0], speed_limit_minutes: 15, on_speed_limit: 'reassign' },
    { name: 'Imported leads: the open house pond', position: 2, channel: 'import', assign_group_id: pond.id, action_plan_id: plans[1] },
    { name: 'Everything else: round robin', position: 3, is_default: true, assign_group_id: roundRobin.id, speed_limit_minutes: 60, on_speed_limit: 'remind' },
  ]).returning();
  seeded['lead flow rules'] = 3;
  seeded['lead groups'] = 3;
  seeded['action plans'] = plans.length;

  // The newest leads nobody has contacted (an assignee's lead has its routing row already, without a first contact).
  const ids = all.map((lead) => lead.id);
  const untouched = new Set((await db.select({ id: leads.id }).from(leads).leftJoin(leadRouting, eq(leadRouting.lead_id, leads.id))
    .where(and(inArray(leads.id, ids), isNull(leadRouting.first_contact_at), eq(leads.status, 'new')))).map((row) => row.id));
  const routed = (values: typeof leadRouting.$inferInsert) => db.insert(leadRouting).values(values)
    .onConflictDoUpdate({ target: leadRouting.lead_id, set: { rule_id: values.rule_id, channel: values.channel, claim_deadline: values.claim_deadline ?? null, assigned_at: values.assigned_at ?? null, speed_due_at: values.speed_due_at ?? null } });
  const fresh = all.filter((lead) => untouched.has(lead.id)).reverse();
  const now = Date.now();
  let pooled = 0;
  let late = 0;
  let running = 0;
  for (const [i, lead] of fresh.entries()) {
    if (!lead.assignee) {
      // Unassigned: waiting in the first-to-claim group (the newest, still within its minutes) or in the pond.
      const claiming = pooled % 2 === 0;
      await db.update(leads).set({ pool_id: claiming ? firstToClaim.id : pond.id }).where(eq(leads.id, lead.id));
      await routed({
        lead_id: lead.id, rule_id: claiming ? website.id : imported.id, channel: claiming ? 'website' : 'import',
        claim_deadline: claiming ? new Date(now + (10 - (pooled % 5) * 2) * 60_000) : null,
      });
      pooled++;
      continue;
    }
    // Assigned and not contacted yet: routed by the website rule (15 working minutes) or the default one (60).
    const rule = i % 2 ? website : fallback;
    const due = addWorkingMinutes(lead.when, rule.speed_limit_minutes!, workSchedule.current);
    await routed({ lead_id: lead.id, rule_id: rule.id, channel: rule === website ? 'website' : 'api', assigned_at: lead.when, speed_due_at: due });
    if (due.getTime() < now) late++;
    if (running < 4) {
      await ctx.api.post(`/api/crm/leads/${lead.id}/plans`, { plan_id: plans[running % 2] });
      running++;
    }
  }
  seeded['leads waiting to be claimed'] = pooled;
  seeded['leads late for a first contact'] = late;
  seeded['action plans running'] = running;
}
