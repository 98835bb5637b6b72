import { and, asc, eq, isNotNull, isNull, lt, lte, sql } from 'drizzle-orm';
import { clock } from '../../../clock.js';
import { SYSTEM } from '../../../data/actor.js';
import { audited, type Work } from '../../../data/mutations.js';
import type { Tx } from '../../../db/client.js';
import { departments, leadFlowRules, leadGroupMembers, leadGroups, leadRouting, leads, users } from '../../../db/schema/index.js';
import { leadResource } from '../lead-resource.js';
import { notify, type NoticeServices } from '../notices.js';
import { assignLead, eligible, isEligible, memberColumn, routingRuleOf } from './routing.js';
import { workSchedule } from './schedule.js';
import { addWorkingMinutes } from './working-time.js';

/**
 * Speed to lead: a rule's limit (in working minutes) for the first contact of a lead it routed. When it passes with
 * nobody having called, e-mailed or met the client: the assignee is reminded; one more limit later, their
 * department's manager is told; with `on_speed_limit: 'reassign'`, one more limit later the lead goes to the rule's
 * group's fallback. Each step happens once across every instance: it is a conditional update of the lead's
 * `speed_stage` (from n to n + 1), and only the sweep whose update changed the row acts on it.
 */

const STAGE = { reminded: 1, managerTold: 2, reassigned: 3 } as const;

type Late = {
  lead_id: string; first_name: string; last_name: string; assigned_to: string; speed_due_at: Date; speed_stage: number;
  limit: number | null; on_speed_limit: 'remind' | 'reassign' | null;
};

/** Moves the lead's stage from `from` to `from + 1` (false: another sweep did, or someone contacted the lead meanwhile). */
async function advance(tx: Tx | NoticeServices['database']['db'], leadId: string, from: number): Promise<boolean> {
  const moved = await tx.update(leadRouting).set({ speed_stage: from + 1 })
    .where(and(eq(leadRouting.lead_id, leadId), eq(leadRouting.speed_stage, from), isNull(leadRouting.first_contact_at))).returning({ id: leadRouting.lead_id });
  return moved.length > 0;
}

/** When the step after `stage` is due: the limit itself, then one more limit (in working time) for each later step. */
function dueAt(late: Late, stage: number): Date | null {
  if (stage === 0) return late.speed_due_at;
  if (!late.limit) return null;
  return addWorkingMinutes(late.speed_due_at, late.limit * stage, workSchedule.current);
}

/** One sweep: every late lead's next steps that are due by `now`. Answers how many steps were taken. */
export async function enforceSpeedLimits(services: NoticeServices, now: Date): Promise<number> {
  const { db } = services.database;
  const late = await db.select({
    lead_id: leadRouting.lead_id, first_name: leads.first_name, last_name: leads.last_name, assigned_to: leads.assigned_to,
    speed_due_at: leadRouting.speed_due_at, speed_stage: leadRouting.speed_stage,
    limit: leadFlowRules.speed_limit_minutes, on_speed_limit: leadFlowRules.on_speed_limit,
  }).from(leadRouting).innerJoin(leads, eq(leads.id, leadRouting.lead_id)).leftJoin(leadFlowRules, eq(leadFlowRules.id, leadRouting.rule_id))
    .where(and(isNull(leadRouting.first_contact_at), isNotNull(leadRouting.speed_due_at), lte(leadRouting.speed_due_at, now), lt(leadRouting.speed_stage, STAGE.reassigned), isNotNull(leads.assigned_to)))
    .orderBy(asc(leadRouting.speed_due_at)).limit(500);
  let steps = 0;
  for (const row of late) {
    // Both set, as the query asks: named so for the steps.
    const lead = row as Late;
    for (let stage = lead.speed_stage; stage < STAGE.reassigned; stage++) {
      const due = dueAt(lead, stage);
      if (!due || due > now) break;
      if (stage === STAGE.managerTold && lead.on_speed_limit !== 'reassign') break;
      if (!(await step(services, lead, stage))) break;
      steps++;
    }
  }
  return steps;
}

const nameOf = (lead: Pick<Late, 'first_name' | 'last_name'>) => `${lead.first_name} ${lead.last_name}`;

/** Takes step `stage → stage + 1` for one lead, when this sweep wins it; answers whether it did. */
async function step(services: NoticeServices, lead: Late, stage: number): Promise<boolean> {
  const { db } = services.database;
  const record = { resource: leadResource, id: lead.lead_id };
  if (stage === 0) {
    if (!(await advance(db, lead.lead_id, 0))) return false;
    await notify(services, {
      userId: lead.assigned_to, kind: 'speed_to_lead', title: `Contact ${nameOf(lead)} now`, record,
      body: `${nameOf(lead)} is waiting for a first call, e-mail or meeting: the speed-to-lead limit has passed.`,
    });
    return true;
  }
  if (stage === 1) {
    if (!(await advance(db, lead.lead_id, 1))) return false;
    const [manager] = await db.select({ id: departments.manager_id, agent: users.name }).from(users)
      .innerJoin(departments, eq(departments.id, users.departmentId)).where(eq(users.id, lead.assigned_to));
    if (manager?.id && manager.id !== lead.assigned_to) {
      await notify(services, {
        userId: manager.id, kind: 'speed_to_lead', title: `${nameOf(lead)} has not been contacted`, record,
        body: `${manager.agent}'s lead ${nameOf(lead)} is still waiting for a first contact, well past the speed-to-lead limit.`,
      });
    }
    return true;
  }
  const moved = await audited(db, SYSTEM, async (work) => {
    if (!(await advance(work.tx, lead.lead_id, 2))) return undefined;
    return { to: await reassignLate({ work, services }, lead.lead_id) };
  });
  return !!moved;
}


/**
 * Who takes a lead its assignee left too long: the group the routing rule named: its fallback user, else the next
 * member (in turn) of its fallback group, else, for a round robin, its own next member; never the current assignee,
 * someone away or deleted. Null when nobody fits.
 */
async function fallbackOf(tx: Tx, groupId: string, current: string, now: Date): Promise<string | null> {
  const [group] = await tx.select().from(leadGroups).where(eq(leadGroups.id, groupId)).for('update');
  if (!group) return null;
  if (group.fallback_user_id && group.fallback_user_id !== current) {
    if (await isEligible(tx, group.fallback_user_id, now)) return group.fallback_user_id;
  }
  const turnGroup = group.fallback_group_id ?? (group.kind === 'round_robin' ? group.id : null);
  return turnGroup ? nextInTurn(tx, turnGroup, current, now) : null;
}

/** The next eligible member of a group in turn from its cursor, which moves past them. */
async function nextInTurn(tx: Tx, groupId: string, current: string, now: Date): Promise<string | null> {
  const [group] = await tx.select({ next: leadGroups.next_position }).from(leadGroups).where(eq(leadGroups.id, groupId)).for('update');
  if (!group) return null;
  const members = await tx.select({ id: leadGroupMembers.user_id, position: leadGroupMembers.position }).from(leadGroupMembers)
    .where(and(eq(leadGroupMembers.group_id, groupId), eligible(memberColumn, now), sql`${leadGroupMembers.user_id} <> ${current}`))
    .orderBy(asc(leadGroupMembers.position));
  const next = members.find((m) => m.position >= group.next) ?? members[0];
  if (!next) return null;
  await tx.update(leadGroups).set({ next_position: next.position + 1 }).where(eq(leadGroups.id, groupId));
  return next.id;
}

/**
 * A late lead goes to the fallback of the group its routing rule named (see `fallbackOf`), audited, in the caller's
 * transaction, with its `lead.assigned` event; `afterAssignment` moves its plans' follow-ups. Answers the new assignee,
 * or null when nobody fits (the lead stays where it is).
 */
export async function reassignLate(flow: { work: Work; services: NoticeServices }, leadId: string): Promise<string | null> {
  const { work } = flow;
  const [row] = await work.tx.select({ lead: leads, group_id: leadFlowRules.assign_group_id })
    .from(leadRouting).innerJoin(leads, eq(leads.id, leadRouting.lead_id)).leftJoin(leadFlowRules, eq(leadFlowRules.id, leadRouting.rule_id))
    .where(eq(leadRouting.lead_id, leadId));
  if (!row?.lead.assigned_to || !row.group_id) return null;
  const to = await fallbackOf(work.tx, row.group_id, row.lead.assigned_to, clock.now());
  if (!to) return null;
  // As every assignment: audited with how it came, routing row, event, plans and clock; the new assignee is told.
  await assignLead(flow, row.lead, to, 'speed_limit', { rule: await routingRuleOf(work.tx, leadId) });
  return to;
}

