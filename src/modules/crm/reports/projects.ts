import { Type } from '@sinclair/typebox';
import { sql, type SQL } from 'drizzle-orm';
import { ownedBy } from '../../../data/resource.js';
import { reservationResource } from '../reservation-resource.js';
import { agentCondition, allOf, endOf, type ReportInput, startOf, sourceIs } from './input.js';
import { Amount, Count, reportRows, type Figures, labelsOf, type Report } from './report.js';

/** The recent pace of sales: units taken off the market (reserved, or sold straight away) in the last this many months. */
const PACE_MONTHS = 3;

type Counted = {
  key: string; reservations: number; reservations_value: string | number; sales: number; sales_value: string | number; cancellations: number;
  available: number; reserved: number; sold: number; taken: number;
};

/** Months the available units last at the pace of the last three months: available ÷ (taken ÷ 3), one decimal; null at no pace. */
const monthsLeft = (available: number, taken: number) => (taken ? Math.round((available / (taken / PACE_MONTHS)) * 10) / 10 : null);
const money = (value: string | number) => Math.round(Number(value) * 100) / 100;

/**
 * Deals (a move that reserved, sold or released a unit) the reader's scope and filters keep: through the reservation it
 * concerned, among the reservations kept (read once and hashed, not looked up deal by deal).
 */
function dealCondition(input: ReportInput): SQL | undefined {
  const narrowed = input.owners || input.agentId || input.departmentId || input.source;
  if (!narrowed) return undefined;
  return sql`coalesce(m.reservation_id in (select reservations.id from reservations ${input.source ? sql`join leads on leads.id = reservations.lead_id` : sql``}
    where ${allOf([
      input.owners && ownedBy(reservationResource, input.owners)?.sql,
      agentCondition({ ...input, owners: undefined }, sql`reservations.created_by`),
      sourceIs(input),
    ])}), false)`;
}

/**
 * Reservations, sales and cancellations per project or month, with their value at the units' prices, and the units
 * available, reserved and sold at the end of each period, from the units' recorded status history.
 */
export const projectsReport: Report = {
  name: 'projects',
  operation: 'getProjectsReport',
  summary: 'Projects: reservations, sales and cancellations with their value, units by status and months of inventory left',
  description: 'From the units\' recorded status history (unit_status_changes): reservations (a unit becoming reserved), sales (a unit becoming '
    + 'sold) and cancellations (a reserved unit becoming available again: its reservation cancelled or deleted) in each period, with the units\' '
    + 'prices at that moment; the units available, reserved and sold at the end of the period (units deleted since are left out); and months of '
    + 'inventory: the available units divided by the units reserved or sold straight from available per month over the three months before the '
    + 'end of the period (null when none were). With a scope narrower than all, or an agent, department or source filter, deals count only '
    + 'through reservations they keep; unit counts and months of inventory are the whole projects\'. Grouped by project, or by month (each '
    + 'row the filtered projects together).',
  groupBy: ['project', 'month'],
  defaultGroupBy: 'project',
  figures: {
    reservations: Count('Units reserved in the period'),
    reservations_value: Amount('Their prices, summed'),
    sales: Count('Units sold in the period'),
    sales_value: Amount('Their prices, summed'),
    cancellations: Count('Reserved units released in the period'),
    available: Count('Units available at the end of the period'),
    reserved: Count('Units reserved at the end of the period'),
    sold: Count('Units sold at the end of the period'),
    months_of_inventory: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'Months the available units last at the pace of the last three months; null when none were taken' }),
  },
  example: {
    group_by: 'project',
    rows: [{ key: '019a0000-0000-7000-8000-000000000001', label: 'Alpha Homes', reservations: 6, reservations_value: 21000000, sales: 3, sales_value: 10500000, cancellations: 1, available: 80, reserved: 25, sold: 15, months_of_inventory: 13.3 }],
    totals: { reservations: 6, reservations_value: 21000000, sales: 3, sales_value: 10500000, cancellations: 1, available: 80, reserved: 25, sold: 15, months_of_inventory: 13.3 },
  },
  async run(db, input, groupBy) {
    const start = startOf(input, input.from);
    const end = endOf(input, input.to);
    const project = input.projectId ? sql`${input.projectId}::uuid` : undefined;
    const tz = input.timeZone;
    // Each row's period [s, e), and the local day it ends before (the stock is counted from whole days).
    const periods = groupBy === 'project'
      ? sql`select p.id::text as key, p.id as project_id, ${start} as s, ${end} as e, ${input.to}::date + 1 as end_day from projects p
          where exists (select 1 from inventory_units u where u.project_id = p.id) ${project ? sql`and p.id = ${project}` : sql``}`
      : sql`select to_char(m, 'YYYY-MM') as key, null::uuid as project_id,
            greatest(m::timestamp at time zone ${tz}, ${start}) as s, least((m + interval '1 month')::timestamp at time zone ${tz}, ${end}) as e,
            least((m + interval '1 month')::date, ${input.to}::date + 1) as end_day
          from generate_series(date_trunc('month', ${input.from}::date), date_trunc('month', ${input.to}::date), interval '1 month') m`;
    // By project a period is one project's (an equality the join can hash); by month, every project's.
    const inProject = (column: SQL) => (groupBy === 'project' ? sql`${column} = w.project_id` : sql`true`);
    const pace = sql.raw(`interval '${PACE_MONTHS} months'`);
    const deals = dealCondition(input);
    const rows = await reportRows<Counted>(db, sql`
      with periods as (${periods}),
      history as (
        select m.* from unit_status_changes m join inventory_units u on u.id = m.unit_id
        where m.changed_at < ${end} ${project ? sql`and m.project_id = ${project}` : sql``}
      ),
      -- What each local day changed in each project's stock: a move leaves its from_status and enters its to_status, so
      -- the stock at the end of a day is the sum of the days up to it (no unit's history is read one by one).
      days as materialized (
        select project_id, (changed_at at time zone ${tz})::date as day,
          sum((to_status = 'available')::int - (from_status is not distinct from 'available')::int) as available,
          sum((to_status = 'reserved')::int - (from_status is not distinct from 'reserved')::int) as reserved,
          sum((to_status = 'sold')::int - (from_status is not distinct from 'sold')::int) as sold
        from history group by 1, 2
      ),
      stock as (
        select w.key, sum(d.available)::int as available, sum(d.reserved)::int as reserved, sum(d.sold)::int as sold
        from periods w join days d on ${inProject(sql`d.project_id`)} and d.day < w.end_day group by w.key
      ),
      -- Moves that reserve, sell or release a unit, since the earliest period's pace window; \`kept\`: inside the reader's scope and filters.
      deals as materialized (
        select m.project_id, m.changed_at, m.from_status, m.to_status, m.price, ${deals ?? sql`true`} as kept from history m
        where m.changed_at >= ${start} - ${pace}
          and (m.to_status in ('reserved', 'sold') or (m.from_status = 'reserved' and m.to_status = 'available'))
      ),
      counted as (
        select w.key,
          count(*) filter (where m.kept and m.to_status = 'reserved' and m.changed_at >= w.s)::int as reservations,
          coalesce(sum(m.price) filter (where m.kept and m.to_status = 'reserved' and m.changed_at >= w.s), 0) as reservations_value,
          count(*) filter (where m.kept and m.to_status = 'sold' and m.changed_at >= w.s)::int as sales,
          coalesce(sum(m.price) filter (where m.kept and m.to_status = 'sold' and m.changed_at >= w.s), 0) as sales_value,
          count(*) filter (where m.kept and m.from_status = 'reserved' and m.to_status = 'available' and m.changed_at >= w.s)::int as cancellations,
          count(*) filter (where m.changed_at >= w.e - ${pace} and (m.to_status = 'reserved' or (m.to_status = 'sold' and m.from_status = 'available')))::int as taken
        from periods w left join deals m on ${inProject(sql`m.project_id`)} and m.changed_at < w.e
        group by w.key
      )
      select c.key, c.reservations, c.reservations_value, c.sales, c.sales_value, c.cancellations, c.taken,
        coalesce(s.available, 0) as available, coalesce(s.reserved, 0) as reserved, coalesce(s.sold, 0) as sold
      from counted c left join stock s on s.key = c.key order by c.key`);
    const counted = rows.map((row) => ({ ...row, available: Number(row.available), reserved: Number(row.reserved), sold: Number(row.sold), taken: Number(row.taken) }));
    const figures = (row: Counted): Figures => ({
      reservations: row.reservations, reservations_value: money(row.reservations_value), sales: row.sales, sales_value: money(row.sales_value),
      cancellations: row.cancellations, available: row.available, reserved: row.reserved, sold: row.sold, months_of_inventory: monthsLeft(row.available, row.taken),
    });
    const sum = (name: keyof Counted) => counted.reduce((n, row) => n + Number(row[name]), 0);
    // By month, the stock at the end of the range is the last month's; by project, every project's together.
    const last = counted.at(-1);
    const stock = groupBy === 'month'
      ? { available: last?.available ?? 0, reserved: last?.reserved ?? 0, sold: last?.sold ?? 0, taken: last?.taken ?? 0 }
      : { available: sum('available'), reserved: sum('reserved'), sold: sum('sold'), taken: sum('taken') };
    const totals = figures({
      key: 'total', reservations: sum('reservations'), reservations_value: sum('reservations_value'), sales: sum('sales'), sales_value: sum('sales_value'),
      cancellations: sum('cancellations'), ...stock,
    });
    const label = await labelsOf(db, groupBy, counted.map((row) => row.key), 'No project');
    return { rows: counted.map((row) => ({ key: row.key, label: label(row.key), ...figures(row) })), totals };
  },
};
