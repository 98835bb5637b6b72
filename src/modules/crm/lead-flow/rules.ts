import { Type } from '@sinclair/typebox';
import { and, asc, eq, max, ne, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { clock } from '../../../clock.js';
import { audited } from '../../../data/mutations.js';
import { defineResource } from '../../../data/resource.js';
import type { Executor } from '../../../db/client.js';
import { actionPlans, LEAD_CHANNELS, LEAD_SOURCES, leadFlowRules, leadGroups, projects, SPEED_LIMIT_ACTIONS } from '../../../db/schema/index.js';
import { conflict, notFound, validationError } from '../../../errors.js';
import { actorOf } from '../../../http/actor.js';
import { named } from '../../../http/openapi.js';
import { Created, errorResponses, IdParams, Message, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../../http/schemas.js';
import { requireAgent } from './groups.js';
import { requireFlowManager } from './settings-access.js';

/**
 * Lead flow rules: tried in `position` order for a new lead without an assignee, the default rule (no conditions, one
 * at most) last. The first whose conditions all match (how the lead arrived, its source, a project its interest names)
 * sends it to a user or a group, and may start an action plan and a speed-to-lead clock.
 */
export const leadFlowRuleResource = defineResource({
  name: 'lead_flow_rules',
  module: 'crm',
  label: 'Lead flow rule',
  table: leadFlowRules,
  id: leadFlowRules.id,
  view: { fields: { id: leadFlowRules.id, name: leadFlowRules.name, position: leadFlowRules.position } },
});

const fields = {
  name: RequiredText({ maxLength: 200, examples: ['Website leads for Azure Residences'] }),
  position: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Rules are tried by position, ascending (the default rule last, whatever its position)' }),
  is_default: Type.Boolean({ description: 'The rule for every lead no other rule took; it has no conditions' }),
  channel: Nullable(StringEnum(LEAD_CHANNELS, { description: 'How the lead arrived; null: any' })),
  source: Nullable(StringEnum(LEAD_SOURCES, { description: 'The lead\'s source; null: any' })),
  project_id: Nullable(Uuid({ description: 'A project the lead\'s interest names (its name, case-insensitive, inside the interest text); null: any' })),
  assign_user_id: Nullable(Uuid({ description: 'The user it goes to (or a group)' })),
  assign_group_id: Nullable(Uuid({ description: 'The group it goes to (or a user)' })),
  action_plan_id: Nullable(Uuid({ description: 'An action plan started when the lead is assigned' })),
  speed_limit_minutes: Nullable(Type.Integer({ minimum: 1, maximum: 10080, description: 'Working minutes the assignee has to first contact the lead', examples: [30] })),
  on_speed_limit: StringEnum(SPEED_LIMIT_ACTIONS, { description: 'When the limit passes: remind, or also reassign to the group\'s fallback' }),
};

export const LeadFlowRule = Strict({ id: Uuid(), ...fields, created_at: Timestamp(), updated_at: Timestamp() });

const LeadFlowRuleInput = Strict({
  name: fields.name,
  position: Type.Optional(fields.position),
  is_default: Type.Optional(fields.is_default),
  channel: Type.Optional(fields.channel),
  source: Type.Optional(fields.source),
  project_id: Type.Optional(fields.project_id),
  assign_user_id: Type.Optional(fields.assign_user_id),
  assign_group_id: Type.Optional(fields.assign_group_id),
  action_plan_id: Type.Optional(fields.action_plan_id),
  speed_limit_minutes: Type.Optional(fields.speed_limit_minutes),
  on_speed_limit: Type.Optional(fields.on_speed_limit),
});
type RuleRow = typeof leadFlowRules.$inferSelect;
type RuleValues = Omit<RuleRow, 'id' | 'created_at' | 'updated_at' | 'position'> & { position?: number };

const exists = async (db: Executor, table: typeof projects | typeof actionPlans | typeof leadGroups, id: string) =>
  (await db.select({ id: table.id }).from(table).where(eq(table.id, id)).limit(1)).length > 0;

/** The checks of a rule as it would be after the change (`exceptId`: the rule itself, when it exists). */
async function checkRule(db: Executor, rule: RuleValues, exceptId?: string) {
  if (!rule.assign_user_id === !rule.assign_group_id) throw validationError({ assign_user_id: 'name one target: a user (assign_user_id) or a group (assign_group_id)' });
  if (rule.is_default && (rule.channel || rule.source || rule.project_id)) {
    throw validationError({ is_default: 'the default rule takes every lead no other rule took: it has no channel, source or project' });
  }
  if (rule.assign_user_id) await requireAgent(db, rule.assign_user_id, 'assign_user_id');
  if (rule.assign_group_id && !(await exists(db, leadGroups, rule.assign_group_id))) throw validationError({ assign_group_id: 'must be an existing lead group' });
  if (rule.project_id && !(await exists(db, projects, rule.project_id))) throw validationError({ project_id: 'must be an existing project' });
  if (rule.action_plan_id && !(await exists(db, actionPlans, rule.action_plan_id))) throw validationError({ action_plan_id: 'must be an existing action plan' });
  if (rule.is_default) {
    const [other] = await db.select({ name: leadFlowRules.name }).from(leadFlowRules)
      .where(and(eq(leadFlowRules.is_default, true), exceptId ? ne(leadFlowRules.id, exceptId) : undefined)).limit(1);
    if (other) throw conflict(`"${other.name}" is already the default rule: there is one at most`);
  }
  if (rule.position !== undefined) {
    const [other] = await db.select({ name: leadFlowRules.name }).from(leadFlowRules)
      .where(and(eq(leadFlowRules.position, rule.position), exceptId ? ne(leadFlowRules.id, exceptId) : undefined)).limit(1);
    if (other) throw conflict(`Position ${rule.position} is "${other.name}"'s: choose another position, or move that rule first`);
  }
}

/** Serialises rule changes: positions and the default are checked, then written, by one change at a time. */
const lockRules = (db: Executor) => db.execute(sql`select pg_advisory_xact_lock(hashtext('lead_flow_rules'))`);

export default async function leadFlowRuleRoutes(app: App) {
  const { db } = app.database;
  const path = '/api/crm/lead-flow/rules';
  const manager = requireFlowManager(app);
  named('LeadFlowRule', LeadFlowRule);
  const RuleList = named('LeadFlowRuleList', Strict({ data: Type.Array(LeadFlowRule) }));
  const ordered = [asc(leadFlowRules.is_default), asc(leadFlowRules.position)];

  app.get(path, {
    schema: { operationId: 'listLeadFlowRules', summary: 'All lead flow rules, in the order they are tried', response: { 200: RuleList, ...errorResponses } },
  }, async () => ({ data: await db.select().from(leadFlowRules).orderBy(...ordered) }));

  app.get(`${path}/:id`, {
    schema: { operationId: 'getLeadFlowRule', summary: 'One lead flow rule', params: IdParams, response: { 200: LeadFlowRule, ...errorResponses } },
  }, async (request) => {
    const [rule] = await db.select().from(leadFlowRules).where(eq(leadFlowRules.id, request.params.id));
    if (!rule) throw notFound('Lead flow rule');
    return rule;
  });

  app.post(path, {
    preHandler: manager,
    schema: {
      operationId: 'createLeadFlowRule', summary: 'Create a lead flow rule (administrators and department managers); without a position, it goes last',
      body: named('LeadFlowRuleCreate', LeadFlowRuleInput), response: { 201: Created, ...errorResponses }, 'x-answer-message': 'Lead flow rule created',
    },
  }, async (request, reply) => {
    const body = request.body;
    const values: RuleValues = {
      name: body.name, position: body.position, is_default: body.is_default ?? false, channel: body.channel ?? null, source: body.source ?? null,
      project_id: body.project_id ?? null, assign_user_id: body.assign_user_id ?? null, assign_group_id: body.assign_group_id ?? null,
      action_plan_id: body.action_plan_id ?? null, speed_limit_minutes: body.speed_limit_minutes ?? null, on_speed_limit: body.on_speed_limit ?? 'remind',
    };
    const rule = await audited(db, await actorOf(app, request), async (work) => {
      await lockRules(work.tx);
      await checkRule(work.tx, values);
      const [{ last }] = await work.tx.select({ last: max(leadFlowRules.position) }).from(leadFlowRules);
      return work.create(leadFlowRuleResource, { ...values, position: values.position ?? (last === null ? 0 : last + 1) });
    });
    return reply.code(201).send({ id: rule.id, message: 'Lead flow rule created' });
  });

  app.patch(`${path}/:id`, {
    preHandler: manager,
    schema: {
      operationId: 'updateLeadFlowRule', summary: 'Update a lead flow rule (only the fields sent)', params: IdParams,
      body: named('LeadFlowRuleUpdate', PartialStrict(LeadFlowRuleInput)), response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Lead flow rule updated',
    },
  }, async (request) => {
    const body = request.body;
    await audited(db, await actorOf(app, request), async (work) => {
      await lockRules(work.tx);
      await work.update(leadFlowRuleResource, request.params.id, async (current) => {
        // Naming one target replaces the other.
        const target = body.assign_user_id ? { assign_group_id: null } : body.assign_group_id ? { assign_user_id: null } : {};
        const next = { ...current, ...target, ...body } as RuleRow;
        await checkRule(work.tx, { ...next, position: body.position }, current.id);
        return { ...target, ...body, updated_at: clock.now() };
      });
    });
    return { message: 'Lead flow rule updated' };
  });

  app.delete(`${path}/:id`, {
    preHandler: manager,
    schema: {
      operationId: 'deleteLeadFlowRule', summary: 'Delete a lead flow rule (leads it routed keep their assignee)', params: IdParams,
      response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Lead flow rule deleted',
    },
  }, async (request) => {
    await audited(db, await actorOf(app, request), (work) => work.remove(leadFlowRuleResource, request.params.id));
    return { message: 'Lead flow rule deleted' };
  });
}
