import { eq } from 'drizzle-orm';
import { clock } from '../../../clock.js';
import type { Work } from '../../../data/mutations.js';
import { leadRouting, type leads } from '../../../db/schema/index.js';
import { afterAssignment } from './after-assignment.js';
import { stopRunsOfLead } from './running-plans.js';

type Lead = typeof leads.$inferSelect;

/**
 * A person changed a lead (PATCH), in that change's transaction: its running plans whose statuses no longer include
 * its status stop; a new assignee is an assignment like any other (its routing row, when it has one, says when).
 */
export async function leadChanged(work: Work, lead: Lead, before: Lead) {
  if (lead.status !== before.status) await stopRunsOfLead(work, lead.id, 'status changed', lead.status);
  if (lead.assigned_to && lead.assigned_to !== before.assigned_to) {
    const at = clock.now();
    await work.tx.update(leadRouting).set({ assigned_at: at }).where(eq(leadRouting.lead_id, lead.id));
    work.emit('lead.assigned', { lead_id: lead.id, assigned_to: lead.assigned_to, previous: before.assigned_to, how: 'manual' });
    await afterAssignment(work, { leadId: lead.id, assigneeId: lead.assigned_to, previousAssigneeId: before.assigned_to, rule: null, at });
  }
}
