import { Alert, Box, Card, CardContent, LinearProgress, Link as MuiLink, Skeleton, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { type ReactNode, useEffect } from 'react';
import { Title, useAuthenticated, useDataProvider, useLogoutIfAccessDenied, usePermissions } from 'react-admin';
import { Link } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { specOf, UNIT_STATUSES } from '../resources/declarations';
import type { Module } from '../resources/types';
import { ScrollX } from '../shared/ScrollX';

// One request per module the user may read: GET /api/crm/stats and GET /api/cms/stats (exact figures, kept up to date
// by the service from its change log), plus the users total for iam readers. Cached for a minute.
const STALE = 60_000;
const PROJECTS_SHOWN = 8;

type Counts = Record<string, number>;
type Deliveries = { total: number; sent: number; failed: number; pending: number };
export type CrmStats = {
  range: { from: string; to: string };
  leads: { total: number; new_in_range: number; by_status: Counts; by_source: Counts; new_per_day: { day: string; count: number }[] };
  inventory: { total: number; by_status: Counts; by_project: { project: { id: string; name: string }; total: number; by_status: Counts }[] };
  reservations: { by_status: Counts };
  inquiries: { open: number; by_status: Counts };
  newsletter: { by_status: Counts };
  recent_campaigns: { id: string; name: string; status: string; scheduled_at: string | null; sent_at: string | null; deliveries: Deliveries }[];
};
type Publishing = { total: number; published: number; draft: number };
export type CmsStats = { projects: Publishing & { by_status: Counts }; articles: Publishing & { by_type: Counts }; careers: Publishing };

function useStats<T>(module: Module, enabled: boolean) {
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const query = useQuery({
    queryKey: ['dashboard', 'stats', module],
    queryFn: ({ signal }) => api<T>(`/api/${module}/stats`, { signal }),
    staleTime: STALE,
    enabled,
  });
  useEffect(() => {
    if (query.error) void logoutIfAccessDenied(query.error);
  }, [query.error, logoutIfAccessDenied]);
  return query;
}

function useUsersTotal(enabled: boolean) {
  const dataProvider = useDataProvider();
  return useQuery({
    queryKey: ['dashboard', 'total', 'users'],
    queryFn: async ({ signal }) => (await dataProvider.getList('users', { pagination: { page: 1, perPage: 1 }, sort: { field: 'createdAt', order: 'DESC' }, filter: {}, signal })).total ?? 0,
    staleTime: STALE,
    enabled,
  });
}

/** Monday of this week as a UTC day (the stats count UTC days). */
export function mondayOf(today: string): string {
  const date = new Date(`${today}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
  return date.toISOString().slice(0, 10);
}

function Figure({ title, children, to, wide }: { title: string; children: ReactNode; to?: string; wide?: boolean }) {
  return (
    <Card component="section" aria-label={title} sx={{ height: '100%', gridColumn: wide ? { md: 'span 2' } : undefined }}>
      <CardContent>
        <Typography variant="subtitle2" component="h2" color="text.secondary" gutterBottom>
          {to ? <MuiLink component={Link} to={to} color="inherit">{title}</MuiLink> : title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

const Big = ({ value, caption }: { value: number | string | undefined; caption?: string }) => (
  value === undefined ? <Skeleton width={60} height={48} /> : (
    <>
      <Typography variant="h4" component="p">{value}</Typography>
      {caption ? <Typography variant="caption" color="text.secondary">{caption}</Typography> : null}
    </>
  )
);

const filterLink = (resource: string, filter: Record<string, unknown>) => `/${resource}?filter=${encodeURIComponent(JSON.stringify(filter))}`;
const label = (value: string) => value.replace(/-/g, ' ');

/** A figure per value (status, source…), each a link to the list filtered by it. */
function CountsTable({ title, counts, link }: { title: string; counts: Counts | undefined; link: (value: string) => string }) {
  if (!counts) return <Skeleton height={120} />;
  return (
    <Table size="small" aria-label={title}>
      <TableBody>
        {Object.entries(counts).map(([value, count]) => (
          <TableRow key={value}>
            <TableCell component="th" scope="row"><MuiLink component={Link} to={link(value)}>{label(value)}</MuiLink></TableCell>
            <TableCell align="right">{count}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

const shortDay = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });
const dayText = (day: string) => shortDay.format(new Date(`${day}T00:00:00Z`));

/** New leads per day: bars, and the same figures as a table for whoever wants the numbers. */
function LeadsPerDay({ stats }: { stats: CrmStats | undefined }) {
  const days = stats?.leads.new_per_day ?? [];
  const max = Math.max(1, ...days.map((d) => d.count));
  const busiest = days.reduce<{ day: string; count: number } | undefined>((best, d) => (!best || d.count > best.count ? d : best), undefined);
  const summary = stats
    ? `New leads per day from ${dayText(stats.range.from)} to ${dayText(stats.range.to)}: ${stats.leads.new_in_range} in all${busiest?.count ? `, most on ${dayText(busiest.day)} (${busiest.count})` : ''}`
    : 'Loading';
  return (
    <Figure title="New leads per day, last 30 days" to="/leads" wide>
      {!stats ? <Skeleton height={120} /> : (
        <>
          <Box role="img" aria-label={summary} sx={{ display: 'flex', alignItems: 'flex-end', gap: '2px', height: 120, borderBottom: 1, borderColor: 'divider' }}>
            {days.map((d) => (
              <Box key={d.day} title={`${dayText(d.day)}: ${d.count}`} sx={{ flex: 1, minWidth: 0, height: `${(d.count / max) * 100}%`, minHeight: d.count ? 3 : 0, bgcolor: 'primary.main', borderRadius: '2px 2px 0 0' }} />
            ))}
          </Box>
          <Box sx={{ display: 'flex', justifyContent: 'space-between' }}>
            <Typography variant="caption" color="text.secondary">{dayText(stats.range.from)}</Typography>
            <Typography variant="caption" color="text.secondary">{dayText(stats.range.to)}</Typography>
          </Box>
          <Box component="details" sx={{ mt: 1 }}>
            <Typography component="summary" variant="body2" sx={{ cursor: 'pointer' }}>Show as a table</Typography>
            <ScrollX label="New leads per day as a table">
              <Table size="small" aria-label="New leads per day">
                <TableHead><TableRow><TableCell>Day</TableCell><TableCell align="right">New leads</TableCell></TableRow></TableHead>
                <TableBody>
                  {days.map((d) => (
                    <TableRow key={d.day}>
                      <TableCell component="th" scope="row">
                        <MuiLink component={Link} to={filterLink('leads', { created_from: d.day, created_to: d.day })}>{dayText(d.day)}</MuiLink>
                      </TableCell>
                      <TableCell align="right">{d.count}</TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </ScrollX>
          </Box>
        </>
      )}
    </Figure>
  );
}

function UnitsByProject({ stats, projectLinks }: { stats: CrmStats | undefined; projectLinks: boolean }) {
  const projects = [...(stats?.inventory.by_project ?? [])].sort((a, b) => b.total - a.total);
  return (
    <Figure title="Units by status per project" to="/inventory" wide>
      {!stats ? <Skeleton height={120} /> : !projects.length ? <Typography variant="body2">No units yet.</Typography> : (
        <ScrollX label="Units by status per project">
          <Table size="small" aria-label="Units by status per project">
            <TableHead>
              <TableRow>
                <TableCell>Project</TableCell>
                {UNIT_STATUSES.map((status) => <TableCell key={status} align="right">{status}</TableCell>)}
              </TableRow>
            </TableHead>
            <TableBody>
              {projects.slice(0, PROJECTS_SHOWN).map(({ project, by_status }) => (
                <TableRow key={project.id}>
                  <TableCell component="th" scope="row">
                    {projectLinks ? <MuiLink component={Link} to={`/projects/${project.id}/show`}>{project.name}</MuiLink> : project.name}
                  </TableCell>
                  {UNIT_STATUSES.map((status) => (
                    <TableCell key={status} align="right">
                      <MuiLink component={Link} to={filterLink('inventory', { project_id: project.id, status: [status] })} aria-label={`${by_status[status]} ${status} in ${project.name}`}>{by_status[status]}</MuiLink>
                    </TableCell>
                  ))}
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </ScrollX>
      )}
      {projects.length > PROJECTS_SHOWN ? <Typography variant="caption" color="text.secondary">The {PROJECTS_SHOWN} projects with the most units, of {projects.length}.</Typography> : null}
    </Figure>
  );
}

function CampaignProgress({ stats }: { stats: CrmStats | undefined }) {
  const campaigns = stats?.recent_campaigns;
  return (
    <Figure title="Latest campaigns" to="/campaigns" wide>
      {!campaigns ? <Skeleton height={80} /> : !campaigns.length ? <Typography variant="body2">No campaigns yet.</Typography> : null}
      {(campaigns ?? []).map((campaign) => {
        const d = campaign.deliveries;
        const done = d.total ? Math.round(((d.sent + d.failed) / d.total) * 100) : 0;
        return (
          <Box key={campaign.id} sx={{ mb: 1.5 }}>
            <MuiLink component={Link} to={`/campaigns/${campaign.id}/show`}>{campaign.name}</MuiLink>
            <Typography variant="caption" component="p" color="text.secondary">
              {campaign.status}{d.total ? ` — ${d.sent} sent, ${d.failed} failed, ${d.pending} pending of ${d.total}` : ''}
            </Typography>
            {d.total ? <LinearProgress variant="determinate" value={done} aria-label={`Delivery of ${campaign.name}`} aria-valuetext={`${done}% delivered or failed`} /> : null}
          </Box>
        );
      })}
    </Figure>
  );
}

function PublishingFigure({ title, resource, figures }: { title: string; resource: string; figures: Publishing | undefined }) {
  return (
    <Figure title={title} to={`/${resource}`}>
      <Big value={figures?.total} />
      {figures ? (
        // A link to the filtered list where the list has a "Published" filter.
        specOf(resource).filters?.some((filter) => filter.source === 'published') ? (
          <Typography variant="body2">
            <MuiLink component={Link} to={filterLink(resource, { published: 'true' })}>{figures.published} published</MuiLink>
            {' · '}
            <MuiLink component={Link} to={filterLink(resource, { published: 'false' })}>{figures.draft} draft</MuiLink>
          </Typography>
        ) : <Typography variant="body2">{figures.published} published · {figures.draft} draft</Typography>
      ) : null}
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
  const cms = reads('cms');
  const iam = reads('iam');
  const crmQuery = useStats<CrmStats>('crm', crm);
  const cmsQuery = useStats<CmsStats>('cms', cms);
  const crmStats = crmQuery.data;
  const cmsStats = cmsQuery.data;
  const failed = [crmQuery.error, cmsQuery.error].filter((error): error is Error => !!error);
  const users = useUsersTotal(iam);
  const monday = crmStats ? mondayOf(crmStats.range.to) : undefined;
  const thisWeek = crmStats ? crmStats.leads.new_per_day.filter((d) => d.day >= monday!).reduce((n, d) => n + d.count, 0) : undefined;
  return (
    <Box sx={{ mt: 2 }}>
      <Title title="Dashboard" />
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>Dashboard</Typography>
      {!permissions ? null : !crm && !cms && !iam ? (
        <Typography>Your account has no module access yet. Ask an administrator.</Typography>
      ) : null}
      {failed.map((error) => <Alert key={error.message} severity="error" sx={{ mb: 2 }}>The figures could not be read: {error.message}</Alert>)}
      {crm ? (
        <Box sx={{ display: 'grid', gap: 2 }}>
          <Box sx={grid}>
            <Figure title="New leads this week" to={monday ? filterLink('leads', { created_from: monday }) : '/leads'}>
              <Big value={thisWeek} caption={crmStats ? `${crmStats.leads.new_in_range} in the last 30 days · ${crmStats.leads.total} in all` : undefined} />
            </Figure>
            <Figure title="Pending reservations" to={filterLink('reservations', { status: 'pending' })}>
              <Big value={crmStats?.reservations.by_status.pending} />
            </Figure>
            <Figure title="Open inquiries" to="/inquiries">
              <Big value={crmStats?.inquiries.open} caption={crmStats ? `${crmStats.inquiries.by_status.unread} unread · ${crmStats.inquiries.by_status.read} read, not yet answered` : undefined} />
            </Figure>
            <Figure title="Subscribers" to={filterLink('newsletters', { status: 'subscribed' })}>
              <Big value={crmStats?.newsletter.by_status.subscribed} />
            </Figure>
          </Box>
          <Box sx={{ ...grid, gridTemplateColumns: { xs: '1fr', md: 'repeat(4, minmax(0, 1fr))' } }}>
            <LeadsPerDay stats={crmStats} />
            <Figure title="Leads by status" to="/leads">
              <CountsTable title="Leads by status" counts={crmStats?.leads.by_status} link={(status) => filterLink('leads', { status: [status] })} />
            </Figure>
            <Figure title="Leads by source" to="/leads">
              <CountsTable title="Leads by source" counts={crmStats?.leads.by_source} link={(source) => filterLink('leads', { source: [source] })} />
            </Figure>
            <UnitsByProject stats={crmStats} projectLinks={cms} />
            <CampaignProgress stats={crmStats} />
          </Box>
        </Box>
      ) : null}
      {cms || iam ? (
        <Box sx={{ ...grid, mt: 2 }}>
          {cms ? <PublishingFigure title="Projects" resource="projects" figures={cmsStats?.projects} /> : null}
          {cms ? <PublishingFigure title="Articles" resource="articles" figures={cmsStats?.articles} /> : null}
          {cms ? <PublishingFigure title="Job postings" resource="careers" figures={cmsStats?.careers} /> : null}
          {iam ? <Figure title="Users" to="/users"><Big value={users.data} /></Figure> : null}
        </Box>
      ) : null}
    </Box>
  );
}
