import { desc, eq, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import type { Actor } from '../../../data/actor.js';
import { audited, type Work } from '../../../data/mutations.js';
import { leads } from '../../../db/schema/index.js';
import { InquiryInput, inquiryResource, inquiryValues, receiveInquiry } from '../inquiries.js';
import { leadResource } from '../lead-resource.js';
import { hasRules, routeLead } from './routing.js';

type InquiryBody = typeof InquiryInput.static;

/**
 * The newest lead of the person writing: the same e-mail (case-insensitive), else the same phone number compared by
 * its digits.
 */
async function leadOfPerson(work: Work, email: string, phone: string | null | undefined): Promise<string | null> {
  const [byEmail] = await work.tx.select({ id: leads.id }).from(leads).where(eq(sql`lower(${leads.email})`, email.toLowerCase()))
    .orderBy(desc(leads.created_at), desc(leads.id)).limit(1);
  if (byEmail) return byEmail.id;
  const digits = phone?.replace(/\D/g, '');
  if (!digits) return null;
  const [byPhone] = await work.tx.select({ id: leads.id }).from(leads).where(sql`regexp_replace(${leads.phone}, '[^0-9]', '', 'g') = ${digits}`)
    .orderBy(desc(leads.created_at), desc(leads.id)).limit(1);
  return byPhone?.id ?? null;
}

/** First and last name from the name a visitor gave: the last word is the last name (none for a one-word name). */
function namesOf(name: string) {
  const words = name.trim().split(/\s+/);
  return words.length > 1 ? { first_name: words.slice(0, -1).join(' '), last_name: words[words.length - 1] } : { first_name: words[0], last_name: '' };
}

/**
 * An inquiry from the website. With lead flow on (any rule), it is the person's lead too, in one transaction: linked to
 * their newest lead (same e-mail or phone), or a new lead (source website, interest the subject, notes the message)
 * routed by the rules (channel `website`); a known lead is not routed again. With no rules, only the inquiry is stored,
 * as before lead flow.
 */
export async function receiveWebsiteInquiry(app: App, actor: Actor, body: InquiryBody) {
  const { db } = app.database;
  if (!(await hasRules(db))) return receiveInquiry(db, actor, body);
  return audited(db, actor, async (work) => {
    const inquiry = await work.create(inquiryResource, inquiryValues(body), ['inquiry.received']);
    const known = await leadOfPerson(work, inquiry.email, inquiry.phone);
    if (known) return work.update(inquiryResource, inquiry.id, { lead_id: known });
    const lead = await work.create(leadResource, {
      ...namesOf(inquiry.name), email: inquiry.email, phone: inquiry.phone, source: 'website', status: 'new', interest: inquiry.subject, notes: inquiry.message,
    });
    const linked = await work.update(inquiryResource, inquiry.id, { lead_id: lead.id });
    await routeLead({ work, services: app }, lead, 'website');
    return linked;
  });
}

