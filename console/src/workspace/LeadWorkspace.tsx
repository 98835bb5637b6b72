import CallIcon from '@mui/icons-material/Call';
import EmailIcon from '@mui/icons-material/Email';
import {
  Alert, Box, Button, Card, CardContent, Checkbox, FormControlLabel, Link as MuiLink, MenuItem, Skeleton, Stack, TablePagination, TextField,
  ToggleButton, ToggleButtonGroup, Typography,
} from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { useGetIdentity, useNotify, usePermissions, useRecordContext, useUpdate } from 'react-admin';
import { Link } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { dateTimeText, LEAD_STATUSES, type Lead, type Paginated, UserPicker, useApi } from './shared';
import { LeadFlowPanel } from '../lead-flow/LeadFlowPanel';
import { useFallbackPoll } from '../live/useLive';
import { useApiAction } from '../shared/useApiAction';

// The lead page's own panels, under its fields: quick actions (status, assignee, e-mail, call), the
// timeline with a box to add a note or log a call, its lead flow (claim, plans), the open follow-ups, and the lead's
// reservations and inquiries.

type UserRef = { id: string; name: string } | null;
type Entry = { type: string; at: string; actor: UserRef; payload: Record<string, any> };
type Task = { id: string; title: string; notes: string | null; due_at: string; assigned_to: UserRef; done_at: string | null };
type Reservation = { id: string; client_name: string; status: string; payment_status: string; inventory: { inventory_code: string } | null; project_name: string | null };
type Inquiry = { id: string; subject: string; status: string; created_at: string; lead_id: string | null };

const OUTCOMES = ['answered', 'no_answer', 'busy', 'voicemail', 'wrong_number'] as const;
const words = (value: string) => value.replace(/_/g, ' ');

function Panel({ title, children, id }: { title: string; children: ReactNode; id: string }) {
  return (
    <Card component="section" variant="outlined" aria-labelledby={id}>
      <CardContent>
        <Typography id={id} variant="h6" component="h2" gutterBottom>{title}</Typography>
        {children}
      </CardContent>
    </Card>
  );
}

/** Writes of the lead page: a 401 signs out, anything else is a notification; the panels it changes are read again. */
function useWrite() {
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const write = async (call: () => Promise<unknown>, success: string, keys: string[][]) => {
    const done = await run(call, success);
    await Promise.all(keys.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
    return done !== undefined;
  };
  return { write, busy };
}

function QuickActions({ lead }: { lead: Lead }) {
  const { permissions } = usePermissions<Permission[]>();
  const { identity } = useGetIdentity();
  const notify = useNotify();
  const queryClient = useQueryClient();
  const [update, { isPending }] = useUpdate();
  const writable = can(permissions, 'crm', 'write');
  const change = (data: Partial<Lead>, success: string) => update('leads', { id: lead.id, data: { ...lead, ...data }, previousData: lead }, {
    mutationMode: 'pessimistic',
    onSuccess: () => {
      notify(success, { type: 'success' });
      // The change is on the timeline now (from the audit trail).
      void queryClient.invalidateQueries({ queryKey: ['leads', 'timeline', lead.id] });
    },
    onError: (error) => notify((error as Error).message || 'The change failed', { type: 'error' }),
  });
  return (
    <Box role="group" aria-label="Quick actions" sx={{ display: 'flex', flexWrap: 'wrap', gap: 1.5, alignItems: 'center', mb: 2 }}>
      {writable ? (
        <TextField select size="small" label="Change status" value={lead.status} disabled={isPending} fullWidth={false} sx={{ width: 180 }}
          onChange={(event) => change({ status: event.target.value }, `Status changed to ${event.target.value}`)}>
          {LEAD_STATUSES.map((status) => <MenuItem key={status} value={status}>{status}</MenuItem>)}
        </TextField>
      ) : null}
      {writable && can(permissions, 'iam', 'read') ? (
        <Box sx={{ width: { xs: '100%', sm: 240 } }}>
          <UserPicker label="Assign to" value={lead.assigned_to ? { id: lead.assigned_to.id, name: lead.assigned_to.name } : null} disabled={isPending}
            onChange={(user) => change({ assigned_to: user ? { id: user.id, name: user.name } : null }, user ? `Assigned to ${user.name}` : 'Unassigned')} />
        </Box>
      ) : null}
      {writable && identity && lead.assigned_to?.id !== identity.id ? (
        <Button size="small" variant="outlined" disabled={isPending} onClick={() => change({ assigned_to: { id: String(identity.id), name: identity.fullName ?? '' } }, 'Assigned to you')}>
          Assign to me
        </Button>
      ) : null}
      {lead.email ? <Button size="small" variant="outlined" startIcon={<EmailIcon />} href={`mailto:${lead.email}`}>Email</Button> : null}
      {lead.phone ? <Button size="small" variant="outlined" startIcon={<CallIcon />} href={`tel:${lead.phone.replace(/[^\d+]/g, '')}`}>Call</Button> : null}
    </Box>
  );
}

/** A note, or a call and its outcome, written on the lead's timeline. */
function Composer({ lead, onWritten }: { lead: Lead; onWritten: () => void }) {
  const [kind, setKind] = useState<'note' | 'call'>('note');
  const [body, setBody] = useState('');
  const [outcome, setOutcome] = useState<string>('answered');
  const { write, busy } = useWrite();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const activity = kind === 'note' ? { kind, body } : { kind, outcome, body: body.trim() ? body : undefined };
    const ok = await write(() => api(`/api/crm/leads/${lead.id}/activities`, { method: 'POST', body: activity }), kind === 'note' ? 'Note added' : 'Call logged',
      [['leads', 'timeline', lead.id]]);
    if (ok) {
      setBody('');
      onWritten();
    }
  };
  return (
    <Box component="form" onSubmit={submit} aria-label="Add to the timeline" sx={{ mb: 2 }}>
      <ToggleButtonGroup size="small" exclusive value={kind} onChange={(_, next) => next && setKind(next)} aria-label="What to add" sx={{ mb: 1 }}>
        <ToggleButton value="note">Note</ToggleButton>
        <ToggleButton value="call">Call</ToggleButton>
      </ToggleButtonGroup>
      <Stack spacing={1}>
        {kind === 'call' ? (
          <TextField select size="small" label="Outcome" value={outcome} onChange={(event) => setOutcome(event.target.value)} sx={{ maxWidth: 240 }}>
            {OUTCOMES.map((value) => <MenuItem key={value} value={value}>{words(value)}</MenuItem>)}
          </TextField>
        ) : null}
        <TextField multiline minRows={2} label={kind === 'note' ? 'Note' : 'What was said (optional)'} value={body} onChange={(event) => setBody(event.target.value)} required={kind === 'note'} />
        <Box><Button type="submit" variant="contained" disabled={busy || (kind === 'note' && !body.trim())}>{kind === 'note' ? 'Add note' : 'Log call'}</Button></Box>
      </Stack>
    </Box>
  );
}

/** One entry as a sentence (and its text, for activities). */
function entryText(entry: Entry): { title: ReactNode; text?: string } {
  const p = entry.payload;
  switch (entry.type) {
    case 'activity': {
      const title = p.kind === 'call' ? `Call: ${words(p.outcome ?? '')}` : p.kind === 'meeting' || p.kind === 'site_visit' ? `${p.kind === 'meeting' ? 'Meeting' : 'Site visit'} at ${p.place}` : p.kind === 'email' ? 'E-mail' : 'Note';
      return { title, text: p.body ?? undefined };
    }
    case 'lead_created': return { title: `Lead created (${p.status}, from ${p.source})` };
    case 'lead_restored': return { title: `Lead restored from the trash (${p.status})${p.deleted_at ? `, deleted ${dateTimeText(p.deleted_at)}` : ''}` };
    case 'status_changed': return { title: `Status: ${p.from ?? '—'} → ${p.to}` };
    case 'assigned': return { title: p.to ? `Assigned to ${p.to.name}` : `Unassigned${p.from ? ` from ${p.from.name}` : ''}` };
    case 'reservation': return { title: <>Reservation <MuiLink component={Link} to={`/reservations/${p.id}/show`}>{p.inventory_code ?? p.client_name}</MuiLink> ({p.status})</> };
    case 'inquiry': return { title: <>Inquiry <MuiLink component={Link} to={`/inquiries/${p.id}/show`}>{p.subject}</MuiLink> ({p.status}){p.converted ? ', turned into this lead' : ''}</> };
    case 'subscribed': return { title: 'Subscribed to the newsletter' };
    case 'unsubscribed': return { title: 'Unsubscribed from the newsletter' };
    case 'campaign_email': return { title: `Campaign e-mail received: ${p.subject}` };
    case 'task_completed': return { title: `Follow-up done: ${p.title}` };
    default: return { title: words(entry.type) };
  }
}

function Timeline({ lead }: { lead: Lead }) {
  const [page, setPage] = useState(0);
  const [limit, setLimit] = useState(20);
  // Read again as the live stream says the lead, its activities or follow-ups changed (console/src/live).
  const timeline = useApi<Paginated<Entry>>(['leads', 'timeline', lead.id], `/api/crm/leads/${lead.id}/timeline`, { page: page + 1, limit }, { staleTime: 0, refetchInterval: useFallbackPoll() });
  const writable = can(usePermissions<Permission[]>().permissions, 'crm', 'write');
  return (
    <Panel title="Timeline" id="lead-timeline">
      {writable ? <Composer lead={lead} onWritten={() => setPage(0)} /> : null}
      {timeline.error ? <Alert severity="error">{(timeline.error as Error).message}</Alert> : null}
      {!timeline.data && !timeline.error ? <Skeleton height={120} /> : null}
      {timeline.data ? (
        <>
          {!timeline.data.pagination.total ? <Typography variant="body2">Nothing yet.</Typography> : null}
          <Box component="ol" aria-label="Timeline entries" sx={{ listStyle: 'none', p: 0, m: 0 }}>
            {timeline.data.data.map((entry, i) => {
              const { title, text } = entryText(entry);
              return (
                <Box component="li" key={`${entry.type}-${entry.at}-${i}`} sx={{ borderLeft: 3, borderColor: entry.type === 'activity' ? 'primary.main' : 'divider', pl: 1.5, py: 0.75 }}>
                  <Typography variant="body2" sx={{ fontWeight: 600 }}>{title}</Typography>
                  {text ? <Typography variant="body2" sx={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>{text}</Typography> : null}
                  <Typography variant="caption" color="text.secondary">{dateTimeText(entry.at)}{entry.actor ? ` · ${entry.actor.name}` : ''}</Typography>
                </Box>
              );
            })}
          </Box>
          {timeline.data.pagination.total > limit ? (
            <TablePagination component="div" count={timeline.data.pagination.total} page={page} onPageChange={(_, next) => setPage(next)} rowsPerPage={limit}
              rowsPerPageOptions={[20, 50, 100]} onRowsPerPageChange={(event) => { setLimit(Number(event.target.value)); setPage(0); }} labelRowsPerPage="Entries per page" />
          ) : null}
        </>
      ) : null}
    </Panel>
  );
}

/** Tomorrow at 09:00, local, as a datetime-local box takes it. */
function tomorrowMorning() {
  const at = new Date();
  at.setDate(at.getDate() + 1);
  at.setHours(9, 0, 0, 0);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

function FollowUps({ lead }: { lead: Lead }) {
  const tasks = useApi<Paginated<Task>>(['tasks', 'lead', lead.id], '/api/crm/tasks', { lead_id: lead.id, done: false, sort: 'due_at', order: 'asc', limit: 50 }, { staleTime: 0 });
  const writable = can(usePermissions<Permission[]>().permissions, 'crm', 'write');
  const [adding, setAdding] = useState(false);
  const [title, setTitle] = useState('');
  const [due, setDue] = useState(tomorrowMorning);
  const { write, busy } = useWrite();
  const keys = [['tasks', 'lead', lead.id], ['leads', 'timeline', lead.id]];
  const add = async (event: FormEvent) => {
    event.preventDefault();
    const dueAt = new Date(due);
    if (Number.isNaN(dueAt.getTime())) return;
    const ok = await write(() => api('/api/crm/tasks', { method: 'POST', body: { title, due_at: dueAt.toISOString(), lead_id: lead.id } }), 'Follow-up added', keys);
    if (ok) {
      setTitle('');
      setAdding(false);
    }
  };
  const complete = (task: Task) => write(() => api(`/api/crm/tasks/${task.id}`, { method: 'PATCH', body: { done: true } }), `Done: ${task.title}`, keys);
  const now = Date.now();
  return (
    <Panel title="Follow-ups" id="lead-follow-ups">
      {tasks.error ? <Alert severity="error">{(tasks.error as Error).message}</Alert> : null}
      {!tasks.data && !tasks.error ? <Skeleton height={60} /> : null}
      {tasks.data && !tasks.data.data.length ? <Typography variant="body2">No open follow-up.</Typography> : null}
      <Box component="ul" aria-label="Open follow-ups" sx={{ listStyle: 'none', p: 0, m: 0 }}>
        {(tasks.data?.data ?? []).map((task) => {
          const overdue = new Date(task.due_at).getTime() < now;
          return (
            <Box component="li" key={task.id} sx={{ py: 0.5 }}>
              <FormControlLabel
                control={<Checkbox checked={false} disabled={!writable || busy} onChange={() => void complete(task)} />}
                label={
                  <>
                    <Typography variant="body2" component="span" sx={{ display: 'block' }}>{task.title}</Typography>
                    <Typography variant="caption" component="span" sx={{ display: 'block', color: overdue ? 'error.main' : 'text.secondary', fontWeight: overdue ? 600 : undefined }}>
                      {overdue ? 'Overdue: ' : 'Due '}{dateTimeText(task.due_at)}{task.assigned_to ? ` · ${task.assigned_to.name}` : ''}
                    </Typography>
                  </>
                }
              />
            </Box>
          );
        })}
      </Box>
      {writable && !adding ? <Button size="small" onClick={() => setAdding(true)}>Add follow-up</Button> : null}
      {adding ? (
        <Box component="form" onSubmit={add} aria-label="New follow-up" sx={{ mt: 1 }}>
          <Stack spacing={1}>
            <TextField size="small" label="What to do" required value={title} onChange={(event) => setTitle(event.target.value)} autoFocus />
            <TextField size="small" label="Due" type="datetime-local" required value={due} onChange={(event) => setDue(event.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
            <Stack direction="row" spacing={1}>
              <Button type="submit" variant="contained" size="small" disabled={busy || !title.trim() || !due}>Save follow-up</Button>
              <Button size="small" onClick={() => setAdding(false)}>Cancel</Button>
            </Stack>
          </Stack>
        </Box>
      ) : null}
    </Panel>
  );
}

function Related({ lead }: { lead: Lead }) {
  const reservations = useApi<Paginated<Reservation>>(['reservations', 'lead', lead.id], '/api/crm/reservations', { lead_id: lead.id, limit: 20 });
  const linked = useApi<Paginated<Inquiry>>(['inquiries', 'lead', lead.id], '/api/crm/inquiries', { lead_id: lead.id, limit: 20 });
  // Inquiries sent from the lead's address before anyone linked them.
  const sameEmail = useApi<Paginated<Inquiry>>(['inquiries', 'lead', lead.id, 'email'], '/api/crm/inquiries', { q: lead.email ?? '', limit: 20 }, { enabled: !!lead.email });
  const inquiries = [...(linked.data?.data ?? []), ...(sameEmail.data?.data ?? [])].filter((row, i, all) => all.findIndex((other) => other.id === row.id) === i);
  const error = reservations.error ?? linked.error ?? sameEmail.error;
  return (
    <Panel title="Reservations and inquiries" id="lead-related">
      {error ? <Alert severity="error">{(error as Error).message}</Alert> : null}
      <Typography variant="subtitle2" component="h3">Reservations</Typography>
      {reservations.data && !reservations.data.data.length ? <Typography variant="body2">None.</Typography> : null}
      <Box component="ul" sx={{ pl: 2, mt: 0.5 }}>
        {(reservations.data?.data ?? []).map((r) => (
          <li key={r.id}>
            <MuiLink component={Link} to={`/reservations/${r.id}/show`}>{r.inventory?.inventory_code ?? r.client_name}</MuiLink>
            <Typography variant="body2" component="span">{` — ${r.status}, ${r.payment_status}${r.project_name ? ` · ${r.project_name}` : ''}`}</Typography>
          </li>
        ))}
      </Box>
      <Typography variant="subtitle2" component="h3">Inquiries</Typography>
      {linked.data && (!lead.email || sameEmail.data) && !inquiries.length ? <Typography variant="body2">None.</Typography> : null}
      <Box component="ul" sx={{ pl: 2, mt: 0.5, mb: 0 }}>
        {inquiries.map((q) => (
          <li key={q.id}>
            <MuiLink component={Link} to={`/inquiries/${q.id}/show`}>{q.subject}</MuiLink>
            <Typography variant="body2" component="span">{` — ${q.status}, ${dateTimeText(q.created_at)}`}</Typography>
          </li>
        ))}
      </Box>
    </Panel>
  );
}

/** Under the lead's fields: quick actions, then the timeline beside the follow-ups and related records. */
export default function LeadWorkspace() {
  const lead = useRecordContext<Lead>();
  if (!lead) return null;
  return (
    <Box sx={{ p: 2, pt: 0 }}>
      <QuickActions lead={lead} />
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'minmax(0, 3fr) minmax(0, 2fr)' }, alignItems: 'start' }}>
        <Timeline lead={lead} />
        <Stack spacing={2} sx={{ minWidth: 0 }}>
          <LeadFlowPanel lead={lead} />
          <FollowUps lead={lead} />
          <Related lead={lead} />
        </Stack>
      </Box>
    </Box>
  );
}
