import { Type } from '@sinclair/typebox';
import { and, asc, count, desc, eq, isNull, not, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { recordScope } from '../../../auth/guard.js';
import { clock } from '../../../clock.js';
import { findOne } from '../../../data/list.js';
import { audited, type Work } from '../../../data/mutations.js';
import { defineResource } from '../../../data/resource.js';
import type { Executor } from '../../../db/client.js';
import { actionPlans, actionPlanSteps, crmTasks, leadActionPlans, planTasks } from '../../../db/schema/index.js';
import { conflict, notFound, validationError } from '../../../errors.js';
import { actorOf } from '../../../http/actor.js';
import { named } from '../../../http/openapi.js';
import { Created, errorResponses, Message, Nullable, Strict, Timestamp, Uuid } from '../../../http/schemas.js';
import { leadResource } from '../lead-resource.js';
import { taskResource } from '../tasks.js';
import { workSchedule } from './schedule.js';
import { addWorkingDays, addWorkingHours } from './working-time.js';

/**
 * Action plans running on leads: starting one writes each step's follow-up (due in working time from the start,
 * assigned to the lead's assignee); stopping one removes its follow-ups not yet done. A run stops when its lead's status
 * leaves the plan's statuses, when a person stops it, or when the lead is deleted. Every change is audited in the
 * transaction that makes it (resource `lead_action_plans`, and the follow-ups as `tasks`).
 */
export const runResource = defineResource({
  name: 'lead_action_plans',
  module: 'crm',
  label: 'Lead action plan',
  table: leadActionPlans,
  id: leadActionPlans.id,
  view: {
    fields: {
      id: leadActionPlans.id, lead_id: leadActionPlans.lead_id, plan_id: leadActionPlans.plan_id, started_at: leadActionPlans.started_at,
      stopped_at: leadActionPlans.stopped_at, stop_reason: leadActionPlans.stop_reason, created_at: leadActionPlans.created_at, updated_at: leadActionPlans.updated_at,
    },
  },
});

/** Why a run stopped, as `stop_reason` says it. */
export type StopReason = 'stopped by hand' | 'status changed' | 'lead deleted' | 'plan deleted';

/**
 * Starts plan `planId` on lead `leadId` at `at`, its follow-ups assigned to `assigneeId`: one audited run and one
 * audited follow-up per step. Answers the run's id.
 */
export async function startRun(work: Work, run: { leadId: string; planId: string; assigneeId: string; at: Date }): Promise<string> {
  const steps = await work.tx.select().from(actionPlanSteps).where(eq(actionPlanSteps.plan_id, run.planId)).orderBy(asc(actionPlanSteps.position));
  const [plan] = await work.tx.select({ name: actionPlans.name }).from(actionPlans).where(eq(actionPlans.id, run.planId));
  const started = await work.create(runResource, { lead_id: run.leadId, plan_id: run.planId, started_at: run.at, created_by: work.actor.userId });
  const time = workSchedule.current;
  const tasks = await work.createMany(taskResource, steps.map((step) => ({
    title: step.title,
    notes: `Step ${step.position + 1} of the action plan "${plan.name}" (${step.kind.replace('_', ' ')})`,
    due_at: step.offset_unit === 'hours' ? addWorkingHours(run.at, step.offset_amount, time) : addWorkingDays(run.at, step.offset_amount, time),
    assigned_to: run.assigneeId,
    lead_id: run.leadId,
    created_by: work.actor.userId,
  })));
  if (tasks.length) await work.tx.insert(planTasks).values(tasks.map((task, i) => ({ task_id: task.id, lead_plan_id: started.id, step_id: steps[i].id })));
  return started.id;
}

/** The open follow-ups of the runs `runs` selects (a subquery of run ids). */
const openTasksOf = (runs: ReturnType<typeof sql>) =>
  sql`${crmTasks.done_at} is null and ${crmTasks.id} in (select ${planTasks.task_id} from ${planTasks} where ${planTasks.lead_plan_id} in (${runs}))`;

/** Stops run `runId` (nothing when it has stopped already): its open follow-ups are removed, audited. */
export async function stopRun(work: Work, runId: string, reason: StopReason): Promise<boolean> {
  const run = await work.lock(runResource, runId);
  if (run.stopped_at) return false;
  await work.removeAll(taskResource, openTasksOf(sql`select ${runId}::uuid`));
  await work.update(runResource, runId, { stopped_at: clock.now(), stop_reason: reason });
  return true;
}

/** Stops the runs of lead `leadId` still running; with `status`, only those whose plan does not run in that status. */
export async function stopRunsOfLead(work: Work, leadId: string, reason: StopReason, status?: string) {
  const runs = await work.tx.select({ id: leadActionPlans.id }).from(leadActionPlans)
    .innerJoin(actionPlans, eq(actionPlans.id, leadActionPlans.plan_id))
    .where(and(eq(leadActionPlans.lead_id, leadId), isNull(leadActionPlans.stopped_at), status ? not(sql`${status} = any(${actionPlans.active_statuses})`) : undefined));
  for (const run of runs) await stopRun(work, run.id, reason);
}

/** The lead's running plans' open follow-ups go to its new assignee (audited, each). */
export async function moveOpenPlanTasks(work: Work, leadId: string, assigneeId: string) {
  const running = sql`select ${leadActionPlans.id} from ${leadActionPlans} where ${leadActionPlans.lead_id} = ${leadId} and ${leadActionPlans.stopped_at} is null`;
  await work.updateAll(taskResource, sql`${openTasksOf(running)} and ${crmTasks.assigned_to} <> ${assigneeId}`, { assigned_to: assigneeId });
}

/** Whether plan `planId` ever ran on lead `leadId` (a rule's plan starts once, at the lead's first assignment). */
export async function hasRun(db: Executor, leadId: string, planId: string): Promise<boolean> {
  const [run] = await db.select({ id: leadActionPlans.id }).from(leadActionPlans).where(and(eq(leadActionPlans.lead_id, leadId), eq(leadActionPlans.plan_id, planId))).limit(1);
  return Boolean(run);
}

export const LeadPlanRun = named('LeadActionPlanRun', Strict({
  id: Uuid(),
  plan_id: Nullable(Uuid()),
  name: Type.String({ description: 'The plan\'s name' }),
  started_at: Timestamp(),
  stopped_at: Nullable(Timestamp()),
  stop_reason: Nullable(Type.String({ description: 'Why it stopped: stopped by hand, status changed, lead deleted, plan deleted' })),
  open_tasks: Type.Integer({ description: 'Its follow-ups not yet done' }),
}));

/** The plans a lead runs and ran, newest first, with their open follow-ups (for its flow). */
export async function runsOfLead(db: Executor, leadId: string): Promise<(typeof LeadPlanRun.static)[]> {
  const open = db.select({ run: planTasks.lead_plan_id, n: count().as('n') }).from(planTasks)
    .innerJoin(crmTasks, and(eq(crmTasks.id, planTasks.task_id), isNull(crmTasks.done_at))).groupBy(planTasks.lead_plan_id).as('open');
  const rows = await db.select({
    id: leadActionPlans.id, plan_id: leadActionPlans.plan_id, name: actionPlans.name, started_at: leadActionPlans.started_at,
    stopped_at: leadActionPlans.stopped_at, stop_reason: leadActionPlans.stop_reason, open_tasks: open.n,
  }).from(leadActionPlans).innerJoin(actionPlans, eq(actionPlans.id, leadActionPlans.plan_id)).leftJoin(open, eq(open.run, leadActionPlans.id))
    .where(eq(leadActionPlans.lead_id, leadId)).orderBy(desc(leadActionPlans.started_at), desc(leadActionPlans.id));
  return rows.map((row) => ({ ...row, open_tasks: Number(row.open_tasks ?? 0) }));
}

const RunParams = Strict({ id: Uuid({ description: 'The lead\'s id' }), runId: Uuid({ description: 'The run\'s id (from the lead\'s plans)' }) });
const LeadParams = Strict({ id: Uuid({ description: 'The lead\'s id' }) });
const StartInput = named('LeadActionPlanStart', Strict({ plan_id: Uuid({ description: 'The action plan to start' }) }));
const RunList = named('LeadActionPlanRunList', Strict({ data: Type.Array(LeadPlanRun) }));

export default async function runningPlanRoutes(app: App) {
  const { db } = app.database;
  /** The lead, read with the caller's record scope (404 outside it, as for an unknown lead). */
  const leadOf = async (request: Parameters<typeof actorOf>[1], id: string) =>
    findOne<{ id: string; assigned_to: { id: string } | null }>(db, leadResource, id, await recordScope(app, request, leadResource));

  app.get('/api/crm/leads/:id/plans', {
    schema: { operationId: 'listLeadActionPlans', summary: 'The action plans a lead runs and ran, newest first', params: LeadParams, response: { 200: RunList, ...errorResponses } },
  }, async (request) => {
    await leadOf(request, request.params.id);
    return { data: await runsOfLead(db, request.params.id) };
  });

  app.post('/api/crm/leads/:id/plans', {
    schema: {
      operationId: 'startLeadActionPlan', summary: 'Start an action plan on a lead: its follow-ups are written for the lead\'s assignee, due in working time from now',
      params: LeadParams, body: StartInput, response: { 201: Created, ...errorResponses }, 'x-answer-message': 'Action plan started',
    },
  }, async (request, reply) => {
    const { plan_id } = request.body as typeof StartInput.static;
    await leadOf(request, request.params.id);
    const id = await audited(db, await actorOf(app, request), async (work) => {
      const lead = await work.lock(leadResource, request.params.id);
      const [plan] = await work.tx.select({ id: actionPlans.id }).from(actionPlans).where(eq(actionPlans.id, plan_id)).for('share');
      if (!plan) throw validationError({ plan_id: 'must be an existing action plan' });
      if (!lead.assigned_to) throw conflict('The lead has no assignee: assign it first (a plan\'s follow-ups go to its assignee)');
      const [running] = await work.tx.select({ id: leadActionPlans.id }).from(leadActionPlans)
        .where(and(eq(leadActionPlans.lead_id, lead.id), eq(leadActionPlans.plan_id, plan_id), isNull(leadActionPlans.stopped_at)));
      if (running) throw conflict('This action plan already runs on the lead');
      return startRun(work, { leadId: lead.id, planId: plan_id, assigneeId: lead.assigned_to, at: clock.now() });
    });
    return reply.code(201).send({ id, message: 'Action plan started' });
  });

  app.post('/api/crm/leads/:id/plans/:runId/stop', {
    schema: {
      operationId: 'stopLeadActionPlan', summary: 'Stop an action plan running on a lead: its follow-ups not yet done are removed',
      params: RunParams, response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Action plan stopped',
    },
  }, async (request) => {
    const { id, runId } = request.params as typeof RunParams.static;
    await leadOf(request, id);
    await audited(db, await actorOf(app, request), async (work) => {
      const [run] = await work.tx.select({ id: leadActionPlans.id }).from(leadActionPlans).where(and(eq(leadActionPlans.id, runId), eq(leadActionPlans.lead_id, id)));
      if (!run) throw notFound(runResource.label);
      if (!(await stopRun(work, runId, 'stopped by hand'))) throw conflict('This action plan has stopped already');
    });
    return { message: 'Action plan stopped' };
  });
}
