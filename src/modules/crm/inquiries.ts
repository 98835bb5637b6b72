import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import type { Actor } from '../../data/actor.js';
import { anyOf, equals } from '../../data/filters.js';
import { createAudited } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import type { Db } from '../../db/client.js';
import { INQUIRY_STATUSES, inquiries, users } from '../../db/schema/index.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Email, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { inquiryResponseMail } from '../../mail/templates.js';
import { leadResource } from './lead-resource.js';
import { UserRef, userRefFields } from './shared.js';

/**
 * Inquiries: messages from the website's contact form, answered by staff by e-mail. An inquiry belongs to the user who
 * recorded it through the API and to the one who responded to it (record scopes): one from the website belongs to
 * nobody until someone who sees every inquiry responds, so users with an `own` or `department` scope never see it.
 */
export const inquiryResource = defineResource({
  name: 'inquiries',
  module: 'crm',
  label: 'Inquiry',
  table: inquiries,
  id: inquiries.id,
  view: {
    fields: {
      id: inquiries.id, name: inquiries.name, email: inquiries.email, phone: inquiries.phone, subject: inquiries.subject,
      message: inquiries.message, status: inquiries.status, responded_by: userRefFields, response: inquiries.response,
      created_at: inquiries.created_at, updated_at: inquiries.updated_at, lead_id: inquiries.lead_id,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, inquiries.responded_by)),
  },
  list: {
    sortable: { created_at: inquiries.created_at, status: inquiries.status, updated_at: inquiries.updated_at },
    defaultSort: 'created_at',
    filters: { status: anyOf(inquiries.status, StringEnum(INQUIRY_STATUSES)), lead_id: equals(inquiries.lead_id, Uuid()) },
    search: [inquiries.name, inquiries.email, inquiries.subject],
  },
  export: {},
  ownership: [inquiries.created_by, inquiries.responded_by],
  references: () => ({ lead_id: leadResource }),
});

export const Inquiry = Strict({
  id: Uuid(),
  name: Type.String(),
  email: Type.String(),
  phone: Nullable(Type.String()),
  subject: Type.String(),
  message: Type.String(),
  status: StringEnum(INQUIRY_STATUSES),
  responded_by: UserRef,
  response: Nullable(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  lead_id: Nullable(Uuid({ description: 'The lead it was turned into (POST …/convert)' })),
});

/** The inquiry form, for staff and the public website alike. */
export const InquiryInput = Strict({
  name: RequiredText(),
  email: Email(),
  phone: Type.Optional(Nullable(RequiredText({ maxLength: 50 }))),
  subject: RequiredText(),
  message: Text({ minLength: 1 }),
});
type InquiryBody = typeof InquiryInput.static;

const InquiryPatch = PartialStrict(Strict({ status: StringEnum(INQUIRY_STATUSES), response: Text({ minLength: 1 }) }));

/** A new inquiry starts unread. */
export const inquiryValues = (body: InquiryBody) => ({ ...body, email: body.email.toLowerCase(), status: 'unread' as const });

/** Stores an inquiry sent through the public form, audited; its webhook events are `inquiry.created` and `inquiry.received`. */
export const receiveInquiry = (db: Db, actor: Actor, body: InquiryBody) => createAudited(db, actor, inquiryResource, inquiryValues(body), ['inquiry.received']);

export default async function inquiryRoutes(app: App) {
  resourceRoutes(app, inquiryResource, {
    path: '/api/crm/inquiries',
    Item: Inquiry,
    create: { body: InquiryInput, summary: 'Record an inquiry', values: (body, { actor }) => ({ ...inquiryValues(body), created_by: actor.userId }) },
    update: {
      body: InquiryPatch,
      summary: 'Update an inquiry; a response is stored and e-mailed to the inquirer',
      // A response names who gave it and marks the inquiry responded unless a status is sent.
      values: (body, _current, work) => (body.response === undefined ? body : { ...body, responded_by: work.actor.userId, status: body.status ?? 'responded' }),
      // After the commit, and never failing the request: the response is stored whatever the mail server says.
      committed: (row, body, { app }) => {
        if (body.response === undefined) return;
        app.mailer.send({ to: row.email, ...inquiryResponseMail(row.name, row.subject, body.response, row.message) })
          .catch((err: unknown) => app.log.error({ err, inquiry: row.id }, 'inquiry response mail failed'));
      },
    },
  });
}
