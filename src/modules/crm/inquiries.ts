import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.js';
import { currentPrincipal } from '../../auth/guard.js';
import { INQUIRY_STATUSES, inquiries, users } from '../../db/schema/index.js';
import { type Collection, createRecord, deleteRecord, findOne, updateRecord } from '../../http/crud.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { Created, Email, errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { escapeHtml, layout, type Rendered } from '../../mail/templates.js';
import { UserRef, userRefFields } from './shared.js';

const collection: Collection = { table: inquiries, id: inquiries.id, module: 'crm', resource: 'inquiries', label: 'Inquiry' };

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
});

/** The inquiry form, for staff and the public website alike. */
export const InquiryInput = Strict({
  name: RequiredText(),
  email: Email(),
  phone: Type.Optional(Nullable(RequiredText({ maxLength: 50 }))),
  subject: RequiredText(),
  message: Text({ minLength: 1 }),
});
export type InquiryBody = typeof InquiryInput.static;

const InquiryPatch = PartialStrict(Strict({ status: StringEnum(INQUIRY_STATUSES), response: Text({ minLength: 1 }) }));

export const inquiryList: ListSpec = {
  collection: 'inquiries',
  table: inquiries,
  id: inquiries.id,
  sortable: { created_at: inquiries.created_at, status: inquiries.status, updated_at: inquiries.updated_at },
  defaultSort: 'created_at',
  filters: { status: { schema: StringEnum(INQUIRY_STATUSES), where: (v) => eq(inquiries.status, v) } },
  search: [inquiries.name, inquiries.email, inquiries.subject],
};

export const inquiryView: View = {
  fields: {
    id: inquiries.id, name: inquiries.name, email: inquiries.email, phone: inquiries.phone, subject: inquiries.subject,
    message: inquiries.message, status: inquiries.status, responded_by: userRefFields, response: inquiries.response,
    created_at: inquiries.created_at, updated_at: inquiries.updated_at,
  },
  joins: (query) => query.leftJoin(users, eq(users.id, inquiries.responded_by)),
};

/** Stores a new inquiry (status unread), audited; used by staff and by the public form. */
export async function createInquiry(app: App, request: FastifyRequest, body: InquiryBody) {
  return createRecord(app, request, collection, { ...body, email: body.email.toLowerCase(), status: 'unread' });
}

export function inquiryResponseMail(name: string, subject: string, response: string, original: string): Rendered {
  const title = `Re: ${subject}`;
  const quoted = original.split('\n').map((line) => `> ${line}`).join('\n');
  return {
    subject: title,
    text: `Hello ${name},\n\n${response}\n\n${quoted}\n`,
    html: layout(title, `<p>Hello ${escapeHtml(name)},</p><p style="white-space:pre-wrap">${escapeHtml(response)}</p>` +
      `<blockquote style="color:#666;border-left:3px solid #ccc;margin:1em 0;padding-left:1em;white-space:pre-wrap">${escapeHtml(original)}</blockquote>`),
  };
}

/** Inquiries: messages from the website's contact form, answered by staff by e-mail. */
export default async function inquiryRoutes(app: App) {
  app.get('/api/crm/inquiries', {
    schema: { summary: 'List inquiries', querystring: listQuerySchema(inquiryList), response: { 200: Paginated(Inquiry), ...errorResponses } },
  }, async (request) => app.lists.page(inquiryList, inquiryView, request.query as ListQuery));

  app.get('/api/crm/inquiries/:id', {
    schema: { summary: 'One inquiry', params: IdParams, response: { 200: Inquiry, ...errorResponses } },
  }, async (request) => findOne(app.database.db, collection, inquiryView, request.params.id));

  app.post('/api/crm/inquiries', {
    schema: { summary: 'Record an inquiry', body: InquiryInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const row = await createInquiry(app, request, request.body as InquiryBody);
    return reply.code(201).send({ id: row.id, message: 'Inquiry created' });
  });

  app.patch('/api/crm/inquiries/:id', {
    schema: {
      summary: 'Update an inquiry; a response is stored and e-mailed to the inquirer',
      params: IdParams,
      body: InquiryPatch,
      response: { 200: Message, ...errorResponses },
    },
  }, async (request) => {
    const body = request.body as { status?: (typeof INQUIRY_STATUSES)[number]; response?: string };
    const patch: Record<string, unknown> = { ...body };
    if (body.response !== undefined) {
      const principal = await currentPrincipal(app, request);
      patch.responded_by = principal.user.id;
      patch.status = body.status ?? 'responded';
    }
    const row = await updateRecord(app, request, collection, request.params.id, patch);
    if (body.response !== undefined) {
      // After the commit, and never failing the request: the response is stored whatever the mail server says.
      const mail = inquiryResponseMail(row.name, row.subject, body.response, row.message);
      app.mailer.send({ to: row.email, ...mail }).catch((err) => request.log.error({ err, inquiry: row.id }, 'inquiry response mail failed'));
    }
    return { message: 'Inquiry updated' };
  });

  app.delete('/api/crm/inquiries/:id', {
    schema: { summary: 'Delete an inquiry', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, collection, request.params.id);
    return { message: 'Inquiry deleted' };
  });
}
