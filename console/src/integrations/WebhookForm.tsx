import { Alert, Box, Card } from '@mui/material';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import {
  AutocompleteArrayInput, BooleanInput, DeleteButton, Edit, HttpError, required, SaveButton, SimpleForm, TextInput, Title, Toolbar,
  useCanAccess, useLogoutIfAccessDenied, useNotify, useRecordContext,
} from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { formErrors } from '../api/dataProvider';
import { api } from '../api/http';
import { specOf } from '../resources/declarations';
import { SecretDialog } from './SecretDialog';
import { hostOf, short } from './short';

const spec = specOf('webhooks');
export const ALL_EVENTS = '*';

/** The event types an endpoint can subscribe to, from the API (`GET /api/iam/webhooks/event-types`). */
export function useEventTypes() {
  return useQuery({
    queryKey: ['webhooks', 'event-types'],
    queryFn: ({ signal }) => api<{ data: string[] }>('/api/iam/webhooks/event-types', { signal }).then((answer) => answer.data),
    staleTime: 60 * 60_000,
  });
}

/** The endpoint's fields; `*` first among the events. */
function WebhookInputs() {
  const { data: types = [], isPending } = useEventTypes();
  const choices = [{ id: ALL_EVENTS, name: '* (every event, present and future)' }, ...types.map((type) => ({ id: type, name: type }))];
  return (
    <Box sx={{ width: '100%', maxWidth: 720 }}>
      <TextInput source="url" label="URL" type="url" validate={required()} fullWidth helperText="http(s) address the events are POSTed to" />
      <TextInput source="description" label="Description" multiline minRows={2} fullWidth helperText="What the endpoint is for" />
      <AutocompleteArrayInput
        source="events"
        label="Events"
        choices={choices}
        isPending={isPending}
        validate={required('Choose at least one event')}
        fullWidth
        helperText='Type to search: lead.created, inquiry.received… "*" subscribes to every event'
      />
      <BooleanInput source="enabled" label="Enabled" helperText="A disabled endpoint is sent nothing but test events" />
    </Box>
  );
}

const bodyOf = (values: Record<string, any>) => ({
  url: String(values.url ?? '').trim(),
  ...(values.description ? { description: String(values.description) } : {}),
  events: values.events ?? [],
  enabled: values.enabled !== false,
});

/** Create: the answer holds the signing secret, shown once before the endpoint's page opens. */
export function WebhookCreate() {
  const [created, setCreated] = useState<{ id: string; secret: string }>();
  const navigate = useNavigate();
  const notify = useNotify();
  const queryClient = useQueryClient();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const canCreate = useCanAccess({ resource: 'webhooks', action: 'create' });
  const submit = async (values: Record<string, any>) => {
    try {
      // Not through the data provider: it reads the record back, and the secret is only in this answer.
      const answer = await api<{ id: string; secret: string }>(spec.path, { method: 'POST', body: bodyOf(values) });
      void queryClient.invalidateQueries({ queryKey: ['webhooks'] });
      setCreated(answer);
      return undefined;
    } catch (error) {
      if (await logoutIfAccessDenied(error)) return undefined;
      notify((error as Error).message || 'The request failed', { type: 'error' });
      const mapped = formErrors(spec, error);
      return mapped instanceof HttpError ? mapped.body?.errors : undefined;
    }
  };
  if (!canCreate.isPending && !canCreate.canAccess) {
    return <Box sx={{ mt: 2 }}><Title title="Create webhook" /><Alert severity="info">Registering a webhook needs write access to the Access module.</Alert></Box>;
  }
  return (
    <Box sx={{ mt: 2 }}>
      <Title title="Create webhook" />
      <Card>
        <SimpleForm onSubmit={submit} defaultValues={{ enabled: true, events: [] }} toolbar={<Toolbar><SaveButton label="Save" /></Toolbar>}>
          <WebhookInputs />
        </SimpleForm>
      </Card>
      {created ? <SecretDialog secret={created.secret} onClose={() => {
        setCreated(undefined);
        navigate(`/webhooks/${created.id}/show`);
      }} /> : null}
    </Box>
  );
}

function EditTitle() {
  const record = useRecordContext();
  return <>{record ? `Edit webhook: ${short(hostOf(record.url), 24)}` : 'Edit webhook'}</>;
}

function EditToolbar() {
  const record = useRecordContext();
  return (
    <Toolbar sx={{ justifyContent: 'space-between' }}>
      <SaveButton label="Save" />
      {record ? <DeleteButton mutationMode="pessimistic" label="Delete" confirmTitle={`Delete webhook "${record.url}"?`} confirmContent="Its delivery log is deleted too. This cannot be undone." /> : null}
    </Toolbar>
  );
}

/** Edit: only the changed fields are sent (the data provider's PATCH); the secret is changed from the detail page. */
export function WebhookEdit() {
  return (
    <Edit title={<EditTitle />} mutationMode="pessimistic" redirect="show" actions={false}>
      <SimpleForm toolbar={<EditToolbar />} warnWhenUnsavedChanges>
        <WebhookInputs />
      </SimpleForm>
    </Edit>
  );
}
