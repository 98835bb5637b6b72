import { eq } from 'drizzle-orm';
import { anyOf, equals } from '../../data/filters.js';
import { defineResource } from '../../data/resource.js';
import { LEAD_SOURCES, LEAD_STATUSES, leads, users } from '../../db/schema/index.js';
import { StringEnum, Uuid } from '../../http/schemas.js';
import { userRefFields } from './shared.js';

// The declaration alone (its routes and rules are in leads.ts): the resources that link a lead import it from here.

/**
 * Leads: prospective buyers, their source, status and the staff member they are assigned to. A lead belongs to its
 * assignee and to the user who created it through the API (record scopes; imported leads: their assignee only).
 */
export const leadResource = defineResource({
  name: 'leads',
  module: 'crm',
  label: 'Lead',
  table: leads,
  id: leads.id,
  view: {
    fields: {
      id: leads.id, first_name: leads.first_name, last_name: leads.last_name, email: leads.email, phone: leads.phone,
      source: leads.source, status: leads.status, interest: leads.interest, notes: leads.notes,
      assigned_to: userRefFields, created_at: leads.created_at, updated_at: leads.updated_at,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, leads.assigned_to)),
  },
  list: {
    sortable: { created_at: leads.created_at, first_name: leads.first_name, last_name: leads.last_name, status: leads.status, updated_at: leads.updated_at },
    defaultSort: 'created_at',
    filters: {
      status: anyOf(leads.status, StringEnum(LEAD_STATUSES)),
      source: anyOf(leads.source, StringEnum(LEAD_SOURCES)),
      assigned_to: equals(leads.assigned_to, Uuid()),
    },
    search: [leads.first_name, leads.last_name, leads.email, leads.phone],
  },
  export: {},
  // A lead waiting in a pond or a first-to-claim group (`pool_id`) is also its members' (their owners include the group).
  ownership: [leads.assigned_to, leads.created_by, leads.pool_id],
});
