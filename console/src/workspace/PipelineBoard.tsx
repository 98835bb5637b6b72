import DragIndicatorIcon from '@mui/icons-material/DragIndicator';
import FilterListIcon from '@mui/icons-material/FilterList';
import {
  Alert, Box, Button, Card, Chip, FormControlLabel, Link as MuiLink, Menu, MenuItem, Skeleton, Stack, Switch, Tab, Tabs, TextField,
  type Theme, Typography, useMediaQuery,
} from '@mui/material';
import { visuallyHidden } from '@mui/utils';
import { useQueryClient } from '@tanstack/react-query';
import { type DragEvent, useState } from 'react';
import { Title, useAuthenticated, useGetIdentity, useLogoutIfAccessDenied, usePermissions } from 'react-admin';
import { Link, useSearchParams } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import { api, type Query } from '../api/http';
import { useFallbackPoll } from '../live/useLive';
import { LEAD_SOURCES, LEAD_STATUSES, type Lead, leadName, type Paginated, UserPicker, useApi } from './shared';

// The pipeline: one column of leads per status, each headed by the list's exact total for the same filters
// (GET /api/crm/leads?status=…), a card moved by dragging it or with its "Move to…" menu (PATCH status). A refused
// move puts the card back and shows the API's message on it. A phone shows one column at a time, chosen by tabs.
// Others' changes arrive through the live stream (console/src/live), which reads the columns again.

const PAGE = 20;
const COLOURS: Record<string, string> = { new: '#1565c0', contacted: '#6a1b9a', qualified: '#ef6c00', converted: '#2e7d32', lost: '#616161' };

type Filters = { mine: boolean; source: string; assignee: { id: string; name: string } | null; from: string; to: string };

/** The board's filters live in the address (a view can be shared and survives a reload). */
function useFilters(): [Filters, (next: Partial<Filters>) => void] {
  const [params, setParams] = useSearchParams();
  const assigneeId = params.get('assignee');
  const filters: Filters = {
    mine: params.get('mine') === 'true',
    source: params.get('source') ?? '',
    assignee: assigneeId ? { id: assigneeId, name: params.get('assignee_name') ?? '' } : null,
    from: params.get('created_from') ?? '',
    to: params.get('created_to') ?? '',
  };
  const set = (next: Partial<Filters>) => {
    const merged = { ...filters, ...next };
    const out = new URLSearchParams();
    if (merged.mine) out.set('mine', 'true');
    if (merged.source) out.set('source', merged.source);
    if (merged.assignee) out.set('assignee', merged.assignee.id), out.set('assignee_name', merged.assignee.name);
    if (merged.from) out.set('created_from', merged.from);
    if (merged.to) out.set('created_to', merged.to);
    setParams(out, { replace: true });
  };
  return [filters, set];
}

type Move = { lead: Lead; from: string; to: string };

function MoveMenu({ lead, onMove, disabled }: { lead: Lead; onMove: (to: string) => void; disabled: boolean }) {
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const name = leadName(lead);
  return (
    <>
      <Button size="small" disabled={disabled} aria-haspopup="menu" aria-expanded={!!anchor} onClick={(event) => setAnchor(event.currentTarget)}>
        Move to…<Box component="span" sx={visuallyHidden}> ({name})</Box>
      </Button>
      <Menu anchorEl={anchor} open={!!anchor} onClose={() => setAnchor(null)}>
        {LEAD_STATUSES.filter((status) => status !== lead.status).map((status) => (
          <MenuItem key={status} onClick={() => { setAnchor(null); onMove(status); }}>{status}</MenuItem>
        ))}
      </Menu>
    </>
  );
}

function LeadCard({ lead, error, busy, writable, onMove }: { lead: Lead; error?: string; busy: boolean; writable: boolean; onMove: (to: string) => void }) {
  const name = leadName(lead);
  const details = [lead.source, lead.assigned_to?.name ?? 'unassigned'].join(' · ');
  return (
    <Card
      component="article"
      variant="outlined"
      aria-label={name}
      aria-busy={busy}
      draggable={writable && !busy}
      onDragStart={(event: DragEvent) => {
        event.dataTransfer.setData('text/plain', lead.id);
        event.dataTransfer.effectAllowed = 'move';
      }}
      data-lead-id={lead.id}
      sx={{ p: 1, opacity: busy ? 0.6 : 1, cursor: writable ? 'grab' : undefined, borderColor: error ? 'error.main' : undefined }}
    >
      <Stack direction="row" spacing={0.5} sx={{ alignItems: 'flex-start' }}>
        {writable ? <DragIndicatorIcon fontSize="small" aria-hidden sx={{ color: 'text.secondary', mt: 0.25 }} /> : null}
        <Box sx={{ minWidth: 0, flex: 1 }}>
          <MuiLink component={Link} to={`/leads/${lead.id}/show`} sx={{ fontWeight: 600, wordBreak: 'break-word' }}>{name}</MuiLink>
          <Typography variant="body2" color="text.secondary">{details}</Typography>
          {lead.interest ? <Typography variant="body2" sx={{ wordBreak: 'break-word' }}>{lead.interest}</Typography> : null}
        </Box>
      </Stack>
      {error ? <Alert severity="error" sx={{ mt: 1, py: 0 }}>{error}</Alert> : null}
      {writable ? <Box sx={{ textAlign: 'right' }}><MoveMenu lead={lead} onMove={onMove} disabled={busy} /></Box> : null}
    </Card>
  );
}

/** One column's page of leads and its exact total (the list's `pagination.total` for the same filters). */
const useColumn = (status: string, query: Query, limit = PAGE) =>
  useApi<Paginated<Lead>>(['leads', 'pipeline'], '/api/crm/leads', { ...query, status, limit, sort: 'updated_at', order: 'desc' }, { refetchInterval: useFallbackPoll() });

const countText = (total: number | undefined) => (total === undefined ? 'counting' : `${total} lead${total === 1 ? '' : 's'}`);

function Column({ status, query, moves, errors, writable, onMove, find }: {
  status: string; query: Query; moves: Record<string, Move>; errors: Record<string, string>; writable: boolean;
  onMove: (lead: Lead, to: string) => void; find: (id: string) => Lead | undefined;
}) {
  const [limit, setLimit] = useState(PAGE);
  const [over, setOver] = useState(false);
  const answer = useColumn(status, query, limit);
  const rows = answer.data?.data ?? [];
  const total = answer.data?.pagination.total;
  // Cards on their way here are shown here already; cards on their way out are gone from here.
  const arriving = Object.values(moves).filter((move) => move.to === status && !rows.some((lead) => lead.id === move.lead.id)).map((move) => ({ ...move.lead, status }));
  const shown = [...arriving, ...rows.filter((lead) => !moves[lead.id] || moves[lead.id].to === status)];
  const headingId = `pipeline-${status}`;
  const drop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    const id = event.dataTransfer.getData('text/plain');
    const lead = find(id);
    if (lead && lead.status !== status) onMove(lead, status);
  };
  return (
    <Box
      component="section"
      aria-labelledby={headingId}
      onDragOver={(event: DragEvent) => {
        if (!writable) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'move';
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
      data-status={status}
      sx={{ minWidth: 0, bgcolor: over ? 'action.hover' : 'grey.100', borderRadius: 1, borderTop: 4, borderColor: COLOURS[status] ?? 'divider', p: 1, display: 'flex', flexDirection: 'column', gap: 1 }}
    >
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
        <Typography id={headingId} variant="subtitle1" component="h2" sx={{ fontWeight: 600 }}>
          {status}<Box component="span" sx={visuallyHidden}>: {countText(total)}</Box>
        </Typography>
        <Chip size="small" label={total ?? '…'} aria-hidden />
      </Stack>
      {answer.error ? <Alert severity="error">{(answer.error as Error).message}</Alert> : null}
      {!answer.data && !answer.error ? <Skeleton height={80} /> : null}
      {answer.data && !shown.length ? <Typography variant="body2" color="text.secondary">No leads.</Typography> : null}
      {shown.map((lead) => (
        <LeadCard key={lead.id} lead={lead} error={errors[lead.id]} busy={!!moves[lead.id]} writable={writable} onMove={(to) => onMove(lead, to)} />
      ))}
      {total !== undefined && rows.length < total ? (
        limit < 100
          ? <Button size="small" onClick={() => setLimit(Math.min(100, limit + PAGE))}>Show more ({total - rows.length} more)</Button>
          : <MuiLink component={Link} to={`/leads?filter=${encodeURIComponent(JSON.stringify({ status: [status] }))}`}>All {total} in the leads list</MuiLink>
      ) : null}
    </Box>
  );
}

/** A column's tab on a phone: its status and its total. */
function TabLabel({ status, query }: { status: string; query: Query }) {
  const total = useColumn(status, query).data?.pagination.total;
  return <span>{status} ({total ?? '…'})</span>;
}

export default function PipelineBoard() {
  useAuthenticated();
  const { permissions } = usePermissions<Permission[]>();
  const { identity } = useGetIdentity();
  const phone = useMediaQuery((theme: Theme) => theme.breakpoints.down('md'));
  const queryClient = useQueryClient();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [filters, setFilters] = useFilters();
  const [tab, setTab] = useState(LEAD_STATUSES[0]);
  const [filtersOpen, setFiltersOpen] = useState(false);
  const [moves, setMoves] = useState<Record<string, Move>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [announcement, setAnnouncement] = useState('');
  const writable = can(permissions, 'crm', 'write');
  const users = can(permissions, 'iam', 'read');

  const assignedTo = filters.mine ? (identity?.id as string | undefined) : filters.assignee?.id;
  const query: Query = { assigned_to: assignedTo, source: filters.source || undefined, created_from: filters.from || undefined, created_to: filters.to || undefined };
  const waiting = filters.mine && !identity;

  // A drop carries only the card's id: the card is found among the columns' answers.
  const find = (id: string) => {
    for (const [, data] of queryClient.getQueriesData<Paginated<Lead>>({ queryKey: ['leads', 'pipeline'] })) {
      const lead = data?.data.find((row) => row.id === id);
      if (lead) return lead;
    }
    return undefined;
  };

  const move = async (lead: Lead, to: string) => {
    const name = leadName(lead);
    setErrors(({ [lead.id]: _, ...rest }) => rest);
    setMoves((all) => ({ ...all, [lead.id]: { lead, from: lead.status, to } }));
    setAnnouncement(`Moving ${name} to ${to}…`);
    try {
      await api(`/api/crm/leads/${lead.id}`, { method: 'PATCH', body: { status: to } });
      // The columns (and their totals) as the API now has them, before the card stops being "on its way".
      await queryClient.invalidateQueries({ queryKey: ['leads'] });
      setAnnouncement(`${name} moved from ${lead.status} to ${to}.`);
    } catch (error) {
      if (await logoutIfAccessDenied(error)) return;
      const message = (error as Error).message || 'The move failed';
      setErrors((all) => ({ ...all, [lead.id]: message }));
      setAnnouncement(`${name} was not moved: ${message}`);
    } finally {
      setMoves(({ [lead.id]: _, ...rest }) => rest);
    }
  };

  const columnProps = { query, moves, errors, writable, onMove: move, find };
  const used = [filters.mine, filters.source, filters.assignee, filters.from, filters.to].filter(Boolean).length;
  const box = { fullWidth: phone, size: 'small', sx: phone ? undefined : { width: 180 } } as const;
  return (
    // Its width is the screen's, whatever the columns and tabs hold (they scroll or wrap inside it).
    <Box sx={{ mt: 2, contain: 'inline-size' }}>
      <Title title="Pipeline" />
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>Pipeline</Typography>
      {phone ? (
        // On a phone the filters wait behind a button, as the lists' do: the first screen shows leads.
        <Button size="small" startIcon={<FilterListIcon />} aria-expanded={filtersOpen} aria-controls="pipeline-filters" onClick={() => setFiltersOpen(!filtersOpen)} sx={{ mb: 1 }}>
          {used ? `Filters (${used})` : 'Filters'}
        </Button>
      ) : null}
      <Box id="pipeline-filters" role="search" aria-label="Filter the pipeline" hidden={phone && !filtersOpen}
        sx={{ display: phone && !filtersOpen ? 'none' : 'flex', flexWrap: 'wrap', gap: 2, alignItems: 'center', mb: 2 }}>
        <FormControlLabel control={<Switch checked={filters.mine} onChange={(event) => setFilters({ mine: event.target.checked })} />} label="Only my leads" />
        <TextField select {...box} label="Source" value={filters.source} onChange={(event) => setFilters({ source: event.target.value })}>
          <MenuItem value="">Any</MenuItem>
          {LEAD_SOURCES.map((source) => <MenuItem key={source} value={source}>{source}</MenuItem>)}
        </TextField>
        {users ? <Box sx={phone ? { width: '100%' } : { width: 220 }}><UserPicker label="Assigned to" value={filters.assignee} disabled={filters.mine} onChange={(assignee) => setFilters({ assignee })} /></Box> : null}
        <TextField {...box} type="date" label="Created from" value={filters.from} onChange={(event) => setFilters({ from: event.target.value })} slotProps={{ inputLabel: { shrink: true } }} />
        <TextField {...box} type="date" label="Created to" value={filters.to} onChange={(event) => setFilters({ to: event.target.value })} slotProps={{ inputLabel: { shrink: true } }} />
      </Box>
      <Box role="status" aria-live="polite" sx={visuallyHidden}>{announcement}</Box>
      {waiting ? <Skeleton height={200} /> : phone ? (
        <>
          <Tabs value={tab} onChange={(_, next) => setTab(next)} variant="scrollable" allowScrollButtonsMobile aria-label="Pipeline columns" sx={{ mb: 1 }}>
            {LEAD_STATUSES.map((status) => <Tab key={status} value={status} label={<TabLabel status={status} query={query} />} id={`pipeline-tab-${status}`} aria-controls={`pipeline-panel-${status}`} />)}
          </Tabs>
          <Box role="tabpanel" id={`pipeline-panel-${tab}`} aria-labelledby={`pipeline-tab-${tab}`}>
            <Column key={tab} status={tab} {...columnProps} />
          </Box>
        </>
      ) : (
        <Box sx={{ display: 'grid', gap: 1, gridTemplateColumns: `repeat(${LEAD_STATUSES.length}, minmax(0, 1fr))`, alignItems: 'start' }}>
          {LEAD_STATUSES.map((status) => <Column key={status} status={status} {...columnProps} />)}
        </Box>
      )}
    </Box>
  );
}
