import { sql, type SQL } from 'drizzle-orm';
import { ownedBy } from '../../../data/resource.js';
import { leadResource } from '../lead-resource.js';
import { agentCondition, allOf, endOf, leadProject, nowOf, share, startOf, sourceIs } from './input.js';
import { Count, reportRows, type Figures, labelsOf, Minutes, type Report, Share } from './report.js';

/** Minutes to one decimal. */
const tenth = (value: number | string | null) => (value === null ? null : Math.round(Number(value) * 10) / 10);

/**
 * How fast assigned leads were first contacted: from `lead_routing.assigned_at` (the last assignment) to its
 * `first_contact_at` (the first call, e-mail, meeting or site visit logged), for leads assigned in the range.
 */
export const speedToLeadReport: Report = {
  name: 'speed-to-lead',
  operation: 'getSpeedToLeadReport',
  summary: 'Speed to lead: minutes from assignment to first contact, and the share within the routing rule\'s limit',
  description: 'For the leads routed by lead flow and assigned in the range: how many were first contacted, the median and 90th percentile of '
    + 'the minutes from assignment to first contact (contacted leads only; a first contact logged before the last reassignment counts as 0), and of the '
    + 'leads whose rule sets a limit and whose deadline has passed or who were contacted, the share contacted by the deadline (the speed-to-lead '
    + 'deadline lead flow set, else assignment + the rule\'s limit). Grouped by the current assignee, the lead\'s source, or the week of assignment.',
  groupBy: ['agent', 'source', 'week'],
  defaultGroupBy: 'agent',
  figures: {
    assigned: Count('Leads assigned in the range'),
    contacted: Count('Of them, first contacted'),
    median_minutes: Minutes('Median minutes from assignment to first contact'),
    p90_minutes: Minutes('90th percentile of those minutes'),
    with_limit: Count('Leads with a limit whose deadline passed or who were contacted'),
    within_limit: Count('Of those, contacted by the deadline'),
    within_limit_rate: Share('within_limit / with_limit'),
  },
  example: {
    group_by: 'agent',
    rows: [{ key: '019a0000-0000-7000-8000-000000000003', label: 'Ana Cruz', assigned: 40, contacted: 38, median_minutes: 12.5, p90_minutes: 55, with_limit: 40, within_limit: 34, within_limit_rate: 0.85 }],
    totals: { assigned: 40, contacted: 38, median_minutes: 12.5, p90_minutes: 55, with_limit: 40, within_limit: 34, within_limit_rate: 0.85 },
  },
  async run(db, input, groupBy) {
    type Counted = { key: string | null; total: boolean; assigned: number; contacted: number; median_minutes: number | null; p90_minutes: number | null; with_limit: number; within_limit: number };
    // Rows are grouped by the column itself (a uuid, a source, a week's start: quick to sort for the percentiles), keyed as text after.
    const groupings: Record<string, [SQL, (grouped: SQL) => SQL]> = {
      agent: [sql`leads.assigned_to`, (grouped) => sql`coalesce(${grouped}::text, 'none')`],
      source: [sql`leads.source`, (grouped) => grouped],
      week: [sql`date_trunc('week', r.assigned_at at time zone ${input.timeZone})`, (grouped) => sql`to_char(${grouped}, 'YYYY-MM-DD')`],
    };
    const [column, keyOf] = groupings[groupBy];
    const counted = await reportRows<Counted>(db, sql`
      with routed as (
        select ${column} as grouped, r.first_contact_at,
          -- greatest() skips nulls: a lead not yet contacted has no minutes.
          case when r.first_contact_at is not null then greatest(0, extract(epoch from (r.first_contact_at - r.assigned_at)) / 60) end as minutes,
          coalesce(r.speed_due_at, r.assigned_at + f.speed_limit_minutes * interval '1 minute') as due
        from lead_routing r join leads on leads.id = r.lead_id left join lead_flow_rules f on f.id = r.rule_id
        where r.assigned_at >= ${startOf(input, input.from)} and r.assigned_at < ${endOf(input, input.to)} and ${allOf([
          input.owners && ownedBy(leadResource, input.owners)?.sql,
          sourceIs(input),
          input.projectId && sql`${leadProject(sql`leads.interest`)} = ${input.projectId}::uuid`,
          agentCondition({ ...input, owners: undefined }, sql`leads.assigned_to`),
        ])}
      )
      select ${keyOf(sql`grouped`)} as key, grouping(grouped) = 1 as total, count(*)::int as assigned, count(first_contact_at)::int as contacted,
        percentile_cont(0.5) within group (order by minutes) as median_minutes,
        percentile_cont(0.9) within group (order by minutes) as p90_minutes,
        count(*) filter (where due is not null and (first_contact_at is not null or due <= ${nowOf(input)}))::int as with_limit,
        count(*) filter (where due is not null and first_contact_at <= due)::int as within_limit
      from routed group by grouping sets ((grouped), ()) order by grouping(grouped), key`);
    const figures = (row: Counted): Figures => ({
      assigned: row.assigned, contacted: row.contacted, median_minutes: tenth(row.median_minutes), p90_minutes: tenth(row.p90_minutes),
      with_limit: row.with_limit, within_limit: row.within_limit, within_limit_rate: share(row.within_limit, row.with_limit),
    });
    const groups = counted.filter((row) => !row.total);
    const label = await labelsOf(db, groupBy, groups.map((row) => row.key!), 'Unassigned');
    const totals = counted.find((row) => row.total)!;
    return { rows: groups.map((row) => ({ key: row.key!, label: label(row.key!), ...figures(row) })), totals: figures(totals) };
  },
};
