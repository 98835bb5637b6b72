import { Alert, Box, Button, Card, CardContent, Checkbox, Chip, FormControlLabel, Link as MuiLink, Skeleton, Stack, Switch, Typography } from '@mui/material';
import { visuallyHidden } from '@mui/utils';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Title, useAuthenticated, usePermissions } from 'react-admin';
import { Link } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { useFallbackPoll } from '../live/useLive';
import { useApiAction } from '../shared/useApiAction';
import { dateTimeText, useApi } from '../workspace/shared';
import { useClaim, useNow } from './claim';
import { countdownText, durationText, KIND_LABELS, type LeadBrief, type MyDay as Day, type Task, words } from './types';

// My day (GET /api/crm/my-day): what an agent does today, in the order they would do it: leads waiting to be claimed
// (first come, first served), their new leads nobody has called yet (the speed-to-lead clock), follow-ups overdue and
// due today, today's site visits. Read again as the live stream says leads, follow-ups or notifications changed.

const leadName = (lead: LeadBrief) => `${lead.first_name} ${lead.last_name}`;
const LeadLink = ({ lead }: { lead: LeadBrief }) => (
  <MuiLink component={Link} to={`/leads/${lead.id}/show`} sx={{ fontWeight: 600, wordBreak: 'break-word' }}>{leadName(lead)}</MuiLink>
);
const leadDetails = (lead: LeadBrief) => [lead.source, lead.interest].filter(Boolean).join(' · ');

function Section({ id, title, count, shown, children, empty }: { id: string; title: string; count: number | undefined; shown?: number; children: ReactNode; empty: string }) {
  return (
    <Card component="section" variant="outlined" aria-labelledby={id} sx={{ minWidth: 0 }}>
      <CardContent>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mb: 1 }}>
          <Typography id={id} variant="h6" component="h2">
            {title}{count !== undefined ? <Box component="span" sx={visuallyHidden}>: {count}</Box> : null}
          </Typography>
          {count !== undefined ? <Chip size="small" label={count} aria-hidden /> : null}
        </Stack>
        {count === undefined ? <Skeleton height={60} /> : count === 0 ? <Typography variant="body2" color="text.secondary">{empty}</Typography> : children}
        {count !== undefined && shown !== undefined && shown < count ? <Typography variant="caption" color="text.secondary">The {shown} most urgent of {count}.</Typography> : null}
      </CardContent>
    </Card>
  );
}

const itemSx = { py: 1, borderTop: 1, borderColor: 'divider', '&:first-of-type': { borderTop: 0, pt: 0 } } as const;

function ToClaim({ items, writable }: { items: Day['to_claim']; writable: boolean }) {
  const now = useNow(1_000);
  const { claim, busy } = useClaim();
  return (
    <Box component="ul" aria-label="Leads to claim" sx={{ listStyle: 'none', p: 0, m: 0 }}>
      {items.map(({ lead, pool, claim_deadline }) => {
        const left = claim_deadline ? Date.parse(claim_deadline) - now : null;
        const name = leadName(lead);
        return (
          <Box component="li" key={lead.id} data-lead-id={lead.id} sx={itemSx}>
            <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' }, justifyContent: 'space-between' }}>
              <Box sx={{ minWidth: 0 }}>
                <Typography variant="body1" sx={{ fontWeight: 600, wordBreak: 'break-word' }}>{name}</Typography>
                <Typography variant="body2" color="text.secondary">{leadDetails(lead)}</Typography>
                <Typography variant="body2">
                  In {pool.name} ({KIND_LABELS[pool.kind] ?? words(pool.kind)})
                  {left === null ? null : left > 0
                    ? <> · <Box component="time" dateTime={claim_deadline!} sx={{ fontVariantNumeric: 'tabular-nums', color: left < 60_000 ? 'error.main' : undefined, fontWeight: 600 }}>{countdownText(left)}</Box> left to claim</>
                    : <> · <Box component="span" sx={{ color: 'error.main', fontWeight: 600 }}>claim time is up</Box></>}
                </Typography>
              </Box>
              {writable ? (
                <Box sx={{ flexShrink: 0 }}>
                  <Button variant="contained" size="small" disabled={busy !== null} onClick={() => void claim(lead.id, name)} aria-label={`Claim ${name}`}>Claim</Button>
                </Box>
              ) : null}
            </Stack>
          </Box>
        );
      })}
    </Box>
  );
}

function NotContacted({ items }: { items: Day['not_contacted'] }) {
  const now = useNow(30_000);
  return (
    <Box component="ul" aria-label="New leads not yet contacted" sx={{ listStyle: 'none', p: 0, m: 0 }}>
      {items.map(({ lead, assigned_at, speed_due_at, minutes_waiting }) => {
        // The API's figure when it was read, kept current here between reads.
        const waiting = assigned_at ? Math.max(minutes_waiting, (now - Date.parse(assigned_at)) / 60_000) : minutes_waiting;
        const late = !!speed_due_at && Date.parse(speed_due_at) <= now;
        return (
          <Box component="li" key={lead.id} sx={itemSx}>
            <LeadLink lead={lead} />
            <Typography variant="body2" color="text.secondary">{leadDetails(lead)}</Typography>
            <Typography variant="body2" sx={{ color: late ? 'error.main' : undefined, fontWeight: late ? 700 : undefined }}>
              Waiting {durationText(waiting)}
              {speed_due_at ? (late ? ' · past the speed-to-lead limit' : ` · contact by ${dateTimeText(speed_due_at)}`) : ''}
            </Typography>
          </Box>
        );
      })}
    </Box>
  );
}

function Tasks({ items, label, overdue, writable }: { items: Task[]; label: string; overdue?: boolean; writable: boolean }) {
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const done = async (task: Task) => {
    await run(() => api(`/api/crm/tasks/${task.id}`, { method: 'PATCH', body: { done: true } }), `Done: ${task.title}`);
    await Promise.all([['my-day'], ['tasks'], ['leads', 'timeline']].map((queryKey) => queryClient.invalidateQueries({ queryKey })));
  };
  return (
    <Box component="ul" aria-label={label} sx={{ listStyle: 'none', p: 0, m: 0 }}>
      {items.map((task) => (
        <Box component="li" key={task.id} sx={{ ...itemSx, py: 0.5 }}>
          <FormControlLabel
            control={<Checkbox checked={false} disabled={!writable || busy} onChange={() => void done(task)} />}
            label={
              <>
                <Typography variant="body2" component="span" sx={{ display: 'block', wordBreak: 'break-word' }}>{task.title}</Typography>
                <Typography variant="caption" component="span" sx={{ display: 'block', color: overdue ? 'error.main' : 'text.secondary', fontWeight: overdue ? 600 : undefined }}>
                  {overdue ? 'Overdue: ' : 'Due '}{dateTimeText(task.due_at)}
                </Typography>
              </>
            }
          />
          {task.lead_id ? <MuiLink component={Link} to={`/leads/${task.lead_id}/show`} variant="body2" sx={{ ml: 4, display: 'block' }}>Open the lead<Box component="span" sx={visuallyHidden}> of {task.title}</Box></MuiLink> : null}
        </Box>
      ))}
    </Box>
  );
}

function SiteVisits({ items }: { items: Day['site_visits'] }) {
  return (
    <Box component="ul" aria-label="Today's site visits" sx={{ listStyle: 'none', p: 0, m: 0 }}>
      {items.map((visit) => (
        <Box component="li" key={visit.id} sx={itemSx}>
          <Typography variant="body2" sx={{ fontWeight: 600 }}>
            <Box component="time" dateTime={visit.occurred_at}>{new Date(visit.occurred_at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}</Box>
            {visit.place ? ` · ${visit.place}` : ''}
          </Typography>
          <LeadLink lead={visit.lead} />
        </Box>
      ))}
    </Box>
  );
}

/** The Away switch: while away, round robins skip me and first-to-claim groups offer me nothing (preferences `away`). */
function AwaySwitch() {
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const preferences = useApi<{ away?: boolean }>(['preferences'], '/api/auth/preferences');
  const away = !!preferences.data?.away;
  const change = async (next: boolean) => {
    const answer = await run(() => api<{ away?: boolean }>('/api/auth/preferences', { method: 'PATCH', body: { away: next } }), next ? 'You are away: no new leads come to you' : 'You are back: new leads come to you again');
    if (answer) queryClient.setQueryData(['preferences', '/api/auth/preferences', {}], answer);
    await queryClient.invalidateQueries({ queryKey: ['my-day'] });
  };
  return (
    <FormControlLabel
      control={<Switch checked={away} disabled={!preferences.data || busy} onChange={(event) => void change(event.target.checked)} />}
      label={away ? 'Away: no new leads' : 'Away'}
    />
  );
}

export default function MyDay() {
  useAuthenticated();
  const { permissions } = usePermissions<Permission[]>();
  const writable = can(permissions, 'crm', 'write');
  const day = useQuery({
    queryKey: ['my-day'],
    queryFn: ({ signal }) => api<Day>('/api/crm/my-day', { signal }),
    refetchInterval: useFallbackPoll(),
    staleTime: 0,
  });
  const data = day.data;
  return (
    <Box sx={{ mt: 2, contain: 'inline-size' }}>
      <Title title="My day" />
      <Stack direction="row" sx={{ alignItems: 'center', justifyContent: 'space-between', flexWrap: 'wrap', gap: 1, mb: 2 }}>
        <Typography variant="h5" component="h1">My day</Typography>
        <AwaySwitch />
      </Stack>
      {day.error ? <Alert severity="error" sx={{ mb: 2 }}>{(day.error as Error).message}</Alert> : null}
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'repeat(2, minmax(0, 1fr))' }, alignItems: 'start' }}>
        <Section id="my-day-claim" title="Leads to claim" count={data && (data.counts?.to_claim ?? data.to_claim.length)} shown={data?.to_claim.length} empty="No lead is waiting for you to claim it.">
          {data ? <ToClaim items={data.to_claim} writable={writable} /> : null}
        </Section>
        <Section id="my-day-new" title="Not yet contacted" count={data && (data.counts?.not_contacted ?? data.not_contacted.length)} shown={data?.not_contacted.length} empty="Every lead of yours has had a first contact.">
          {data ? <NotContacted items={data.not_contacted} /> : null}
        </Section>
        <Section id="my-day-overdue" title="Overdue follow-ups" count={data && (data.counts?.overdue ?? data.overdue.length)} shown={data?.overdue.length} empty="Nothing overdue.">
          {data ? <Tasks items={data.overdue} label="Overdue follow-ups" overdue writable={writable} /> : null}
        </Section>
        <Section id="my-day-today" title="Today's follow-ups" count={data && (data.counts?.today ?? data.today.length)} shown={data?.today.length} empty="No follow-up due today.">
          {data ? <Tasks items={data.today} label="Today's follow-ups" writable={writable} /> : null}
        </Section>
        <Section id="my-day-visits" title="Today's site visits" count={data && (data.counts?.site_visits ?? data.site_visits.length)} shown={data?.site_visits.length} empty="No site visit today.">
          {data ? <SiteVisits items={data.site_visits} /> : null}
        </Section>
      </Box>
    </Box>
  );
}
