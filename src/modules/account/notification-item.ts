import type { notifications } from '../../db/schema/index.js';

/** A notification as the API shows it: the inbox's items, and the live stream's `notification` events. */
export const notificationItem = (row: typeof notifications.$inferSelect) => ({
  id: row.id, kind: row.kind, title: row.title, body: row.body, created_at: row.created_at, read_at: row.read_at,
  record: row.resource && row.record_id ? { resource: row.resource, id: row.record_id } : null,
});
