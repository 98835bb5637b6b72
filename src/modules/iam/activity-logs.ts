import { Type } from '@sinclair/typebox';
import { eq, gte, lt } from 'drizzle-orm';
import type { App } from '../../app.js';
import { ACTIONS, activityLogs, MODULES, users } from '../../db/schema/index.js';
import { findOne } from '../../http/crud.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { errorResponses, IdParams, Nullable, Paginated, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

const DAY = 24 * 3600 * 1000;
const DateOnly = () => Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' });
const startOf = (day: string) => new Date(`${day}T00:00:00.000Z`);

/** Activity logs (CONTRACT §7): filters by actor, module, action and inclusive UTC days; newest first. */
export const activityLogList: ListSpec = {
  collection: 'activity_logs',
  table: activityLogs,
  id: activityLogs.id,
  sortable: { created_at: activityLogs.created_at },
  defaultSort: 'created_at',
  filters: {
    user_id: { schema: Uuid(), where: (value: string) => eq(activityLogs.user_id, value) },
    module: { schema: StringEnum(MODULES), where: (value: string) => eq(activityLogs.module, value as any) },
    action: { schema: StringEnum(ACTIONS), where: (value: string) => eq(activityLogs.action, value as any) },
    date_from: { schema: DateOnly(), where: (value: string) => gte(activityLogs.created_at, startOf(value)) },
    date_to: { schema: DateOnly(), where: (value: string) => lt(activityLogs.created_at, new Date(startOf(value).getTime() + DAY)) },
  },
};

/** The actor comes from a left join: tombstoned users keep their name, logs of unknown actors show null. */
export const activityLogView = {
  fields: {
    id: activityLogs.id,
    user: { id: users.id, name: users.name, email: users.email },
    action: activityLogs.action,
    module: activityLogs.module,
    resource: activityLogs.resource,
    resource_id: activityLogs.resource_id,
    changes: activityLogs.changes,
    ip_address: activityLogs.ip_address,
    user_agent: activityLogs.user_agent,
    created_at: activityLogs.created_at,
  },
  joins: (query) => query.leftJoin(users, eq(users.id, activityLogs.user_id)),
} satisfies View;

const Fields = Type.Object({}, { additionalProperties: true });
export const ActivityLog = Strict({
  id: Uuid(),
  user: Nullable(Strict({ id: Uuid(), name: Type.String(), email: Type.String() })),
  action: StringEnum(ACTIONS),
  module: StringEnum(MODULES),
  resource: Type.String(),
  resource_id: Uuid(),
  changes: Strict({ before: Fields, after: Fields }),
  ip_address: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  created_at: Timestamp(),
});

/** Read-only: the service writes logs itself, in the transaction of each change. */
export default async function activityLogRoutes(app: App) {
  const { db } = app.database;

  app.get('/api/iam/activity-logs', {
    schema: { summary: 'Activity logs (paginated; filters user_id, module, action, date_from, date_to)', querystring: listQuerySchema(activityLogList), response: { 200: Paginated(ActivityLog), ...errorResponses } },
  }, async (request) => app.lists.page(activityLogList, activityLogView, request.query as ListQuery));

  app.get('/api/iam/activity-logs/:id', {
    schema: { summary: 'One activity log', params: IdParams, response: { 200: ActivityLog, ...errorResponses } },
  }, async (request) => {
    return findOne(db, { table: activityLogs, id: activityLogs.id, label: 'Activity log' }, activityLogView, request.params.id);
  });
}
