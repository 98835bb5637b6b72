import { Alert, Box, Button, Card, CardContent, MenuItem, Skeleton, Stack, TextField, Typography } from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { useGetIdentity, usePermissions } from 'react-admin';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { useApiAction } from '../shared/useApiAction';
import { dateTimeText, type Lead, useApi } from '../workspace/shared';
import { useClaim, useNow } from './claim';
import { usePlans } from './settingsData';
import { countdownText, durationText, type Flow, type Group, KIND_LABELS, type PlanRun, words } from './types';

// A lead's flow on its page (GET /api/crm/leads/{id}/flow): the rule that routed it, the pool it waits in (with Claim for
// the pool's members), when it was assigned and first contacted, and its action plans (stop one, attach another).

const SPEED_STAGES = ['on time', 'assignee reminded', 'manager told', 'reassigned'];

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <>
      <Box component="dt" sx={{ color: 'text.secondary', typography: 'body2' }}>{label}</Box>
      <Box component="dd" sx={{ m: 0, typography: 'body2', wordBreak: 'break-word' }}>{children}</Box>
    </>
  );
}

/** Claim, for a member of the pool the unassigned lead waits in. */
function ClaimAction({ lead, pool, deadline }: { lead: Lead; pool: NonNullable<Flow['pool']>; deadline: string | null }) {
  const { identity } = useGetIdentity();
  const group = useApi<Group>(['lead-flow', 'groups', pool.id], `/api/crm/lead-flow/groups/${pool.id}`);
  const { claim, busy } = useClaim();
  const now = useNow(1_000);
  const member = !!identity && !!group.data?.members.some((m) => m.user_id === identity.id);
  if (!member) return null;
  const left = deadline ? Date.parse(deadline) - now : null;
  return (
    <Alert severity="info" sx={{ mb: 2 }} action={
      <Button variant="contained" size="small" disabled={!!busy} onClick={() => void claim(lead.id, `${lead.first_name} ${lead.last_name}`)}>Claim</Button>
    }>
      This lead waits in {pool.name}, a group you belong to.
      {left !== null ? (left > 0 ? ` ${countdownText(left)} left to claim it.` : ' Its claim time is up.') : ''}
    </Alert>
  );
}

function Plans({ lead, runs, writable }: { lead: Lead; runs: PlanRun[]; writable: boolean }) {
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const [attaching, setAttaching] = useState(false);
  const [planId, setPlanId] = useState('');
  const plans = usePlans();
  const reread = () => Promise.all([['leads', 'flow', lead.id], ['tasks'], ['leads', 'timeline', lead.id]].map((queryKey) => queryClient.invalidateQueries({ queryKey })));
  const stop = async (planRun: PlanRun) => {
    await run(() => api(`/api/crm/leads/${lead.id}/plans/${planRun.id}/stop`, { method: 'POST' }), `Stopped: ${planRun.name}`);
    await reread();
  };
  const attach = async (event: FormEvent) => {
    event.preventDefault();
    const done = await run(() => api(`/api/crm/leads/${lead.id}/plans`, { method: 'POST', body: { plan_id: planId } }), 'Plan attached');
    await reread();
    if (done !== undefined) {
      setAttaching(false);
      setPlanId('');
    }
  };
  const running = runs.filter((r) => !r.stopped_at);
  const stopped = runs.filter((r) => r.stopped_at);
  return (
    <Box sx={{ mt: 2 }}>
      <Typography variant="subtitle2" component="h3">Action plans</Typography>
      {!runs.length ? <Typography variant="body2">None.</Typography> : null}
      <Box component="ul" aria-label="Action plans of this lead" sx={{ listStyle: 'none', p: 0, m: 0 }}>
        {[...running, ...stopped].map((planRun) => (
          <Box component="li" key={planRun.id} sx={{ py: 0.5, display: 'flex', gap: 1, alignItems: 'center', justifyContent: 'space-between', flexWrap: 'wrap' }}>
            <Box sx={{ minWidth: 0 }}>
              <Typography variant="body2" sx={{ fontWeight: 600 }}>{planRun.name}</Typography>
              <Typography variant="caption" color="text.secondary">
                {planRun.stopped_at
                  ? `Stopped ${dateTimeText(planRun.stopped_at)}${planRun.stop_reason ? ` (${words(planRun.stop_reason)})` : ''}`
                  : `Running since ${dateTimeText(planRun.started_at)} · ${planRun.open_tasks} open follow-up${planRun.open_tasks === 1 ? '' : 's'}`}
              </Typography>
            </Box>
            {writable && !planRun.stopped_at ? (
              <Button size="small" color="error" variant="outlined" disabled={busy} onClick={() => void stop(planRun)} aria-label={`Stop ${planRun.name}`}>Stop</Button>
            ) : null}
          </Box>
        ))}
      </Box>
      {writable && !attaching ? <Button size="small" onClick={() => setAttaching(true)}>Attach plan</Button> : null}
      {attaching ? (
        <Box component="form" onSubmit={attach} aria-label="Attach a plan" sx={{ mt: 1 }}>
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' } }}>
            <TextField select size="small" label="Plan" value={planId} onChange={(event) => setPlanId(event.target.value)} sx={{ minWidth: 200 }} required>
              {(plans.data ?? []).map((plan) => <MenuItem key={plan.id} value={plan.id}>{plan.name}</MenuItem>)}
            </TextField>
            <Stack direction="row" spacing={1}>
              <Button type="submit" size="small" variant="contained" disabled={busy || !planId}>Attach</Button>
              <Button size="small" onClick={() => setAttaching(false)}>Cancel</Button>
            </Stack>
          </Stack>
        </Box>
      ) : null}
    </Box>
  );
}

export function LeadFlowPanel({ lead }: { lead: Lead }) {
  const { permissions } = usePermissions<Permission[]>();
  const writable = can(permissions, 'crm', 'write');
  const flow = useApi<Flow>(['leads', 'flow', lead.id], `/api/crm/leads/${lead.id}/flow`, undefined, { staleTime: 0 });
  // A service without the flow's summary (the lead itself is there: its page is open): its plans alone, from their own list.
  const noSummary = (flow.error as { status?: number } | null)?.status === 404;
  const runs = useApi<{ data: PlanRun[] }>(['leads', 'flow', lead.id, 'plans'], `/api/crm/leads/${lead.id}/plans`, undefined, { staleTime: 0, enabled: noSummary });
  const f = flow.data;
  return (
    <Card component="section" variant="outlined" aria-labelledby="lead-flow">
      <CardContent>
        <Typography id="lead-flow" variant="h6" component="h2" gutterBottom>Lead flow</Typography>
        {flow.error && !noSummary ? <Alert severity="error">{(flow.error as Error).message}</Alert> : null}
        {noSummary ? (
          <>
            <Typography variant="body2" color="text.secondary">How this lead was routed is not available.</Typography>
            {runs.data ? <Plans lead={lead} runs={runs.data.data} writable={writable} /> : null}
          </>
        ) : null}
        {!f && !flow.error ? <Skeleton height={80} /> : null}
        {f ? (
          <>
            {f.pool && !lead.assigned_to && writable ? <ClaimAction lead={lead} pool={f.pool} deadline={f.claim_deadline} /> : null}
            <Box component="dl" sx={{ display: 'grid', gridTemplateColumns: 'max-content minmax(0, 1fr)', columnGap: 2, rowGap: 0.5, m: 0 }}>
              <Row label="Arrived by">{f.channel ? words(f.channel) : '—'}</Row>
              <Row label="Rule">{f.rule?.name ?? 'none'}</Row>
              {f.pool ? <Row label="Waiting in">{f.pool.name} ({KIND_LABELS[f.pool.kind] ?? words(f.pool.kind)})</Row> : null}
              {f.claim_deadline ? <Row label="Claim by">{dateTimeText(f.claim_deadline)}</Row> : null}
              <Row label="Assigned">{f.assigned_at ? dateTimeText(f.assigned_at) : 'not yet'}</Row>
              <Row label="First contact">{f.first_contact_at ? dateTimeText(f.first_contact_at) : 'not yet'}</Row>
              {f.minutes_to_first_contact !== null ? <Row label="Time to first contact">{durationText(f.minutes_to_first_contact)}</Row> : null}
              {f.speed_due_at && !f.first_contact_at ? (
                <Row label="Contact by">{dateTimeText(f.speed_due_at)}{f.speed_stage ? ` (${SPEED_STAGES[f.speed_stage] ?? `stage ${f.speed_stage}`})` : ''}</Row>
              ) : null}
            </Box>
            <Plans lead={lead} runs={f.plans} writable={writable} />
          </>
        ) : null}
      </CardContent>
    </Card>
  );
}
