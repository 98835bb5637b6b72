import type { FastifyRequest } from 'fastify';
import type { Executor } from '../db/client.js';
import { activityLogs, type ModuleName } from '../db/schema/index.js';
import { bumpVersion } from '../http/list.js';

/** Who did it, from where: captured from the request (client IP honours TRUST_PROXY through Fastify). */
export type Actor = { userId: string | null; ip: string | null; userAgent: string | null };

export const actorOf = (request: FastifyRequest, userId: string | null): Actor => ({
  userId,
  ip: request.ip ?? null,
  userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'].slice(0, 1000) : null,
});

export type Change = {
  action: 'create' | 'update' | 'delete';
  module: ModuleName;
  /** Collection name (CONTRACT §7), also the change-version key of its list. */
  resource: string;
  resourceId: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
};

/** Never written to a log, at any depth. */
const SECRET = /password|hash|token|secret|backup_?codes/i;
/** Bookkeeping that changes on every write and says nothing about the change. */
const NOISE = new Set(['updated_at', 'updatedAt']);

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
 * Writes the activity log of one changed record and bumps the change versions, inside the caller's
 * transaction: if either the change or its log fails, neither is kept. Returns false for an update
 * that changed nothing (no log is written then).
 */
export async function recordChange(tx: Executor, actor: Actor, change: Change): Promise<boolean> {
  const changes =
    change.action === 'create' ? { before: {}, after: fields(change.after) }
    : change.action === 'delete' ? { before: fields(change.before), after: {} }
    : diff(change.before ?? {}, change.after ?? {});
  if (change.action === 'update' && Object.keys(changes.after).length === 0) return false;
  await tx.insert(activityLogs).values({
    user_id: actor.userId,
    action: change.action,
    module: change.module,
    resource: change.resource,
    resource_id: change.resourceId,
    changes,
    ip_address: actor.ip,
    user_agent: actor.userAgent,
  });
  // Last in the transaction, so the version rows stay locked as briefly as possible.
  await bumpVersion(tx, change.resource);
  await bumpVersion(tx, 'activity_logs');
  return true;
}
