import { and, eq, isNull, sql } from 'drizzle-orm';
import type { App } from '../../types.js';
import { leads, moduleAccess, notificationPreferences, notifications, type NotificationDelivery, type NotificationKind, users } from '../../db/schema/index.js';
import { mayRead } from '../../data/owners.js';
import type { Resource } from '../../data/resource.js';
import { inquiryNoticeMail, leadAssignedMail, notificationMail, type Rendered } from '../../mail/templates.js';
import { inquiryResource } from './inquiries.js';
import { leadResource } from './lead-resource.js';

/**
 * Staff notices: what a change means to the people it concerns, told after the change committed and never failing it
 * (the change stands whatever the mail server or the inbox says). Every notice to a user goes through `notify`, which
 * writes the in-app notification and sends the e-mail half as the user's delivery preference for its kind says.
 */

/**
 * What telling people needs: an app, or a job's services (no background work there: a notice is then simply not
 * awaited).
 */
export type NoticeServices = Pick<App, 'database' | 'config' | 'mailer' | 'log'> & { background?: App['background'] };

/** How each kind is delivered to a user who has not chosen: assignments and website inquiries as before (e-mail) and in the app. */
export const DEFAULT_DELIVERY: Record<NotificationKind, NotificationDelivery> = {
  lead_assigned: 'both', inquiry_received: 'both', mention: 'in_app', lead_to_claim: 'in_app', follow_up_due: 'in_app', speed_to_lead: 'in_app',
};

/** Longest title and body a notification keeps: a line and a short paragraph, whatever the record holds. */
const TITLE_MAX = 200;
const BODY_MAX = 500;
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);

export type Notice = {
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  /** The record it is about: the user must be able to read it now, or nothing is written or sent. */
  record: { resource: Resource; id: string } | null;
  /**
   * The e-mail half, made for the recipient (the kind's own template, or the generic one when absent); null when
   * the operator turned this mail off (ASSIGNMENT_NOTICES=false, INQUIRY_NOTICE_TO set).
   */
  mail?: ((to: { name: string }) => Rendered) | null;
};

/**
 * Tells user `userId` of something: nothing to someone deleted or who may not read the record it names; otherwise an
 * in-app notification, an e-mail or both, per their preference for the kind. Answers what was delivered. Call it
 * after the change committed; a failed mail is logged, never thrown.
 */
export async function notify(app: NoticeServices, notice: Notice): Promise<{ inApp: boolean; email: boolean }> {
  const { db } = app.database;
  const [user] = await db.select({ id: users.id, name: users.name, email: users.email, delivery: notificationPreferences.delivery }).from(users)
    .leftJoin(notificationPreferences, and(eq(notificationPreferences.user_id, users.id), eq(notificationPreferences.kind, notice.kind)))
    .where(and(eq(users.id, notice.userId), isNull(users.deletedAt))).limit(1);
  if (!user) return { inApp: false, email: false };
  if (notice.record && !(await mayRead(db, user.id, notice.record.resource, notice.record.id))) return { inApp: false, email: false };
  const delivery = user.delivery ?? DEFAULT_DELIVERY[notice.kind];
  const inApp = delivery === 'in_app' || delivery === 'both';
  const title = clip(notice.title, TITLE_MAX);
  const body = clip(notice.body, BODY_MAX);
  if (inApp) {
    await db.insert(notifications).values({
      user_id: user.id, kind: notice.kind, title, body, resource: notice.record?.resource.name ?? null, record_id: notice.record?.id ?? null,
    });
  }
  const email = (delivery === 'email' || delivery === 'both') && notice.mail !== null;
  if (email) {
    const url = notice.record ? recordUrl(app, notice.record.resource, notice.record.id) : null;
    const mail = notice.mail ? notice.mail({ name: user.name }) : notificationMail(user.name, { title, body }, url);
    await sendAll(app, [user.email], mail, { user: user.id, kind: notice.kind });
  }
  return { inApp, email };
}

/** The console's page of a record. */
const recordUrl = (app: NoticeServices, resource: Resource, id: string) => `${app.config.baseUrl}/${resource.name}/${id}`;

async function sendAll(app: NoticeServices, recipients: string[], mail: Rendered, about: Record<string, unknown>) {
  await Promise.all([...new Set(recipients)].map((to) =>
    app.mailer.send({ to, ...mail }).catch((err: unknown) => app.log.error({ err, ...about }, 'staff notice not sent'))));
}

/** Runs notices in the background after a change committed: logged when they fail, awaited by shutdown and tests. */
function inBackground(app: NoticeServices, about: Record<string, unknown>, work: () => Promise<unknown>) {
  const running = work().catch((err: unknown) => app.log.error({ err, ...about }, 'staff notice not sent'));
  app.background?.track(running);
}

type Inquiry = { id: string; name: string; email: string; phone: string | null; subject: string; message: string };

/**
 * A visitor's inquiry arrived: every live user who may answer it (crm write) and read it hears of it (its name,
 * e-mail and message go only to someone whose record scope reaches it; one from the website belongs to nobody, so only
 * those who see every inquiry). INQUIRY_NOTICE_TO decides the e-mail: to each of them per their preference (the
 * default), to the configured addresses instead, or none; the in-app half follows each user's preference alone.
 */
export function noticeInquiry(app: App, inquiry: Inquiry) {
  inBackground(app, { inquiry: inquiry.id }, async () => {
    const setting = app.config.inquiryNoticeTo;
    const mail = inquiryNoticeMail(inquiry, recordUrl(app, inquiryResource, inquiry.id));
    if (Array.isArray(setting)) await sendAll(app, setting, mail, { inquiry: inquiry.id });
    const writers = await app.database.db.select({ id: users.id }).from(users)
      .innerJoin(moduleAccess, and(eq(moduleAccess.user_id, users.id), eq(moduleAccess.module, 'crm'), eq(moduleAccess.can_write, true)))
      .where(isNull(users.deletedAt));
    const from = `${inquiry.name} <${inquiry.email}>`;
    await Promise.all(writers.map((writer) => notify(app, {
      userId: writer.id, kind: 'inquiry_received', title: `New inquiry: ${inquiry.subject}`, body: `${from}: ${inquiry.message}`,
      record: { resource: inquiryResource, id: inquiry.id }, mail: setting === 'crm-writers' ? () => mail : null,
    })));
  });
}

type Lead = { id: string; first_name: string; last_name: string; email: string | null; phone: string | null; interest: string | null };

/**
 * A lead now assigned to `assigneeId`: they hear of it, unless they assigned it themselves (if they may read it now:
 * access may have changed since). ASSIGNMENT_NOTICES=false turns the e-mail half off.
 */
export function noticeAssignment(app: NoticeServices, lead: Lead, assigneeId: string | null | undefined, actorId: string | null) {
  if (!assigneeId || assigneeId === actorId) return;
  inBackground(app, { lead: lead.id }, async () => {
    const by = actorId ? (await app.database.db.select({ name: users.name }).from(users).where(eq(users.id, actorId)))[0]?.name ?? null : null;
    const who = `${lead.first_name} ${lead.last_name}`;
    await notify(app, {
      userId: assigneeId, kind: 'lead_assigned', title: `Lead assigned to you: ${who}`,
      body: [by ? `${by} assigned this lead to you.` : 'This lead was assigned to you.', lead.interest ? `Interested in: ${lead.interest}` : ''].filter(Boolean).join(' '),
      record: { resource: leadResource, id: lead.id },
      mail: app.config.assignmentNotices ? (to) => leadAssignedMail(to.name, lead, by, recordUrl(app, leadResource, lead.id)) : null,
    });
  });
}

/** `@`, then a name: where a mention may start (not inside an e-mail address such as `ann@example.com`). */
const MENTION = /(?<![\p{L}\p{N}_.+-])@/gu;
/** What may not follow a mentioned name or e-mail local part: it would be part of a longer word. */
const WORD = /[\p{L}\p{N}_]/u;

/**
 * The users a text mentions: `@` followed by a user's name or the local part of their e-mail, case-insensitive, and
 * not followed by more of a word. Where several match at one `@` (`@ann` and `@ann.lee`), the longest wins.
 */
export function mentioned(text: string, people: { id: string; name: string; email: string }[]): string[] {
  const lower = text.toLowerCase();
  const found = new Set<string>();
  for (const match of lower.matchAll(MENTION)) {
    const at = match.index + 1;
    let best: { length: number; ids: string[] } = { length: 0, ids: [] };
    for (const person of people) {
      for (const handle of [person.name.trim().toLowerCase(), person.email.toLowerCase().split('@')[0]]) {
        if (!handle || !lower.startsWith(handle, at) || WORD.test(lower.charAt(at + handle.length))) continue;
        if (handle.length > best.length) best = { length: handle.length, ids: [person.id] };
        else if (handle.length === best.length && !best.ids.includes(person.id)) best.ids.push(person.id);
      }
    }
    for (const id of best.ids) found.add(id);
  }
  return [...found];
}

/**
 * A note on a lead was written: each user it mentions (`@Name` or `@local-part`) who may read the lead hears of it,
 * its author excepted. Only users whose name or e-mail local part occurs after an `@` are read.
 */
export function noticeMentions(app: App, note: { body: string | null; leadId: string; authorId: string | null }) {
  const text = note.body;
  if (!text || !text.includes('@')) return;
  inBackground(app, { lead: note.leadId }, async () => {
    const { db } = app.database;
    const lowered = text.toLowerCase();
    const candidates = await db.select({ id: users.id, name: users.name, email: users.email }).from(users)
      .where(and(isNull(users.deletedAt), sql`(strpos(${lowered}, '@' || lower(btrim(${users.name}))) > 0 or strpos(${lowered}, '@' || split_part(${users.email}, '@', 1)) > 0)`));
    const ids = mentioned(text, candidates).filter((id) => id !== note.authorId);
    if (!ids.length) return;
    const [lead] = await db.select({ first_name: leads.first_name, last_name: leads.last_name }).from(leads).where(eq(leads.id, note.leadId));
    const author = note.authorId ? (await db.select({ name: users.name }).from(users).where(eq(users.id, note.authorId)))[0]?.name ?? null : null;
    if (!lead) return;
    const who = `${lead.first_name} ${lead.last_name}`;
    await Promise.all(ids.map((userId) => notify(app, {
      userId, kind: 'mention', title: `${author ?? 'Someone'} mentioned you on ${who}`, body: text, record: { resource: leadResource, id: note.leadId },
    })));
  });
}
