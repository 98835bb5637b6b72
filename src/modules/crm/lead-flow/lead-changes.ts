import type { Work } from '../../../data/mutations.js';
import type { leads } from '../../../db/schema/index.js';
import { recordAssignment } from './routing.js';
import { stopRunsOfLead } from './running-plans.js';

type Lead = typeof leads.$inferSelect;

/**
 * A person changed a lead (PATCH), in that change's transaction: its running plans whose statuses no longer include
 * its status stop; a new assignee is an assignment like any other (recorded by hand: its routing row, its event, its
 * plans' follow-ups and speed-to-lead clock).
 */
export async function leadChanged(work: Work, lead: Lead, before: Lead) {
  if (lead.status !== before.status) await stopRunsOfLead(work, lead.id, 'status changed', lead.status);
  if (lead.assigned_to && lead.assigned_to !== before.assigned_to) await recordAssignment(work, { lead, previous: before.assigned_to, how: 'manual', rule: null });
}
