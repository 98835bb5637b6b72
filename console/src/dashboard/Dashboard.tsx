import { Box, Card, CardContent, LinearProgress, Link as MuiLink, Skeleton, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Title, useAuthenticated, useDataProvider, usePermissions } from 'react-admin';
import { Link } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import { RESERVATION_STATUSES, UNIT_STATUSES } from '../resources/declarations';
import type { Module } from '../resources/types';
import { ScrollX } from '../shared/ScrollX';

// No statistics endpoint exists: every figure is a list total (limit 1) or a short page, cached for a minute, so
// opening the dashboard costs about twenty GETs of the per-user read allowance.
const STALE = 60_000;
const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'converted', 'lost'] as const;
const PROJECTS_SHOWN = 5;

function useTotal(resource: string, filter: Record<string, unknown> = {}, enabled = true) {
  const dataProvider = useDataProvider();
  return useQuery({
    queryKey: ['dashboard', 'total', resource, filter],
    queryFn: async ({ signal }) => (await dataProvider.getList(resource, { pagination: { page: 1, perPage: 1 }, sort: { field: 'created_at', order: 'DESC' }, filter, signal })).total ?? 0,
    staleTime: STALE,
    enabled,
  });
}

/** Monday 00:00 of this week, local time. */
function startOfWeek(now = new Date()) {
  const start = new Date(now);
  start.setHours(0, 0, 0, 0);
  start.setDate(start.getDate() - ((start.getDay() + 6) % 7));
  return start;
}

/** Leads have no date filter: the newest pages are read until one reaches last week (at most 5 pages of 100). */
function useNewLeadsThisWeek(enabled: boolean) {
  const dataProvider = useDataProvider();
  return useQuery({
    queryKey: ['dashboard', 'leads-this-week'],
    enabled,
    staleTime: STALE,
    queryFn: async ({ signal }) => {
      const since = startOfWeek().getTime();
      let count = 0;
      for (let page = 1; page <= 5; page++) {
        const { data } = await dataProvider.getList('leads', { pagination: { page, perPage: 100 }, sort: { field: 'created_at', order: 'DESC' }, filter: {}, signal });
        const recent = data.filter((lead) => Date.parse(lead.created_at) >= since).length;
        count += recent;
        if (recent < 100) return { count, more: false };
      }
      return { count, more: true };
    },
  });
}

function Figure({ title, children, to }: { title: string; children: ReactNode; to?: string }) {
  return (
    <Card component="section" aria-label={title} sx={{ height: '100%' }}>
      <CardContent>
        <Typography variant="subtitle2" component="h2" color="text.secondary" gutterBottom>
          {to ? <MuiLink component={Link} to={to} color="inherit">{title}</MuiLink> : title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

const Big = ({ value }: { value: number | string | undefined }) =>
  value === undefined ? <Skeleton width={60} height={48} /> : <Typography variant="h4" component="p">{value}</Typography>;

const filterLink = (resource: string, filter: Record<string, string>) => `/${resource}?filter=${encodeURIComponent(JSON.stringify(filter))}`;

function TotalFigure({ title, resource, filter }: { title: string; resource: string; filter?: Record<string, string> }) {
  const total = useTotal(resource, filter);
  return <Figure title={title} to={filter ? filterLink(resource, filter) : `/${resource}`}><Big value={total.data} /></Figure>;
}

function LeadsByStatus() {
  return (
    <Figure title="Leads by status" to="/leads">
      <Table size="small" aria-label="Leads by status">
        <TableBody>
          {LEAD_STATUSES.map((status) => <CountRow key={status} label={status} resource="leads" filter={{ status }} />)}
        </TableBody>
      </Table>
    </Figure>
  );
}

function CountRow({ label, resource, filter }: { label: string; resource: string; filter: Record<string, string> }) {
  const total = useTotal(resource, filter);
  return (
    <TableRow>
      <TableCell component="th" scope="row"><MuiLink component={Link} to={filterLink(resource, filter)}>{label}</MuiLink></TableCell>
      <TableCell align="right">{total.data ?? '…'}</TableCell>
    </TableRow>
  );
}

/** Units by status for one project: one page when it holds every unit, else a total per status. */
function ProjectUnits({ project }: { project: { id: string; name: string } }) {
  const dataProvider = useDataProvider();
  const counts = useQuery({
    queryKey: ['dashboard', 'units', project.id],
    staleTime: STALE,
    queryFn: async ({ signal }) => {
      const page = await dataProvider.getList('inventory', { pagination: { page: 1, perPage: 100 }, sort: { field: 'created_at', order: 'DESC' }, filter: { project_id: project.id }, signal });
      if ((page.total ?? 0) <= page.data.length) return UNIT_STATUSES.map((status) => page.data.filter((unit) => unit.status === status).length);
      return Promise.all(UNIT_STATUSES.map(async (status) => (await dataProvider.getList('inventory', { pagination: { page: 1, perPage: 1 }, sort: { field: 'created_at', order: 'DESC' }, filter: { project_id: project.id, status }, signal })).total ?? 0));
    },
  });
  return (
    <TableRow>
      <TableCell component="th" scope="row">{project.name}</TableCell>
      {UNIT_STATUSES.map((status, i) => (
        <TableCell key={status} align="right">
          {counts.data ? <MuiLink component={Link} to={filterLink('inventory', { project_id: project.id, status })}>{counts.data[i]}</MuiLink> : '…'}
        </TableCell>
      ))}
    </TableRow>
  );
}

/** Units by status overall, for a user who may not read projects (cms). */
function UnitsByStatus() {
  return (
    <Figure title="Units by status" to="/inventory">
      <Table size="small" aria-label="Units by status">
        <TableBody>
          {UNIT_STATUSES.map((status) => <CountRow key={status} label={status} resource="inventory" filter={{ status }} />)}
        </TableBody>
      </Table>
    </Figure>
  );
}

function UnitsByProject() {
  const dataProvider = useDataProvider();
  const projects = useQuery({
    queryKey: ['dashboard', 'projects'],
    staleTime: STALE,
    queryFn: async ({ signal }) => dataProvider.getList('projects', { pagination: { page: 1, perPage: PROJECTS_SHOWN }, sort: { field: 'updated_at', order: 'DESC' }, filter: {}, signal }),
  });
  return (
    <Figure title="Units by status per project" to="/inventory">
      {projects.data?.data.length === 0 ? <Typography variant="body2">No projects yet.</Typography> : (
        <ScrollX label="Units by status per project">
          <Table size="small" aria-label="Units by status per project">
            <TableHead>
              <TableRow>
                <TableCell>Project</TableCell>
                {UNIT_STATUSES.map((status) => <TableCell key={status} align="right">{status}</TableCell>)}
              </TableRow>
            </TableHead>
            <TableBody>
              {(projects.data?.data ?? []).map((project) => <ProjectUnits key={project.id} project={project as { id: string; name: string }} />)}
            </TableBody>
          </Table>
        </ScrollX>
      )}
      {(projects.data?.total ?? 0) > PROJECTS_SHOWN ? <Typography variant="caption" color="text.secondary">The {PROJECTS_SHOWN} most recently updated of {projects.data?.total} projects.</Typography> : null}
    </Figure>
  );
}

function CampaignProgress() {
  const dataProvider = useDataProvider();
  const campaigns = useQuery({
    queryKey: ['dashboard', 'campaigns'],
    staleTime: 10_000,
    queryFn: async ({ signal }) => {
      const { data } = await dataProvider.getList('campaigns', { pagination: { page: 1, perPage: 3 }, sort: { field: 'created_at', order: 'DESC' }, filter: {}, signal });
      return Promise.all(data.map(async (campaign) => (campaign.status === 'draft' ? campaign : (await dataProvider.getOne('campaigns', { id: campaign.id, signal })).data)));
    },
  });
  return (
    <Figure title="Latest campaigns" to="/campaigns">
      {campaigns.data?.length === 0 ? <Typography variant="body2">No campaigns yet.</Typography> : null}
      {(campaigns.data ?? []).map((campaign) => {
        const d = campaign.deliveries as { total: number; sent: number; failed: number; pending: number } | undefined;
        const done = d && d.total ? Math.round(((d.sent + d.failed) / d.total) * 100) : 0;
        return (
          <Box key={campaign.id} sx={{ mb: 1.5 }}>
            <MuiLink component={Link} to={`/campaigns/${campaign.id}/show`}>{campaign.name}</MuiLink>
            <Typography variant="caption" component="p" color="text.secondary">
              {campaign.status}{d ? ` — ${d.sent} sent, ${d.failed} failed, ${d.pending} pending of ${d.total}` : ''}
            </Typography>
            {d && d.total ? <LinearProgress variant="determinate" value={done} aria-label={`Delivery of ${campaign.name}`} aria-valuetext={`${done}% delivered or failed`} /> : null}
          </Box>
        );
      })}
    </Figure>
  );
}

const grid = { display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', lg: 'repeat(4, minmax(0, 1fr))' } } as const;

/** The figures a manager looks at first, for the modules the user may read. */
export default function Dashboard() {
  useAuthenticated();
  const { permissions } = usePermissions<Permission[]>();
  const reads = (module: Module) => can(permissions, module, 'read');
  const crm = reads('crm');
  const newLeads = useNewLeadsThisWeek(crm);
  return (
    <Box sx={{ mt: 2 }}>
      <Title title="Dashboard" />
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>Dashboard</Typography>
      {!permissions ? null : !crm && !reads('cms') && !reads('iam') ? (
        <Typography>Your account has no module access yet. Ask an administrator.</Typography>
      ) : null}
      {crm ? (
        <Box sx={{ display: 'grid', gap: 2 }}>
          <Box sx={grid}>
            <Figure title="New leads this week" to="/leads"><Big value={newLeads.data ? `${newLeads.data.count}${newLeads.data.more ? '+' : ''}` : undefined} /></Figure>
            <TotalFigure title="Pending reservations" resource="reservations" filter={{ status: RESERVATION_STATUSES[0] }} />
            <TotalFigure title="Unread inquiries" resource="inquiries" filter={{ status: 'unread' }} />
            <TotalFigure title="Read, not yet answered" resource="inquiries" filter={{ status: 'read' }} />
          </Box>
          <Box sx={{ ...grid, gridTemplateColumns: { xs: '1fr', md: 'repeat(3, minmax(0, 1fr))' } }}>
            <LeadsByStatus />
            {reads('cms') ? <UnitsByProject /> : <UnitsByStatus />}
            <CampaignProgress />
          </Box>
        </Box>
      ) : null}
      {reads('cms') || reads('iam') ? (
        <Box sx={{ ...grid, mt: 2 }}>
          {reads('cms') ? <TotalFigure title="Projects" resource="projects" /> : null}
          {reads('cms') ? <TotalFigure title="Articles" resource="articles" /> : null}
          {reads('cms') ? <TotalFigure title="Job postings" resource="careers" /> : null}
          {reads('iam') ? <TotalFigure title="Users" resource="users" /> : null}
        </Box>
      ) : null}
    </Box>
  );
}
