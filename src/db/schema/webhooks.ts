import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, id, ts, updatedAt } from './common.js';
import { users } from './iam.js';

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

/**
 * Where events are POSTed: a URL, the event types it subscribes to (`*` for all) and its signing secret (Standard
 * Webhooks `whsec_…`), which answers never show after the one that created or rotated it.
 */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: id(),
  url: text('url').notNull(),
  description: text('description'),
  events: text('events').array().notNull(),
  enabled: boolean('enabled').notNull().default(true),
  secret: text('secret').notNull(),
  created_by: uuid('created_by').references(() => users.id),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  index('webhook_endpoints_created_idx').on(t.created_at, t.id),
  index('webhook_endpoints_url_idx').on(t.url, t.id),
]);

/**
 * One event for one endpoint: written in the transaction of the change it tells of (so a rolled-back change has none
 * and a committed one is never lost), then POSTed by the dispatcher job until delivered or out of retries.
 * `next_attempt_at` is when the dispatcher may take it (a taken one is leased a little into the future).
 */
export const webhookDeliveries = pgTable('webhook_deliveries', {
  id: id(),
  endpoint_id: uuid('endpoint_id').notNull().references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
  event_type: text('event_type').notNull(),
  payload: jsonb('payload').notNull(),
  status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  next_attempt_at: ts('next_attempt_at'),
  last_status_code: integer('last_status_code'),
  last_error: text('last_error'),
  delivered_at: ts('delivered_at'),
  created_at: createdAt(),
}, (t) => [
  // The delivery log of an endpoint, newest first, with or without a status filter.
  index('webhook_deliveries_endpoint_idx').on(t.endpoint_id, t.created_at, t.id),
  index('webhook_deliveries_endpoint_status_idx').on(t.endpoint_id, t.status, t.created_at, t.id),
  // What the dispatcher takes next: only pending rows are in it, so it stays small.
  index('webhook_deliveries_due_idx').on(t.next_attempt_at).where(sql`${t.status} = 'pending'`),
  // A campaign's "sent" event is recorded once (looked up by campaign id only among those events).
  index('webhook_deliveries_campaign_sent_idx').on(sql`(${t.payload} -> 'data' ->> 'id')`).where(sql`${t.event_type} = 'campaign.sent'`),
  check('webhook_deliveries_status_check', sql`${t.status} in ('pending', 'delivered', 'failed')`),
]);
