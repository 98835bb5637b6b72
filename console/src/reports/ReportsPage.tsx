import DownloadIcon from '@mui/icons-material/Download';
import PrintIcon from '@mui/icons-material/Print';
import { Alert, Autocomplete, Box, Button, Card, Checkbox, GlobalStyles, LinearProgress, ListItemText, MenuItem, Skeleton, Stack, Tab, Tabs, TextField, Typography } from '@mui/material';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Title, useAuthenticated, useLogoutIfAccessDenied, usePermissions } from 'react-admin';
import { Link, Navigate, useParams, useSearchParams } from 'react-router-dom';
import { can, currentSession, type Permission } from '../api/authProvider';
import { api, type Query, queryString } from '../api/http';
import { LEAD_SOURCES, type Paginated, useApi } from '../workspace/shared';
import { formatted, type ReportAnswer, reportOf, REPORTS, type ReportSpec } from './definitions';
import { PRESETS, presetOf } from './ranges';
import { ReportChart } from './ReportChart';

// /reports/:report — the sales reports (GET /api/crm/reports/{name}). The range, filters and grouping live in the
// address, exactly as the API takes them: a report's link can be shared, a reload shows the same report, and an
// address the API refuses shows its message.

const PARAMS = ['from', 'to', 'project_id', 'source', 'department_id', 'agent_id', 'group_by'] as const;
type Param = (typeof PARAMS)[number];

/** The API's query from the address: the report's parameters only, a repeated one joined by commas. */
function queryOf(params: URLSearchParams): Query {
  return Object.fromEntries(PARAMS.map((name) => [name, params.getAll(name).join(',') || undefined]));
}

/** Today in the service's time zone, once an answer has told it (a report without `to` ends today); until then, here. */
let serviceToday: string | undefined;
const localToday = () => {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
};

type Option = { id: string; name: string };
type Person = Option & { department: string | null };

/** The choices of the filters, from what the console already reads: projects with units, lead-flow people, departments. */
function useOptions(permissions: Permission[] | undefined) {
  const projects = useApi<{ inventory: { by_project: { project: Option }[] } }>(['crm', 'stats'], '/api/crm/stats', undefined, { staleTime: 60_000 });
  const people = useApi<{ data: Person[] }>(['lead-flow', 'people'], '/api/crm/lead-flow/people', undefined, { staleTime: 60_000 });
  const iam = can(permissions, 'iam', 'read');
  const departments = useApi<Paginated<Option>>(['departments', 'report-filter'], '/api/iam/departments', undefined, { enabled: iam, staleTime: 60_000 });
  // Without the users' module, one's own department is the one to choose.
  const [own, setOwn] = useState<Option[]>([]);
  useEffect(() => {
    if (!iam) void currentSession().then((info) => setOwn(info?.user.department ? [info.user.department] : []), () => undefined);
  }, [iam]);
  return {
    projects: [...(projects.data?.inventory.by_project ?? [])].map((entry) => entry.project).sort((a, b) => a.name.localeCompare(b.name)),
    people: people.data?.data ?? [],
    departments: iam ? departments.data?.data ?? [] : own,
  };
}

const box = { width: { xs: '100%', sm: 190 } } as const;

function Filters({ report, params, set, answer, permissions }: {
  report: ReportSpec; params: URLSearchParams; set: (changes: Partial<Record<Param, string | string[] | undefined>>) => void; answer: ReportAnswer | undefined; permissions: Permission[] | undefined;
}) {
  const options = useOptions(permissions);
  const from = params.get('from') ?? answer?.range.from ?? '';
  const to = params.get('to') ?? answer?.range.to ?? '';
  const today = serviceToday ?? localToday();
  const preset = from && to ? presetOf(from, to, today)?.id ?? '' : '';
  const sources = params.getAll('source').flatMap((value) => value.split(',')).filter(Boolean);
  const agentId = params.get('agent_id');
  const agent = agentId ? options.people.find((person) => person.id === agentId) ?? { id: agentId, name: 'Agent (not in the list)', department: null } : null;
  const select = (name: Param, label: string, choices: Option[], any = 'Any') => (
    <TextField select size="small" sx={box} label={label} value={params.get(name) ?? ''} onChange={(event) => set({ [name]: event.target.value || undefined })}>
      <MenuItem value="">{any}</MenuItem>
      {choices.map((choice) => <MenuItem key={choice.id} value={choice.id}>{choice.name}</MenuItem>)}
      {/* An id from a shared link that is not among the choices stays shown as chosen. */}
      {params.get(name) && !choices.some((choice) => choice.id === params.get(name)) ? <MenuItem value={params.get(name)!}>(chosen in the link)</MenuItem> : null}
    </TextField>
  );
  return (
    <Box component="form" role="search" aria-label="Report range and filters" className="report-chrome" onSubmit={(event) => event.preventDefault()}
      sx={{ display: 'flex', flexWrap: 'wrap', gap: 2, alignItems: 'center', mb: 2 }}>
      <TextField select size="small" sx={box} label="Quick range" value={preset} onChange={(event) => {
        const chosen = PRESETS.find((p) => p.id === event.target.value);
        if (chosen) set(chosen.range(today));
      }}>
        <MenuItem value="" disabled>Custom</MenuItem>
        {PRESETS.map((p) => <MenuItem key={p.id} value={p.id}>{p.label}</MenuItem>)}
      </TextField>
      <TextField size="small" sx={box} type="date" label="From" value={from} onChange={(event) => set({ from: event.target.value || undefined })} slotProps={{ inputLabel: { shrink: true } }} />
      <TextField size="small" sx={box} type="date" label="To" value={to} onChange={(event) => set({ to: event.target.value || undefined })} slotProps={{ inputLabel: { shrink: true } }} />
      {select('project_id', 'Project', options.projects)}
      <TextField select size="small" sx={box} label="Source" value={sources}
        onChange={(event) => set({ source: (event.target.value as unknown as string[]).filter(Boolean) })}
        slotProps={{ select: { multiple: true, renderValue: (value) => ((value as string[]).length ? (value as string[]).join(', ') : 'Any') } }}>
        {LEAD_SOURCES.map((source) => (
          <MenuItem key={source} value={source}>
            <Checkbox size="small" checked={sources.includes(source)} tabIndex={-1} slotProps={{ input: { 'aria-hidden': true } }} />
            <ListItemText primary={source} />
          </MenuItem>
        ))}
      </TextField>
      {options.departments.length || params.get('department_id') ? select('department_id', 'Department', options.departments) : null}
      <Box sx={box}>
        <Autocomplete
          size="small"
          options={options.people}
          value={agent}
          onChange={(_, next) => set({ agent_id: next?.id })}
          isOptionEqualToValue={(a, b) => a.id === b.id}
          getOptionLabel={(person) => person.name}
          groupBy={(person) => person.department ?? 'No department'}
          renderInput={(props) => <TextField {...props} label="Agent" />}
        />
      </Box>
      <TextField select size="small" sx={box} label="Group by" value={params.get('group_by') ?? answer?.group_by ?? report.groupBy[0].value} onChange={(event) => set({ group_by: event.target.value })}>
        {report.groupBy.map((g) => <MenuItem key={g.value} value={g.value}>{g.label}</MenuItem>)}
        {params.get('group_by') && !report.groupBy.some((g) => g.value === params.get('group_by')) ? <MenuItem value={params.get('group_by')!}>(chosen in the link)</MenuItem> : null}
      </TextField>
    </Box>
  );
}

/** The totals of the range, each a figure with its name (a description list). */
function Totals({ report, answer }: { report: ReportSpec; answer: ReportAnswer }) {
  return (
    <Box component="dl" aria-label="Totals" sx={{ display: 'grid', gap: 2, gridTemplateColumns: 'repeat(auto-fill, minmax(140px, 1fr))', m: 0, mb: 2 }}>
      {report.totals.map((figure) => (
        // dt and dd directly in the card (a div): a description list allows nothing else between.
        <Card key={figure.key} variant="outlined" sx={{ breakInside: 'avoid', p: 2 }}>
          <Typography component="dt" variant="body2" color="text.secondary">{figure.label}</Typography>
          <Typography component="dd" variant="h5" sx={{ m: 0 }}>{formatted(answer.totals[figure.key], figure.format)}</Typography>
        </Card>
      ))}
    </Box>
  );
}

// Printed: no navigation, app bar, filters or switches; each chart with its table, on white.
const printStyles = (
  <GlobalStyles styles={{
    '@media print': {
      'header.MuiAppBar-root, .MuiDrawer-root, .RaSidebar-fixed, .skip-nav-button, .report-chrome, .MuiLinearProgress-root': { display: 'none !important' },
      '.report-when-printed': { display: 'block !important' },
      '.RaLayout-appFrame': { marginTop: '0 !important' },
      '.RaLayout-content': { padding: '0 !important', backgroundColor: '#fff' },
      '.report-chart': { boxShadow: 'none !important', border: '1px solid #ccc', marginBottom: '12px' },
      '[role="region"]': { overflow: 'visible !important' },
    },
  }} />
);

function Report({ report }: { report: ReportSpec }) {
  const { permissions } = usePermissions<Permission[]>();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [params, setParams] = useSearchParams();
  const query = queryOf(params);
  const path = `/api/crm/reports/${report.name}`;
  const result = useQuery({
    queryKey: ['reports', report.name, query],
    queryFn: async ({ signal }) => {
      const answer = await api<ReportAnswer>(path, { query, signal });
      if (!query.to) serviceToday = answer.range.to;
      return answer;
    },
    placeholderData: keepPreviousData,
    staleTime: 30_000,
    retry: false,
  });
  useEffect(() => {
    if (result.error) void logoutIfAccessDenied(result.error);
  }, [result.error, logoutIfAccessDenied]);
  const answer = result.error ? undefined : result.data;

  const set = (changes: Partial<Record<Param, string | string[] | undefined>>) => {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(changes)) {
      next.delete(name);
      const values = Array.isArray(value) ? value : value ? [value] : [];
      if (values.length) next.set(name, values.join(','));
    }
    setParams(next);
  };

  return (
    <>
      <Filters report={report} params={params} set={set} answer={answer} permissions={permissions} />
      <Stack direction="row" className="report-chrome" sx={{ gap: 1, mb: 2, flexWrap: 'wrap' }}>
        <Button component="a" href={`${path}/export${queryString(query)}`} download variant="outlined" size="small" startIcon={<DownloadIcon />}>Export CSV</Button>
        <Button onClick={() => window.print()} variant="outlined" size="small" startIcon={<PrintIcon />}>Print</Button>
      </Stack>
      {result.isFetching ? <LinearProgress aria-label="Loading the report" sx={{ mb: 1 }} /> : null}
      {result.error ? <Alert severity="error" sx={{ mb: 2 }}>The report could not be read. {(result.error as Error).message}</Alert> : null}
      {answer ? (
        <Box aria-busy={result.isFetching}>
          <Typography variant="body2" sx={{ mb: 1 }}>
            {report.label}, {answer.range.from} to {answer.range.to}, by {report.groupBy.find((g) => g.value === answer.group_by)?.label.toLowerCase() ?? answer.group_by}
          </Typography>
          <Totals report={report} answer={answer} />
          {answer.rows.length ? (
            <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: 'minmax(0, 1fr)' }}>
              {report.charts.map((chart) => <ReportChart key={chart.id} spec={chart} answer={answer} />)}
            </Box>
          ) : <Alert severity="info">{report.empty}.</Alert>}
        </Box>
      ) : !result.error ? (
        <Box role="status" aria-label="Loading the report">
          <Skeleton height={90} />
          <Skeleton variant="rectangular" height={300} />
        </Box>
      ) : null}
    </>
  );
}

/** The Reports section: one tab per report; the tabs keep the range and filters and drop the grouping. */
export default function ReportsPage() {
  useAuthenticated();
  const { report: name } = useParams();
  const [params] = useSearchParams();
  const report = reportOf(name);
  if (!report) return <Navigate to={`/reports/${REPORTS[0].name}`} replace />;
  const kept = new URLSearchParams(params);
  kept.delete('group_by');
  const suffix = kept.toString() ? `?${kept}` : '';
  return (
    // Its width is the screen's: wide charts and tables scroll inside it.
    <Box sx={{ mt: 2, contain: 'inline-size' }}>
      <Title title={`Reports: ${report.label}`} />
      {printStyles}
      <Typography variant="h5" component="h1" sx={{ mb: 1 }}>Reports</Typography>
      <Tabs value={report.name} variant="scrollable" allowScrollButtonsMobile aria-label="Reports" className="report-chrome" sx={{ mb: 2 }}>
        {REPORTS.map((r) => <Tab key={r.name} value={r.name} label={r.label} component={Link} to={`/reports/${r.name}${suffix}`} />)}
      </Tabs>
      <Report key={report.name} report={report} />
    </Box>
  );
}
