import { eq } from 'drizzle-orm';
import type { Work } from '../../../data/mutations.js';
import { leadFlowRules, leadRouting } from '../../../db/schema/index.js';
import { hasRun, moveOpenPlanTasks, startRun } from './running-plans.js';
import { workSchedule } from './schedule.js';
import { addWorkingMinutes } from './working-time.js';

/** What an assignment was: the lead, who has it now and who had it, and the rule that routed it (null: by hand or by a claim). */
export type Assignment = {
  leadId: string;
  assigneeId: string;
  previousAssigneeId: string | null;
  /** The rule that routed it (first routing, a claim timeout's fallback, a speed-to-lead reassignment); null when a person assigned or claimed it. */
  rule: { id: string; action_plan_id: string | null; speed_limit_minutes: number | null } | null;
  /** When it happened (the routing row's `assigned_at`). */
  at: Date;
};

/**
 * Runs in the transaction of every assignment of a lead (routing, claim, timeout fallback, a person's change of
 * `assigned_to`), after the lead and its `lead_routing` row are written: running plans' open follow-ups move to the new
 * assignee, the routing rule's action plan starts (once: at the lead's first assignment, a claim included), and the
 * speed-to-lead clock starts or restarts (only while nobody has contacted the lead, and not after a speed-to-lead
 * reassignment, the last step of its escalation). Every step is idempotent: a second call for one assignment changes nothing.
 */
export async function afterAssignment(work: Work, assignment: Assignment): Promise<void> {
  const { leadId, assigneeId } = assignment;
  const [routing] = await work.tx.select({ rule_id: leadRouting.rule_id, first_contact_at: leadRouting.first_contact_at, speed_stage: leadRouting.speed_stage })
    .from(leadRouting).where(eq(leadRouting.lead_id, leadId)).for('update');
  // A claim or a person's assignment names no rule: the one that routed the lead still decides its plan and its limit.
  const rule = assignment.rule ?? (routing?.rule_id ? await ruleOf(work, routing.rule_id) : null);
  await moveOpenPlanTasks(work, leadId, assigneeId);
  if (rule?.action_plan_id && !(await hasRun(work.tx, leadId, rule.action_plan_id))) {
    await startRun(work, { leadId, planId: rule.action_plan_id, assigneeId, at: assignment.at });
  }
  if (rule?.speed_limit_minutes && routing && !routing.first_contact_at && routing.speed_stage < 3) {
    const due = addWorkingMinutes(assignment.at, rule.speed_limit_minutes, workSchedule.current);
    await work.tx.update(leadRouting).set({ speed_due_at: due, speed_stage: 0 }).where(eq(leadRouting.lead_id, leadId));
  }
}

async function ruleOf(work: Work, id: string) {
  const [rule] = await work.tx.select({ id: leadFlowRules.id, action_plan_id: leadFlowRules.action_plan_id, speed_limit_minutes: leadFlowRules.speed_limit_minutes })
    .from(leadFlowRules).where(eq(leadFlowRules.id, id));
  return rule ?? null;
}
