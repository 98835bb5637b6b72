import { sql } from 'drizzle-orm';
import { bigint, date, index, numeric, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, ts } from './common.js';
import { users } from './iam.js';

/**
 * Sales reports (migration 0021). The status histories below are written by database triggers on `leads` and
 * `inventory_units` (whoever writes them: the API, an import, a restore from the trash), so a report on a past period
 * reads what was recorded then, not today's statuses. No foreign keys: a deleted record's history stays, and comes back
 * with the record when it is restored from the trash.
 */

/**
 * Every status a lead took: on insert its first status (`from_status` null, at its `created_at`), on each change of
 * status the move, when (`updated_at` of the change) and by whom (`changed_by`: the user of the audited change, else
 * the lead's creator on insert, else null).
 */
export const leadStatusChanges = pgTable('lead_status_changes', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  lead_id: uuid('lead_id').notNull(),
  from_status: text('from_status'),
  to_status: text('to_status').notNull(),
  changed_at: ts('changed_at').notNull(),
  changed_by: uuid('changed_by'),
}, (t) => [
  index('lead_status_changes_lead_idx').on(t.lead_id, t.changed_at, t.to_status),
  // The funnel reads a range's moves in one scan.
  index('lead_status_changes_changed_idx').on(t.changed_at, t.to_status, t.lead_id),
]);

/**
 * Every status an inventory unit took, with its project, its price and the reservation holding it at that moment
 * (`reservation_id`: the new holder when reserved or sold, the one let go when released).
 */
export const unitStatusChanges = pgTable('unit_status_changes', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  unit_id: uuid('unit_id').notNull(),
  project_id: uuid('project_id').notNull(),
  from_status: text('from_status'),
  to_status: text('to_status').notNull(),
  reservation_id: uuid('reservation_id'),
  price: numeric('price', { precision: 14, scale: 2, mode: 'number' }).notNull(),
  changed_at: ts('changed_at').notNull(),
  changed_by: uuid('changed_by'),
}, (t) => [
  index('unit_status_changes_project_idx').on(t.project_id, t.changed_at),
  index('unit_status_changes_unit_idx').on(t.unit_id, t.changed_at),
  index('unit_status_changes_reservation_idx').on(t.reservation_id).where(sql`${t.to_status} = 'sold'`),
]);

/** The weeks (their Monday, local) a user's weekly report went out: one row each, so two instances send it once. */
export const weeklyReports = pgTable('weekly_reports', {
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  week: date('week', { mode: 'string' }).notNull(),
  created_at: createdAt(),
}, (t) => [primaryKey({ name: 'weekly_reports_pkey', columns: [t.user_id, t.week] })]);
