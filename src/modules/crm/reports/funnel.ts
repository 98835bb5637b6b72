import { sql, type SQL } from 'drizzle-orm';
import { ownedBy } from '../../../data/resource.js';
import { leadResource } from '../lead-resource.js';
import { reservationResource } from '../reservation-resource.js';
import { agentCondition, allOf, endOf, leadProject, monthOf, share, startOf, sourceIs } from './input.js';
import { Count, reportRows, type Figures, labelsOf, type Report, Share } from './report.js';

const STAGES = ['contacted', 'qualified', 'reserved', 'sold'] as const;
/** The statuses that mean a lead got at least this far (a lead may skip a status: new → qualified was contacted too). */
const REACHED = { contacted: ['contacted', 'qualified', 'converted'], qualified: ['qualified', 'converted'] } as const;

const statuses = (list: readonly string[]) => sql.raw(list.map((status) => `'${status}'`).join(', '));

/**
 * Leads created in the range, and how many of them got to each stage by the end of the range, from what was recorded
 * (lead_status_changes, reservations, unit_status_changes), so a past period's figures do not move when a lead changes
 * later. Leads now deleted are left out; a lead restored from the trash counts again, with its history.
 */
export const funnelReport: Report = {
  name: 'funnel',
  operation: 'getFunnelReport',
  summary: 'Sales funnel: leads created in the range and how many were contacted, qualified, reserved and sold',
  description: 'Counts the leads created in the range (in TASK_TIME_ZONE days) and, of them, those that by the end of the range had been '
    + 'contacted (status contacted, qualified or converted at some point), qualified (qualified or converted), reserved (a reservation for the '
    + 'lead made by then) and sold (a unit of one of the lead\'s reservations marked sold to that reservation by then). Read from the status '
    + 'history the service records, not from today\'s statuses. Rates are shares of the leads. Grouped by the lead\'s source, the project its '
    + 'interest names, its assignee, or the month it was created.',
  groupBy: ['source', 'project', 'agent', 'month'],
  defaultGroupBy: 'source',
  figures: {
    leads: Count('Leads created in the range'),
    contacted: Count('Of them, contacted by the end of the range'),
    qualified: Count('Of them, qualified by the end of the range'),
    reserved: Count('Of them, with a reservation made by the end of the range'),
    sold: Count('Of them, with a reservation whose unit was sold to it by the end of the range'),
    contacted_rate: Share('contacted / leads'),
    qualified_rate: Share('qualified / leads'),
    reserved_rate: Share('reserved / leads'),
    sold_rate: Share('sold / leads'),
  },
  example: {
    group_by: 'source',
    rows: [{ key: 'website', label: 'Website', leads: 200, contacted: 150, qualified: 80, reserved: 20, sold: 8, contacted_rate: 0.75, qualified_rate: 0.4, reserved_rate: 0.1, sold_rate: 0.04 }],
    totals: { leads: 200, contacted: 150, qualified: 80, reserved: 20, sold: 8, contacted_rate: 0.75, qualified_rate: 0.4, reserved_rate: 0.1, sold_rate: 0.04 },
  },
  async run(db, input, groupBy) {
    const start = startOf(input, input.from);
    const end = endOf(input, input.to);
    const project = leadProject(sql`leads.interest`);
    const keys: Record<string, SQL> = {
      source: sql`leads.source`,
      project: sql`coalesce(${project}::text, 'none')`,
      agent: sql`coalesce(leads.assigned_to::text, 'none')`,
      month: monthOf(input, sql`leads.created_at`),
    };
    const leadScope = input.owners && ownedBy(leadResource, input.owners)?.sql;
    const reservationScope = input.owners && ownedBy(reservationResource, input.owners)?.sql;
    // A record scope or an agent filter keeps a few agents' leads: a small cohort.
    const byAgent = [leadScope, agentCondition({ ...input, owners: undefined }, sql`leads.assigned_to`)].filter((part): part is SQL => !!part);
    const counted = await reportRows<{ key: string | null; total: boolean } & Record<(typeof STAGES)[number] | 'leads', number>>(db, sql`
      with cohort as (
        select leads.id, ${keys[groupBy]} as key from leads
        where leads.created_at >= ${start} and leads.created_at < ${end} and ${allOf([
          ...byAgent,
          sourceIs(input),
          input.projectId && sql`${project} = ${input.projectId}::uuid`,
        ])}
      ),
      -- The moves of the range: a cohort lead's moves all come after its creation, so one range scan of the history
      -- (by changed_at) finds them, instead of a look-up per lead; but a few agents' cohort is read lead by lead.
      reached as (
        select s.lead_id, bool_or(s.to_status in (${statuses(REACHED.contacted)})) as contacted, bool_or(s.to_status in (${statuses(REACHED.qualified)})) as qualified
        from lead_status_changes s
        where s.changed_at >= ${start} and s.changed_at < ${end} and s.to_status in (${statuses(REACHED.contacted)})
          ${byAgent.length ? sql`and s.lead_id in (select id from cohort)` : sql``}
        group by s.lead_id
      ),
      -- Reservations are few beside leads: the leads that have one (and have a sale), read whole.
      reserved as (
        select distinct reservations.lead_id from reservations
        where reservations.lead_id is not null and reservations.created_at < ${end} and ${allOf([reservationScope])}
      ),
      sold as (
        select distinct reservations.lead_id from reservations join unit_status_changes u on u.reservation_id = reservations.id and u.to_status = 'sold' and u.changed_at < ${end}
        where reservations.lead_id is not null and ${allOf([reservationScope])}
      ),
      staged as (
        select c.key, coalesce(r.contacted, false) as contacted, coalesce(r.qualified, false) as qualified,
          reserved.lead_id is not null as reserved, sold.lead_id is not null as sold
        from cohort c left join reached r on r.lead_id = c.id left join reserved on reserved.lead_id = c.id left join sold on sold.lead_id = c.id
      )
      select key, grouping(key) = 1 as total, count(*)::int as leads,
        count(*) filter (where contacted)::int as contacted, count(*) filter (where qualified)::int as qualified,
        count(*) filter (where reserved)::int as reserved, count(*) filter (where sold)::int as sold
      from staged group by grouping sets ((key), ()) order by grouping(key), key`);
    const figures = (row: Record<(typeof STAGES)[number] | 'leads', number>): Figures => ({
      leads: row.leads, contacted: row.contacted, qualified: row.qualified, reserved: row.reserved, sold: row.sold,
      ...Object.fromEntries(STAGES.map((stage) => [`${stage}_rate`, share(row[stage], row.leads)])),
    });
    const groups = counted.filter((row) => !row.total);
    const label = await labelsOf(db, groupBy, groups.map((row) => row.key!), groupBy === 'agent' ? 'Unassigned' : 'No project named');
    const totals = counted.find((row) => row.total) ?? { leads: 0, contacted: 0, qualified: 0, reserved: 0, sold: 0 };
    return { rows: groups.map((row) => ({ key: row.key!, label: label(row.key!), ...figures(row) })), totals: figures(totals) };
  },
};
