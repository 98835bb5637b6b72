import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { recordScope } from '../../../auth/guard.js';
import { findOne } from '../../../data/list.js';
import { LEAD_CHANNELS, LEAD_GROUP_KINDS, leadFlowRules, leadGroups, leadRouting, leads } from '../../../db/schema/index.js';
import { named } from '../../../http/openapi.js';
import { errorResponses, IdParams, Nullable, Strict, StringEnum, Timestamp, Uuid } from '../../../http/schemas.js';
import { leadResource } from '../lead-resource.js';
import { LeadPlanRun, runsOfLead } from './running-plans.js';

/**
 * A lead's flow: how it arrived and which rule routed it, the group it waits in, when it was assigned and first
 * contacted, where its speed-to-lead clock stands, and the action plans it runs and ran. Read with the caller's record
 * scope on the lead (404 outside it, as for an unknown lead).
 */
const LeadFlow = named('LeadFlow', Strict({
  rule: Nullable(Strict({ id: Uuid(), name: Type.String() }, { description: 'The rule that routed it; null when none did (created with an assignee, or before lead flow)' })),
  channel: Nullable(StringEnum(LEAD_CHANNELS, { description: 'How it arrived: website, import or api' })),
  pool: Nullable(Strict({ id: Uuid(), name: Type.String(), kind: StringEnum(LEAD_GROUP_KINDS) }, { description: 'The group it waits in to be claimed, while unassigned' })),
  claim_deadline: Nullable(Timestamp({ description: 'When a first-to-claim group\'s time runs out and the lead goes to its fallback' })),
  assigned_at: Nullable(Timestamp()),
  first_contact_at: Nullable(Timestamp({ description: 'The first call, e-mail, meeting or site visit staff logged' })),
  minutes_to_first_contact: Nullable(Type.Integer({ description: 'From its assignment to its first contact, in minutes' })),
  speed_due_at: Nullable(Timestamp({ description: 'When its speed-to-lead limit passes (working time)' })),
  speed_stage: Type.Integer({ description: '0 on time or no limit, 1 assignee reminded, 2 manager told, 3 reassigned' }),
  plans: Type.Array(LeadPlanRun),
}));

export default async function leadFlowRoutes(app: App) {
  const { db } = app.database;
  app.get('/api/crm/leads/:id/flow', {
    schema: { operationId: 'getLeadFlow', summary: 'A lead\'s flow: its rule, pool, assignment, first contact, speed to lead and action plans', params: IdParams, response: { 200: LeadFlow, ...errorResponses } },
  }, async (request) => {
    await findOne(db, leadResource, request.params.id, await recordScope(app, request, leadResource));
    const [row] = await db.select({
      rule_id: leadFlowRules.id, rule_name: leadFlowRules.name, channel: leadRouting.channel, pool_id: leadGroups.id, pool_name: leadGroups.name, pool_kind: leadGroups.kind,
      claim_deadline: leadRouting.claim_deadline, assigned_at: leadRouting.assigned_at, first_contact_at: leadRouting.first_contact_at,
      speed_due_at: leadRouting.speed_due_at, speed_stage: leadRouting.speed_stage,
    }).from(leads).leftJoin(leadRouting, eq(leadRouting.lead_id, leads.id)).leftJoin(leadFlowRules, eq(leadFlowRules.id, leadRouting.rule_id))
      .leftJoin(leadGroups, eq(leadGroups.id, leads.pool_id)).where(eq(leads.id, request.params.id));
    const contact = row.first_contact_at && row.assigned_at ? Math.max(0, Math.round((row.first_contact_at.getTime() - row.assigned_at.getTime()) / 60_000)) : null;
    return {
      rule: row.rule_id ? { id: row.rule_id, name: row.rule_name! } : null,
      channel: row.channel,
      pool: row.pool_id ? { id: row.pool_id, name: row.pool_name!, kind: row.pool_kind! } : null,
      claim_deadline: row.claim_deadline, assigned_at: row.assigned_at, first_contact_at: row.first_contact_at, minutes_to_first_contact: contact,
      speed_due_at: row.speed_due_at, speed_stage: row.speed_stage ?? 0,
      plans: await runsOfLead(db, request.params.id),
    };
  });
}
