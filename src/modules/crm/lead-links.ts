import { Type } from '@sinclair/typebox';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { App } from '../../types.js';
import { recordScope } from '../../auth/guard.js';
import { findOne, type ScopeOption } from '../../data/list.js';
import { audited, type Work } from '../../data/mutations.js';
import type { Executor } from '../../db/client.js';
import { crmActivities, crmTasks, inquiries, LEAD_SOURCES, LEAD_STATUSES, leads, reservations } from '../../db/schema/index.js';
import { conflict, validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { named } from '../../http/openapi.js';
import { Created, errorResponses, IdParams, Nullable, RequiredText, Strict, StringEnum, Text, Uuid } from '../../http/schemas.js';
import { activityResource } from './activities.js';
import { inquiryResource } from './inquiries.js';
import { leadResource } from './lead-resource.js';
import { noticeAssignment } from './notices.js';
import { recordAssignment, routeLead } from './lead-flow/routing.js';
import { reservationResource } from './reservation-resource.js';
import { requireAssignee } from './shared.js';
import { taskResource } from './tasks.js';

/** The links between a lead and the rest of the crm: a reservation's lead, an inquiry turned into a lead. */

/** A lead's `lower(email)`, as the leads' e-mail index has it. */
const leadEmail = sql<string>`lower(${leads.email})`;

/**
 * The lead a new reservation is for: the one it names (the route has read it with the caller's scope), none when it
 * sends null, else the newest lead with the reservation's e-mail (compared case-insensitively) among those the caller
 * may read (`leadScope`). A colleague's lead for the same address outside the caller's scope is not linked: the link
 * would show its id, and its absence tells nothing (someone who reads every lead can link it later).
 */
export async function leadOfReservation(db: Executor, body: { lead_id?: string | null; email?: string | null }, leadScope: ScopeOption): Promise<string | null> {
  if (body.lead_id !== undefined) return body.lead_id;
  if (!body.email) return null;
  const [lead] = await db.select({ id: leads.id }).from(leads)
    .where(and(eq(leadEmail, body.email.toLowerCase()), leadScope.scope?.sql)).orderBy(desc(leads.created_at), desc(leads.id)).limit(1);
  return lead?.id ?? null;
}

/**
 * Before a lead is deleted, in its transaction: its activities go with it and its follow-ups, reservations and
 * inquiries forget it, each change audited (CONTRACT §13: cascades are audited).
 */
export async function detachLead(work: Work, leadId: string) {
  await work.removeAll(activityResource, eq(crmActivities.lead_id, leadId));
  await work.updateAll(taskResource, eq(crmTasks.lead_id, leadId), { lead_id: null });
  await work.updateAll(reservationResource, eq(reservations.lead_id, leadId), { lead_id: null });
  await work.updateAll(inquiryResource, eq(inquiries.lead_id, leadId), { lead_id: null });
}

const ConvertInput = Strict({
  first_name: Type.Optional(RequiredText({ description: 'Default: the inquirer\'s name but its last word' })),
  last_name: Type.Optional(RequiredText({ description: 'Default: the last word of the inquirer\'s name' })),
  source: Type.Optional(StringEnum(LEAD_SOURCES, { default: 'website' })),
  status: Type.Optional(StringEnum(LEAD_STATUSES, { default: 'new' })),
  interest: Type.Optional(Nullable(Text({ description: 'Default: the inquiry\'s subject' }))),
  assigned_to: Type.Optional(Nullable(Uuid({ description: 'Default: the user converting it' }))),
});

/** First and last name from the inquirer's name: the last word is the last name (400 for a one-word name). */
function namesOf(name: string, body: { first_name?: string; last_name?: string }) {
  const words = name.trim().split(/\s+/);
  const first = body.first_name ?? (words.length > 1 ? words.slice(0, -1).join(' ') : words[0]);
  const last = body.last_name ?? (words.length > 1 ? words[words.length - 1] : undefined);
  if (!last) throw validationError({ last_name: `the inquirer's name "${name}" is one word: send first_name and last_name` });
  return { first_name: first, last_name: last };
}

export default async function leadLinkRoutes(app: App) {
  const { db } = app.database;
  app.post('/api/crm/inquiries/:id/convert', {
    // A bare POST (no body) converts with the defaults.
    preValidation: async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    },
    schema: {
      operationId: 'convertInquiry', summary: 'Turn an inquiry into a lead (its name, e-mail, phone, subject and message); the inquiry keeps the link',
      description: 'Answers the new lead\'s id. An inquiry already turned into a lead (whose lead still exists) is 409.',
      params: IdParams, body: named('InquiryConvert', ConvertInput), response: { 201: Created, ...errorResponses }, 'x-answer-message': 'Lead created from the inquiry',
    },
  }, async (request, reply) => {
    const body = request.body;
    const actor = await actorOf(app, request);
    await requireAssignee(db, body.assigned_to, 'assigned_to');
    await findOne(db, inquiryResource, request.params.id, await recordScope(app, request, inquiryResource));
    const lead = await audited(db, actor, async (work) => {
      const inquiry = await work.lock(inquiryResource, request.params.id);
      // The lead is not named: it may lie outside the caller's scope (its id is on the inquiry for those who may read it).
      if (inquiry.lead_id) throw conflict('This inquiry has already been turned into a lead');
      const created = await work.create(leadResource, {
        ...namesOf(inquiry.name, body), email: inquiry.email, phone: inquiry.phone, source: body.source ?? 'website', status: body.status ?? 'new',
        interest: body.interest === undefined ? inquiry.subject : body.interest, notes: inquiry.message,
        assigned_to: body.assigned_to === undefined ? actor.userId : body.assigned_to, created_by: actor.userId,
      });
      await work.update(inquiryResource, inquiry.id, { lead_id: created.id });
      // Assigned as any lead is; one left without an assignee is routed by the lead-flow rules (channel `api`).
      if (created.assigned_to) {
        await recordAssignment(work, { lead: created, previous: null, how: 'manual', rule: null, channel: 'api' });
        return created;
      }
      await routeLead({ work, services: app }, created, 'api');
      return created;
    });
    noticeAssignment(app, lead, lead.assigned_to, actor.userId);
    return reply.code(201).send({ id: lead.id, message: 'Lead created from the inquiry' });
  });
}
