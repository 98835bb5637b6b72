import { Type } from '@sinclair/typebox';
import { eq, ne } from 'drizzle-orm';
import { anyOf, equals, fromDay, untilDay } from '../data/filters.js';
import { defineResource } from '../data/resource.js';
import { ACTIONS, activityLogs, MODULES, users } from '../db/schema/index.js';
import { Nullable, Strict, StringEnum, Timestamp, Uuid } from '../http/schemas.js';

const DateOnly = () => Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

/** Activity logs (CONTRACT §7): read-only; filters by actor, module, action and inclusive UTC days; newest first. */
export const activityLogResource = defineResource({
  name: 'activity_logs',
  module: 'iam',
  label: 'Activity log',
  table: activityLogs,
  id: activityLogs.id,
  // The actor comes from a left join: tombstoned users keep their name, logs of unknown actors show null.
  view: {
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
      restored_from: activityLogs.restored_from,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, activityLogs.user_id)),
  },
  list: {
    sortable: { created_at: activityLogs.created_at },
    defaultSort: 'created_at',
    filters: {
      user_id: equals(activityLogs.user_id, Uuid()),
      module: anyOf(activityLogs.module, StringEnum(MODULES)),
      action: anyOf(activityLogs.action, StringEnum(ACTIONS)),
      resource: equals(activityLogs.resource, Type.String({ maxLength: 100 })),
      resource_id: equals(activityLogs.resource_id, Uuid()),
      date_from: fromDay(activityLogs.created_at, DateOnly()),
      date_to: untilDay(activityLogs.created_at, DateOnly()),
    },
  },
  export: { json: ['changes'] },
  /**
   * A caller who may not read every crm record (crm scope other than `all`, or no crm read) reads no crm entries
   * here (list, detail, export): the changes of a crm record are read in its own History, which follows the caller's
   * scope. Every other module's entries stay; administrators read them all.
   */
  walledBy: () => ({ sql: ne(activityLogs.module, 'crm'), test: (row) => row.module !== 'crm', reads: ['module'] }),
});

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
  restored_from: Nullable(Uuid({ description: 'The activity log whose state this change restored (a restore from a record\'s history or from the trash); null for any other change' })),
});
