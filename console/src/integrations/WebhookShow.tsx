import SendIcon from '@mui/icons-material/Send';
import {
  Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, MenuItem, Stack, Table, TableBody, TableCell, TableHead,
  TablePagination, TableRow, TextField, Typography,
} from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import {
  Confirm, DeleteButton, EditButton, Show, SimpleShowLayout, TopToolbar, usePermissions, useRecordContext, useRefresh,
} from 'react-admin';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { specOf } from '../resources/declarations';
import { FieldGrid } from '../shared/FieldGrid';
import { ScrollX } from '../shared/ScrollX';
import { useApiAction } from '../shared/useApiAction';
import { SecretDialog } from './SecretDialog';
import { hostOf, short } from './short';

const spec = specOf('webhooks');
const STATUSES = ['pending', 'delivered', 'failed'] as const;

type Webhook = { id: string; url: string; description: string | null; events: string[]; enabled: boolean };
type Delivery = {
  id: string; endpoint_id: string; event_type: string; status: (typeof STATUSES)[number]; attempts: number; next_attempt_at: string | null;
  last_status_code: number | null; last_error: string | null; delivered_at: string | null; created_at: string;
};
type Page = { data: Delivery[]; pagination: { page: number; limit: number; total: number } };

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** A cell that may wrap (dates at their comma, errors anywhere); the others keep to one line. */
const WRAP = { '&&': { whiteSpace: 'normal' }, minWidth: 110 } as const;
const when = (value: string | null) => (value ? dateTime.format(new Date(value)) : '—');

function useWrite() {
  const { permissions } = usePermissions<Permission[]>();
  return can(permissions, 'iam', 'write');
}

/** One delivery with the JSON body it POSTs (`GET /api/iam/webhooks/deliveries/:id`). */
function PayloadDialog({ id, onClose }: { id: string; onClose: () => void }) {
  const titleId = useId();
  const { data, error } = useQuery({
    queryKey: ['webhooks', 'delivery', id],
    queryFn: ({ signal }) => api<Delivery & { payload: unknown }>(`/api/iam/webhooks/deliveries/${encodeURIComponent(id)}`, { signal }),
  });
  return (
    <Dialog open onClose={onClose} aria-labelledby={titleId} fullWidth maxWidth="md">
      <DialogTitle id={titleId}>Delivery {data ? `of ${data.event_type}` : ''}</DialogTitle>
      <DialogContent>
        {error ? <Typography color="error">{(error as Error).message}</Typography> : null}
        {data ? (
          <>
            <Typography variant="body2" sx={{ mb: 1 }}>The body POSTed (its <code>webhook-id</code> is {data.id}):</Typography>
            <Box component="pre" tabIndex={0} aria-label="Payload" sx={{ m: 0, p: 1, bgcolor: 'action.hover', borderRadius: 1, overflow: 'auto', fontSize: 13, maxHeight: 420 }}>
              {JSON.stringify(data.payload, null, 2)}
            </Box>
          </>
        ) : null}
      </DialogContent>
      <DialogActions><Button onClick={onClose}>Close</Button></DialogActions>
    </Dialog>
  );
}

/** How long after a test event or a retry the delivery log is asked for twice a second. */
const WATCH_FAST_MS = 15_000;

/** The endpoint's delivery log, newest first: polled while a delivery is pending; a test event; a failed one retried. */
function DeliveryLog({ webhook }: { webhook: Webhook }) {
  const write = useWrite();
  const { run, busy } = useApiAction();
  const [page, setPage] = useState(0);
  const [limit, setLimit] = useState(10);
  const [status, setStatus] = useState('');
  const [payload, setPayload] = useState<string>();
  // After a test or a retry, asked again until that delivery settles, even if it is on another page: twice a second
  // for the first seconds (a delivery usually settles in one or two), then every two seconds (retries wait longer).
  const [watching, setWatching] = useState(false);
  const [watchingSince, setWatchingSince] = useState(0);
  const watch = () => {
    setWatching(true);
    setWatchingSince(Date.now());
  };
  const log = useQuery({
    queryKey: ['webhooks', 'deliveries', webhook.id, page, limit, status],
    queryFn: ({ signal }) => api<Page>(`/api/iam/webhooks/${encodeURIComponent(webhook.id)}/deliveries`, { signal, query: { page: page + 1, limit, status } }),
    refetchInterval: (query) => {
      if (watching && Date.now() - watchingSince < WATCH_FAST_MS) return 500;
      return watching || query.state.data?.data.some((d) => d.status === 'pending') ? 2000 : false;
    },
    staleTime: 0,
  });
  const settled = !!log.data && !log.isFetching && !log.data.data.some((d) => d.status === 'pending');
  useEffect(() => {
    if (watching && settled) setWatching(false);
  }, [watching, settled]);

  const sendTest = async () => {
    const queued = await run(() => api(`/api/iam/webhooks/${encodeURIComponent(webhook.id)}/test`, { method: 'POST' }), 'Test event queued');
    if (queued) {
      setPage(0);
      setStatus('');
      watch();
      void log.refetch();
    }
  };
  const retry = async (delivery: Delivery) => {
    const queued = await run(() => api(`/api/iam/webhooks/deliveries/${encodeURIComponent(delivery.id)}/retry`, { method: 'POST' }), `${delivery.event_type} queued again`);
    if (queued) {
      watch();
      void log.refetch();
    }
  };

  const rows = log.data?.data ?? [];
  return (
    <Box component="section" aria-labelledby="webhook-deliveries" sx={{ p: 2 }}>
      <Stack direction="row" spacing={2} useFlexGap sx={{ alignItems: 'center', flexWrap: 'wrap', mb: 1 }}>
        <Typography id="webhook-deliveries" variant="h6" component="h2" sx={{ flexGrow: 1 }}>Delivery log</Typography>
        <TextField select size="small" label="Status" value={status} onChange={(event) => { setStatus(event.target.value); setPage(0); }} fullWidth={false} sx={{ width: 180 }}>
          <MenuItem value="">Any</MenuItem>
          {STATUSES.map((value) => <MenuItem key={value} value={value}>{value}</MenuItem>)}
        </TextField>
        {write ? <Button variant="contained" startIcon={<SendIcon />} disabled={busy} onClick={sendTest}>Send test event</Button> : null}
      </Stack>
      {log.error ? <Typography color="error">{(log.error as Error).message}</Typography> : null}
      {log.data && !rows.length ? <Typography variant="body2" sx={{ py: 2 }}>No deliveries{status ? ` with status ${status}` : ' yet'}. Events this endpoint subscribes to appear here; so does a test event.</Typography> : null}
      {rows.length ? (
        // Its width is the card's, not the table's (which scrolls inside): a phone's page does not widen.
        <Box sx={{ contain: 'inline-size' }}>
        <ScrollX label="Delivery log table">
          <Table size="small" aria-labelledby="webhook-deliveries" sx={{ '& th, & td': { whiteSpace: 'nowrap' } }}>
            <TableHead>
              <TableRow>
                <TableCell>Event</TableCell>
                <TableCell>Status</TableCell>
                <TableCell align="right">Attempts</TableCell>
                <TableCell>Last response</TableCell>
                <TableCell>Next attempt</TableCell>
                <TableCell>Delivered</TableCell>
                <TableCell>Recorded</TableCell>
                <TableCell>Actions</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {rows.map((delivery) => (
                <TableRow key={delivery.id} data-status={delivery.status}>
                  <TableCell>{delivery.event_type}</TableCell>
                  <TableCell>{delivery.status}</TableCell>
                  <TableCell align="right">{delivery.attempts}</TableCell>
                  <TableCell sx={{ ...WRAP, minWidth: 120, maxWidth: 320, overflowWrap: 'anywhere' }}>
                    {delivery.last_status_code ?? (delivery.last_error ? '' : '—')}
                    {delivery.last_status_code && delivery.last_error ? ': ' : ''}
                    {delivery.last_error ?? ''}
                  </TableCell>
                  <TableCell sx={WRAP}>{delivery.status === 'pending' ? when(delivery.next_attempt_at) : '—'}</TableCell>
                  <TableCell sx={WRAP}>{when(delivery.delivered_at)}</TableCell>
                  <TableCell sx={WRAP}>{when(delivery.created_at)}</TableCell>
                  <TableCell>
                    <Stack direction="row" spacing={1}>
                      <Button size="small" onClick={() => setPayload(delivery.id)} aria-label={`Payload of ${delivery.event_type}, ${when(delivery.created_at)}`}>Payload</Button>
                      {write && delivery.status === 'failed' ? (
                        <Button size="small" variant="outlined" disabled={busy} onClick={() => retry(delivery)} aria-label={`Retry ${delivery.event_type}, ${when(delivery.created_at)}`}>Retry</Button>
                      ) : null}
                    </Stack>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </ScrollX>
        </Box>
      ) : null}
      {log.data && log.data.pagination.total > 10 ? (
        <TablePagination
          component="div"
          count={log.data.pagination.total}
          page={page}
          rowsPerPage={limit}
          rowsPerPageOptions={[10, 25, 50, 100]}
          onPageChange={(_, next) => setPage(next)}
          onRowsPerPageChange={(event) => { setLimit(Number(event.target.value)); setPage(0); }}
        />
      ) : null}
      {payload ? <PayloadDialog id={payload} onClose={() => setPayload(undefined)} /> : null}
    </Box>
  );
}

function Actions() {
  const record = useRecordContext<Webhook>();
  const write = useWrite();
  const refresh = useRefresh();
  const { run, busy } = useApiAction();
  const [confirming, setConfirming] = useState(false);
  const [secret, setSecret] = useState<string>();
  if (!record) return <TopToolbar />;
  const rotate = async () => {
    setConfirming(false);
    const answer = await run(() => api<{ secret: string }>(`${spec.path}/${encodeURIComponent(record.id)}/rotate-secret`, { method: 'POST' }));
    if (answer) setSecret(answer.secret);
  };
  return (
    // Three actions wrap onto two lines on a phone rather than widen the page.
    <TopToolbar sx={{ flexWrap: 'wrap', minWidth: 0 }}>
      <EditButton label="Edit" />
      {write ? <Button size="small" disabled={busy} onClick={() => setConfirming(true)}>Rotate secret</Button> : null}
      <DeleteButton mutationMode="pessimistic" label="Delete" confirmTitle={`Delete webhook "${record.url}"?`} confirmContent="Its delivery log is deleted too. This cannot be undone." />
      <Confirm
        isOpen={confirming}
        title="Replace the signing secret?"
        content="Deliveries from now on, retries included, are signed with the new secret: the receiving system must be given it."
        confirm="Rotate secret"
        onConfirm={rotate}
        onClose={() => setConfirming(false)}
      />
      {secret ? <SecretDialog secret={secret} onClose={() => { setSecret(undefined); refresh(); }} /> : null}
    </TopToolbar>
  );
}

function Title() {
  const record = useRecordContext<Webhook>();
  return <>{record ? `Webhook: ${short(hostOf(record.url))}` : 'Webhook'}</>;
}

function Log() {
  const record = useRecordContext<Webhook>();
  return record ? <DeliveryLog webhook={record} /> : null;
}

/** An endpoint: its fields, Edit / Rotate secret / Delete as the user may, and its delivery log. */
export default function WebhookShow() {
  return (
    // The card may shrink below its table's width (which then scrolls in its own region); a long URL wraps.
    <Show title={<Title />} actions={<Actions />} sx={{ '& .RaShow-card': { minWidth: 0 } }}>
      <SimpleShowLayout sx={{ overflowWrap: 'anywhere' }}>
        <FieldGrid fields={spec.fields} />
      </SimpleShowLayout>
      <Log />
    </Show>
  );
}
