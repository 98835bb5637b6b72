import { isNull } from 'drizzle-orm';
import type { Work } from '../../../data/mutations.js';
import { leadRouting } from '../../../db/schema/index.js';

/** The activities that count as contacting a lead (a note does not). */
export const CONTACT_KINDS: readonly string[] = ['call', 'email', 'meeting', 'site_visit'];

/**
 * A staff member logged a call, e-mail, meeting or site visit on a lead, in that activity's transaction: the lead's
 * first contact is recorded when it has none (the earlier of when it happened and now: a meeting booked for next week
 * means someone spoke to the client today). A lead no rule routed gets its routing row here (channel `api`), so every
 * lead's speed to lead is read in one place. This stops the speed-to-lead clock.
 */
export async function recordFirstContact(work: Work, leadId: string, activity: { kind: string; occurred_at: Date; author_id: string | null }, now: Date) {
  if (!CONTACT_KINDS.includes(activity.kind) || !activity.author_id) return;
  const at = activity.occurred_at < now ? activity.occurred_at : now;
  await work.tx.insert(leadRouting).values({ lead_id: leadId, channel: 'api', first_contact_at: at })
    .onConflictDoUpdate({ target: leadRouting.lead_id, set: { first_contact_at: at, updated_at: now }, setWhere: isNull(leadRouting.first_contact_at) });
}
