import { and, asc, eq, isNotNull, lte } from 'drizzle-orm';
import { SYSTEM } from '../../../data/actor.js';
import { audited } from '../../../data/mutations.js';
import { leadGroups, leadRouting, leads } from '../../../db/schema/index.js';
import type { NoticeServices } from '../notices.js';
import { assignLead, isEligible, placeInGroup, routingRuleOf } from './routing.js';
import { notifyFollowUpsDue } from './follow-ups-due.js';
import { enforceSpeedLimits } from './speed.js';

/**
 * The lead-flow sweep: what time alone makes due, run every minute by the `lead-flow-sweep` job and on demand by
 * `POST /api/cron/lead-flow`. Each sweep answers how many leads it moved.
 */
export type LeadFlowSweep = { name: string; run: (services: NoticeServices, now: Date) => Promise<number> };

/** Leads one sweep moves at most; the rest wait for the next minute. */
const BATCH = 500;

/**
 * Leads whose claim time passed, unclaimed, go to their group's fallback: a user gets it; a group takes it as it takes
 * any lead (a round robin's next member, a pool). With no usable fallback (deleted, or no crm write) the lead stays in
 * its pool without a deadline, for its members to claim (logged). Each lead in its own transaction, locked and checked
 * again, so a claim at the last moment wins or loses cleanly and two instances never move one lead twice.
 */
export async function expireClaims(services: NoticeServices, now: Date): Promise<number> {
  const { db } = services.database;
  const due = await db.select({ id: leadRouting.lead_id }).from(leadRouting)
    .where(and(isNotNull(leadRouting.claim_deadline), lte(leadRouting.claim_deadline, now))).orderBy(asc(leadRouting.claim_deadline)).limit(BATCH);
  let moved = 0;
  for (const { id } of due) {
    moved += await audited(db, SYSTEM, async (work) => {
      const [lead] = await work.tx.select().from(leads).where(eq(leads.id, id)).for('update', { skipLocked: true });
      const [routing] = lead ? await work.tx.select().from(leadRouting).where(eq(leadRouting.lead_id, id)) : [];
      if (!lead || !routing?.claim_deadline || routing.claim_deadline > now) return 0;
      await work.tx.update(leadRouting).set({ claim_deadline: null, updated_at: now }).where(eq(leadRouting.lead_id, id));
      if (lead.assigned_to || !lead.pool_id) return 0;
      const [group] = await work.tx.select().from(leadGroups).where(eq(leadGroups.id, lead.pool_id));
      const flow = { work, services };
      const rule = await routingRuleOf(work.tx, id);
      if (group?.fallback_user_id && (await isEligible(work.tx, group.fallback_user_id, now))) {
        await assignLead(flow, lead, group.fallback_user_id, 'fallback', { rule });
        return 1;
      }
      if (group?.fallback_group_id && (await placeInGroup(flow, lead, group.fallback_group_id, { rule, how: 'fallback' }, new Set([group.id])))) return 1;
      services.log.warn({ lead: id, group: lead.pool_id }, 'lead flow: claim time passed and the group has no usable fallback; the lead stays in its pool');
      return 0;
    });
  }
  return moved;
}

/** Every sweep, in the order they run. */
export const LEAD_FLOW_SWEEPS: LeadFlowSweep[] = [
  { name: 'claims_expired', run: expireClaims },
  { name: 'speed_to_lead', run: enforceSpeedLimits },
  { name: 'follow_ups_due', run: notifyFollowUpsDue },
];

/** Runs every sweep once: how many leads each moved, by name. */
export async function sweepLeadFlow(services: NoticeServices, now: Date): Promise<Record<string, number>> {
  const done: Record<string, number> = {};
  for (const sweep of LEAD_FLOW_SWEEPS) done[sweep.name] = await sweep.run(services, now);
  return done;
}
