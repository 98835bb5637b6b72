import { and, eq } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { activityLogs } from '../db/schema/index.js';
import { conflict, notFound } from '../errors.js';

/**
 * Restoring a record from its history: the fields of one activity-log entry, as they were before (or
 * after) that change, become an update body that goes through the resource's own PATCH: its validation, its state
 * moves, unique keys and references. Nothing here writes; the route runs the update as PATCH does.
 */

type Fields = Record<string, unknown>;
export type RestoreSide = 'before' | 'after';

/** One entry of this record's history, or 404 (an entry of another record is not this record's). */
export async function historyEntry(db: Executor, resource: string, recordId: string, logId: string) {
  const [entry] = await db.select({ id: activityLogs.id, action: activityLogs.action, changes: activityLogs.changes }).from(activityLogs)
    .where(and(eq(activityLogs.id, logId), eq(activityLogs.resource, resource), eq(activityLogs.resource_id, recordId))).limit(1);
  if (!entry) throw notFound('History entry');
  return { ...entry, changes: entry.changes as { before: Fields; after: Fields } };
}

/**
 * The update body that sets the record back to one side of a change: each field the entry holds on that side that the
 * update body takes (`settable`), with the value it had; `skipped`: the entry's other fields, which the service sets
 * by its own rules (a unit's code, who responded…). 409 when the side holds nothing to set (a create's "before").
 */
export function restoreBody(entry: { action: string; changes: { before: Fields; after: Fields } }, to: RestoreSide, settable: string[], label: string) {
  const side = entry.changes[to] ?? {};
  const fields = Object.keys(side);
  if (!fields.length) {
    const message = entry.action === 'create' ? `A create has no earlier state: delete the ${label.toLowerCase()} instead`
      : entry.action === 'delete' ? 'A delete has no later state: restore the record from the trash instead' : 'The change holds no fields to restore';
    throw conflict(message, { to: `the ${entry.action}'s "${to}" holds no fields` });
  }
  const body: Fields = {};
  const skipped: string[] = [];
  for (const field of fields) {
    if (settable.includes(field)) body[field] = side[field];
    else skipped.push(field);
  }
  if (!Object.keys(body).length) {
    const message = `None of the fields of this change (${skipped.join(', ')}) can be set: the service sets them by its own rules`;
    throw conflict(message, Object.fromEntries(skipped.map((field) => [field, 'is set by the service, not restored'])));
  }
  return { body, skipped };
}

/** Thrown inside a restore's transaction when it is only a dry run: the update is undone, its outcome is kept. */
export class DryRun<R> extends Error {
  constructor(readonly row: R) {
    super('dry run');
  }
}
