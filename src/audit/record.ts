import { v7 as uuidv7 } from 'uuid';
import { clock } from '../clock.js';
import { activityLogs, type ModuleName } from '../db/schema/index.js';
import type { Actor } from '../data/actor.js';

export type ActivityLog = typeof activityLogs.$inferSelect;

/** One changed record, as the activity log keeps it (CONTRACT §7). */
export type ActivityEntry = {
  action: 'create' | 'update' | 'delete';
  module: ModuleName;
  /** Collection name (CONTRACT §7). */
  resource: string;
  resourceId: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  /** The activity log this change restores. */
  restoredFrom?: string | null;
};

/** Never written to a log, at any depth. */
const SECRET = /password|hash|token|secret|backup_?codes/i;
/** Bookkeeping that changes on every write and says nothing about the change. */
const NOISE = new Set(['updated_at', 'updatedAt']);

/** A value as logs (and webhook payloads) hold it: dates as ISO text, no secret at any depth. */
export function loggable(value: unknown): unknown {
  return plain(value);
}

function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !SECRET.test(k)).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function fields(record: Record<string, unknown> = {}): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([k]) => !NOISE.has(k) && !SECRET.test(k)).map(([k, v]) => [k, plain(v)]));
}

/** `{before, after}` holding only the fields whose value changed (compared as JSON). */
export function diff(before: Record<string, unknown>, after: Record<string, unknown>) {
  const b = fields(before);
  const a = fields(after);
  const changed = [...new Set([...Object.keys(b), ...Object.keys(a)])].filter((k) => JSON.stringify(b[k] ?? null) !== JSON.stringify(a[k] ?? null));
  return {
    before: Object.fromEntries(changed.map((k) => [k, b[k] ?? null])),
    after: Object.fromEntries(changed.map((k) => [k, a[k] ?? null])),
  };
}

/**
 * The activity log of one changed record, ready to insert (id and time set here, so the caller knows the whole row
 * without reading it back); null for an update that changed nothing (no log is written then).
 */
export function activityLogOf(actor: Actor, entry: ActivityEntry): ActivityLog | null {
  const changes =
    entry.action === 'create' ? { before: {}, after: fields(entry.after) }
    : entry.action === 'delete' ? { before: fields(entry.before), after: {} }
    : diff(entry.before ?? {}, entry.after ?? {});
  if (entry.action === 'update' && Object.keys(changes.after).length === 0) return null;
  return {
    id: uuidv7(),
    user_id: actor.userId,
    action: entry.action,
    module: entry.module,
    resource: entry.resource,
    resource_id: entry.resourceId,
    changes,
    ip_address: actor.ip,
    user_agent: actor.userAgent,
    created_at: clock.now(),
    restored_from: entry.restoredFrom ?? null,
  };
}
