import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../app.js';
import { LEAD_SOURCES, LEAD_STATUSES, leads, users } from '../../db/schema/index.js';
import { type Collection, createRecord, deleteRecord, findOne, updateRecord } from '../../http/crud.js';
import { validationError } from '../../http/errors.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { Created, Email, errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { lower, requireUser, UserRef, userRefFields } from './shared.js';

const collection: Collection = { table: leads, id: leads.id, module: 'crm', resource: 'leads', label: 'Lead' };

export const Lead = Strict({
  id: Uuid(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  source: StringEnum(LEAD_SOURCES),
  status: StringEnum(LEAD_STATUSES),
  interest: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  assigned_to: UserRef,
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

const LeadInput = Strict({
  first_name: RequiredText(),
  last_name: RequiredText(),
  email: Type.Optional(Nullable(Email())),
  phone: Type.Optional(Nullable(RequiredText({ maxLength: 50 }))),
  source: Type.Optional(StringEnum(LEAD_SOURCES)),
  status: Type.Optional(StringEnum(LEAD_STATUSES)),
  interest: Type.Optional(Nullable(Text())),
  notes: Type.Optional(Nullable(Text())),
  assigned_to: Type.Optional(Nullable(Uuid())),
});
type LeadBody = typeof LeadInput.static;

export const leadList: ListSpec = {
  collection: 'leads',
  table: leads,
  id: leads.id,
  sortable: { created_at: leads.created_at, first_name: leads.first_name, last_name: leads.last_name, status: leads.status, updated_at: leads.updated_at },
  defaultSort: 'created_at',
  filters: {
    status: { schema: StringEnum(LEAD_STATUSES), where: (v) => eq(leads.status, v) },
    source: { schema: StringEnum(LEAD_SOURCES), where: (v) => eq(leads.source, v) },
    assigned_to: { schema: Uuid(), where: (v) => eq(leads.assigned_to, v) },
  },
  search: [leads.first_name, leads.last_name, leads.email, leads.phone],
};

export const leadView: View = {
  fields: {
    id: leads.id, first_name: leads.first_name, last_name: leads.last_name, email: leads.email, phone: leads.phone,
    source: leads.source, status: leads.status, interest: leads.interest, notes: leads.notes,
    assigned_to: userRefFields, created_at: leads.created_at, updated_at: leads.updated_at,
  },
  joins: (query) => query.leftJoin(users, eq(users.id, leads.assigned_to)),
};

const contactMissing = () => validationError({ email: 'email or phone is required', phone: 'email or phone is required' });

/** Leads: prospective buyers, their source, status and the staff member they are assigned to. */
export default async function leadRoutes(app: App) {
  app.get('/api/crm/leads', {
    schema: { summary: 'List leads', querystring: listQuerySchema(leadList), response: { 200: Paginated(Lead), ...errorResponses } },
  }, async (request) => app.lists.page(leadList, leadView, request.query as ListQuery));

  app.get('/api/crm/leads/:id', {
    schema: { summary: 'One lead', params: IdParams, response: { 200: Lead, ...errorResponses } },
  }, async (request) => findOne(app.database.db, collection, leadView, request.params.id));

  app.post('/api/crm/leads', {
    schema: { summary: 'Create a lead', body: LeadInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const body = request.body as LeadBody;
    if (!body.email && !body.phone) throw contactMissing();
    await requireUser(app.database.db, body.assigned_to, 'assigned_to');
    const row = await createRecord(app, request, collection, { ...body, email: lower(body.email) });
    return reply.code(201).send({ id: row.id, message: 'Lead created' });
  });

  app.patch('/api/crm/leads/:id', {
    schema: { summary: 'Update a lead (only the fields sent)', params: IdParams, body: PartialStrict(LeadInput), response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const body = request.body as Partial<LeadBody>;
    await requireUser(app.database.db, body.assigned_to, 'assigned_to');
    const patch = body.email === undefined ? body : { ...body, email: lower(body.email) };
    await updateRecord(app, request, collection, request.params.id, patch, {
      check: (current) => {
        const email = 'email' in patch ? patch.email : current.email;
        const phone = 'phone' in patch ? patch.phone : current.phone;
        if (!email && !phone) throw contactMissing();
      },
    });
    return { message: 'Lead updated' };
  });

  app.delete('/api/crm/leads/:id', {
    schema: { summary: 'Delete a lead', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, collection, request.params.id);
    return { message: 'Lead deleted' };
  });
}
