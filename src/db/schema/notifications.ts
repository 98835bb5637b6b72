import { sql } from 'drizzle-orm';
import { check, index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, id, ts, updatedAt } from './common.js';
import { users } from './iam.js';

/**
 * What a staff notification is about. Written today: a lead assigned to you, a website inquiry, an @mention in a note.
 * Declared for the lead-flow engine: a new lead to claim, a follow-up falling due, a lead waiting too long for a first
 * contact.
 */
export const NOTIFICATION_KINDS = ['lead_assigned', 'inquiry_received', 'mention', 'lead_to_claim', 'follow_up_due', 'speed_to_lead'] as const;
/** How a user hears of a kind: in the app, by e-mail, both or not at all. */
export const NOTIFICATION_DELIVERIES = ['in_app', 'email', 'both', 'none'] as const;

export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];
export type NotificationDelivery = (typeof NOTIFICATION_DELIVERIES)[number];

const kinds = NOTIFICATION_KINDS.map((kind) => `'${kind}'`).join(', ');

/**
 * A user's in-app notifications (migration 0019): their inbox, newest first, with the record it is about (resource
 * name and id, when it names one) and when they read it. Read by user only: `(user_id, created_at, id)` serves the
 * inbox page, the partial index on unread rows its badge count.
 */
export const notifications = pgTable('notifications', {
  id: id(),
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: NOTIFICATION_KINDS }).notNull(),
  title: text('title').notNull(),
  body: text('body').notNull(),
  resource: text('resource'),
  record_id: uuid('record_id'),
  created_at: createdAt(),
  read_at: ts('read_at'),
}, (t) => [
  index('notifications_user_idx').on(t.user_id, t.created_at, t.id),
  index('notifications_unread_idx').on(t.user_id, t.created_at, t.id).where(sql`${t.read_at} is null`),
  check('notifications_kind_check', sql.raw(`"kind" in (${kinds})`)),
  check('notifications_record_check', sql`(${t.resource} is null) = (${t.record_id} is null)`),
]);

/** How a user wants each kind delivered (migration 0019): a row only for a kind they have set; no row, the kind's default. */
export const notificationPreferences = pgTable('notification_preferences', {
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: NOTIFICATION_KINDS }).notNull(),
  delivery: text('delivery', { enum: NOTIFICATION_DELIVERIES }).notNull(),
  updated_at: updatedAt(),
}, (t) => [
  primaryKey({ name: 'notification_preferences_pkey', columns: [t.user_id, t.kind] }),
  check('notification_preferences_delivery_check', sql.raw(`"delivery" in (${NOTIFICATION_DELIVERIES.map((d) => `'${d}'`).join(', ')})`)),
]);
