import { Type } from '@sinclair/typebox';
import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { clock } from '../../../clock.js';
import { audited, type Work } from '../../../data/mutations.js';
import { defineResource } from '../../../data/resource.js';
import type { Executor } from '../../../db/client.js';
import { actionPlans, actionPlanSteps, leadActionPlans, LEAD_STATUSES, PLAN_OFFSET_UNITS, PLAN_STEP_KINDS } from '../../../db/schema/index.js';
import { conflict, notFound } from '../../../errors.js';
import { actorOf } from '../../../http/actor.js';
import { named } from '../../../http/openapi.js';
import { Created, errorResponses, IdParams, Message, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../../http/schemas.js';
import { stopRun } from './running-plans.js';
import { requireLeadFlowManager } from './settings-access.js';

/**
 * Action plans: a named sequence of follow-ups (call now, e-mail the next working day, call on day 3…) that a rule or
 * a person attaches to a lead. A plan and its steps are one record to the audit trail (resource `action_plans`, its
 * steps inside). Administrators and department managers change them; crm readers read them.
 */
export const planResource = defineResource({
  name: 'action_plans',
  module: 'crm',
  label: 'Action plan',
  table: actionPlans,
  id: actionPlans.id,
  view: { fields: { id: actionPlans.id, name: actionPlans.name, active_statuses: actionPlans.active_statuses, created_at: actionPlans.created_at, updated_at: actionPlans.updated_at } },
});

const PlanStep = Strict({
  id: Uuid(),
  position: Type.Integer({ description: 'Its place in the plan, from 0' }),
  kind: StringEnum(PLAN_STEP_KINDS),
  title: Type.String(),
  offset_amount: Type.Integer({ description: 'How long after the plan starts the follow-up is due, in working time' }),
  offset_unit: StringEnum(PLAN_OFFSET_UNITS),
});

export const ActionPlan = named('ActionPlan', Strict({
  id: Uuid(),
  name: Type.String(),
  active_statuses: Type.Array(StringEnum(LEAD_STATUSES), { description: 'The plan runs while its lead\'s status is one of these; it stops when the status leaves them' }),
  steps: Type.Array(named('ActionPlanStep', PlanStep)),
  running: Type.Integer({ description: 'Leads it runs on now' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}));

const StepInput = named('ActionPlanStepInput', Strict({
  kind: StringEnum(PLAN_STEP_KINDS, { description: 'What to do: its follow-up\'s title starts with it' }),
  title: RequiredText({ maxLength: 200 }),
  offset_amount: Type.Integer({ minimum: 0, maximum: 1000, description: 'Working hours or working days after the plan starts (0: at once)' }),
  offset_unit: StringEnum(PLAN_OFFSET_UNITS),
}));
const Fields = {
  name: RequiredText({ maxLength: 200 }),
  active_statuses: Type.Array(StringEnum(LEAD_STATUSES), { minItems: 1, uniqueItems: true, description: 'Default: new, contacted, qualified' }),
  steps: Type.Array(StepInput, { minItems: 1, maxItems: 50, description: 'In order; each becomes a follow-up when the plan starts' }),
};
const PlanInput = named('ActionPlanCreate', Strict({ ...Fields, active_statuses: Type.Optional(Fields.active_statuses) }));
const PlanPatch = named('ActionPlanUpdate', PartialStrict(Strict(Fields)));
const PlanList = named('ActionPlanList', Strict({ data: Type.Array(ActionPlan) }));

type PlanBody = Partial<typeof PlanInput.static>;
export type Plan = typeof ActionPlan.static;

/** Plans with their steps in order and the number of leads each runs on: one plan (`id`) or all, by name. */
export async function readPlans(db: Executor, id?: string): Promise<Plan[]> {
  const plans = await db.select().from(actionPlans).where(id ? eq(actionPlans.id, id) : undefined).orderBy(sql`lower(${actionPlans.name})`, asc(actionPlans.id));
  if (!plans.length) return [];
  const ids = plans.map((plan) => plan.id);
  const steps = await db.select().from(actionPlanSteps).where(inArray(actionPlanSteps.plan_id, ids)).orderBy(asc(actionPlanSteps.position));
  const running = await db.select({ plan_id: leadActionPlans.plan_id, n: count() }).from(leadActionPlans)
    .where(and(inArray(leadActionPlans.plan_id, ids), isNull(leadActionPlans.stopped_at))).groupBy(leadActionPlans.plan_id);
  return plans.map((plan) => ({
    ...plan,
    steps: steps.filter((step) => step.plan_id === plan.id).map(({ plan_id: _, ...step }) => step),
    running: Number(running.find((r) => r.plan_id === plan.id)?.n ?? 0),
  }));
}

/** 409 when another plan already has this name (compared case-insensitively). */
async function assertNameFree(db: Executor, name: string, exceptId?: string) {
  const [taken] = await db.select({ id: actionPlans.id }).from(actionPlans).where(sql`lower(${actionPlans.name}) = lower(${name})`);
  if (taken && taken.id !== exceptId) throw conflict(`An action plan named "${name}" already exists`, { name: 'already taken' });
}

/** A plan as its audit record holds it: the row and its steps (without ids, which are replaced with every change). */
const auditView = (plan: Plan) => ({
  id: plan.id, name: plan.name, active_statuses: plan.active_statuses,
  steps: plan.steps.map(({ kind, title, offset_amount, offset_unit }) => ({ kind, title, offset_amount, offset_unit })),
});

async function writeSteps(work: Work, planId: string, steps: NonNullable<PlanBody['steps']>) {
  await work.tx.delete(actionPlanSteps).where(eq(actionPlanSteps.plan_id, planId));
  await work.tx.insert(actionPlanSteps).values(steps.map((step, position) => ({ ...step, plan_id: planId, position })));
}

/** One plan, locked until the transaction ends, or 404. */
async function lockedPlan(work: Work, id: string): Promise<Plan> {
  await work.lock(planResource, id);
  return (await readPlans(work.tx, id))[0];
}

export default async function planRoutes(app: App) {
  const { db } = app.database;
  const tags = ['crm'];

  app.get('/api/crm/lead-flow/plans', {
    schema: { tags, operationId: 'listActionPlans', summary: 'Every action plan with its steps, by name', querystring: Strict({}), response: { 200: PlanList, ...errorResponses } },
  }, async () => ({ data: await readPlans(db) }));

  app.get('/api/crm/lead-flow/plans/:id', {
    schema: { tags, operationId: 'getActionPlan', summary: 'One action plan with its steps', params: IdParams, response: { 200: ActionPlan, ...errorResponses } },
  }, async (request) => {
    const [plan] = await readPlans(db, request.params.id);
    if (!plan) throw notFound(planResource.label);
    return plan;
  });

  app.post('/api/crm/lead-flow/plans', {
    schema: {
      tags, operationId: 'createActionPlan', summary: 'Create an action plan (administrators and department managers)',
      body: PlanInput, response: { 201: Created, ...errorResponses }, 'x-answer-message': 'Action plan created',
    },
  }, async (request, reply) => {
    await requireLeadFlowManager(app, request);
    const body = request.body as typeof PlanInput.static;
    const { name } = body;
    await assertNameFree(db, name);
    const id = await audited(db, await actorOf(app, request), async (work) => {
      const [row] = await work.tx.insert(actionPlans).values({ name, ...(body.active_statuses ? { active_statuses: body.active_statuses } : {}) }).returning();
      await writeSteps(work, row.id, body.steps);
      const [plan] = await readPlans(work.tx, row.id);
      await work.audit({ action: 'create', resource: planResource, id: row.id, after: auditView(plan) });
      return row.id;
    });
    return reply.code(201).send({ id, message: 'Action plan created' });
  });

  app.patch('/api/crm/lead-flow/plans/:id', {
    schema: {
      tags, operationId: 'updateActionPlan', summary: 'Change an action plan (only the fields sent; `steps` replaces them all). Plans already running keep their follow-ups',
      params: IdParams, body: PlanPatch, response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Action plan updated',
    },
  }, async (request) => {
    await requireLeadFlowManager(app, request);
    const body = request.body as PlanBody;
    const { name } = body;
    await audited(db, await actorOf(app, request), async (work) => {
      const before = await lockedPlan(work, request.params.id);
      if (name !== undefined) await assertNameFree(work.tx, name, before.id);
      const values = { ...(name !== undefined ? { name } : {}), ...(body.active_statuses ? { active_statuses: body.active_statuses } : {}) };
      if (Object.keys(values).length || body.steps) await work.tx.update(actionPlans).set({ ...values, updated_at: clock.now() }).where(eq(actionPlans.id, before.id));
      if (body.steps) await writeSteps(work, before.id, body.steps);
      const [after] = await readPlans(work.tx, before.id);
      await work.audit({ action: 'update', resource: planResource, id: before.id, before: auditView(before), after: auditView(after) });
    });
    return { message: 'Action plan updated' };
  });

  app.delete('/api/crm/lead-flow/plans/:id', {
    schema: {
      tags, operationId: 'deleteActionPlan', summary: 'Delete an action plan: it stops on every lead it runs on (their open follow-ups removed); rules naming it attach none',
      params: IdParams, response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Action plan deleted',
    },
  }, async (request) => {
    await requireLeadFlowManager(app, request);
    await audited(db, await actorOf(app, request), async (work) => {
      const before = await lockedPlan(work, request.params.id);
      const runs = await work.tx.select({ id: leadActionPlans.id }).from(leadActionPlans).where(and(eq(leadActionPlans.plan_id, before.id), isNull(leadActionPlans.stopped_at)));
      for (const run of runs) await stopRun(work, run.id, 'plan deleted');
      await work.tx.delete(actionPlans).where(eq(actionPlans.id, before.id));
      await work.audit({ action: 'delete', resource: planResource, id: before.id, before: auditView(before) });
    });
    return { message: 'Action plan deleted' };
  });
}
