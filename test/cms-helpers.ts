import { and, asc, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { activityLogs } from '../src/db/schema/index.js';
import type { TestContext } from './helpers.js';

/** The activity logs of one record, oldest first. */
export function logsOf(ctx: TestContext, resource: string, resourceId: string) {
  return ctx.database.db.select().from(activityLogs)
    .where(and(eq(activityLogs.resource, resource), eq(activityLogs.resource_id, resourceId)))
    .orderBy(asc(activityLogs.created_at), asc(activityLogs.id));
}

/** Asserts the record's log actions are exactly `actions`, in order, all in module cms by `userId`. */
export async function expectLogs(ctx: TestContext, resource: string, resourceId: string, actions: string[], userId?: string) {
  const logs = await logsOf(ctx, resource, resourceId);
  expect(logs.map((l) => l.action)).toEqual(actions);
  for (const log of logs) {
    expect(log.module).toBe('cms');
    if (userId) expect(log.user_id).toBe(userId);
  }
  return logs;
}

export const UNKNOWN_ID = '01890000-0000-7000-8000-000000000000';
