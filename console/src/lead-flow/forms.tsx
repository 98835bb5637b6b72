import ArrowDownwardIcon from '@mui/icons-material/ArrowDownward';
import ArrowUpwardIcon from '@mui/icons-material/ArrowUpward';
import DeleteIcon from '@mui/icons-material/Delete';
import {
  Alert, Autocomplete, Box, Button, Checkbox, Dialog, DialogActions, DialogContent, DialogTitle, FormControlLabel, IconButton, List, ListItem, ListItemText,
  MenuItem, Stack, TextField, Typography,
} from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { useNotify } from 'react-admin';
import { api } from '../api/http';
import { LEAD_SOURCES, LEAD_STATUSES } from '../workspace/shared';
import { useLeadFlowPeople } from './access';
import { fieldProblem, type Problems, problemsOf, useGroups, usePlans, useProjects, useUserName } from './settingsData';
import {
  CHANNELS, GROUP_KINDS, type Group, type GroupKind, KIND_LABELS, OFFSET_UNITS, type Plan, type Rule, SPEED_ACTIONS, type Step, STEP_KINDS, words,
} from './types';

// The forms of the lead-flow settings, each in a dialog: a group (or pond), a rule, an action plan. Each sends its
// whole input; the API's 400 messages show under their fields, anything else (409, 403) above the form.

type Option = { id: string; name: string };

/** A person leads can go to (a crm writer), chosen from the lead-flow people: no read access to the users list needed. */
function PersonPicker(props: { label: string; value: Option | null; onChange: (user: Option | null) => void; error?: boolean; helperText?: string }) {
  const people = useLeadFlowPeople();
  const options: Option[] = (people.data?.data ?? []).map((person) => ({ id: person.id, name: person.department ? `${person.name} (${person.department})` : person.name }));
  const value = props.value && (options.find((option) => option.id === props.value!.id) ?? props.value);
  return (
    <Autocomplete size="small" fullWidth options={options} loading={people.isLoading} value={value}
      onChange={(_, next) => props.onChange(next && { id: next.id, name: next.name })}
      isOptionEqualToValue={(a, b) => a.id === b.id} getOptionLabel={(option) => option.name}
      renderInput={(params) => <TextField {...params} label={props.label} error={props.error} helperText={props.helperText} />} />
  );
}

/** Saving a form: on success the settings are read again and the dialog closes; on failure its problems are kept. */
function useSave(onDone: () => void) {
  const notify = useNotify();
  const queryClient = useQueryClient();
  const [problems, setProblems] = useState<Problems>({ fields: {} });
  const [busy, setBusy] = useState(false);
  const save = async (call: () => Promise<unknown>, success: string) => {
    setBusy(true);
    try {
      await call();
      setProblems({ fields: {} });
      notify(success, { type: 'success' });
      await queryClient.invalidateQueries({ queryKey: ['lead-flow'] });
      onDone();
    } catch (error) {
      setProblems(problemsOf(error));
    } finally {
      setBusy(false);
    }
  };
  return { save, problems, busy, reset: () => setProblems({ fields: {} }) };
}

/** Problems the API named on no field shown here: they are above the form. */
function Unplaced({ problems, placed }: { problems: Problems; placed: string[] }) {
  const rest = Object.entries(problems.fields).filter(([key]) => !placed.some((field) => key === field || key.startsWith(`${field}.`) || key.startsWith(`${field}/`)));
  const text = [problems.form, ...rest.map(([key, message]) => `${words(key)}: ${message}`)].filter(Boolean).join(' ');
  return text ? <Alert severity="error" sx={{ mb: 2 }}>{text}</Alert> : null;
}

function FormDialog({ title, open, onClose, onSubmit, busy, children }: { title: string; open: boolean; onClose: () => void; onSubmit: () => void; busy: boolean; children: ReactNode }) {
  const titleId = useId();
  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth="sm" aria-labelledby={titleId}>
      <Box component="form" noValidate onSubmit={(event: FormEvent) => { event.preventDefault(); onSubmit(); }}>
        <DialogTitle id={titleId}>{title}</DialogTitle>
        <DialogContent>{children}</DialogContent>
        <DialogActions>
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="contained" disabled={busy}>Save</Button>
        </DialogActions>
      </Box>
    </Dialog>
  );
}

const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));

/** A list in order with up/down and remove buttons for each entry (keyboard and pointer alike). */
function OrderedList<T>({ items, label, text, onChange }: { items: T[]; label: string; text: (item: T) => ReactNode; onChange: (next: T[]) => void }) {
  const move = (from: number, to: number) => {
    const next = [...items];
    const [item] = next.splice(from, 1);
    next.splice(to, 0, item);
    onChange(next);
  };
  return (
    <List dense aria-label={label} sx={{ py: 0 }}>
      {items.map((item, i) => {
        const name = String(typeof text(item) === 'string' ? text(item) : i + 1);
        return (
          <ListItem key={i} disableGutters secondaryAction={
            <>
              <IconButton size="small" aria-label={`Move ${name} up`} disabled={i === 0} onClick={() => move(i, i - 1)}><ArrowUpwardIcon fontSize="small" /></IconButton>
              <IconButton size="small" aria-label={`Move ${name} down`} disabled={i === items.length - 1} onClick={() => move(i, i + 1)}><ArrowDownwardIcon fontSize="small" /></IconButton>
              <IconButton size="small" aria-label={`Remove ${name}`} onClick={() => onChange(items.filter((_, j) => j !== i))}><DeleteIcon fontSize="small" /></IconButton>
            </>
          } sx={{ pr: 14 }}>
            <ListItemText primary={<>{i + 1}. {text(item)}</>} />
          </ListItem>
        );
      })}
    </List>
  );
}

export function GroupDialog({ group, kind, open, onClose }: { group?: Group; kind: GroupKind; open: boolean; onClose: () => void }) {
  const groups = useGroups().data ?? [];
  const [name, setName] = useState(group?.name ?? '');
  const [groupKind, setKind] = useState<GroupKind>(group?.kind ?? kind);
  const [claimMinutes, setClaimMinutes] = useState(group?.claim_minutes != null ? String(group.claim_minutes) : '');
  const [members, setMembers] = useState<Option[]>(group?.members.slice().sort((a, b) => a.position - b.position).map((m) => ({ id: m.user_id, name: m.name })) ?? []);
  const fallbackUserName = useUserName(group?.fallback_user_id ?? null, groups);
  const [fallbackUser, setFallbackUser] = useState<Option | null>(group?.fallback_user_id ? { id: group.fallback_user_id, name: fallbackUserName ?? '' } : null);
  const [fallbackGroup, setFallbackGroup] = useState(group?.fallback_group_id ?? '');
  const [adding, setAdding] = useState<Option | null>(null);
  const { save, problems, busy } = useSave(onClose);
  const pond = groupKind === 'pond';
  const claiming = groupKind === 'first_to_claim';
  const submit = () => {
    const body = {
      name, kind: groupKind, members: members.map((m) => m.id),
      claim_minutes: claiming ? numberOrNull(claimMinutes) : null,
      fallback_user_id: pond ? null : fallbackUser?.id ?? null,
      fallback_group_id: pond || fallbackUser ? null : fallbackGroup || null,
    };
    const noun = pond ? 'Pond' : 'Group';
    void save(() => (group ? api(`/api/crm/lead-flow/groups/${group.id}`, { method: 'PATCH', body }) : api('/api/crm/lead-flow/groups', { method: 'POST', body })),
      group ? `${noun} ${name} saved` : `${noun} ${name} created`);
  };
  const problem = (field: string) => fieldProblem(problems, field);
  return (
    <FormDialog title={group ? `Edit ${group.name}` : pond ? 'New pond' : 'New group'} open={open} onClose={onClose} onSubmit={submit} busy={busy}>
      <Unplaced problems={problems} placed={['name', 'kind', 'claim_minutes', 'members', 'fallback_user_id', 'fallback_group_id']} />
      <Stack spacing={2} sx={{ pt: 1 }}>
        <TextField label="Name" required value={name} onChange={(event) => setName(event.target.value)} error={!!problem('name')} helperText={problem('name')} />
        {pond ? null : (
          <TextField select label="How leads are handed out" value={groupKind} onChange={(event) => setKind(event.target.value as GroupKind)} error={!!problem('kind')}
            helperText={problem('kind') ?? (claiming ? 'Offered to every member at once; the first to claim gets it' : 'Each member in turn, skipping whoever is away')}>
            {GROUP_KINDS.filter((k) => k !== 'pond').map((k) => <MenuItem key={k} value={k}>{KIND_LABELS[k]}</MenuItem>)}
          </TextField>
        )}
        {claiming ? (
          <TextField label="Minutes to claim" type="number" required value={claimMinutes} onChange={(event) => setClaimMinutes(event.target.value)}
            slotProps={{ htmlInput: { min: 1, max: 30 } }} error={!!problem('claim_minutes')} helperText={problem('claim_minutes') ?? '1 to 30; then the lead goes to the fallback'} />
        ) : null}
        <Box>
          <Typography variant="subtitle2" component="h3">Members{pond ? '' : ', in turn order'}</Typography>
          {members.length ? <OrderedList items={members} label="Members" text={(m) => m.name} onChange={setMembers} /> : <Typography variant="body2" color="text.secondary">No member yet.</Typography>}
          <Stack direction="row" spacing={1} sx={{ alignItems: 'flex-start', mt: 1 }}>
            <Box sx={{ flex: 1 }}>
              <PersonPicker label="Add a member" value={adding} onChange={setAdding} error={!!problem('members')} helperText={problem('members')} />
            </Box>
            <Button disabled={!adding || members.some((m) => m.id === adding.id)} onClick={() => { if (adding) setMembers([...members, adding]); setAdding(null); }}>Add</Button>
          </Stack>
        </Box>
        {pond ? null : (
          <>
            <PersonPicker label="Fallback person" value={fallbackUser && !fallbackUser.name ? { ...fallbackUser, name: fallbackUserName ?? '' } : fallbackUser} onChange={(user) => { setFallbackUser(user); if (user) setFallbackGroup(''); }}
              error={!!problem('fallback_user_id')} helperText={problem('fallback_user_id') ?? 'Who gets the lead when nobody takes it in time (or pick a group below)'} />
            <TextField select label="Fallback group" value={fallbackGroup} onChange={(event) => { setFallbackGroup(event.target.value); if (event.target.value) setFallbackUser(null); }}
              error={!!problem('fallback_group_id')} helperText={problem('fallback_group_id') ?? 'Another group or a pond'}>
              <MenuItem value="">None</MenuItem>
              {groups.filter((g) => g.id !== group?.id).map((g) => <MenuItem key={g.id} value={g.id}>{g.name} ({KIND_LABELS[g.kind]})</MenuItem>)}
            </TextField>
          </>
        )}
      </Stack>
    </FormDialog>
  );
}

export function RuleDialog({ rule, open, onClose }: { rule?: Rule; open: boolean; onClose: () => void }) {
  const groups = useGroups().data ?? [];
  const plans = usePlans().data ?? [];
  const projects = useProjects();
  const [name, setName] = useState(rule?.name ?? '');
  const [isDefault, setDefault] = useState(rule?.is_default ?? false);
  const [channel, setChannel] = useState(rule?.channel ?? '');
  const [source, setSource] = useState(rule?.source ?? '');
  const [projectId, setProjectId] = useState(rule?.project_id ?? '');
  const [target, setTarget] = useState<'user' | 'group'>(rule?.assign_user_id ? 'user' : 'group');
  const userName = useUserName(rule?.assign_user_id ?? null, groups);
  const [user, setUser] = useState<Option | null>(rule?.assign_user_id ? { id: rule.assign_user_id, name: userName ?? '' } : null);
  const [groupId, setGroupId] = useState(rule?.assign_group_id ?? '');
  const [planId, setPlanId] = useState(rule?.action_plan_id ?? '');
  const [limit, setLimit] = useState(rule?.speed_limit_minutes != null ? String(rule.speed_limit_minutes) : '');
  const [onLimit, setOnLimit] = useState<string>(rule?.on_speed_limit ?? 'remind');
  const { save, problems, busy } = useSave(onClose);
  const problem = (field: string) => fieldProblem(problems, field);
  // A new rule goes last (before the default); Move up and down place it.
  const submit = () => {
    const body = {
      name, is_default: isDefault,
      channel: isDefault ? null : channel || null, source: isDefault ? null : source || null, project_id: isDefault ? null : projectId || null,
      assign_user_id: target === 'user' ? user?.id ?? null : null, assign_group_id: target === 'group' ? groupId || null : null,
      action_plan_id: planId || null, speed_limit_minutes: numberOrNull(limit), on_speed_limit: onLimit,
    };
    void save(() => (rule ? api(`/api/crm/lead-flow/rules/${rule.id}`, { method: 'PATCH', body }) : api('/api/crm/lead-flow/rules', { method: 'POST', body })),
      rule ? `Rule ${name} saved` : `Rule ${name} created`);
  };
  const select = (label: string, value: string, set: (v: string) => void, field: string, options: Option[], empty: string, helper?: string) => (
    <TextField select label={label} value={value} onChange={(event) => set(event.target.value)} error={!!problem(field)} helperText={problem(field) ?? helper}>
      <MenuItem value="">{empty}</MenuItem>
      {options.map((o) => <MenuItem key={o.id} value={o.id}>{o.name}</MenuItem>)}
    </TextField>
  );
  return (
    <FormDialog title={rule ? `Edit rule ${rule.name}` : 'New rule'} open={open} onClose={onClose} onSubmit={submit} busy={busy}>
      <Unplaced problems={problems} placed={['name', 'is_default', 'channel', 'source', 'project_id', 'assign_user_id', 'assign_group_id', 'action_plan_id', 'speed_limit_minutes', 'on_speed_limit']} />
      <Stack spacing={2} sx={{ pt: 1 }}>
        <TextField label="Name" required value={name} onChange={(event) => setName(event.target.value)} error={!!problem('name')} helperText={problem('name')} />
        <FormControlLabel control={<Checkbox checked={isDefault} onChange={(event) => setDefault(event.target.checked)} />} label="Default rule: every lead no other rule takes" />
        {problem('is_default') ? <Typography variant="caption" color="error">{problem('is_default')}</Typography> : null}
        {isDefault ? null : (
          <>
            <Typography variant="subtitle2" component="h3">When a new lead without an assignee…</Typography>
            {select('Arrived by', channel, setChannel, 'channel', CHANNELS.map((c) => ({ id: c, name: words(c) })), 'Any way')}
            {select('Source', source, setSource, 'source', LEAD_SOURCES.map((s) => ({ id: s, name: s })), 'Any source')}
            {select('Project of interest', projectId, setProjectId, 'project_id', projects, 'Any project', 'A lead whose interest names the project')}
          </>
        )}
        <Typography variant="subtitle2" component="h3">…it goes to</Typography>
        <TextField select label="Goes to" value={target} onChange={(event) => setTarget(event.target.value as 'user' | 'group')}>
          <MenuItem value="group">A group or pond</MenuItem>
          <MenuItem value="user">One person</MenuItem>
        </TextField>
        {target === 'user'
          ? <PersonPicker label="Person" value={user && !user.name ? { ...user, name: userName ?? '' } : user} onChange={setUser} error={!!problem('assign_user_id')} helperText={problem('assign_user_id')} />
          : select('Group', groupId, setGroupId, 'assign_group_id', groups.map((g) => ({ id: g.id, name: `${g.name} (${KIND_LABELS[g.kind]})` })), 'None')}
        {select('Action plan', planId, setPlanId, 'action_plan_id', plans, 'None', 'Follow-ups started when the lead is assigned')}
        <TextField label="Speed-to-lead limit (working minutes)" type="number" value={limit} onChange={(event) => setLimit(event.target.value)}
          slotProps={{ htmlInput: { min: 1 } }} error={!!problem('speed_limit_minutes')} helperText={problem('speed_limit_minutes') ?? 'Empty: no limit'} />
        {limit ? (
          <TextField select label="When the limit passes" value={onLimit} onChange={(event) => setOnLimit(event.target.value)} error={!!problem('on_speed_limit')}
            helperText={problem('on_speed_limit') ?? 'Remind the assignee, then their manager; or also hand the lead on'}>
            {SPEED_ACTIONS.map((a) => <MenuItem key={a} value={a}>{a === 'remind' ? 'Remind' : 'Remind, then reassign'}</MenuItem>)}
          </TextField>
        ) : null}
      </Stack>
    </FormDialog>
  );
}

const emptyStep = (): Step => ({ kind: 'call', title: '', offset_amount: 0, offset_unit: 'hours' });

export function PlanDialog({ plan, open, onClose }: { plan?: Plan; open: boolean; onClose: () => void }) {
  const [name, setName] = useState(plan?.name ?? '');
  const [statuses, setStatuses] = useState<string[]>(plan?.active_statuses ?? ['new', 'contacted', 'qualified']);
  const [steps, setSteps] = useState<Step[]>(plan?.steps.slice().sort((a, b) => (a.position ?? 0) - (b.position ?? 0)) ?? [emptyStep()]);
  const { save, problems, busy } = useSave(onClose);
  const problem = (field: string) => fieldProblem(problems, field);
  const stepProblem = (i: number, field: string) => problems.fields[`steps.${i}.${field}`] ?? problems.fields[`steps/${i}/${field}`];
  const setStep = (i: number, change: Partial<Step>) => setSteps(steps.map((step, j) => (j === i ? { ...step, ...change } : step)));
  const submit = () => {
    const body = { name, active_statuses: statuses, steps: steps.map(({ kind, title, offset_amount, offset_unit }) => ({ kind, title, offset_amount: Number(offset_amount), offset_unit })) };
    void save(() => (plan ? api(`/api/crm/lead-flow/plans/${plan.id}`, { method: 'PATCH', body }) : api('/api/crm/lead-flow/plans', { method: 'POST', body })),
      plan ? `Plan ${name} saved` : `Plan ${name} created`);
  };
  const stepsAlone = Object.entries(problems.fields).find(([key]) => key === 'steps')?.[1];
  return (
    <FormDialog title={plan ? `Edit plan ${plan.name}` : 'New action plan'} open={open} onClose={onClose} onSubmit={submit} busy={busy}>
      <Unplaced problems={problems} placed={['name', 'active_statuses', 'steps']} />
      <Stack spacing={2} sx={{ pt: 1 }}>
        <TextField label="Name" required value={name} onChange={(event) => setName(event.target.value)} error={!!problem('name')} helperText={problem('name')} />
        <TextField select label="Runs while the lead is" value={statuses} onChange={(event) => setStatuses(typeof event.target.value === 'string' ? event.target.value.split(',') : event.target.value)}
          slotProps={{ select: { multiple: true } }} error={!!problem('active_statuses')} helperText={problem('active_statuses') ?? 'It stops when the lead moves to another status'}>
          {LEAD_STATUSES.map((status) => <MenuItem key={status} value={status}>{status}</MenuItem>)}
        </TextField>
        <Typography variant="subtitle2" component="h3">Steps, counted from when the plan starts (working time)</Typography>
        {stepsAlone ? <Typography variant="caption" color="error">{stepsAlone}</Typography> : null}
        {steps.map((step, i) => (
          <Box key={i} role="group" aria-label={`Step ${i + 1}`} sx={{ display: 'grid', gap: 1, gridTemplateColumns: { xs: '1fr 1fr', sm: '130px minmax(0, 1fr) 90px 110px auto' }, alignItems: 'start' }}>
            <TextField select size="small" label={`Step ${i + 1}`} value={step.kind} onChange={(event) => setStep(i, { kind: event.target.value as Step['kind'] })} error={!!stepProblem(i, 'kind')} helperText={stepProblem(i, 'kind')}>
              {STEP_KINDS.map((k) => <MenuItem key={k} value={k}>{words(k)}</MenuItem>)}
            </TextField>
            <TextField size="small" label="What to do" value={step.title} onChange={(event) => setStep(i, { title: event.target.value })} error={!!stepProblem(i, 'title')} helperText={stepProblem(i, 'title')} />
            <TextField size="small" label="After" type="number" value={step.offset_amount} onChange={(event) => setStep(i, { offset_amount: event.target.value as unknown as number })}
              slotProps={{ htmlInput: { min: 0 } }} error={!!stepProblem(i, 'offset_amount')} helperText={stepProblem(i, 'offset_amount')} />
            <TextField select size="small" label="Unit" value={step.offset_unit} onChange={(event) => setStep(i, { offset_unit: event.target.value as Step['offset_unit'] })} error={!!stepProblem(i, 'offset_unit')} helperText={stepProblem(i, 'offset_unit')}>
              {OFFSET_UNITS.map((u) => <MenuItem key={u} value={u}>{u}</MenuItem>)}
            </TextField>
            <IconButton aria-label={`Remove step ${i + 1}`} onClick={() => setSteps(steps.filter((_, j) => j !== i))}><DeleteIcon /></IconButton>
          </Box>
        ))}
        <Box><Button onClick={() => setSteps([...steps, emptyStep()])}>Add step</Button></Box>
      </Stack>
    </FormDialog>
  );
}
