import { Type } from '@sinclair/typebox';
import { eq, isNotNull } from 'drizzle-orm';
import { alias, type PgColumn } from 'drizzle-orm/pg-core';
import type { App } from '../../types.js';
import { clock } from '../../clock.js';
import { equals, type Filter, is, several } from '../../data/filters.js';
import { defineResource } from '../../data/resource.js';
import { crmTasks, users } from '../../db/schema/index.js';
import { validationError } from '../../errors.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { errorResponses, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, TimestampInput, Uuid } from '../../http/schemas.js';
import { inquiryResource } from './inquiries.js';
import { leadResource } from './lead-resource.js';
import { reservationResource } from './reservation-resource.js';
import { requireAssignee, UserRef, userRefFields } from './shared.js';

/**
 * Follow-ups: something to do by a time, assigned to someone (by default whoever writes it), maybe about a
 * lead, a reservation or an inquiry; done or not. `?mine=true&due=overdue|today|upcoming` is an agent's day; "today"
 * is in TASK_TIME_ZONE. A done follow-up of a lead shows on the lead's timeline.
 */

const doneBy = alias(users, 'done_by_user');

/** `?done=true|false`: done (done_at set) or open. */
const doneFilter = (column: PgColumn): Filter => ({
  schema: Type.Boolean(),
  where: (done: boolean) => (done ? { sql: isNotNull(column), test: (row) => row.done_at != null, reads: ['done_at'] } : is.null(column)),
});
/** Set by the route only (`due`): instants as ISO text, so a cached total is keyed by what they were. */
const fromInstant = (column: PgColumn): Filter => ({ schema: Type.String(), where: (at: string) => is.onOrAfter(column, new Date(at)) });
const beforeInstant = (column: PgColumn): Filter => ({ schema: Type.String(), where: (at: string) => is.onOrBefore(column, new Date(new Date(at).getTime() - 1)) });
/** Set by the route only (`due=overdue,upcoming`): `from|to`, due before the one or from the other on. */
const outsideInstants = (column: PgColumn): Filter => ({ schema: Type.String(), where: (span: string) => {
  const [from, to] = span.split('|').map((at) => new Date(at));
  return is.outside(column, from, to);
} });

export const taskResource = defineResource({
  name: 'tasks',
  module: 'crm',
  label: 'Task',
  table: crmTasks,
  id: crmTasks.id,
  view: {
    fields: {
      id: crmTasks.id, title: crmTasks.title, notes: crmTasks.notes, due_at: crmTasks.due_at, assigned_to: userRefFields,
      lead_id: crmTasks.lead_id, reservation_id: crmTasks.reservation_id, inquiry_id: crmTasks.inquiry_id,
      done_at: crmTasks.done_at, done_by: { id: doneBy.id, name: doneBy.name }, created_by: crmTasks.created_by,
      created_at: crmTasks.created_at, updated_at: crmTasks.updated_at,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, crmTasks.assigned_to)).leftJoin(doneBy, eq(doneBy.id, crmTasks.done_by)),
  },
  list: {
    sortable: { created_at: crmTasks.created_at, due_at: crmTasks.due_at, title: crmTasks.title, updated_at: crmTasks.updated_at },
    defaultSort: 'created_at',
    filters: {
      assigned_to: equals(crmTasks.assigned_to, Uuid()),
      lead_id: equals(crmTasks.lead_id, Uuid()),
      reservation_id: equals(crmTasks.reservation_id, Uuid()),
      inquiry_id: equals(crmTasks.inquiry_id, Uuid()),
      done: doneFilter(crmTasks.done_at),
      // Hidden: what `mine` and `due` stand for in one request.
      mine_of: equals(crmTasks.assigned_to, Uuid()),
      open: doneFilter(crmTasks.done_at),
      due_after: fromInstant(crmTasks.due_at),
      due_before: beforeInstant(crmTasks.due_at),
      due_outside: outsideInstants(crmTasks.due_at),
    },
    ranges: { created: crmTasks.created_at, due: crmTasks.due_at },
    search: [crmTasks.title, crmTasks.notes],
  },
  export: {},
  ownership: [crmTasks.assigned_to, crmTasks.created_by],
  references: () => ({ lead_id: leadResource, reservation_id: reservationResource, inquiry_id: inquiryResource }),
});

export const Task = Strict({
  id: Uuid(),
  title: Type.String(),
  notes: Nullable(Type.String()),
  due_at: Timestamp(),
  assigned_to: UserRef,
  lead_id: Nullable(Uuid()),
  reservation_id: Nullable(Uuid()),
  inquiry_id: Nullable(Uuid()),
  done_at: Nullable(Timestamp({ description: 'When it was marked done; null while open' })),
  done_by: UserRef,
  created_by: Nullable(Uuid()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

const Fields = {
  title: RequiredText(),
  notes: Type.Optional(Nullable(Text())),
  due_at: TimestampInput({ description: 'When it is due' }),
  assigned_to: Type.Optional(Uuid({ description: 'Who does it; default: the user writing it' })),
  lead_id: Type.Optional(Nullable(Uuid())),
  reservation_id: Type.Optional(Nullable(Uuid())),
  inquiry_id: Type.Optional(Nullable(Uuid())),
  done: Type.Optional(Type.Boolean({ description: 'true marks it done (now, by you); false opens it again' })),
};
const TaskInput = Strict(Fields);
const TaskPatch = PartialStrict(Strict(Fields));
type TaskBody = Partial<typeof TaskInput.static>;

/** The values of a body: `done` becomes who closed it when; the due time a Date. */
function valuesOf(body: TaskBody, current: { done_at: Date | null } | undefined, userId: string | null) {
  const { done, due_at, ...rest } = body;
  const values: Partial<typeof crmTasks.$inferInsert> = { ...rest, ...(due_at === undefined ? {} : { due_at: new Date(due_at) }) };
  if (done === true && !current?.done_at) Object.assign(values, { done_at: clock.now(), done_by: userId });
  if (done === false) Object.assign(values, { done_at: null, done_by: null });
  return values;
}

const MONTH_DAYS = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' } as const;
const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock reading of `at` in `timeZone`. */
function wallClock(at: Date, timeZone: string) {
  let format = formats.get(timeZone);
  if (!format) formats.set(timeZone, (format = new Intl.DateTimeFormat('en-US', { ...MONTH_DAYS, timeZone })));
  const parts = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, Number(part.value)]));
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** The instant a local day (`year`, `month`, `day` in `timeZone`) begins. */
function midnight(year: number, month: number, day: number, timeZone: string): Date {
  const utc = Date.UTC(year, month - 1, day);
  const offset = (at: number) => {
    const w = wallClock(new Date(at), timeZone);
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(at / 1000) * 1000;
  };
  // Twice: the offset at the guess may differ from the offset at midnight itself (a change of daylight saving time).
  const guess = utc - offset(utc);
  return new Date(utc - offset(guess));
}

/** The local day `now` falls in (in `timeZone`): its date, the hour now, and the instants it starts and ends. */
export function localDay(now: Date, timeZone: string) {
  const w = wallClock(now, timeZone);
  const next = new Date(Date.UTC(w.year, w.month - 1, w.day + 1));
  const pad = (n: number) => String(n).padStart(2, '0');
  return {
    date: `${String(w.year).padStart(4, '0')}-${pad(w.month)}-${pad(w.day)}`,
    hour: w.hour,
    start: midnight(w.year, w.month, w.day, timeZone),
    end: midnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone),
  };
}

export const DUE = ['overdue', 'today', 'upcoming'] as const;

/**
 * The instants `due` stands for now: overdue is open and due before now; today, open and due from now to the end
 * of the local day; upcoming, open and due after today. Several values are their union: one span, or (overdue and
 * upcoming without today) both ends without today.
 */
export function dueBounds(due: readonly (typeof DUE)[number][], now: Date, timeZone: string): { due_after?: string; due_before?: string; due_outside?: string } {
  const { end } = localDay(now, timeZone);
  const chosen = new Set(due);
  if (chosen.has('overdue') && chosen.has('upcoming') && !chosen.has('today')) return { due_outside: `${now.toISOString()}|${end.toISOString()}` };
  const after = chosen.has('overdue') ? undefined : chosen.has('today') ? now : end;
  const before = chosen.has('upcoming') ? undefined : chosen.has('today') ? end : now;
  return { ...(after ? { due_after: after.toISOString() } : {}), ...(before ? { due_before: before.toISOString() } : {}) };
}

export default async function taskRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, taskResource, {
    path: '/api/crm/tasks',
    Item: Task,
    listQuery: {
      params: {
        mine: Type.Boolean({ description: 'true: only the follow-ups assigned to you' }),
        due: several(StringEnum(DUE, {
          description: `Open follow-ups only: overdue (due before now), today (due from now to the end of the day in TASK_TIME_ZONE, default ${'Asia/Manila'}) or upcoming (due later); several: any of them`,
        })),
      },
      hidden: ['mine_of', 'open', 'due_after', 'due_before', 'due_outside'],
      filters: ({ mine, due, ...query }, { actor }) => ({
        ...query,
        ...(mine === true ? { mine_of: actor.userId ?? '00000000-0000-0000-0000-000000000000' } : {}),
        ...(Array.isArray(due) && due.length ? { open: false, ...dueBounds(due as (typeof DUE)[number][], clock.now(), app.config.taskTimeZone) } : {}),
      }),
    },
    create: {
      body: TaskInput,
      summary: 'Write a follow-up (assigned to you unless `assigned_to` says otherwise)',
      values: async (body, { actor }) => {
        await requireAssignee(db, body.assigned_to, 'assigned_to');
        return { ...valuesOf(body, undefined, actor.userId), assigned_to: body.assigned_to ?? actor.userId ?? undefined, created_by: actor.userId } as typeof crmTasks.$inferInsert;
      },
    },
    update: {
      body: TaskPatch,
      summary: 'Update a follow-up; `done: true` marks it done, `done: false` opens it again',
      validate: (body) => requireAssignee(db, body.assigned_to, 'assigned_to'),
      values: (body, current, work) => valuesOf(body, current, work.actor.userId),
    },
  });
}
