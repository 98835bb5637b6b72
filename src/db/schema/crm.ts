import { sql } from 'drizzle-orm';
import { type AnyPgColumn, boolean, check, date, type ExtraConfigColumn, index, integer, jsonb, numeric, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { clock } from '../../clock.js';
import { createdAt, id, ts, updatedAt } from './common.js';
import { projects } from './cms.js';
import { users } from './iam.js';

export const LEAD_SOURCES = ['website', 'referral', 'event', 'social'] as const;
export const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'converted', 'lost'] as const;
export const UNIT_STATUSES = ['available', 'reserved', 'sold'] as const;
export const RESERVATION_STATUSES = ['pending', 'confirmed', 'cancelled'] as const;
export const PAYMENT_STATUSES = ['unpaid', 'partial', 'paid'] as const;
export const INQUIRY_STATUSES = ['unread', 'read', 'responded', 'closed'] as const;
export const SUBSCRIPTION_STATUSES = ['subscribed', 'unsubscribed'] as const;
export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sent'] as const;
/** How a subscription's consent was given: a confirmed public sign-up, a public one unconfirmed (double opt-in off), staff, an import. */
export const CONSENT_METHODS = ['public-confirmed', 'public-unconfirmed', 'staff', 'import'] as const;
export const DELIVERY_STATUSES = ['pending', 'sent', 'failed'] as const;

const money = (name: string) => numeric(name, { precision: 14, scale: 2, mode: 'number' });
const newestFirst = (name: string, t: { created_at: ExtraConfigColumn; id: ExtraConfigColumn }) =>
  index(`${name}_created_idx`).on(t.created_at, t.id);

export const leads = pgTable('leads', {
  id: id(),
  first_name: text('first_name').notNull(),
  last_name: text('last_name').notNull(),
  email: text('email'),
  phone: text('phone'),
  source: text('source', { enum: LEAD_SOURCES }).notNull().default('website'),
  status: text('status', { enum: LEAD_STATUSES }).notNull().default('new'),
  interest: text('interest'),
  notes: text('notes'),
  assigned_to: uuid('assigned_to').references(() => users.id),
  /**
   * Who created it through the API (record scopes); null for imports and the public website. Set by the service
   * alone, so no foreign key: its check locked the creator's row on every create (migration 0015).
   */
  created_by: uuid('created_by'),
  /**
   * The lead-flow group it waits in, unassigned (a pond, or a first-to-claim group until claimed): its members see it
   * whatever their record scope (their record scope's owners include the groups they belong to). No foreign key, as
   * `created_by` (migration 0020).
   */
  pool_id: uuid('pool_id'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  newestFirst('leads', t),
  index('leads_pool_idx').on(t.pool_id, t.created_at, t.id).where(sql`${t.pool_id} is not null`),
  index('leads_created_by_idx').on(t.created_by, t.created_at, t.id),
  index('leads_status_idx').on(t.status, t.created_at, t.id),
  index('leads_source_idx').on(t.source, t.created_at, t.id),
  index('leads_assigned_idx').on(t.assigned_to, t.created_at, t.id),
  index('leads_last_name_idx').on(t.last_name, t.id),
  // Natural keys of a CSV import (an e-mail, case-insensitively, or a phone already known): one index probe each.
  index('leads_email_lower_idx').on(sql`lower(${t.email})`),
  index('leads_phone_idx').on(t.phone),
]);

export const inventoryUnits = pgTable('inventory_units', {
  id: id(),
  project_id: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'restrict' }),
  inventory_code: text('inventory_code').notNull(),
  block: text('block').notNull(),
  lot: text('lot').notNull(),
  house_model: text('house_model'),
  floor_area: numeric('floor_area', { precision: 12, scale: 2, mode: 'number' }),
  lot_area: numeric('lot_area', { precision: 12, scale: 2, mode: 'number' }),
  price: money('price').notNull(),
  status: text('status', { enum: UNIT_STATUSES }).notNull().default('available'),
  sold_to: uuid('sold_to').references((): AnyPgColumn => reservations.id, { onDelete: 'set null' }),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('inventory_units_project_block_lot_key').on(t.project_id, t.block, t.lot),
  newestFirst('inventory_units', t),
  index('inventory_units_status_idx').on(t.status, t.created_at, t.id),
  uniqueIndex('inventory_units_code_key').on(t.inventory_code),
  index('inventory_units_code_idx').on(t.inventory_code, t.id),
  index('inventory_units_block_idx').on(t.block, t.created_at),
  index('inventory_units_house_model_idx').on(t.house_model, t.created_at),
]);

export const reservations = pgTable('reservations', {
  id: id(),
  inventory_id: uuid('inventory_id').references((): AnyPgColumn => inventoryUnits.id, { onDelete: 'set null' }),
  project_name: text('project_name'),
  client_name: text('client_name').notNull(),
  contact_number: text('contact_number'),
  email: text('email'),
  reservation_date: ts('reservation_date').notNull().defaultNow(),
  status: text('status', { enum: RESERVATION_STATUSES }).notNull().default('pending'),
  payment_status: text('payment_status', { enum: PAYMENT_STATUSES }).notNull().default('unpaid'),
  notes: text('notes'),
  created_by: uuid('created_by').references(() => users.id),
  /** The lead this reservation is for (migration 0016): set from the e-mail when none is named. */
  lead_id: uuid('lead_id').references((): AnyPgColumn => leads.id, { onDelete: 'set null' }),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  newestFirst('reservations', t),
  index('reservations_lead_idx').on(t.lead_id, t.created_at, t.id),
  index('reservations_status_idx').on(t.status, t.created_at, t.id),
  index('reservations_payment_idx').on(t.payment_status, t.created_at, t.id),
  index('reservations_project_idx').on(t.project_name, t.created_at),
  index('reservations_inventory_idx').on(t.inventory_id),
  index('reservations_created_by_idx').on(t.created_by, t.created_at, t.id),
]);

export const inquiries = pgTable('inquiries', {
  id: id(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  phone: text('phone'),
  subject: text('subject').notNull(),
  message: text('message').notNull(),
  status: text('status', { enum: INQUIRY_STATUSES }).notNull().default('unread'),
  responded_by: uuid('responded_by').references(() => users.id),
  response: text('response'),
  /** Who recorded it through the API (record scopes); null for the public website's form. No foreign key (leads). */
  created_by: uuid('created_by'),
  /** The lead this inquiry was turned into (migration 0016). */
  lead_id: uuid('lead_id').references((): AnyPgColumn => leads.id, { onDelete: 'set null' }),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  newestFirst('inquiries', t),
  index('inquiries_status_idx').on(t.status, t.created_at, t.id),
  index('inquiries_created_by_idx').on(t.created_by, t.created_at, t.id),
  index('inquiries_responded_by_idx').on(t.responded_by, t.created_at, t.id),
  index('inquiries_lead_idx').on(t.lead_id),
  index('inquiries_email_idx').on(t.email),
  index('inquiries_phone_digits_idx').on(sql`regexp_replace(${t.phone}, '[^0-9]', '', 'g')`),
]);

export const newsletterSubscriptions = pgTable('newsletter_subscriptions', {
  id: id(),
  email: text('email').notNull(),
  name: text('name'),
  status: text('status', { enum: SUBSCRIPTION_STATUSES }).notNull().default('subscribed'),
  subscribed_at: ts('subscribed_at').notNull().defaultNow(),
  unsubscribed_at: ts('unsubscribed_at'),
  /** The consent behind the current subscription: when, from where, on which form, to which wording, and how given. */
  consent_at: ts('consent_at'),
  consent_ip: text('consent_ip'),
  consent_user_agent: text('consent_user_agent'),
  consent_form: text('consent_form'),
  consent_text: text('consent_text'),
  consent_method: text('consent_method', { enum: CONSENT_METHODS }),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('newsletter_subscriptions_email_key').on(t.email),
  index('newsletter_subscriptions_subscribed_idx').on(t.subscribed_at, t.id),
  index('newsletter_subscriptions_status_idx').on(t.status, t.subscribed_at, t.id),
]);

/**
 * Public newsletter sign-ups waiting for their address to be confirmed (not subscriptions yet): one per address, with
 * the hash of the newest link mailed, when it was mailed (at most one mail an hour) and the consent given on the form.
 * Confirming deletes the row; expired ones are purged.
 */
export const newsletterSignups = pgTable('newsletter_signups', {
  id: id(),
  email: text('email').notNull(),
  name: text('name'),
  token_hash: text('token_hash').notNull(),
  mailed_at: ts('mailed_at').notNull(),
  expires_at: ts('expires_at').notNull(),
  consent_at: ts('consent_at').notNull(),
  consent_ip: text('consent_ip'),
  consent_user_agent: text('consent_user_agent'),
  consent_form: text('consent_form'),
  consent_text: text('consent_text').notNull(),
  created_at: createdAt(),
}, (t) => [
  uniqueIndex('newsletter_signups_email_key').on(t.email),
  uniqueIndex('newsletter_signups_token_key').on(t.token_hash),
  index('newsletter_signups_expires_idx').on(t.expires_at),
]);

/** Public form tokens already used, kept until they expire (without Redis: shared by every instance). */
export const usedFormTokens = pgTable('used_form_tokens', {
  id: text('id').primaryKey(),
  expires_at: ts('expires_at').notNull(),
}, (t) => [index('used_form_tokens_expires_idx').on(t.expires_at)]);

export const campaigns = pgTable('campaigns', {
  id: id(),
  name: text('name').notNull(),
  subject: text('subject').notNull(),
  content: text('content').notNull(),
  recipients: text('recipients').array().notNull(),
  status: text('status', { enum: CAMPAIGN_STATUSES }).notNull().default('draft'),
  scheduled_at: ts('scheduled_at'),
  sent_at: ts('sent_at'),
  created_by: uuid('created_by').references(() => users.id),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  newestFirst('campaigns', t),
  index('campaigns_status_idx').on(t.status, t.created_at, t.id),
]);

/** One row per (campaign, recipient): the guarantee that nobody gets a campaign twice, across crashes. */
export const campaignDeliveries = pgTable('campaign_deliveries', {
  id: id(),
  campaign_id: uuid('campaign_id').notNull().references(() => campaigns.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  status: text('status', { enum: DELIVERY_STATUSES }).notNull().default('pending'),
  error: text('error'),
  sent_at: ts('sent_at'),
  created_at: createdAt(),
}, (t) => [
  uniqueIndex('campaign_deliveries_campaign_email_key').on(t.campaign_id, t.email),
  index('campaign_deliveries_pending_idx').on(t.campaign_id, t.status, t.id),
  index('campaign_deliveries_email_idx').on(t.email),
]);

export const IMPORT_RESOURCES = ['leads', 'inventory', 'newsletters'] as const;
export const IMPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;

/** One row of an import's result: the CSV line (header = 1), the column, and what is wrong. */
export type ImportError = { line: number; field: string | null; message: string };

/**
 * CSV imports (leads, inventory units, newsletter subscribers): the uploaded file itself (so the job can run on any
 * instance), who imported it from where (the actor of every created record), and the progress the job commits with
 * each batch: `resume_offset`/`resume_line` say where in the text the next batch starts, so a crash resumes there.
 */
export const imports = pgTable('imports', {
  id: id(),
  resource: text('resource', { enum: IMPORT_RESOURCES }).notNull(),
  filename: text('filename').notNull(),
  status: text('status', { enum: IMPORT_STATUSES }).notNull().default('queued'),
  /** The CSV text; cleared once the import has finished. */
  content: text('content'),
  total_rows: integer('total_rows').notNull().default(0),
  processed_rows: integer('processed_rows').notNull().default(0),
  created: integer('created').notNull().default(0),
  skipped: integer('skipped').notNull().default(0),
  failed: integer('failed').notNull().default(0),
  errors: jsonb('errors').$type<ImportError[]>().notNull().default([]),
  errors_truncated: boolean('errors_truncated').notNull().default(false),
  failure_reason: text('failure_reason'),
  resume_offset: integer('resume_offset').notNull().default(0),
  resume_line: integer('resume_line').notNull().default(0),
  created_by: uuid('created_by').references(() => users.id),
  ip_address: text('ip_address'),
  user_agent: text('user_agent'),
  created_at: createdAt(),
  updated_at: updatedAt(),
  started_at: ts('started_at'),
  finished_at: ts('finished_at'),
}, (t) => [
  newestFirst('imports', t),
  index('imports_resource_idx').on(t.resource, t.created_at, t.id),
  index('imports_status_idx').on(t.status, t.created_at, t.id),
]);

export const ACTIVITY_KINDS = ['note', 'call', 'email', 'meeting', 'site_visit'] as const;
export const CALL_OUTCOMES = ['answered', 'no_answer', 'busy', 'voicemail', 'wrong_number'] as const;

/** What happened with a lead (migration 0016): a note, a call and its outcome, an e-mail, a meeting or site visit and its place. */
export const crmActivities = pgTable('crm_activities', {
  id: id(),
  lead_id: uuid('lead_id').notNull().references(() => leads.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: ACTIVITY_KINDS }).notNull(),
  body: text('body'),
  outcome: text('outcome', { enum: CALL_OUTCOMES }),
  place: text('place'),
  /** When it happened (or, for a meeting or site visit, when it takes place). */
  occurred_at: ts('occurred_at').notNull().defaultNow().$defaultFn(() => clock.now()),
  author_id: uuid('author_id').references(() => users.id),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  newestFirst('crm_activities', t),
  index('crm_activities_lead_idx').on(t.lead_id, t.occurred_at, t.id),
  index('crm_activities_author_idx').on(t.author_id, t.created_at, t.id),
  // Agent activity reads a range of what happened, by when (migration 0021).
  index('crm_activities_occurred_idx').on(t.occurred_at, t.author_id, t.kind, t.outcome),
]);

/** Follow-ups (migration 0016): something to do by a time, for someone, maybe about a lead, reservation or inquiry. */
export const crmTasks = pgTable('crm_tasks', {
  id: id(),
  title: text('title').notNull(),
  notes: text('notes'),
  due_at: ts('due_at').notNull(),
  assigned_to: uuid('assigned_to').notNull().references(() => users.id),
  lead_id: uuid('lead_id').references(() => leads.id, { onDelete: 'set null' }),
  reservation_id: uuid('reservation_id').references(() => reservations.id, { onDelete: 'set null' }),
  inquiry_id: uuid('inquiry_id').references(() => inquiries.id, { onDelete: 'set null' }),
  done_at: ts('done_at'),
  done_by: uuid('done_by').references(() => users.id),
  created_by: uuid('created_by').references(() => users.id),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  newestFirst('crm_tasks', t),
  index('crm_tasks_due_idx').on(t.due_at, t.id),
  index('crm_tasks_assigned_idx').on(t.assigned_to, t.due_at, t.id),
  index('crm_tasks_open_idx').on(t.due_at, t.assigned_to).where(sql`${t.done_at} is null`),
  index('crm_tasks_lead_idx').on(t.lead_id, t.done_at),
  // Agent activity: follow-ups completed in a range (migration 0021).
  index('crm_tasks_done_idx').on(t.done_at, t.done_by).where(sql`${t.done_at} is not null`),
  index('crm_tasks_reservation_idx').on(t.reservation_id),
  index('crm_tasks_inquiry_idx').on(t.inquiry_id),
  check('crm_tasks_done_check', sql`${t.done_by} is null or ${t.done_at} is not null`),
]);

/** A user's own settings (migration 0016): whether the morning e-mail of follow-ups comes (no row: it does), and the weekly report. */
export const userPreferences = pgTable('user_preferences', {
  user_id: uuid('user_id').primaryKey().references(() => users.id, { onDelete: 'cascade' }),
  task_digest: boolean('task_digest').notNull().default(true),
  /** The Monday e-mail of the sales reports' key figures (migration 0021): off unless turned on. */
  weekly_report: boolean('weekly_report').notNull().default(false),
  updated_at: updatedAt(),
});

/** The local days a user's morning e-mail went out: one row each, so two instances send it once. */
export const taskDigests = pgTable('task_digests', {
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  created_at: createdAt(),
}, (t) => [primaryKey({ name: 'task_digests_pkey', columns: [t.user_id, t.day] })]);
