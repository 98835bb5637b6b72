// The four sales reports (GET /api/crm/reports/{name}) as the console shows them: their groupings, the totals shown as
// figures, and their charts. Each chart is described as the table it shows with "Show as table": its rows are the
// chart's categories, its plotted columns the chart's series; the other columns are in the table only.

export type Figures = Record<string, number | null>;
export type ReportRow = { key: string; label: string } & Record<string, number | null | string>;
export type ReportAnswer = { range: { from: string; to: string }; group_by: string; rows: ReportRow[]; totals: Figures };

export type Format = 'count' | 'share' | 'minutes' | 'money' | 'months';

export type Column = { label: string; format: Format; /** drawn in the chart (else in the table only) */ plotted?: boolean; /** bars of one stack */ stack?: string };
export type ChartTable = { columns: Column[]; rows: { label: string; values: (number | null)[] }[] };
export type ChartSpec = {
  id: string;
  title: (answer: ReportAnswer) => string;
  /** What the chart shows, for whoever cannot see it (its accessible description). */
  describe: (answer: ReportAnswer) => string;
  /** The heading of the table's first column. */
  rowHeader: (answer: ReportAnswer) => string;
  table: (answer: ReportAnswer) => ChartTable;
  horizontal?: boolean;
  /** What each bar says above it, from its row's values (a single series only); default: its figure. */
  barLabel?: (values: (number | null)[]) => string;
};
export type ReportSpec = {
  name: string;
  label: string;
  groupBy: { value: string; label: string }[];
  /** Shown when the range has no rows. */
  empty: string;
  totals: { key: string; label: string; format: Format }[];
  charts: ChartSpec[];
};

const count = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 0 });
const tenth = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 });
const money = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 2 });

/** A figure as shown: counts grouped by thousands, shares as percentages, minutes and months to a tenth; none: a dash. */
export function formatted(value: number | null | undefined, format: Format): string {
  if (value === null || value === undefined) return '—';
  if (format === 'share') return `${tenth.format(value * 100)}%`;
  if (format === 'minutes') return `${tenth.format(value)} min`;
  if (format === 'months') return tenth.format(value);
  if (format === 'money') return money.format(value);
  return count.format(value);
}

const groupName = (answer: ReportAnswer, groupings: ReportSpec['groupBy']) => groupings.find((g) => g.value === answer.group_by)?.label ?? answer.group_by;

/** A table of the answer's rows with these figures as columns. */
const byRow = (figures: (Column & { key: string })[]) => (answer: ReportAnswer): ChartTable => ({
  columns: figures.map(({ key: _, ...column }) => column),
  rows: answer.rows.map((row) => ({ label: row.label, values: figures.map((figure) => row[figure.key] as number | null) })),
});

const range = (answer: ReportAnswer) => `from ${answer.range.from} to ${answer.range.to}`;

const STAGES = [['leads', 'Leads'], ['contacted', 'Contacted'], ['qualified', 'Qualified'], ['reserved', 'Reserved'], ['sold', 'Sold']] as const;
const FUNNEL_GROUPS = [{ value: 'source', label: 'Source' }, { value: 'project', label: 'Project' }, { value: 'agent', label: 'Agent' }, { value: 'month', label: 'Month' }];

const funnel: ReportSpec = {
  name: 'funnel',
  label: 'Funnel',
  groupBy: FUNNEL_GROUPS,
  empty: 'No leads in this range',
  totals: [
    { key: 'leads', label: 'Leads', format: 'count' },
    { key: 'contacted', label: 'Contacted', format: 'count' },
    { key: 'qualified', label: 'Qualified', format: 'count' },
    { key: 'reserved', label: 'Reserved', format: 'count' },
    { key: 'sold', label: 'Sold', format: 'count' },
    { key: 'sold_rate', label: 'Sold of leads', format: 'share' },
  ],
  charts: [
    {
      id: 'stages',
      title: () => 'Leads at each stage',
      describe: (answer) => `Of the ${answer.totals.leads} leads created ${range(answer)}: ${STAGES.slice(1).map(([key, label]) => `${label.toLowerCase()} ${answer.totals[key]} (${formatted(answer.totals[`${key}_rate`], 'share')})`).join(', ')}.`,
      rowHeader: () => 'Stage',
      // The count and, past the first stage, the conversion rate from leads.
      barLabel: ([count, rate]) => (rate === 1 || rate === null ? formatted(count, 'count') : `${formatted(count, 'count')} (${formatted(rate, 'share')})`),
      table: (answer) => ({
        columns: [{ label: 'Leads', format: 'count', plotted: true }, { label: 'Share of leads', format: 'share' }],
        rows: STAGES.map(([key, label]) => ({ label, values: [answer.totals[key], key === 'leads' ? (answer.totals.leads ? 1 : null) : answer.totals[`${key}_rate`]] })),
      }),
    },
    {
      id: 'groups',
      title: (answer) => `Stages by ${groupName(answer, FUNNEL_GROUPS).toLowerCase()}`,
      describe: (answer) => `Leads, contacted, qualified, reserved and sold for each ${groupName(answer, FUNNEL_GROUPS).toLowerCase()}, ${range(answer)}: ${answer.rows.length} groups.`,
      rowHeader: (answer) => groupName(answer, FUNNEL_GROUPS),
      table: byRow([
        ...STAGES.map(([key, label]) => ({ key, label, format: 'count' as const, plotted: true })),
        ...STAGES.slice(1).map(([key, label]) => ({ key: `${key}_rate`, label: `${label} rate`, format: 'share' as const })),
      ]),
    },
  ],
};

const SPEED_GROUPS = [{ value: 'agent', label: 'Agent' }, { value: 'source', label: 'Source' }, { value: 'week', label: 'Week' }];

const speedToLead: ReportSpec = {
  name: 'speed-to-lead',
  label: 'Speed to lead',
  groupBy: SPEED_GROUPS,
  empty: 'No leads assigned in this range',
  totals: [
    { key: 'assigned', label: 'Assigned', format: 'count' },
    { key: 'contacted', label: 'Contacted', format: 'count' },
    { key: 'median_minutes', label: 'Median to first contact', format: 'minutes' },
    { key: 'p90_minutes', label: '90th percentile', format: 'minutes' },
    { key: 'within_limit_rate', label: 'Within the limit', format: 'share' },
  ],
  charts: [
    {
      id: 'minutes',
      title: (answer) => `Minutes to first contact by ${groupName(answer, SPEED_GROUPS).toLowerCase()}`,
      describe: (answer) => `Median and 90th percentile of the minutes from assignment to first contact for each ${groupName(answer, SPEED_GROUPS).toLowerCase()}, leads assigned ${range(answer)}; overall median ${formatted(answer.totals.median_minutes, 'minutes')}, 90th percentile ${formatted(answer.totals.p90_minutes, 'minutes')}.`,
      rowHeader: (answer) => groupName(answer, SPEED_GROUPS),
      table: byRow([
        { key: 'median_minutes', label: 'Median minutes', format: 'minutes', plotted: true },
        { key: 'p90_minutes', label: '90th percentile minutes', format: 'minutes', plotted: true },
        { key: 'assigned', label: 'Assigned', format: 'count' },
        { key: 'contacted', label: 'Contacted', format: 'count' },
      ]),
    },
    {
      id: 'within',
      title: () => 'Share contacted within the limit',
      describe: (answer) => `For leads whose routing rule sets a speed-to-lead limit, the share first contacted by their deadline, per ${groupName(answer, SPEED_GROUPS).toLowerCase()}; overall ${formatted(answer.totals.within_limit_rate, 'share')} (${answer.totals.within_limit} of ${answer.totals.with_limit}).`,
      rowHeader: (answer) => groupName(answer, SPEED_GROUPS),
      table: byRow([
        { key: 'within_limit_rate', label: 'Within the limit', format: 'share', plotted: true },
        { key: 'within_limit', label: 'Contacted in time', format: 'count' },
        { key: 'with_limit', label: 'With a limit', format: 'count' },
      ]),
    },
  ],
};

const ACTIVITY_GROUPS = [{ value: 'agent_week', label: 'Agent and week' }, { value: 'agent', label: 'Agent' }, { value: 'week', label: 'Week' }];
const ACTIVITIES = [
  ['calls', 'Calls'], ['emails', 'E-mails'], ['meetings', 'Meetings'], ['site_visits', 'Site visits'], ['followups_completed', 'Follow-ups done'], ['reservations', 'Reservations'],
] as const;
const OUTCOMES = [['calls_answered', 'Answered'], ['calls_no_answer', 'No answer'], ['calls_busy', 'Busy'], ['calls_voicemail', 'Voicemail'], ['calls_wrong_number', 'Wrong number']] as const;

const agentActivity: ReportSpec = {
  name: 'agent-activity',
  label: 'Agent activity',
  groupBy: ACTIVITY_GROUPS,
  empty: 'No activity in this range',
  totals: [
    ...ACTIVITIES.map(([key, label]) => ({ key, label, format: 'count' as const })),
    { key: 'followups_overdue', label: 'Follow-ups overdue', format: 'count' },
  ],
  charts: [
    {
      id: 'activity',
      title: (answer) => `Activity by ${groupName(answer, ACTIVITY_GROUPS).toLowerCase()}`,
      describe: (answer) => `Calls, e-mails, meetings, site visits, follow-ups done and reservations, stacked, for each ${groupName(answer, ACTIVITY_GROUPS).toLowerCase()} ${range(answer)}; in all ${ACTIVITIES.map(([key, label]) => `${answer.totals[key]} ${label.toLowerCase()}`).join(', ')}.`,
      rowHeader: (answer) => groupName(answer, ACTIVITY_GROUPS),
      horizontal: true,
      table: byRow([
        ...ACTIVITIES.map(([key, label]) => ({ key, label, format: 'count' as const, plotted: true, stack: 'activity' })),
        ...OUTCOMES.map(([key, label]) => ({ key, label: `Calls: ${label.toLowerCase()}`, format: 'count' as const })),
        { key: 'followups_overdue', label: 'Follow-ups overdue', format: 'count' },
      ]),
    },
  ],
};

const PROJECT_GROUPS = [{ value: 'project', label: 'Project' }, { value: 'month', label: 'Month' }];

const projects: ReportSpec = {
  name: 'projects',
  label: 'Projects & inventory',
  groupBy: PROJECT_GROUPS,
  empty: 'No projects or units in this range',
  totals: [
    { key: 'reservations', label: 'Reservations', format: 'count' },
    { key: 'reservations_value', label: 'Reserved value', format: 'money' },
    { key: 'sales', label: 'Sales', format: 'count' },
    { key: 'sales_value', label: 'Sales value', format: 'money' },
    { key: 'cancellations', label: 'Cancellations', format: 'count' },
    { key: 'available', label: 'Available units', format: 'count' },
    { key: 'months_of_inventory', label: 'Months of inventory', format: 'months' },
  ],
  charts: [
    {
      id: 'deals',
      title: (answer) => `Reservations and sales by ${groupName(answer, PROJECT_GROUPS).toLowerCase()}`,
      describe: (answer) => `Units reserved, sold and released per ${groupName(answer, PROJECT_GROUPS).toLowerCase()} ${range(answer)}; in all ${answer.totals.reservations} reservations worth ${formatted(answer.totals.reservations_value, 'money')} and ${answer.totals.sales} sales worth ${formatted(answer.totals.sales_value, 'money')}.`,
      rowHeader: (answer) => groupName(answer, PROJECT_GROUPS),
      table: byRow([
        { key: 'reservations', label: 'Reservations', format: 'count', plotted: true },
        { key: 'sales', label: 'Sales', format: 'count', plotted: true },
        { key: 'cancellations', label: 'Cancellations', format: 'count', plotted: true },
        { key: 'reservations_value', label: 'Reserved value', format: 'money' },
        { key: 'sales_value', label: 'Sales value', format: 'money' },
      ]),
    },
    {
      id: 'stock',
      title: (answer) => (answer.group_by === 'month' ? 'Units by status at the end of each month' : 'Units by status at the end of the range'),
      describe: (answer) => `Units available, reserved and sold ${answer.group_by === 'month' ? 'at the end of each month' : `per project on ${answer.range.to}`}; at the end: ${answer.totals.available} available, ${answer.totals.reserved} reserved, ${answer.totals.sold} sold.`,
      rowHeader: (answer) => groupName(answer, PROJECT_GROUPS),
      table: byRow([
        { key: 'available', label: 'Available', format: 'count', plotted: true, stack: 'units' },
        { key: 'reserved', label: 'Reserved', format: 'count', plotted: true, stack: 'units' },
        { key: 'sold', label: 'Sold', format: 'count', plotted: true, stack: 'units' },
      ]),
    },
    {
      id: 'months',
      title: () => 'Months of inventory left',
      describe: (answer) => `How many months the available units last at the pace of the three months before the end of each ${answer.group_by === 'month' ? 'month' : 'range'} (no bar: nothing was taken off the market then); overall ${formatted(answer.totals.months_of_inventory, 'months')}.`,
      rowHeader: (answer) => groupName(answer, PROJECT_GROUPS),
      table: byRow([{ key: 'months_of_inventory', label: 'Months of inventory', format: 'months', plotted: true }]),
    },
  ],
};

export const REPORTS: readonly ReportSpec[] = [funnel, speedToLead, agentActivity, projects];
export const reportOf = (name: string | undefined) => REPORTS.find((report) => report.name === name);
