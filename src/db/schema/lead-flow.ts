import { sql } from 'drizzle-orm';
import { type AnyPgColumn, boolean, check, index, integer, pgTable, primaryKey, smallint, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, id, ts, updatedAt } from './common.js';
import { projects } from './cms.js';
import { crmTasks, LEAD_SOURCES, LEAD_STATUSES, leads } from './crm.js';
import { users } from './iam.js';

/**
 * Lead flow: who a new lead goes to. A rule matches how a lead arrived (and optionally its source and project of
 * interest) and names a user or a group; a group hands leads out in turn (round robin), offers them to all its members
 * at once (first to claim, with a timeout and a fallback) or keeps them in a shared pool (a pond). Action plans are
 * sequences of follow-ups a rule or a person attaches to a lead.
 */

/** How a lead arrived: the website (inquiry or public form), a CSV import, or the API/console without an assignee. */
export const LEAD_CHANNELS = ['website', 'import', 'api'] as const;
export const LEAD_GROUP_KINDS = ['round_robin', 'first_to_claim', 'pond'] as const;
/** What a rule does when its speed-to-lead limit passes: remind (the assignee, then their department's manager), or also reassign to the fallback. */
export const SPEED_LIMIT_ACTIONS = ['remind', 'reassign'] as const;
export const PLAN_STEP_KINDS = ['call', 'email', 'meeting', 'site_visit', 'task'] as const;
export const PLAN_OFFSET_UNITS = ['hours', 'days'] as const;

export type LeadChannel = (typeof LEAD_CHANNELS)[number];
export type LeadGroupKind = (typeof LEAD_GROUP_KINDS)[number];

const inList = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');

/**
 * A group of agents (migration 0020). `next_position`: the round robin's cursor (the position of the member whose turn
 * is next), advanced under the group row's lock, so concurrent arrivals on any instance take turns exactly.
 * `claim_minutes` (first to claim, 1–30): how long its members have to claim a lead before it goes to the fallback
 * (`fallback_user_id` or `fallback_group_id`, one of them), which a rule's speed-to-lead reassignment also uses.
 */
export const leadGroups = pgTable('lead_groups', {
  id: id(),
  name: text('name').notNull(),
  kind: text('kind', { enum: LEAD_GROUP_KINDS }).notNull(),
  claim_minutes: integer('claim_minutes'),
  fallback_user_id: uuid('fallback_user_id').references(() => users.id, { onDelete: 'set null' }),
  fallback_group_id: uuid('fallback_group_id').references((): AnyPgColumn => leadGroups.id, { onDelete: 'set null' }),
  next_position: integer('next_position').notNull().default(0),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('lead_groups_name_key').on(sql`lower(${t.name})`),
  index('lead_groups_created_idx').on(t.created_at, t.id),
  check('lead_groups_kind_check', sql.raw(`"kind" in (${inList(LEAD_GROUP_KINDS)})`)),
  check('lead_groups_claim_minutes_check', sql`${t.claim_minutes} is null or ${t.claim_minutes} between 1 and 30`),
  check('lead_groups_fallback_check', sql`${t.fallback_user_id} is null or ${t.fallback_group_id} is null`),
]);

/** A group's members in their order (migration 0020): `position` 0, 1, 2… is the round robin's turn order. */
export const leadGroupMembers = pgTable('lead_group_members', {
  group_id: uuid('group_id').notNull().references(() => leadGroups.id, { onDelete: 'cascade' }),
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  position: integer('position').notNull(),
}, (t) => [
  primaryKey({ name: 'lead_group_members_pkey', columns: [t.group_id, t.user_id] }),
  uniqueIndex('lead_group_members_position_key').on(t.group_id, t.position),
  index('lead_group_members_user_idx').on(t.user_id),
]);

/** A named sequence of follow-ups (migration 0020); it runs while its lead's status is one of `active_statuses`. */
export const actionPlans = pgTable('action_plans', {
  id: id(),
  name: text('name').notNull(),
  active_statuses: text('active_statuses', { enum: LEAD_STATUSES }).array().notNull().default(sql`'{new,contacted,qualified}'::text[]`),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('action_plans_name_key').on(sql`lower(${t.name})`),
  index('action_plans_created_idx').on(t.created_at, t.id),
]);

/** One step of a plan (migration 0020): a follow-up due `offset_amount` working hours or days after the plan starts. */
export const actionPlanSteps = pgTable('action_plan_steps', {
  id: id(),
  plan_id: uuid('plan_id').notNull().references(() => actionPlans.id, { onDelete: 'cascade' }),
  position: integer('position').notNull(),
  kind: text('kind', { enum: PLAN_STEP_KINDS }).notNull(),
  title: text('title').notNull(),
  offset_amount: integer('offset_amount').notNull(),
  offset_unit: text('offset_unit', { enum: PLAN_OFFSET_UNITS }).notNull(),
}, (t) => [
  uniqueIndex('action_plan_steps_position_key').on(t.plan_id, t.position),
  check('action_plan_steps_offset_check', sql`${t.offset_amount} >= 0`),
  check('action_plan_steps_kind_check', sql.raw(`"kind" in (${inList(PLAN_STEP_KINDS)})`)),
  check('action_plan_steps_unit_check', sql.raw(`"offset_unit" in (${inList(PLAN_OFFSET_UNITS)})`)),
]);

/**
 * Lead flow rules (migration 0020), tried in `position` order: the first whose conditions (each null = any) match a
 * new lead without an assignee decides who gets it: `assign_user_id` or `assign_group_id` (one of them). It may attach
 * an action plan and set a speed-to-lead limit in working minutes. The default rule (`is_default`, exactly one, no
 * conditions) catches the rest.
 */
export const leadFlowRules = pgTable('lead_flow_rules', {
  id: id(),
  name: text('name').notNull(),
  position: integer('position').notNull(),
  is_default: boolean('is_default').notNull().default(false),
  channel: text('channel', { enum: LEAD_CHANNELS }),
  source: text('source', { enum: LEAD_SOURCES }),
  project_id: uuid('project_id').references(() => projects.id, { onDelete: 'cascade' }),
  assign_user_id: uuid('assign_user_id').references(() => users.id, { onDelete: 'restrict' }),
  assign_group_id: uuid('assign_group_id').references(() => leadGroups.id, { onDelete: 'restrict' }),
  action_plan_id: uuid('action_plan_id').references(() => actionPlans.id, { onDelete: 'set null' }),
  speed_limit_minutes: integer('speed_limit_minutes'),
  on_speed_limit: text('on_speed_limit', { enum: SPEED_LIMIT_ACTIONS }).notNull().default('remind'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('lead_flow_rules_position_key').on(t.position),
  uniqueIndex('lead_flow_rules_default_key').on(t.is_default).where(sql`${t.is_default}`),
  index('lead_flow_rules_created_idx').on(t.created_at, t.id),
  check('lead_flow_rules_target_check', sql`(${t.assign_user_id} is null) <> (${t.assign_group_id} is null)`),
  check('lead_flow_rules_default_check', sql`not ${t.is_default} or (${t.channel} is null and ${t.source} is null and ${t.project_id} is null)`),
  check('lead_flow_rules_speed_check', sql`${t.speed_limit_minutes} is null or ${t.speed_limit_minutes} between 1 and 10080`),
  check('lead_flow_rules_channel_check', sql.raw(`"channel" is null or "channel" in (${inList(LEAD_CHANNELS)})`)),
  check('lead_flow_rules_on_limit_check', sql.raw(`"on_speed_limit" in (${inList(SPEED_LIMIT_ACTIONS)})`)),
]);

/**
 * Where each routed lead stands (migration 0020), one row per lead, kept beside the lead so its list stays as it was:
 * the rule that routed it; `claim_deadline` while it waits for a first-to-claim group's members (the group is the
 * lead's `pool_id`); when it was last assigned; its first contact
 * (the first call, e-mail, meeting or site visit staff logged); the speed-to-lead deadline and how far its reminders
 * went (`speed_stage`: 0 none, 1 assignee reminded, 2 manager told, 3 reassigned).
 */
export const leadRouting = pgTable('lead_routing', {
  lead_id: uuid('lead_id').primaryKey().references(() => leads.id, { onDelete: 'cascade' }),
  rule_id: uuid('rule_id').references(() => leadFlowRules.id, { onDelete: 'set null' }),
  channel: text('channel', { enum: LEAD_CHANNELS }).notNull(),
  claim_deadline: ts('claim_deadline'),
  assigned_at: ts('assigned_at'),
  first_contact_at: ts('first_contact_at'),
  speed_due_at: ts('speed_due_at'),
  speed_stage: smallint('speed_stage').notNull().default(0),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  index('lead_routing_claim_idx').on(t.claim_deadline).where(sql`${t.claim_deadline} is not null`),
  index('lead_routing_speed_idx').on(t.speed_due_at).where(sql`${t.first_contact_at} is null and ${t.speed_due_at} is not null`),
  // Speed to lead reads a range of assignments and these columns of each from the index alone (no row look-ups).
  index('lead_routing_assigned_idx').on(t.assigned_at, t.lead_id, t.rule_id, t.first_contact_at, t.speed_due_at),
]);

/** An action plan running on a lead (migration 0020): its follow-ups are crm_tasks naming this row; stopped when the lead leaves the plan's statuses. */
export const leadActionPlans = pgTable('lead_action_plans', {
  id: id(),
  lead_id: uuid('lead_id').notNull().references(() => leads.id, { onDelete: 'cascade' }),
  plan_id: uuid('plan_id').notNull().references(() => actionPlans.id, { onDelete: 'cascade' }),
  started_at: ts('started_at').notNull(),
  stopped_at: ts('stopped_at'),
  stop_reason: text('stop_reason'),
  created_by: uuid('created_by'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  index('lead_action_plans_lead_idx').on(t.lead_id, t.created_at),
  index('lead_action_plans_running_idx').on(t.plan_id).where(sql`${t.stopped_at} is null`),
]);

/** Which follow-up of which running plan a task is (migration 0020): set on the tasks a plan creates. */
export const planTasks = pgTable('plan_tasks', {
  task_id: uuid('task_id').primaryKey().references(() => crmTasks.id, { onDelete: 'cascade' }),
  lead_plan_id: uuid('lead_plan_id').notNull().references(() => leadActionPlans.id, { onDelete: 'cascade' }),
  step_id: uuid('step_id').references(() => actionPlanSteps.id, { onDelete: 'set null' }),
}, (t) => [index('plan_tasks_lead_plan_idx').on(t.lead_plan_id)]);

/** A user's availability for lead flow (migration 0020): away users are skipped by round robins and not offered leads to claim. */
export const leadFlowAway = pgTable('lead_flow_away', {
  user_id: uuid('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
  until: ts('until'),
  created_at: createdAt(),
});
