import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { eq } from 'drizzle-orm';
import { LEAD_SOURCES, LEAD_STATUSES, leads } from '../../db/schema/index.js';
import { validationError } from '../../errors.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Email, Nullable, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { detachLead } from './lead-links.js';
import { noticeAssignment } from './notices.js';
import { requireAssignee, UserRef, withLowerEmail } from './shared.js';
import { leadResource } from './lead-resource.js';
import { ANY_RULE, recordAssignment, routeLead } from './lead-flow/routing.js';
import { stopRunsOfLead } from './lead-flow/running-plans.js';
import { leadChanged } from './lead-flow/lead-changes.js';

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

export const LeadInput = Strict({
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

/** A lead is reachable: at least one of e-mail and phone (CONTRACT §8). */
export function assertContact(lead: { email?: string | null; phone?: string | null }) {
  if (!lead.email && !lead.phone) throw validationError({ email: 'email or phone is required', phone: 'email or phone is required' });
}

export default async function leadRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, leadResource, {
    path: '/api/crm/leads',
    Item: Lead,
    create: {
      body: LeadInput,
      values: async (body, { actor }) => {
        assertContact(body);
        await requireAssignee(db, body.assigned_to, 'assigned_to');
        return { ...withLowerEmail(body), created_by: actor.userId };
      },
      // A lead sent without an assignee is routed by the lead-flow rules (channel `api`) in its creation's transaction;
      // with no rules (lead flow off) and no assignee, it is the plain one-statement create, which checks for rules itself.
      needsInsert: (values) => !!values.assigned_to,
      insertWhen: ANY_RULE,
      insert: async (work, values) => {
        const row = await work.create(leadResource, values);
        if (row.assigned_to) await recordAssignment(work, { lead: row, previous: null, how: 'manual', rule: null, channel: 'api' });
        else await routeLead({ work, services: app }, row, 'api');
        const [routed] = await work.tx.select().from(leads).where(eq(leads.id, row.id));
        return routed;
      },
      // A routed lead's assignee is told by the routing itself.
      committed: (row, body, { app, actor }) => {
        if (body.assigned_to) noticeAssignment(app, row, row.assigned_to, actor.userId);
      },
    },
    update: {
      validate: (body) => requireAssignee(db, body.assigned_to, 'assigned_to'),
      values: (body, current) => {
        const patch = withLowerEmail(body);
        assertContact({ email: 'email' in patch ? patch.email : current.email, phone: 'phone' in patch ? patch.phone : current.phone });
        // Assigned by hand: out of any pool it waited in.
        return patch.assigned_to && patch.assigned_to !== current.assigned_to ? { ...patch, pool_id: null } : patch;
      },
      // In its transaction: a status its plans do not run in stops them; a new assignee is recorded as assigned by hand.
      after: (row, before, work) => leadChanged(work, row, before),
      committed: (row, _body, { app, actor }, before) => {
        if (row.assigned_to !== before.assigned_to) noticeAssignment(app, row, row.assigned_to, actor.userId);
      },
    },
    // Its activities go with it; its follow-ups, reservations and inquiries forget it (audited). Loaded when first
    // needed: those modules name leads themselves, so a static import would make a cycle.
    remove: {
      before: async (current, work) => {
        await stopRunsOfLead(work, current.id, 'lead deleted');
        await detachLead(work, current.id);
      },
    },
  });
}
