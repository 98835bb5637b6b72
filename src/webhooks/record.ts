import { type SQL, sql } from 'drizzle-orm';
import { loggable } from '../audit/record.js';
import type { ActivityLog } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { webhookDeliveries, webhookEndpoints } from '../db/schema/index.js';
import { eventOf, STATUS_EVENTS } from './events.js';

/**
 * Recording webhook events in the statement of the change they tell of. Each event becomes one `webhook_deliveries`
 * row per enabled endpoint subscribed to it (its type, or `*`): an `insert … select … from webhook_endpoints` run as a
 * CTE of the statement that already writes the activity log, so a change costs no extra round trip, a rolled-back
 * change leaves no delivery, and a committed one is never lost. With no endpoint subscribed, the CTE reads a tiny
 * table and inserts nothing.
 */

/** An event with its own data (`work.emit`), recorded with the next audited statement of the transaction. */
export type Emitted = { type: string; data: Record<string, unknown>; at: Date };

/** A UUIDv7 made by PostgreSQL (one per inserted row; PostgreSQL 15 has no uuidv7()): version bits set on a random UUID. */
const NEW_UUID = sql.raw(
  "encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid",
);

/** The Standard Webhooks payload: `{type, timestamp, data}`. */
const payloadOf = (type: SQL, at: Date, data: SQL) => sql`jsonb_build_object('type', ${type}, 'timestamp', ${at.toISOString()}::text, 'data', ${data})`;

/**
 * The events (`select type, payload, at`) of one audited change, read from the `log` CTE that inserted its activity
 * log (`returning changes`), so the recorded fields are exactly the log's: same filtering, no secret. Undefined when
 * the resource has no events.
 */
export function changeEvents(log: ActivityLog, also: string[] = []): SQL | undefined {
  const type = eventOf(log.resource, log.action);
  if (!type) return undefined;
  const action = log.action;
  const sides = [
    ...(action !== 'create' ? [sql`'before', log.changes -> 'before'`] : []),
    ...(action !== 'delete' ? [sql`'after', log.changes -> 'after'`] : []),
  ];
  const data = sql`jsonb_build_object('id', ${log.resource_id}::text, 'resource', ${log.resource}::text, ${sql.join(sides, sql`, `)})`;
  const types = sql.join([type, ...also].map((t) => sql`${t}::text`), sql`, `);
  const parts = [sql`select t.type, ${payloadOf(sql`t.type`, log.created_at, data)}, ${log.created_at.toISOString()}::timestamptz from log, unnest(array[${types}]) as t(type)`];
  // A status move is an event of its own (reservation.status_changed), whatever path made it.
  const status = action === 'update' ? STATUS_EVENTS[log.resource] : undefined;
  const changes = log.changes as { before: Record<string, unknown>; after: Record<string, unknown> };
  if (status && status.field in changes.after) {
    parts.push(emittedEvents([{
      type: status.type, at: log.created_at,
      data: { id: log.resource_id, resource: log.resource, from: changes.before[status.field] ?? null, to: changes.after[status.field] ?? null },
    }])!);
  }
  return sql.join(parts, sql` union all `);
}

/**
 * The change events of many activity logs at once (a batch of an import, creates written together), as `changeEvents`
 * gives them one by one; `also`: further event types carrying each one's data.
 */
export function batchEvents(logs: ActivityLog[], also: string[] = []): SQL | undefined {
  const events = logs.flatMap((log) => {
    const type = eventOf(log.resource, log.action);
    if (!type) return [];
    const changes = log.changes as { before: Record<string, unknown>; after: Record<string, unknown> };
    const data = { id: log.resource_id, resource: log.resource, ...(log.action !== 'create' ? { before: changes.before } : {}), ...(log.action !== 'delete' ? { after: changes.after } : {}) };
    const at = log.created_at.toISOString();
    return [type, ...also].map((each) => ({ type: each, payload: { type: each, timestamp: at, data }, at }));
  });
  if (!events.length) return undefined;
  return sql`select type, payload, at from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as e(type text, payload jsonb, at timestamptz)`;
}

/** Events with their own data (`select type, payload, at`), their fields filtered as the activity log's are. */
export function emittedEvents(events: Emitted[]): SQL | undefined {
  if (!events.length) return undefined;
  return sql.join(events.map((e) => sql`select ${e.type}::text, ${JSON.stringify({ type: e.type, timestamp: e.at.toISOString(), data: loggable(e.data) })}::jsonb, ${e.at.toISOString()}::timestamptz`), sql` union all `);
}

/** The CTE body recording `events` for every subscribed, enabled endpoint; it returns one row per delivery. */
export function deliveriesInsert(events: SQL): SQL {
  return sql`insert into ${webhookDeliveries} (id, endpoint_id, event_type, payload, next_attempt_at, created_at)
    select ${NEW_UUID}, e.id, ev.type, ev.payload, now(), ev.at
    from (${events}) as ev(type, payload, at)
    join ${webhookEndpoints} e on e.enabled and (e.events @> array[ev.type] or '*' = any(e.events))
    returning 1`;
}

/** Rows of a raw statement, whichever driver ran it. */
export const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;

/** Who hears, per database, that deliveries were committed (the dispatcher of each instance running jobs). */
const listeners = new Map<Db, Set<() => void>>();

/** Calls `listener` after every commit on `db` that recorded deliveries; returns the unsubscribe function. */
export function onDeliveriesCommitted(db: Db, listener: () => void): () => void {
  let set = listeners.get(db);
  if (!set) listeners.set(db, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (!set.size) listeners.delete(db);
  };
}

/** Says deliveries are waiting (committed, or put back to pending): the local dispatcher runs soon. */
export function deliveriesCommitted(db: Db) {
  listeners.get(db)?.forEach((listener) => listener());
}
