import { and, eq, isNull } from 'drizzle-orm';
import type { App } from '../../types.js';
import { moduleAccess, users } from '../../db/schema/index.js';
import { mayRead, readsCrm } from '../../data/owners.js';
import { inquiryNoticeMail, leadAssignedMail, type Rendered } from '../../mail/templates.js';
import { inquiryResource } from './inquiries.js';

/**
 * Staff notices (issue 14 §6): mail to the people a change concerns, sent after the change committed and never
 * failing it (the change stands whatever the mail server says), through the same mailer as every other message.
 */
async function sendAll(app: App, recipients: string[], mail: Rendered, about: Record<string, unknown>) {
  await Promise.all([...new Set(recipients)].map((to) =>
    app.mailer.send({ to, ...mail }).catch((err: unknown) => app.log.error({ err, ...about }, 'staff notice not sent'))));
}

/**
 * Who hears of a new inquiry: configured addresses (the operator's choice), or every live user who may answer it (crm
 * write) and read it: its name, e-mail, phone and message go only to someone whose record scope reaches it (one from
 * the website belongs to nobody, so only those who see every inquiry).
 */
async function inquiryRecipients(app: App, inquiryId: string): Promise<string[]> {
  const setting = app.config.inquiryNoticeTo;
  if (setting === 'none') return [];
  if (Array.isArray(setting)) return setting;
  const { db } = app.database;
  const rows = await db.select({ id: users.id, email: users.email }).from(users)
    .innerJoin(moduleAccess, and(eq(moduleAccess.user_id, users.id), eq(moduleAccess.module, 'crm'), eq(moduleAccess.can_write, true)))
    .where(isNull(users.deletedAt));
  const readers = await Promise.all(rows.map((row) => mayRead(db, row.id, inquiryResource, inquiryId)));
  return rows.filter((_, i) => readers[i]).map((row) => row.email);
}

type Inquiry = { id: string; name: string; email: string; phone: string | null; subject: string; message: string };

/** A visitor's inquiry arrived. */
export function noticeInquiry(app: App, inquiry: Inquiry) {
  app.background.track(inquiryRecipients(app, inquiry.id)
    .then((recipients) => sendAll(app, recipients, inquiryNoticeMail(inquiry, `${app.config.baseUrl}/inquiries/${inquiry.id}`), { inquiry: inquiry.id }))
    .catch((err: unknown) => app.log.error({ err, inquiry: inquiry.id }, 'staff notice not sent')));
}

type Lead = { id: string; first_name: string; last_name: string; email: string | null; phone: string | null; interest: string | null };

/** A lead now assigned to `assigneeId`: they hear of it, unless they assigned it themselves or notices are off. */
export function noticeAssignment(app: App, lead: Lead, assigneeId: string | null | undefined, actorId: string | null) {
  if (!app.config.assignmentNotices || !assigneeId || assigneeId === actorId) return;
  app.background.track((async () => {
    const people = await app.database.db.select({ id: users.id, name: users.name, email: users.email }).from(users)
      .where(and(isNull(users.deletedAt), eq(users.id, assigneeId)));
    const by = actorId ? (await app.database.db.select({ name: users.name }).from(users).where(eq(users.id, actorId)))[0]?.name ?? null : null;
    const [assignee] = people;
    // Only to someone who may read it now: its assignee owns it, so crm read suffices (refused when assigned without
    // it, but access may change since).
    if (assignee && await readsCrm(app.database.db, assignee.id)) await sendAll(app, [assignee.email], leadAssignedMail(assignee.name, lead, by, `${app.config.baseUrl}/leads/${lead.id}`), { lead: lead.id });
  })().catch((err: unknown) => app.log.error({ err, lead: lead.id }, 'staff notice not sent')));
}
