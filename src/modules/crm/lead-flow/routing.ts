import { and, asc, eq, sql } from 'drizzle-orm';
import { clock } from '../../../clock.js';
import type { Work } from '../../../data/mutations.js';
import type { Executor } from '../../../db/client.js';
import { type LeadChannel, leadFlowRules, leadGroupMembers, leadGroups, leadRouting, leads, projects } from '../../../db/schema/index.js';
import { rowsOf } from '../../../webhooks/record.js';
import { leadResource } from '../lead-resource.js';
import { noticeAssignment, notify, type NoticeServices } from '../notices.js';
import { afterAssignment, type Assignment } from './after-assignment.js';

/**
 * The routing engine: who a new lead goes to. The first rule whose conditions match names a user or a group; a round
 * robin hands the lead to its next eligible member, a first-to-claim group or a pond keeps it in its pool for its
 * members. Everything happens in the caller's transaction (the lead's creation), so a crash loses no lead and assigns
 * none twice; people are told after the commit.
 */

export type LeadRow = typeof leads.$inferSelect;
/** How a lead came to its assignee (the `lead.assigned` event's `how`, the timeline's). */
export const ASSIGNED_HOW = ['rule', 'claim', 'fallback', 'manual', 'speed_limit'] as const;
export type AssignedHow = (typeof ASSIGNED_HOW)[number];
type RuleRow = typeof leadFlowRules.$inferSelect;
type GroupRow = typeof leadGroups.$inferSelect;
export type RuleRef = Assignment['rule'];

const ruleRef = (rule: RuleRow | null): RuleRef => (rule ? { id: rule.id, action_plan_id: rule.action_plan_id, speed_limit_minutes: rule.speed_limit_minutes } : null);

/**
 * Whether the user `id` names may be handed leads now: not deleted, with crm write, and not away (no `lead_flow_away`
 * row, or one whose `until` has passed).
 */
export const eligible = (id: unknown, now: Date) => sql<boolean>`(exists (select 1 from users u where u.id = ${id} and u.deleted_at is null)
  and exists (select 1 from module_access a where a.user_id = ${id} and a.module = 'crm' and a.can_write)
  and not exists (select 1 from lead_flow_away w where w.user_id = ${id} and (w.until is null or w.until > ${now})))`;

/**
 * A member's user id inside a select list's subquery: the table named, as drizzle writes a select list's columns
 * without it (the subqueries' own tables would take it for theirs).
 */
export const memberColumn = sql`${leadGroupMembers}.user_id`;

/** Whether `userId` may be handed leads now (see `eligible`). */
export async function isEligible(db: Executor, userId: string, now = clock.now()): Promise<boolean> {
  const [row] = rowsOf<{ ok: boolean }>(await db.execute(sql`select ${eligible(sql`${userId}::uuid`, now)} as ok`));
  return !!row?.ok;
}

/** A group's members in turn order, each with whether they may be handed a lead now. */
export async function membersOf(db: Executor, groupId: string, now = clock.now()) {
  return db.select({ user_id: leadGroupMembers.user_id, position: leadGroupMembers.position, eligible: eligible(memberColumn, now) })
    .from(leadGroupMembers).where(eq(leadGroupMembers.group_id, groupId)).orderBy(asc(leadGroupMembers.position));
}

/**
 * The rules matching a lead that arrived by `channel`, in the order they are tried: by position, the default last. A
 * rule's project matches when the lead's `interest` contains the project's name (case-insensitive).
 */
async function matchingRules(db: Executor, lead: LeadRow, channel: LeadChannel): Promise<RuleRow[]> {
  const interest = (lead.interest ?? '').toLowerCase();
  const rows = await db.select({ rule: leadFlowRules }).from(leadFlowRules).leftJoin(projects, eq(projects.id, leadFlowRules.project_id))
    .where(and(
      sql`(${leadFlowRules.channel} is null or ${leadFlowRules.channel} = ${channel})`,
      sql`(${leadFlowRules.source} is null or ${leadFlowRules.source} = ${lead.source})`,
      sql`(${leadFlowRules.project_id} is null or strpos(${interest}, lower(${projects.name})) > 0)`,
    ))
    .orderBy(asc(leadFlowRules.is_default), asc(leadFlowRules.position));
  return rows.map((row) => row.rule);
}

/** Whether any rule exists: with none, lead flow is off and leads arrive as they always did. */
export const ANY_RULE = sql`exists (select 1 from ${leadFlowRules})`;

export async function hasRules(db: Executor): Promise<boolean> {
  return (await db.select({ id: leadFlowRules.id }).from(leadFlowRules).limit(1)).length > 0;
}

/** The transaction's work and what the notices after its commit need. */
export type Flow = { work: Work; services: NoticeServices };

/**
 * Routes a new lead without an assignee that arrived by `channel`, in the caller's transaction: the first matching
 * rule that can place it does. A rule naming a user who may no longer be handed leads (deleted since, lost crm write)
 * is passed over for the next. A group that can place it nowhere (no eligible member, no usable fallback) leaves it
 * unassigned in no pool (logged). Without any matching rule nothing is written.
 */
export async function routeLead(flow: Flow, lead: LeadRow, channel: LeadChannel): Promise<void> {
  const rules = await matchingRules(flow.work.tx, lead, channel);
  for (const rule of rules) {
    const now = clock.now();
    if (rule.assign_user_id) {
      if (!(await isEligible(flow.work.tx, rule.assign_user_id, now))) continue;
      await assignLead(flow, lead, rule.assign_user_id, 'rule', { rule, channel });
      return;
    }
    const placed = await placeInGroup(flow, lead, rule.assign_group_id!, { rule, channel, how: 'rule' });
    if (!placed) {
      await writeRouting(flow.work, lead.id, { rule, channel, claimDeadline: null });
      flow.services.log.warn({ lead: lead.id, rule: rule.id, group: rule.assign_group_id }, 'lead flow: no eligible member and no usable fallback; the lead stays unassigned');
    }
    return;
  }
}

type Placement = { rule: RuleRow | null; channel?: LeadChannel; how: AssignedHow };

/**
 * Hands a lead to a group, under the group row's lock (so concurrent arrivals on any instance take turns exactly):
 * a round robin's next eligible member, or a first-to-claim group's or a pond's pool; when it can do neither, its
 * fallback (a user, or another group). False when nobody could be found (a loop of fallbacks ends there too).
 */
export async function placeInGroup(flow: Flow, lead: LeadRow, groupId: string, placement: Placement, visited = new Set<string>()): Promise<boolean> {
  if (visited.has(groupId)) return false;
  visited.add(groupId);
  const { tx } = flow.work;
  const [group] = rowsOf<GroupRow>(await tx.execute(sql`select id, name, kind, claim_minutes, fallback_user_id, fallback_group_id, next_position
    from lead_groups where id = ${groupId} for no key update`));
  if (!group) return false;
  const now = clock.now();
  const members = await membersOf(tx, group.id, now);
  const ready = members.filter((member) => member.eligible);
  if (group.kind === 'round_robin' && ready.length) {
    // The first eligible member from the cursor on, wrapping round.
    const next = ready.find((member) => member.position >= group.next_position) ?? ready[0];
    await tx.update(leadGroups).set({ next_position: next.position + 1 }).where(eq(leadGroups.id, group.id));
    await assignLead(flow, lead, next.user_id, placement.how, placement);
    return true;
  }
  if (group.kind === 'pond' || (group.kind === 'first_to_claim' && ready.length)) {
    await poolLead(flow, lead, group, ready.map((member) => member.user_id), placement);
    return true;
  }
  const fallback = { ...placement, how: 'fallback' as const };
  if (group.fallback_user_id && (await isEligible(tx, group.fallback_user_id, now))) {
    await assignLead(flow, lead, group.fallback_user_id, 'fallback', fallback);
    return true;
  }
  if (group.fallback_group_id) return placeInGroup(flow, lead, group.fallback_group_id, fallback, visited);
  return false;
}

/** The lead's routing row: created on its first routing, brought up to date after (the rule kept unless a new one routed it). */
async function writeRouting(work: Work, leadId: string, values: { rule: RuleRow | null; channel?: LeadChannel; claimDeadline?: Date | null; assignedAt?: Date }) {
  const now = clock.now();
  await work.tx.insert(leadRouting).values({
    lead_id: leadId, rule_id: values.rule?.id ?? null, channel: values.channel ?? 'api',
    claim_deadline: values.claimDeadline ?? null, assigned_at: values.assignedAt ?? null,
  }).onConflictDoUpdate({
    target: leadRouting.lead_id,
    set: {
      rule_id: values.rule ? values.rule.id : sql`${leadRouting.rule_id}`,
      claim_deadline: values.claimDeadline ?? null,
      ...(values.assignedAt ? { assigned_at: values.assignedAt } : {}),
      updated_at: now,
    },
  });
}

/** Puts a lead in a first-to-claim group's or a pond's pool; its eligible members hear of it after the commit. */
async function poolLead(flow: Flow, lead: LeadRow, group: GroupRow, memberIds: string[], placement: Placement) {
  const { work, services } = flow;
  const deadline = group.kind === 'first_to_claim' ? new Date(clock.now().getTime() + (group.claim_minutes ?? 5) * 60_000) : null;
  await work.update(leadResource, lead.id, { pool_id: group.id, assigned_to: null });
  await writeRouting(work, lead.id, { rule: placement.rule, channel: placement.channel, claimDeadline: deadline });
  const who = `${lead.first_name} ${lead.last_name}`.trim();
  const body = group.kind === 'first_to_claim'
    ? `The first member of ${group.name} to claim it gets it (within ${group.claim_minutes} minutes).`
    : `It waits in ${group.name}: any member may claim it.`;
  work.onCommit(() => {
    for (const userId of memberIds) {
      const told = notify(services, { userId, kind: 'lead_to_claim', title: `Lead to claim: ${who}`, body, record: { resource: leadResource, id: lead.id } })
        .catch((err: unknown) => services.log.error({ err, lead: lead.id }, 'staff notice not sent'));
      services.background?.track(told);
    }
  });
}

/**
 * Assigns a lead to `assigneeId` (out of any pool, its claim deadline cleared), audited with how it happened, and
 * records the assignment (`recordAssignment`); the assignee hears of it after the commit.
 */
export async function assignLead(flow: Flow, lead: LeadRow, assigneeId: string, how: AssignedHow, placement: { rule: RuleRow | null; channel?: LeadChannel }) {
  const { work, services } = flow;
  const [current] = await work.tx.select().from(leads).where(eq(leads.id, lead.id)).for('update');
  const [row] = await work.tx.update(leads).set({ assigned_to: assigneeId, pool_id: null }).where(eq(leads.id, lead.id)).returning();
  // `assigned_how` is no column: the lead's history and timeline say how it came to its assignee.
  await work.audit({ action: 'update', resource: leadResource, id: lead.id, before: { ...current, assigned_how: null }, after: { ...row, assigned_how: how } });
  await recordAssignment(work, { lead: row, previous: current.assigned_to, how, rule: placement.rule, channel: placement.channel });
  work.onCommit(() => noticeAssignment(services, row, assigneeId, work.actor.userId));
}

/**
 * What every assignment writes besides the lead itself, in its transaction: the routing row (`assigned_at`, no claim
 * deadline), the `lead.assigned` webhook event, and `afterAssignment` (action plans, speed to lead). A person's change of
 * a lead's assignee comes here too (`how` manual).
 */
export async function recordAssignment(work: Work, assignment: { lead: LeadRow; previous: string | null; how: AssignedHow; rule: RuleRow | null; channel?: LeadChannel }) {
  const { lead, previous, how, rule } = assignment;
  if (!lead.assigned_to) return;
  const at = clock.now();
  await writeRouting(work, lead.id, { rule, channel: assignment.channel, claimDeadline: null, assignedAt: at });
  work.emit('lead.assigned', { lead_id: lead.id, assigned_to: lead.assigned_to, previous, how });
  await afterAssignment(work, { leadId: lead.id, assigneeId: lead.assigned_to, previousAssigneeId: previous, rule: how === 'manual' || how === 'claim' ? null : ruleRef(rule), at });
}

/** The rule that routed a lead (for a later fallback's assignment), or null. */
export async function routingRuleOf(db: Executor, leadId: string): Promise<RuleRow | null> {
  const [row] = await db.select({ rule: leadFlowRules }).from(leadRouting).innerJoin(leadFlowRules, eq(leadFlowRules.id, leadRouting.rule_id)).where(eq(leadRouting.lead_id, leadId));
  return row?.rule ?? null;
}
