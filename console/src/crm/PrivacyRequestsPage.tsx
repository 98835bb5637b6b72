import DownloadIcon from '@mui/icons-material/Download';
import {
  Alert, Box, Button, Card, CardContent, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, Link, Skeleton, Stack, TableCell, TableRow,
  TextField, Typography,
} from '@mui/material';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { HttpError, Title, useLogoutIfAccessDenied, useNotify } from 'react-admin';
import { api } from '../api/http';
import { PagedTable } from '../shared/PagedTable';

type Counts = Record<string, number>;
type Request = {
  id: string; kind: 'export' | 'erase'; origin: 'request' | 'retention'; requested_by: { name: string } | null; found: Counts; download: string | null; created_at: string;
};
type Page = { data: Request[]; pagination: { total: number } };
type Done = { id: string; kind: 'export' | 'erase'; found: Counts; download: string | null; message: string };

/** Each section of a request, as people call it (singular, plural). */
const SECTIONS: Record<string, [string, string]> = {
  leads: ['lead', 'leads'], inquiries: ['inquiry', 'inquiries'], subscriptions: ['subscription', 'subscriptions'], pending_signups: ['sign-up awaiting confirmation', 'sign-ups awaiting confirmation'], reservations: ['reservation', 'reservations'],
  activities: ['activity', 'activities'], follow_ups: ['follow-up', 'follow-ups'], campaign_deliveries: ['campaign sent', 'campaigns sent'],
  campaigns: ['campaign naming them', 'campaigns naming them'], notifications: ['notification', 'notifications'], audit_entries: ['history entry', 'history entries'],
  trash: ['trash entry', 'trash entries'], webhook_deliveries: ['webhook delivery', 'webhook deliveries'], imports: ['import in progress', 'imports in progress'],
  mail: ['stored mail', 'stored mails'],
};
/** "1 lead, 2 inquiries, 5 history entries", or "nothing". */
const foundText = (found: Counts) => Object.entries(found).filter(([, n]) => n > 0)
  .map(([section, n]) => `${n} ${(SECTIONS[section] ?? [section, section])[n === 1 ? 0 : 1]}`).join(', ') || 'nothing';
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * Privacy requests: a person's data exported (one JSON download) or erased (anonymised everywhere, after a
 * confirmation saying what happens), and the requests made so far. Needs crm delete and a record scope of all, as the API.
 */
export default function PrivacyRequestsPage() {
  const [email, setEmail] = useState('');
  const [phone, setPhone] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<Done | undefined>();
  const [page, setPage] = useState(0);
  const [limit, setLimit] = useState(10);
  const notify = useNotify();
  const queryClient = useQueryClient();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const requests = useQuery({
    queryKey: ['privacy-requests', page, limit],
    queryFn: ({ signal }) => api<Page>('/api/crm/privacy-requests', { query: { page: page + 1, limit }, signal }),
    staleTime: 0,
  });
  useEffect(() => {
    if (requests.error) void logoutIfAccessDenied(requests.error);
  }, [requests.error, logoutIfAccessDenied]);

  const who = [email.trim(), phone.trim()].filter(Boolean).join(' / ');
  const send = async (kind: 'export' | 'erase') => {
    setConfirming(false);
    setBusy(true);
    setErrors({});
    setDone(undefined);
    try {
      const body = { kind, ...(email.trim() ? { email: email.trim() } : {}), ...(phone.trim() ? { phone: phone.trim() } : {}) };
      const answer = await api<Done>('/api/crm/privacy-requests', { method: 'POST', body });
      setDone(answer);
      notify(answer.message, { type: 'success' });
      await queryClient.invalidateQueries({ queryKey: ['privacy-requests'] });
      // Erased records show their new values in every list.
      if (kind === 'erase') await queryClient.invalidateQueries();
    } catch (error) {
      const details = error instanceof HttpError ? (error.body as { details?: Record<string, string> } | undefined)?.details : undefined;
      if (details) setErrors(details);
      else if (!(await logoutIfAccessDenied(error))) notify((error as Error).message || 'The request failed', { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void send('export');
  };

  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Privacy requests" />
      <CardContent>
        <Typography variant="h5" component="h1" gutterBottom>Privacy requests</Typography>
        <Typography variant="body2" color="text.secondary" gutterBottom>
          Find a person by e-mail address, phone number or both: <strong>Export</strong> gathers everything held about them into one JSON file;
          <strong> Erase</strong> anonymises it everywhere, keeping every count and report as it is.
        </Typography>
        <Box component="form" onSubmit={submit} noValidate aria-label="Privacy request" sx={{ my: 2 }}>
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mb: 2 }}>
            <TextField label="E-mail address" type="email" value={email} onChange={(event) => setEmail(event.target.value)} size="small"
              error={!!errors.email} helperText={errors.email ?? ' '} sx={{ minWidth: 260 }} autoComplete="off" />
            <TextField label="Phone number" value={phone} onChange={(event) => setPhone(event.target.value)} size="small"
              error={!!errors.phone} helperText={errors.phone ?? 'Compared by its digits'} sx={{ minWidth: 200 }} autoComplete="off" />
          </Stack>
          <Stack direction="row" spacing={2}>
            <Button type="submit" variant="contained" disabled={busy}>Export</Button>
            <Button variant="outlined" color="error" disabled={busy} onClick={() => setConfirming(true)}>Erase…</Button>
          </Stack>
        </Box>
        {done ? (
          <Alert severity="success" sx={{ mb: 2 }} action={done.download ? (
            <Button component="a" href={done.download} download startIcon={<DownloadIcon />} color="inherit" size="small">Download the export</Button>
          ) : undefined}>
            {done.message}: {foundText(done.found)}.
          </Alert>
        ) : null}

        <Typography variant="h6" component="h2" sx={{ mt: 3 }}>Past requests</Typography>
        {requests.error ? <Alert severity="error">{(requests.error as Error).message}</Alert> : null}
        {!requests.data && !requests.error ? <Skeleton height={120} aria-label="Loading the privacy requests" /> : null}
        {requests.data && !requests.data.pagination.total ? <Typography sx={{ my: 2 }}>No privacy request yet.</Typography> : null}
        {requests.data?.pagination.total ? (
          <PagedTable
            label="Past privacy requests" total={requests.data.pagination.total} page={page} limit={limit} onPage={setPage} onLimit={setLimit} rowsLabel="Requests per page"
            head={<><TableCell>When</TableCell><TableCell>Kind</TableCell><TableCell>By</TableCell><TableCell>Found</TableCell><TableCell>Download</TableCell></>}
          >
            {requests.data.data.map((request) => (
              <TableRow key={request.id}>
                <TableCell component="th" scope="row" sx={{ whiteSpace: 'nowrap' }}>{dateTime.format(new Date(request.created_at))}</TableCell>
                <TableCell>{request.kind === 'export' ? 'Export' : 'Erase'}</TableCell>
                <TableCell>{request.origin === 'retention' ? 'Retention (the system)' : request.requested_by?.name ?? 'a deleted user'}</TableCell>
                <TableCell>{foundText(request.found)}</TableCell>
                <TableCell>
                  {request.download ? <Link href={request.download} download aria-label={`Download the export of ${dateTime.format(new Date(request.created_at))}`}>Download</Link> : '—'}
                </TableCell>
              </TableRow>
            ))}
          </PagedTable>
        ) : null}
      </CardContent>
      <Dialog open={confirming} onClose={() => setConfirming(false)} aria-labelledby="privacy-erase-title">
        <DialogTitle id="privacy-erase-title">Erase the data of {who || 'this person'}?</DialogTitle>
        <DialogContent>
          <DialogContentText gutterBottom>
            Every record found for {who || 'them'} (leads, inquiries, subscriptions, reservations, activities, follow-ups, campaigns sent, notifications)
            and their copies in the history, the trash, webhook payloads and stored mail are anonymised: names become “Erased person”, e-mail
            addresses and phone numbers are removed, notes are emptied.
          </DialogContentText>
          <DialogContentText>
            Nothing is deleted: statuses, dates, units and prices stay, so counts and reports do not change. This cannot be undone.
          </DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setConfirming(false)}>Cancel</Button>
          <Button variant="contained" color="error" onClick={() => void send('erase')} disabled={busy}>Erase</Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}
