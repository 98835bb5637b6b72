import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { ts } from './common.js';
import { MODULES } from './iam.js';

/** A row deleted or changed together with a trashed record: its table (SQL name) and the row by column name. */
export type TrashedRow = { table: string; row: Record<string, unknown> };
/** A row the deletion changed: its table, id, and the columns (SQL names) as they were before and after. */
export type ChangedRow = { table: string; id: string; before: Record<string, unknown>; after: Record<string, unknown> };

/**
 * Deleted cms and crm records, restorable for TRASH_RETENTION_DAYS (migration 0017): keyed by the delete's
 * activity log, with everything the deletion removed or changed.
 */
export const trash = pgTable('trash', {
  /** The delete's activity log id (the change-log triggers key rows by `id`). */
  id: uuid('id').primaryKey(),
  module: text('module', { enum: MODULES }).notNull(),
  resource: text('resource').notNull(),
  record_id: uuid('record_id').notNull(),
  title: text('title'),
  user_id: uuid('user_id'),
  owners: uuid('owners').array(),
  record: jsonb('record').$type<Record<string, unknown>>().notNull(),
  deleted_with: jsonb('deleted_with').$type<TrashedRow[]>().notNull().default([]),
  changed_with: jsonb('changed_with').$type<ChangedRow[]>().notNull().default([]),
  deleted_at: ts('deleted_at').notNull(),
  restored_at: ts('restored_at'),
  restored_by: uuid('restored_by'),
}, (t) => [
  index('trash_module_idx').on(t.module, t.deleted_at, t.id).where(sql`${t.restored_at} is null`),
  index('trash_deleted_idx').on(t.deleted_at, t.id),
  index('trash_record_idx').on(t.record_id),
]);
