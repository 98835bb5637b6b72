import { type TSchema, Type } from '@sinclair/typebox';
import { eq, sql, type SQL } from 'drizzle-orm';
import { clock } from '../../../clock.js';
import { dayCount, shiftDay } from '../../../data/stats.js';
import type { Executor } from '../../../db/client.js';
import { departments, LEAD_SOURCES, projects, users } from '../../../db/schema/index.js';
import { validationError } from '../../../errors.js';
import { StringEnum, Uuid } from '../../../http/schemas.js';
import { several } from '../../../data/filters.js';
import { localDay } from '../tasks.js';

/** The longest range a report covers: a year. */
export const MAX_DAYS = 366;

export const Day = (description?: string) => Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', ...(description ? { description } : {}) });

/** The query every report takes (its own `group_by` beside). */
export const reportFilters = {
  from: Type.Optional(Day('First day of the range (YYYY-MM-DD, a day in TASK_TIME_ZONE); default 29 days before `to`')),
  to: Type.Optional(Day('Last day of the range, inclusive; default today in TASK_TIME_ZONE. At most 366 days from `from`')),
  project_id: Type.Optional(Uuid({ description: 'Only this project' })),
  source: Type.Optional({ ...several(StringEnum(LEAD_SOURCES)), description: 'Only leads (and their activities and reservations) of these sources: one, several separated by commas, or the parameter repeated' }),
  department_id: Type.Optional(Uuid({ description: 'Only the agents of this department' })),
  agent_id: Type.Optional(Uuid({ description: 'Only this agent' })),
} satisfies Record<string, TSchema>;

export type ReportQuery = {
  from?: string; to?: string; project_id?: string; source?: string[]; department_id?: string; agent_id?: string; group_by?: string;
};

/**
 * What a report runs on: its range (local days in `timeZone`), its filters, the users whose records the reader sees
 * (undefined: all) and the time it is read at.
 */
export type ReportInput = {
  from: string;
  to: string;
  timeZone: string;
  projectId?: string;
  /** Lead sources to keep (none: every source). */
  source?: string[];
  departmentId?: string;
  agentId?: string;
  owners: string[] | undefined;
  now: Date;
};

/** A `YYYY-MM-DD` that names a real day of years 1–9999 (the pattern alone lets 0000-01-01 or 2026-02-30 through). */
const realDay = (day: string) => day >= '0001-01-01' && new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) === day;

/**
 * The range and filters of a report request, checked: a day that is not a real day of years 1–9999, a reversed range,
 * one longer than a year, an id that names nothing → 400 naming the field.
 */
export async function reportInput(db: Executor, query: ReportQuery, options: { timeZone: string; owners: string[] | undefined }): Promise<ReportInput> {
  for (const field of ['from', 'to'] as const) {
    const day = query[field];
    if (day !== undefined && !realDay(day)) throw validationError({ [field]: 'must be a real day of years 0001–9999, as YYYY-MM-DD' });
  }
  const now = clock.now();
  const to = query.to ?? localDay(now, options.timeZone).date;
  const from = query.from ?? shiftDay(to, -29);
  if (from > to) throw validationError({ from: query.to === undefined ? `must not be after to (default: today, ${to})` : 'must not be after to' });
  if (dayCount(from, to) > MAX_DAYS) throw validationError({ from: `must be at most ${MAX_DAYS} days before to` });
  const known = async (field: string, id: string | undefined, table: typeof projects | typeof departments | typeof users, what: string) => {
    if (id === undefined) return;
    const [row] = await db.select({ id: table.id }).from(table as typeof projects).where(eq(table.id, id)).limit(1);
    if (!row) throw validationError({ [field]: `must be an existing ${what}` });
  };
  await known('project_id', query.project_id, projects, 'project');
  await known('department_id', query.department_id, departments, 'department');
  await known('agent_id', query.agent_id, users, 'user');
  return {
    from, to, timeZone: options.timeZone, owners: options.owners, now,
    projectId: query.project_id, source: query.source?.length ? [...new Set(query.source)] : undefined, departmentId: query.department_id, agentId: query.agent_id,
  };
}

/** The instant local day `day` begins in the report's time zone (PostgreSQL reckons it: years 1–9999 alike). */
export const startOf = (input: ReportInput, day: string): SQL => sql`(${day}::date::timestamp at time zone ${input.timeZone})`;
/** The instant the day after `day` begins: the range's end, exclusive. */
export const endOf = (input: ReportInput, day: string): SQL => sql`((${day}::date + 1)::timestamp at time zone ${input.timeZone})`;
/** The local month of an instant, `YYYY-MM`. */
export const monthOf = (input: ReportInput, at: SQL): SQL => sql`to_char(${at} at time zone ${input.timeZone}, 'YYYY-MM')`;
/** The reading time, as PostgreSQL takes it. */
export const nowOf = (input: ReportInput): SQL => sql`${input.now.toISOString()}::timestamptz`;

/** A list of users' ids as one parameter. */
export const idList = (ids: readonly string[]): SQL => sql`string_to_array(${ids.join(',')}, ',')::uuid[]`;

/**
 * The project a lead names: the project whose name its `interest` contains (case-insensitively), the longest such
 * name when several do; null when none does.
 */
export const leadProject = (interest: SQL): SQL => sql`(select p.id from projects p where ${interest} is not null and strpos(lower(${interest}), lower(p.name)) > 0 order by length(p.name) desc, p.id limit 1)`;

/** The users an agent filter keeps (agent, department, and the reader's record scope), as a condition on `agent`; undefined: everyone. */
export function agentCondition(input: ReportInput, agent: SQL): SQL | undefined {
  const parts: SQL[] = [];
  if (input.agentId) parts.push(sql`${agent} = ${input.agentId}::uuid`);
  if (input.departmentId) parts.push(sql`${agent} in (select u.id from users u where u.department_id = ${input.departmentId}::uuid)`);
  if (input.owners) parts.push(sql`${agent} = any(${idList(input.owners)})`);
  return parts.length ? sql.join(parts, sql` and `) : undefined;
}

/** `a and b and …` of the conditions given; `true` for none. */
export const allOf = (parts: (SQL | undefined | false | '' | null)[]): SQL => {
  const kept = parts.filter((part): part is SQL => !!part);
  return kept.length ? sql.join(kept.map((part) => sql`(${part})`), sql` and `) : sql`true`;
};

/** A share (0–1, four decimals) of `part` in `whole`; null when there is no whole. */
export const share = (part: number, whole: number) => (whole ? Math.round((part / whole) * 10000) / 10000 : null);

/** The report's sources filter on `leads.source`, as one parameter; undefined when every source counts. */
export const sourceIs = (input: ReportInput): SQL | undefined =>
  input.source && sql`leads.source = any(string_to_array(${input.source.join(',')}, ','))`;
