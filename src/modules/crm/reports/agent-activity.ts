import { sql, type SQL } from 'drizzle-orm';
import { CALL_OUTCOMES } from '../../../db/schema/index.js';
import { agentCondition, allOf, endOf, leadProject, nowOf, startOf, type ReportInput, sourceIs } from './input.js';
import { Count, reportRows, type Figures, labelsOf, type Report } from './report.js';

const FIGURES = ['calls', ...CALL_OUTCOMES.map((outcome) => `calls_${outcome}`), 'emails', 'meetings', 'site_visits', 'followups_completed', 'followups_overdue', 'reservations'] as const;

/** The lead conditions (source, project) of the filters, on a lead joined as `leads`; undefined when none applies. */
function leadFilter(input: ReportInput): SQL | undefined {
  const parts = [
    sourceIs(input),
    input.projectId && sql`${leadProject(sql`leads.interest`)} = ${input.projectId}::uuid`,
  ].filter((part): part is SQL => !!part);
  return parts.length ? allOf(parts) : undefined;
}

/**
 * What each agent did, per week: activities they logged (by when they happened), follow-ups they completed, follow-ups
 * of theirs that went overdue, reservations they made.
 */
export const agentActivityReport: Report = {
  name: 'agent-activity',
  operation: 'getAgentActivityReport',
  summary: 'Agent activity: calls by outcome, e-mails, meetings, site visits, follow-ups and reservations per agent and week',
  description: 'Per agent (the author of an activity, who completed a follow-up, who a late follow-up was assigned to, who made a reservation) and '
    + 'per week (Monday to Sunday in TASK_TIME_ZONE): activities by when they happened (calls also by outcome; a call without an outcome counts '
    + 'only in `calls`), follow-ups completed in the range, follow-ups due in the range and not done by their due time (counted once that time has '
    + 'passed), reservations made. With `source` or `project_id`, only what concerns such leads (reservations: of units of the project). '
    + 'A user whose record scope is `own` sees their own figures; `department`, their department\'s.',
  groupBy: ['agent_week', 'agent', 'week'],
  defaultGroupBy: 'agent_week',
  figures: {
    calls: Count('Calls logged'),
    ...Object.fromEntries(CALL_OUTCOMES.map((outcome) => [`calls_${outcome}`, Count(`Calls with outcome ${outcome}`)])),
    emails: Count('E-mails logged'),
    meetings: Count('Meetings'),
    site_visits: Count('Site visits'),
    followups_completed: Count('Follow-ups completed'),
    followups_overdue: Count('Follow-ups due then and not done by their due time'),
    reservations: Count('Reservations made'),
  },
  example: {
    group_by: 'agent_week',
    rows: [{
      key: '019a0000-0000-7000-8000-000000000003|2026-03-02', label: 'Ana Cruz, Week of 2026-03-02', calls: 25, calls_answered: 15, calls_no_answer: 6, calls_busy: 2,
      calls_voicemail: 1, calls_wrong_number: 1, emails: 12, meetings: 3, site_visits: 2, followups_completed: 20, followups_overdue: 1, reservations: 1,
    }],
    totals: { calls: 25, calls_answered: 15, calls_no_answer: 6, calls_busy: 2, calls_voicemail: 1, calls_wrong_number: 1, emails: 12, meetings: 3, site_visits: 2, followups_completed: 20, followups_overdue: 1, reservations: 1 },
  },
  async run(db, input, groupBy) {
    const start = startOf(input, input.from);
    const end = endOf(input, input.to);
    const leads = leadFilter(input);
    const keys: Record<string, SQL> = {
      agent_week: sql`agent::text || '|' || to_char(week, 'YYYY-MM-DD')`,
      agent: sql`agent::text`,
      week: sql`to_char(week, 'YYYY-MM-DD')`,
    };
    const counted = await reportRows<{ key: string | null; total: boolean } & Record<(typeof FIGURES)[number], number>>(db, sql`
      with facts as (
        select a.author_id as agent, a.occurred_at as at, a.kind as what, a.outcome
        from crm_activities a ${leads ? sql`join leads on leads.id = a.lead_id` : sql``}
        where a.occurred_at >= ${start} and a.occurred_at < ${end} and a.author_id is not null and a.kind <> 'note'
          and ${allOf([agentCondition(input, sql`a.author_id`), leads])}
        union all
        select t.done_by, t.done_at, 'followup_completed', null
        from crm_tasks t ${leads ? sql`join leads on leads.id = t.lead_id` : sql``}
        where t.done_at >= ${start} and t.done_at < ${end} and t.done_by is not null and ${allOf([agentCondition(input, sql`t.done_by`), leads])}
        union all
        select t.assigned_to, t.due_at, 'followup_overdue', null
        from crm_tasks t ${leads ? sql`join leads on leads.id = t.lead_id` : sql``}
        where t.due_at >= ${start} and t.due_at < ${end} and t.due_at < ${nowOf(input)} and (t.done_at is null or t.done_at > t.due_at)
          and ${allOf([agentCondition(input, sql`t.assigned_to`), leads])}
        union all
        select reservations.created_by, reservations.created_at, 'reservation', null
        from reservations ${input.source ? sql`join leads on leads.id = reservations.lead_id` : sql``}
        where reservations.created_at >= ${start} and reservations.created_at < ${end} and reservations.created_by is not null and ${allOf([
          agentCondition(input, sql`reservations.created_by`),
          sourceIs(input),
          input.projectId && sql`reservations.inventory_id in (select u.id from inventory_units u where u.project_id = ${input.projectId}::uuid)`,
        ])}
      ),
      -- Counted per agent and local week first (few rows), then keyed and totalled.
      weekly as (
        select agent, date_trunc('week', at at time zone ${input.timeZone}) as week,
          count(*) filter (where what = 'call') as calls,
          ${sql.join(CALL_OUTCOMES.map((outcome) => sql`count(*) filter (where what = 'call' and outcome = ${outcome}) as ${sql.identifier(`calls_${outcome}`)}`), sql`, `)},
          count(*) filter (where what = 'email') as emails,
          count(*) filter (where what = 'meeting') as meetings,
          count(*) filter (where what = 'site_visit') as site_visits,
          count(*) filter (where what = 'followup_completed') as followups_completed,
          count(*) filter (where what = 'followup_overdue') as followups_overdue,
          count(*) filter (where what = 'reservation') as reservations
        from facts group by 1, 2
      )
      select key, grouping(key) = 1 as total,
        ${sql.join(FIGURES.map((name) => sql`sum(${sql.identifier(name)})::int as ${sql.identifier(name)}`), sql`, `)}
      from (select ${keys[groupBy]} as key, * from weekly) keyed
      group by grouping sets ((key), ()) order by grouping(key), key`);
    const figures = (row: Record<string, unknown>): Figures => Object.fromEntries(FIGURES.map((name) => [name, Number(row[name] ?? 0)]));
    const groups = counted.filter((row) => !row.total);
    const label = await labelsOf(db, groupBy, groups.map((row) => row.key!), 'Nobody');
    const totals = counted.find((row) => row.total)!;
    return { rows: groups.map((row) => ({ key: row.key!, label: label(row.key!), ...figures(row) })), totals: figures(totals) };
  },
};
