import type { Work } from '../../../data/mutations.js';

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
 * `assigned_to`), after the lead and its `lead_routing` row are written: the rule's action plan starts, running plans'
 * open follow-ups move to the new assignee, and the speed-to-lead clock starts.
 */
export async function afterAssignment(_work: Work, _assignment: Assignment): Promise<void> {
  // Filled by action plans and speed to lead.
}
