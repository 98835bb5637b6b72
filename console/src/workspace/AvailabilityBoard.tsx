import CheckCircleOutlineIcon from '@mui/icons-material/CheckCircleOutlined';
import DoNotDisturbOnOutlinedIcon from '@mui/icons-material/DoNotDisturbOnOutlined';
import ScheduleIcon from '@mui/icons-material/Schedule';
import {
  Alert, Autocomplete, Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Link as MuiLink, MenuItem, Skeleton, Stack, TextField, Typography,
} from '@mui/material';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { Title, useAuthenticated, usePermissions } from 'react-admin';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { UNIT_STATUSES } from '../resources/declarations';
import { useFallbackPoll } from '../live/useLive';
import { ScrollX } from '../shared/ScrollX';
import { useApiAction } from '../shared/useApiAction';
import { type Lead, leadName, moneyText, type Paginated, dateTimeText, useApi } from './shared';

// A project's units as a grid, blocks down and lots across, each cell coloured by its status and saying it in words
// (with an icon) too; the counts per status are the inventory list's exact totals, read again as the live stream says
// units or reservations changed (console/src/live), or every few minutes while it is down.
// An available unit is reserved here for a lead; a reserved or sold one shows its reservation and buyer.

type Unit = {
  id: string; project: { id: string; name: string }; inventory_code: string; block: string; lot: string; house_model: string | null;
  floor_area: number | null; lot_area: number | null; price: number; status: string; sold_to: string | null;
};
type Reservation = {
  id: string; client_name: string; email: string | null; contact_number: string | null; status: string; payment_status: string;
  reservation_date: string; inventory: { id: string } | null; created_by: { id: string; name: string } | null;
};
type Stats = { inventory: { by_project: { project: { id: string; name: string }; total: number }[] } };

// Text colours keep 4.5:1 on their cell's background; the icon and the word say the status without colour.
const STYLE: Record<string, { bg: string; border: string; text: string; icon: ReactNode }> = {
  available: { bg: '#e8f5e9', border: '#2e7d32', text: '#1b5e20', icon: <CheckCircleOutlineIcon fontSize="inherit" aria-hidden /> },
  reserved: { bg: '#fff3e0', border: '#e65100', text: '#8a3200', icon: <ScheduleIcon fontSize="inherit" aria-hidden /> },
  sold: { bg: '#eceff1', border: '#37474f', text: '#263238', icon: <DoNotDisturbOnOutlinedIcon fontSize="inherit" aria-hidden /> },
};
const natural = (a: string, b: string) => a.localeCompare(b, undefined, { numeric: true, sensitivity: 'base' });

/** Every page of a list (100 at a time): a project's units, its holding reservations. */
async function everyPage<T>(path: string, query: Record<string, string>, signal: AbortSignal): Promise<T[]> {
  const rows: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await api<Paginated<T>>(path, { query: { ...query, page, limit: 100 }, signal });
    rows.push(...answer.data);
    if (page >= answer.pagination.totalPages) return rows;
  }
}

function Legend({ projectId }: { projectId: string }) {
  return (
    <Box component="ul" aria-label="Units per status" sx={{ display: 'flex', flexWrap: 'wrap', gap: 2, listStyle: 'none', p: 0, m: 0, mb: 2 }}>
      {UNIT_STATUSES.map((status) => <Count key={status} projectId={projectId} status={status} />)}
    </Box>
  );
}

function Count({ projectId, status }: { projectId: string; status: string }) {
  const poll = useFallbackPoll();
  const total = useApi<Paginated<Unit>>(['inventory', 'availability', 'count'], '/api/crm/inventory', { project_id: projectId, status, limit: 1 }, { refetchInterval: poll }).data?.pagination.total;
  const style = STYLE[status];
  return (
    <Box component="li" data-status={status} sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
      <Box aria-hidden sx={{ width: 20, height: 20, borderRadius: 0.5, bgcolor: style.bg, border: 2, borderColor: style.border, display: 'grid', placeItems: 'center', color: style.border, fontSize: 14 }}>{style.icon}</Box>
      <Typography variant="body2"><strong>{status}</strong>: <span data-testid={`count-${status}`}>{total ?? '…'}</span></Typography>
    </Box>
  );
}

function Cell({ unit, holder, onOpen }: { unit: Unit; holder?: Reservation; onOpen: () => void }) {
  const style = STYLE[unit.status] ?? STYLE.sold;
  return (
    <Box
      component="button"
      type="button"
      onClick={onOpen}
      aria-haspopup="dialog"
      sx={{
        width: '100%', minWidth: 104, textAlign: 'left', font: 'inherit', cursor: 'pointer', p: 0.75, borderRadius: 1, border: 2,
        borderColor: style.border, bgcolor: style.bg, color: 'text.primary', '&:focus-visible': { outline: 3, outlineColor: 'primary.main', outlineOffset: 1 },
        backgroundImage: unit.status === 'sold' ? 'repeating-linear-gradient(135deg, transparent 0 6px, rgba(0,0,0,0.06) 6px 8px)' : undefined,
      }}
    >
      <Typography component="span" variant="body2" sx={{ display: 'block', fontWeight: 700 }}>{unit.inventory_code}</Typography>
      <Typography component="span" variant="caption" sx={{ display: 'block' }}>{moneyText(unit.price)}</Typography>
      <Typography component="span" variant="caption" sx={{ display: 'flex', alignItems: 'center', gap: 0.5, color: style.text }}>
        {style.icon} {unit.status}
      </Typography>
      {holder ? <Typography component="span" variant="caption" sx={{ display: 'block', overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap', maxWidth: 140 }}>{holder.client_name}</Typography> : null}
    </Box>
  );
}

/** Reserving an available unit for a lead: the lead's name and contact fill the reservation (each may be changed). */
function ReserveForm({ unit, onDone }: { unit: Unit; onDone: () => void }) {
  const [text, setText] = useState('');
  const [lead, setLead] = useState<Lead | null>(null);
  const [client, setClient] = useState({ client_name: '', email: '', contact_number: '' });
  const { run, busy } = useApiAction();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const leads = useApi<Paginated<Lead>>(['leads', 'picker'], '/api/crm/leads', { q: text.trim() || undefined, limit: 20 });
  const choose = (next: Lead | null) => {
    setLead(next);
    if (next) setClient({ client_name: leadName(next), email: next.email ?? '', contact_number: next.phone ?? '' });
  };
  const reserve = async () => {
    const body = {
      inventory_id: unit.id, client_name: client.client_name, email: client.email || undefined, contact_number: client.contact_number || undefined,
      // The reservation names its lead (it shows on the lead's page and timeline).
      lead_id: lead?.id,
    };
    const done = await run(() => api<{ id: string }>('/api/crm/reservations', { method: 'POST', body }), `${unit.inventory_code} reserved for ${client.client_name}`);
    // Whatever happened (a colleague may have been quicker: 409), the grid shows the units as they now are.
    await Promise.all(['inventory', 'reservations', 'leads'].map((key) => queryClient.invalidateQueries({ queryKey: [key] })));
    if (done) onDone();
  };
  return (
    <Box component="form" aria-label={`Reserve ${unit.inventory_code}`} onSubmit={(event) => { event.preventDefault(); void reserve(); }}>
      <Typography variant="subtitle2" component="h3" sx={{ mt: 2, mb: 1 }}>Reserve for a lead</Typography>
      <Stack spacing={2}>
        <Autocomplete
          options={leads.data?.data ?? []}
          value={lead}
          onChange={(_, next) => choose(next)}
          onInputChange={(_, next, reason) => reason === 'input' && setText(next)}
          isOptionEqualToValue={(a, b) => a.id === b.id}
          getOptionLabel={(option) => `${leadName(option)}${option.email ? ` <${option.email}>` : ''}`}
          filterOptions={(options) => options}
          renderInput={(params) => <TextField {...params} label="Lead" helperText="Type a name, e-mail or phone" />}
        />
        <TextField label="Client name" required value={client.client_name} onChange={(event) => setClient({ ...client, client_name: event.target.value })} />
        <TextField label="Email" type="email" value={client.email} onChange={(event) => setClient({ ...client, email: event.target.value })} />
        <TextField label="Contact number" value={client.contact_number} onChange={(event) => setClient({ ...client, contact_number: event.target.value })} />
      </Stack>
      <Stack direction="row" spacing={1} sx={{ mt: 2, flexWrap: 'wrap' }}>
        <Button type="submit" variant="contained" disabled={busy || !client.client_name.trim()}>Reserve</Button>
        <Button onClick={() => navigate('/reservations/create', { state: { record: { inventory: { id: unit.id }, project_name: unit.project.name, ...client } } })}>
          Open the full form
        </Button>
      </Stack>
    </Box>
  );
}

function HolderDetails({ unit }: { unit: Unit }) {
  const reservation = useApi<Reservation>(['reservations', 'availability'], `/api/crm/reservations/${unit.sold_to}`, undefined, { enabled: !!unit.sold_to });
  if (!unit.sold_to) return <Typography variant="body2" sx={{ mt: 1 }}>No reservation holds this unit.</Typography>;
  if (reservation.error) return <Alert severity="error" sx={{ mt: 1 }}>{(reservation.error as Error).message}</Alert>;
  const r = reservation.data;
  if (!r) return <Skeleton height={80} />;
  return (
    <Box sx={{ mt: 2 }}>
      <Typography variant="subtitle2" component="h3">{unit.status === 'sold' ? 'Buyer' : 'Reserved by'}</Typography>
      <Typography variant="body1">{r.client_name}</Typography>
      {r.email ? <Typography variant="body2"><MuiLink href={`mailto:${r.email}`}>{r.email}</MuiLink></Typography> : null}
      {r.contact_number ? <Typography variant="body2"><MuiLink href={`tel:${r.contact_number}`}>{r.contact_number}</MuiLink></Typography> : null}
      <Typography variant="subtitle2" component="h3" sx={{ mt: 2 }}>Reservation</Typography>
      <Typography variant="body2">
        <MuiLink component={Link} to={`/reservations/${r.id}/show`}>{r.status}, payment {r.payment_status}</MuiLink>
        {' · '}{dateTimeText(r.reservation_date)}{r.created_by ? ` · by ${r.created_by.name}` : ''}
      </Typography>
    </Box>
  );
}

function UnitDialog({ unit, onClose, writable }: { unit: Unit | undefined; onClose: () => void; writable: boolean }) {
  return (
    <Dialog open={!!unit} onClose={onClose} fullWidth maxWidth="xs" aria-labelledby="unit-dialog-title">
      {unit ? (
        <>
          <DialogTitle id="unit-dialog-title">{unit.inventory_code} — {unit.status}</DialogTitle>
          <DialogContent>
            <Typography variant="body2">
              Block {unit.block}, lot {unit.lot} · {moneyText(unit.price)}
              {unit.house_model ? ` · ${unit.house_model}` : ''}
              {unit.floor_area ? ` · ${unit.floor_area} m² floor` : ''}{unit.lot_area ? ` · ${unit.lot_area} m² lot` : ''}
            </Typography>
            <MuiLink component={Link} to={`/inventory/${unit.id}/show`} variant="body2">Open the unit</MuiLink>
            {unit.status === 'available'
              ? (writable ? <ReserveForm unit={unit} onDone={onClose} /> : <Typography variant="body2" sx={{ mt: 1 }}>Available.</Typography>)
              : <HolderDetails unit={unit} />}
          </DialogContent>
          <DialogActions><Button onClick={onClose}>Close</Button></DialogActions>
        </>
      ) : null}
    </Dialog>
  );
}

function Grid({ projectId, projectName, writable }: { projectId: string; projectName: string; writable: boolean }) {
  const [openId, setOpenId] = useState<string>();
  const poll = useFallbackPoll();
  const units = useQuery({
    queryKey: ['inventory', 'availability', 'units', projectId],
    queryFn: ({ signal }) => everyPage<Unit>('/api/crm/inventory', { project_id: projectId, sort: 'block', order: 'asc' }, signal),
    refetchInterval: poll,
  });
  // Who holds what: the project's pending and confirmed reservations, by unit.
  const holders = useQuery({
    queryKey: ['reservations', 'availability', 'holding', projectName],
    queryFn: ({ signal }) => everyPage<Reservation>('/api/crm/reservations', { project_name: projectName, status: 'pending,confirmed' }, signal),
    enabled: !!projectName,
    refetchInterval: poll,
  });
  if (units.error) return <Alert severity="error">{(units.error as Error).message}</Alert>;
  if (!units.data) return <Skeleton height={240} />;
  if (!units.data.length) return <Typography>This project has no units yet.</Typography>;
  const byId = new Map((holders.data ?? []).map((r) => [r.id, r]));
  const blocks = [...new Set(units.data.map((u) => u.block))].sort(natural);
  const lots = [...new Set(units.data.map((u) => u.lot))].sort(natural);
  const at = new Map(units.data.map((u) => [`${u.block}\u0000${u.lot}`, u]));
  const open = units.data.find((u) => u.id === openId);
  return (
    <>
      <Box sx={{ contain: 'inline-size' }}><ScrollX label={`Units of ${projectName}, by block and lot`}>
        <Box component="table" sx={{ borderCollapse: 'separate', borderSpacing: 4 }} aria-label={`Availability of ${projectName}`}>
          <thead>
            <tr>
              <Box component="th" scope="col" sx={{ textAlign: 'left' }}>Block</Box>
              {lots.map((lot) => <Box component="th" scope="col" key={lot} sx={{ textAlign: 'left', fontWeight: 500 }}>Lot {lot}</Box>)}
            </tr>
          </thead>
          <tbody>
            {blocks.map((block) => (
              <tr key={block}>
                <Box component="th" scope="row" sx={{ textAlign: 'left', pr: 1, whiteSpace: 'nowrap' }}>Block {block}</Box>
                {lots.map((lot) => {
                  const unit = at.get(`${block}\u0000${lot}`);
                  return <td key={lot}>{unit ? <Cell unit={unit} holder={unit.sold_to ? byId.get(unit.sold_to) : undefined} onOpen={() => setOpenId(unit.id)} /> : null}</td>;
                })}
              </tr>
            ))}
          </tbody>
        </Box>
      </ScrollX></Box>
      <UnitDialog unit={open} onClose={() => setOpenId(undefined)} writable={writable} />
    </>
  );
}

/** /crm/availability/:projectId — the projects with units come from GET /api/crm/stats (crm read is enough). */
export default function AvailabilityBoard() {
  useAuthenticated();
  const { projectId = '' } = useParams();
  const navigate = useNavigate();
  const { permissions } = usePermissions<Permission[]>();
  const stats = useApi<Stats>(['crm', 'stats'], '/api/crm/stats');
  const projects = [...(stats.data?.inventory.by_project ?? [])].sort((a, b) => natural(a.project.name, b.project.name));
  const project = projects.find((p) => p.project.id === projectId)?.project;
  return (
    <Box sx={{ mt: 2, contain: 'inline-size' }}>
      <Title title="Availability" />
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>Availability{project ? `: ${project.name}` : ''}</Typography>
      <TextField select size="small" fullWidth={false} label="Project" value={project ? projectId : ''} onChange={(event) => navigate(`/crm/availability/${event.target.value}`)} sx={{ minWidth: 240, mb: 2 }}>
        {projects.map(({ project: p, total }) => <MenuItem key={p.id} value={p.id}>{p.name} ({total} units)</MenuItem>)}
      </TextField>
      {stats.error ? <Alert severity="error">{(stats.error as Error).message}</Alert> : null}
      {stats.data && !projects.length ? <Typography>No project has units yet.</Typography> : null}
      {stats.data && projectId && !project ? <Alert severity="info">This project has no units yet.</Alert> : null}
      {project ? (
        <>
          <Legend projectId={project.id} />
          <Grid projectId={project.id} projectName={project.name} writable={can(permissions, 'crm', 'write')} />
        </>
      ) : null}
    </Box>
  );
}
