import AddIcon from '@mui/icons-material/Add';
import ArrowDownwardIcon from '@mui/icons-material/ArrowDownward';
import ArrowUpwardIcon from '@mui/icons-material/ArrowUpward';
import {
  Alert, Box, Button, Card, CardActions, CardContent, Chip, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, IconButton, Skeleton, Stack,
  Typography,
} from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { Title, useAuthenticated } from 'react-admin';
import { api } from '../api/http';
import { useApiAction } from '../shared/useApiAction';
import { useCanManageLeadFlow } from './access';
import { GroupDialog, PlanDialog, RuleDialog } from './forms';
import { useGroups, usePlans, useProjects, useRules, useUserName } from './settingsData';
import { type Group, type GroupKind, KIND_LABELS, type Plan, type Rule, words } from './types';

// /lead-flow: who new leads go to. Rules in the order they are tried (the default last), the groups they hand leads to
// (round robin, first to claim), the ponds where leads wait for anyone in them, and the action plans rules attach.
// Administrators and department managers change them; everyone else with crm read sees them.

type Editing = { kind: 'rule'; rule?: Rule } | { kind: 'group'; group?: Group; groupKind: GroupKind } | { kind: 'plan'; plan?: Plan } | null;

function Section({ id, title, action, children }: { id: string; title: string; action?: ReactNode; children: ReactNode }) {
  return (
    <Box component="section" aria-labelledby={id} sx={{ mb: 4 }}>
      <Stack direction="row" sx={{ alignItems: 'center', justifyContent: 'space-between', flexWrap: 'wrap', gap: 1, mb: 1 }}>
        <Typography id={id} variant="h6" component="h2">{title}</Typography>
        {action}
      </Stack>
      {children}
    </Box>
  );
}

const cards = { display: 'grid', gap: 2, gridTemplateColumns: { xs: 'minmax(0, 1fr)', md: 'repeat(2, minmax(0, 1fr))' } } as const;

/** Delete after a confirmation; a refusal (409: a rule uses the group) is shown in the dialog. */
function ConfirmDelete({ what, path, onClose }: { what: string; path: string | null; onClose: () => void }) {
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const remove = async () => {
    const done = await run(() => api(path!, { method: 'DELETE' }), `${what} deleted`);
    await queryClient.invalidateQueries({ queryKey: ['lead-flow'] });
    if (done !== undefined) onClose();
  };
  return (
    <Dialog open={!!path} onClose={onClose} aria-labelledby="lead-flow-delete">
      <DialogTitle id="lead-flow-delete">Delete {what}?</DialogTitle>
      <DialogContent><DialogContentText>This cannot be undone.</DialogContentText></DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Cancel</Button>
        <Button color="error" variant="contained" disabled={busy} onClick={() => void remove()}>Delete</Button>
      </DialogActions>
    </Dialog>
  );
}

function RuleTarget({ rule, groups }: { rule: Rule; groups: Group[] }) {
  const user = useUserName(rule.assign_user_id, groups);
  const group = groups.find((g) => g.id === rule.assign_group_id);
  return <>{rule.assign_user_id ? user : group ? `${group.name} (${KIND_LABELS[group.kind]})` : 'a group'}</>;
}

function RuleCard({ rule, index, count, groups, plans, projects, canManage, onEdit, onDelete, onMove }: {
  rule: Rule; index: number; count: number; groups: Group[]; plans: Plan[]; projects: { id: string; name: string }[]; canManage: boolean;
  onEdit: () => void; onDelete: () => void; onMove: (by: -1 | 1) => void;
}) {
  const project = projects.find((p) => p.id === rule.project_id);
  const conditions = rule.is_default ? ['every other lead'] : [
    rule.channel ? `arrived by ${words(rule.channel)}` : null, rule.source ? `source ${rule.source}` : null,
    rule.project_id ? `interested in ${project?.name ?? 'a project'}` : null,
  ].filter(Boolean);
  const plan = plans.find((p) => p.id === rule.action_plan_id);
  return (
    <Card component="li" variant="outlined" aria-label={`Rule ${index + 1}: ${rule.name}`} data-rule-id={rule.id}>
      <CardContent sx={{ pb: 1 }}>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
          <Typography variant="subtitle1" component="h3" sx={{ fontWeight: 600 }}>{index + 1}. {rule.name}</Typography>
          {rule.is_default ? <Chip size="small" label="Default" /> : null}
        </Stack>
        <Typography variant="body2">When: {conditions.join(', ') || 'any new lead'}</Typography>
        <Typography variant="body2">Goes to: <RuleTarget rule={rule} groups={groups} /></Typography>
        {plan ? <Typography variant="body2">Plan: {plan.name}</Typography> : null}
        {rule.speed_limit_minutes ? <Typography variant="body2">First contact within {rule.speed_limit_minutes} working minutes, then {rule.on_speed_limit === 'reassign' ? 'remind and reassign' : 'remind'}</Typography> : null}
      </CardContent>
      {canManage ? (
        <CardActions sx={{ flexWrap: 'wrap' }}>
          {rule.is_default ? null : (
            <>
              <IconButton size="small" aria-label={`Move ${rule.name} up`} disabled={index === 0} onClick={() => onMove(-1)}><ArrowUpwardIcon fontSize="small" /></IconButton>
              <IconButton size="small" aria-label={`Move ${rule.name} down`} disabled={index >= count - 1} onClick={() => onMove(1)}><ArrowDownwardIcon fontSize="small" /></IconButton>
            </>
          )}
          <Button size="small" onClick={onEdit} aria-label={`Edit rule ${rule.name}`}>Edit</Button>
          <Button size="small" color="error" onClick={onDelete} aria-label={`Delete rule ${rule.name}`}>Delete</Button>
        </CardActions>
      ) : null}
    </Card>
  );
}

function GroupCard({ group, groups, canManage, onEdit, onDelete }: { group: Group; groups: Group[]; canManage: boolean; onEdit: () => void; onDelete: () => void }) {
  const fallbackUser = useUserName(group.fallback_user_id, groups);
  const fallbackGroup = groups.find((g) => g.id === group.fallback_group_id);
  const members = [...group.members].sort((a, b) => a.position - b.position);
  return (
    <Card component="li" variant="outlined" aria-label={group.name} data-group-id={group.id}>
      <CardContent sx={{ pb: 1 }}>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
          <Typography variant="subtitle1" component="h3" sx={{ fontWeight: 600 }}>{group.name}</Typography>
          <Chip size="small" label={KIND_LABELS[group.kind]} />
        </Stack>
        <Typography variant="body2">
          {group.waiting} lead{group.waiting === 1 ? '' : 's'} waiting
          {group.kind === 'first_to_claim' && group.claim_minutes ? ` · ${group.claim_minutes} minutes to claim` : ''}
        </Typography>
        {group.kind !== 'pond' ? (
          <Typography variant="body2">Fallback: {fallbackUser ?? (fallbackGroup ? `${fallbackGroup.name} (${KIND_LABELS[fallbackGroup.kind]})` : 'none')}</Typography>
        ) : null}
        <Box component="ol" aria-label={`Members of ${group.name}`} sx={{ pl: 3, my: 1 }}>
          {members.map((member) => (
            <li key={member.user_id}>
              <Stack direction="row" spacing={0.5} sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
                <Typography variant="body2" component="span">{member.name}</Typography>
                {group.kind === 'round_robin' && group.next_user_id === member.user_id ? <Chip size="small" color="primary" label="Next" /> : null}
                {/* Dark text on a light orange: the badge keeps 4.5:1 contrast, which MUI's warning chip does not. */}
                {member.away ? <Chip size="small" label="Away" sx={{ bgcolor: '#fff3e0', color: '#8a3200', border: 1, borderColor: '#e65100' }} /> : null}
                {!member.away && !member.eligible ? <Chip size="small" label="Not eligible" /> : null}
              </Stack>
            </li>
          ))}
        </Box>
        {!members.length ? <Typography variant="body2" color="text.secondary">No member.</Typography> : null}
      </CardContent>
      {canManage ? (
        <CardActions>
          <Button size="small" onClick={onEdit} aria-label={`Edit ${group.name}`}>Edit</Button>
          <Button size="small" color="error" onClick={onDelete} aria-label={`Delete ${group.name}`}>Delete</Button>
        </CardActions>
      ) : null}
    </Card>
  );
}

function PlanCard({ plan, canManage, onEdit, onDelete }: { plan: Plan; canManage: boolean; onEdit: () => void; onDelete: () => void }) {
  const steps = [...plan.steps].sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
  return (
    <Card component="li" variant="outlined" aria-label={plan.name}>
      <CardContent sx={{ pb: 1 }}>
        <Typography variant="subtitle1" component="h3" sx={{ fontWeight: 600 }}>{plan.name}</Typography>
        <Typography variant="body2">Runs while {plan.active_statuses.join(', ')} · running on {plan.running} lead{plan.running === 1 ? '' : 's'}</Typography>
        <Box component="ol" aria-label={`Steps of ${plan.name}`} sx={{ pl: 3, my: 1 }}>
          {steps.map((step, i) => (
            <li key={step.id ?? i}>
              <Typography variant="body2">
                {words(step.kind)}: {step.title} — {step.offset_amount === 0 ? 'at once' : `after ${step.offset_amount} ${step.offset_amount === 1 ? step.offset_unit.replace(/s$/, '') : step.offset_unit}`}
              </Typography>
            </li>
          ))}
        </Box>
      </CardContent>
      {canManage ? (
        <CardActions>
          <Button size="small" onClick={onEdit} aria-label={`Edit plan ${plan.name}`}>Edit</Button>
          <Button size="small" color="error" onClick={onDelete} aria-label={`Delete plan ${plan.name}`}>Delete</Button>
        </CardActions>
      ) : null}
    </Card>
  );
}

const listSx = { listStyle: 'none', p: 0, m: 0, ...cards } as const;

export default function LeadFlowSettings() {
  useAuthenticated();
  const { canManage } = useCanManageLeadFlow();
  const rules = useRules();
  const groups = useGroups();
  const plans = usePlans();
  const projects = useProjects();
  const { run } = useApiAction();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<Editing>(null);
  const [deleting, setDeleting] = useState<{ what: string; path: string } | null>(null);
  const close = () => setEditing(null);
  const allGroups = groups.data ?? [];
  const ordered = (rules.data ?? []).filter((r) => !r.is_default);
  const error = rules.error ?? groups.error ?? plans.error;

  // Moving a rule swaps its position with its neighbour's. Two rules never share a position (the API answers 409), so
  // the rule steps aside to a free one first.
  const move = async (rule: Rule, by: -1 | 1) => {
    const neighbour = ordered[ordered.indexOf(rule) + by];
    if (!neighbour) return;
    const free = Math.max(...(rules.data ?? []).map((r) => r.position)) + 1;
    const place = (id: string, position: number) => api(`/api/crm/lead-flow/rules/${id}`, { method: 'PATCH', body: { position } });
    await run(async () => {
      await place(rule.id, free);
      await place(neighbour.id, rule.position);
      await place(rule.id, neighbour.position);
    }, `${rule.name} moved ${by < 0 ? 'up' : 'down'}`);
    await queryClient.invalidateQueries({ queryKey: ['lead-flow'] });
  };

  const groupCards = (kinds: GroupKind[]) => allGroups.filter((g) => kinds.includes(g.kind)).map((group) => (
    <GroupCard key={group.id} group={group} groups={allGroups} canManage={canManage}
      onEdit={() => setEditing({ kind: 'group', group, groupKind: group.kind })}
      onDelete={() => setDeleting({ what: group.name, path: `/api/crm/lead-flow/groups/${group.id}` })} />
  ));
  const add = (label: string, open: () => void) => (canManage ? <Button startIcon={<AddIcon />} onClick={open}>{label}</Button> : null);
  return (
    <Box sx={{ mt: 2, contain: 'inline-size' }}>
      <Title title="Lead flow" />
      <Typography variant="h5" component="h1" sx={{ mb: 1 }}>Lead flow</Typography>
      <Typography variant="body2" sx={{ mb: 2 }}>
        Who a new lead without an assignee goes to: the first rule that matches it decides, the default rule takes the rest.
      </Typography>
      {canManage ? null : <Alert severity="info" sx={{ mb: 2 }}>Administrators and department managers change these settings; you can read them.</Alert>}
      {error ? <Alert severity="error" sx={{ mb: 2 }}>{(error as Error).message}</Alert> : null}

      <Section id="lead-flow-rules" title="Rules" action={add('Add rule', () => setEditing({ kind: 'rule' }))}>
        {!rules.data ? <Skeleton height={120} /> : !rules.data.length ? <Typography variant="body2">No rules: new leads stay unassigned.</Typography> : (
          <Box component="ol" aria-label="Rules, in the order they are tried" sx={{ ...listSx, gridTemplateColumns: 'minmax(0, 1fr)' }}>
            {rules.data.map((rule) => (
              <RuleCard key={rule.id} rule={rule} index={rules.data.indexOf(rule)} count={ordered.length} groups={allGroups} plans={plans.data ?? []} projects={projects}
                canManage={canManage} onEdit={() => setEditing({ kind: 'rule', rule })} onMove={(by) => void move(rule, by)}
                onDelete={() => setDeleting({ what: `rule ${rule.name}`, path: `/api/crm/lead-flow/rules/${rule.id}` })} />
            ))}
          </Box>
        )}
      </Section>

      <Section id="lead-flow-groups" title="Groups" action={add('Add group', () => setEditing({ kind: 'group', groupKind: 'round_robin' }))}>
        {!groups.data ? <Skeleton height={120} /> : (
          groupCards(['round_robin', 'first_to_claim']).length
            ? <Box component="ul" aria-label="Groups" sx={listSx}>{groupCards(['round_robin', 'first_to_claim'])}</Box>
            : <Typography variant="body2">No groups yet.</Typography>
        )}
      </Section>

      <Section id="lead-flow-ponds" title="Ponds" action={add('Add pond', () => setEditing({ kind: 'group', groupKind: 'pond' }))}>
        <Typography variant="body2" sx={{ mb: 1 }}>Leads in a pond wait until one of its members claims them.</Typography>
        {!groups.data ? <Skeleton height={80} /> : (
          groupCards(['pond']).length
            ? <Box component="ul" aria-label="Ponds" sx={listSx}>{groupCards(['pond'])}</Box>
            : <Typography variant="body2">No ponds yet.</Typography>
        )}
      </Section>

      <Section id="lead-flow-plans" title="Action plans" action={add('Add plan', () => setEditing({ kind: 'plan' }))}>
        {!plans.data ? <Skeleton height={120} /> : !plans.data.length ? <Typography variant="body2">No action plans yet.</Typography> : (
          <Box component="ul" aria-label="Action plans" sx={listSx}>
            {plans.data.map((plan) => (
              <PlanCard key={plan.id} plan={plan} canManage={canManage} onEdit={() => setEditing({ kind: 'plan', plan })}
                onDelete={() => setDeleting({ what: `plan ${plan.name}`, path: `/api/crm/lead-flow/plans/${plan.id}` })} />
            ))}
          </Box>
        )}
      </Section>

      {/* Each form mounts afresh for what it edits: its fields start from that record. */}
      {editing?.kind === 'rule' ? <RuleDialog key={editing.rule?.id ?? 'new'} rule={editing.rule} open onClose={close} /> : null}
      {editing?.kind === 'group' ? <GroupDialog key={editing.group?.id ?? `new-${editing.groupKind}`} group={editing.group} kind={editing.groupKind} open onClose={close} /> : null}
      {editing?.kind === 'plan' ? <PlanDialog key={editing.plan?.id ?? 'new'} plan={editing.plan} open onClose={close} /> : null}
      <ConfirmDelete what={deleting?.what ?? ''} path={deleting?.path ?? null} onClose={() => setDeleting(null)} />
    </Box>
  );
}
