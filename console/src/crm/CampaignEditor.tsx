import { Box, Button, Card, CardContent, LinearProgress, Stack, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import {
  Confirm, Create, DeleteButton, Edit, EditButton, required, SaveButton, Show, SimpleForm, SimpleShowLayout, TextArrayInput,
  TextInput, Toolbar, TopToolbar, useGetOne, usePermissions, useRecordContext, useRefresh,
} from 'react-admin';
import { useWatch } from 'react-hook-form';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { specOf } from '../resources/declarations';
import { HistoryPanel } from '../shared/HistoryPanel';
import { FieldGrid } from '../shared/FieldGrid';
import { useApiAction } from '../shared/useApiAction';
import { MarkdownPreview } from './MarkdownPreview';

type Deliveries = { total: number; sent: number; failed: number; pending: number };
type Campaign = { id: string; name: string; subject: string; content: string; recipients: string[]; status: 'draft' | 'scheduled' | 'sent'; scheduled_at: string | null; sent_at: string | null; deliveries: Deliveries };

const spec = specOf('campaigns');

/** The content box and, beside it on wide screens, what the e-mail will look like. */
function ContentWithPreview() {
  const content = useWatch({ name: 'content' }) as string | undefined;
  return (
    <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', md: '1fr 1fr' }, width: '100%' }}>
      <TextInput source="content" label="Content (Markdown)" multiline minRows={12} validate={required()} helperText="Markdown: **bold**, _italic_, [link](https://…), # heading" fullWidth />
      <Box>
        <Typography variant="caption" component="p" color="text.secondary">Preview</Typography>
        <MarkdownPreview markdown={content ?? ''} />
      </Box>
    </Box>
  );
}

function CampaignForm() {
  return (
    <SimpleForm toolbar={<Toolbar><SaveButton label="Save" /></Toolbar>} warnWhenUnsavedChanges>
      <Box sx={{ width: '100%', maxWidth: 1100 }}>
        <TextInput source="name" label="Name" validate={required()} fullWidth helperText={false} />
        <TextInput source="subject" label="Subject" validate={required()} fullWidth helperText={false} />
        <TextArrayInput source="recipients" label="Recipients" helperText='"all" (every subscriber) or e-mail addresses; press Enter after each' fullWidth />
        <ContentWithPreview />
      </Box>
    </SimpleForm>
  );
}

export function CampaignCreate() {
  return (
    <Create title="Create campaign" redirect="show" record={{ recipients: ['all'] }}>
      <CampaignForm />
    </Create>
  );
}

const EditTitle = () => <>Edit campaign: {useRecordContext()?.name}</>;

export function CampaignEdit() {
  return (
    <Edit title={<EditTitle />} mutationMode="pessimistic" redirect="show">
      <CampaignForm />
    </Edit>
  );
}

/** Delivery counts of a sent campaign, polled while any are pending. */
function DeliveryProgress({ campaign }: { campaign: Campaign }) {
  const live = useGetOne<Campaign>('campaigns', { id: campaign.id }, {
    // While anything is pending, while scheduled, and in the first minute after sending (the job may not have
    // written its deliveries yet); twice a second in the first seconds after sending (a small list is done by then).
    refetchInterval: (query) => {
      const data = query.state.data;
      const sinceSent = data?.status === 'sent' && data.sent_at ? Date.now() - Date.parse(data.sent_at) : Infinity;
      const justSent = sinceSent < 60_000 && !data?.deliveries?.total;
      if (!((data?.deliveries?.pending ?? 0) > 0 || data?.status === 'scheduled' || justSent)) return false;
      return sinceSent < 15_000 ? 500 : 2000;
    },
  });
  const d = (live.data ?? campaign).deliveries ?? { total: 0, sent: 0, failed: 0, pending: 0 };
  const done = d.total ? Math.round(((d.sent + d.failed) / d.total) * 100) : 0;
  return (
    <Box component="section" aria-labelledby="delivery-title" sx={{ mt: 2 }}>
      <Typography id="delivery-title" variant="h6" component="h2">Delivery</Typography>
      {d.total === 0 ? <Typography variant="body2">{campaign.status === 'draft' ? 'Not sent yet.' : 'Waiting to start…'}</Typography> : (
        <>
          <LinearProgress variant="determinate" value={done} aria-label="Delivery progress" aria-valuetext={`${done}%: ${d.sent} sent, ${d.failed} failed, ${d.pending} pending`} sx={{ height: 8, borderRadius: 1, my: 1 }} />
          <Typography variant="body2" role="status">{d.sent} sent, {d.failed} failed, {d.pending} pending of {d.total} recipients</Typography>
        </>
      )}
    </Box>
  );
}

/** Send now, schedule, reschedule or unschedule (CONTRACT §8): a sent campaign can do none of these. */
function SendPanel({ campaign }: { campaign: Campaign }) {
  const refresh = useRefresh();
  const { run, busy } = useApiAction();
  const [when, setWhen] = useState('');
  const [confirming, setConfirming] = useState(false);
  const send = async (scheduledAt?: string) => {
    const body = scheduledAt ? { scheduled_at: new Date(scheduledAt).toISOString() } : {};
    await run(() => api(`/api/crm/campaigns/${campaign.id}/send`, { method: 'POST', body }), scheduledAt ? 'Campaign scheduled' : 'Campaign is being sent');
    refresh();
  };
  const unschedule = async () => {
    await run(() => api(`/api/crm/campaigns/${campaign.id}`, { method: 'PATCH', body: { status: 'draft' } }), 'Campaign unscheduled: it is a draft again');
    refresh();
  };
  return (
    <Box component="section" aria-labelledby="send-title" sx={{ mt: 2 }}>
      <Typography id="send-title" variant="h6" component="h2" gutterBottom>Send</Typography>
      {campaign.status === 'scheduled' && campaign.scheduled_at ? (
        <Typography variant="body2" sx={{ mb: 1 }}>Scheduled for {new Date(campaign.scheduled_at).toLocaleString()}.</Typography>
      ) : null}
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' } }}>
        <Button variant="contained" disabled={busy} onClick={() => setConfirming(true)}>Send now</Button>
        <TextField size="small" type="datetime-local" label="Send at" value={when} onChange={(e) => setWhen(e.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
        <Button variant="outlined" disabled={busy || !when} onClick={() => send(when)}>{campaign.status === 'scheduled' ? 'Reschedule' : 'Schedule'}</Button>
        {campaign.status === 'scheduled' ? <Button disabled={busy} onClick={unschedule}>Unschedule</Button> : null}
      </Stack>
      <Confirm isOpen={confirming} title={`Send "${campaign.name}" now?`} content="Every recipient gets it once; this cannot be undone." confirm="Send now" onConfirm={() => { setConfirming(false); void send(); }} onClose={() => setConfirming(false)} />
    </Box>
  );
}

function ShowActions() {
  const campaign = useRecordContext<Campaign>();
  if (!campaign || campaign.status === 'sent') return <TopToolbar />;
  return (
    <TopToolbar>
      <EditButton label="Edit" />
      <DeleteButton mutationMode="pessimistic" label="Delete" confirmTitle={`Delete campaign "${campaign.name}"?`} confirmContent="It goes to the trash, where it can be restored for 30 days." />
    </TopToolbar>
  );
}

function CampaignDetail() {
  const campaign = useRecordContext<Campaign>();
  const { permissions } = usePermissions<Permission[]>();
  if (!campaign) return null;
  return (
    <Card variant="outlined" sx={{ m: 2, mt: 0 }}>
      <CardContent>
        <Typography variant="caption" component="p" color="text.secondary">Preview</Typography>
        <MarkdownPreview markdown={campaign.content} label="Campaign content" />
        {campaign.status !== 'sent' && can(permissions, 'crm', 'write') ? <SendPanel campaign={campaign} /> : null}
        <DeliveryProgress campaign={campaign} />
      </CardContent>
    </Card>
  );
}

const ShowTitle = () => <>Campaign: {useRecordContext()?.name}</>;

export function CampaignShow() {
  return (
    <Show title={<ShowTitle />} actions={<ShowActions />}>
      <SimpleShowLayout>
        <FieldGrid fields={spec.fields.filter((field) => field.source !== 'content')} columns={4} />
      </SimpleShowLayout>
      <CampaignDetail />
      <HistoryPanel spec={spec} />
    </Show>
  );
}
