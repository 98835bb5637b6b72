import { Box, MenuItem, Stack, TextField, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { api } from '../api/http';
import { useApiAction } from '../shared/useApiAction';

export type Delivery = 'in_app' | 'email' | 'both' | 'none';
type Settings = Record<string, Delivery>;

/** Each kind of notification as a person reads it, in the order shown. */
export const KIND_LABELS: [kind: string, label: string][] = [
  ['lead_assigned', 'A lead is assigned to me'],
  ['inquiry_received', 'A website inquiry arrives'],
  ['mention', 'Someone mentions me in a note'],
  ['lead_to_claim', 'A lead waits to be claimed'],
  ['follow_up_due', 'A follow-up is due'],
  ['speed_to_lead', 'A new lead waits too long for a first contact'],
];

const DELIVERIES: [Delivery, string][] = [['in_app', 'In the app'], ['email', 'E-mail'], ['both', 'Both'], ['none', 'None']];

/** My account's notification settings: how each kind reaches me (PATCH /api/auth/preferences, one kind at a time). */
export function NotificationSettings() {
  const { run } = useApiAction();
  const [settings, setSettings] = useState<Settings | null>(null);

  useEffect(() => {
    void run(() => api<{ notifications: Settings }>('/api/auth/preferences')).then((answer) => answer && setSettings(answer.notifications));
  }, [run]);

  const change = async (kind: string, delivery: Delivery) => {
    const answer = await run(() => api<{ notifications: Settings }>('/api/auth/preferences', { method: 'PATCH', body: { notifications: { [kind]: delivery } } }), 'Notification settings saved');
    if (answer) setSettings(answer.notifications);
  };

  return (
    <Box component="section" aria-labelledby="notification-settings">
      <Typography id="notification-settings" variant="h6" component="h2" gutterBottom>Notifications</Typography>
      <Typography variant="body2" sx={{ mb: 2 }}>How you hear of each event: in the console's bell, by e-mail, both, or not at all.</Typography>
      {settings ? (
        <Stack spacing={2} sx={{ maxWidth: 420 }}>
          {KIND_LABELS.map(([kind, label]) => (
            <TextField key={kind} select label={label} value={settings[kind] ?? ''} onChange={(event) => void change(kind, event.target.value as Delivery)}>
              {DELIVERIES.map(([value, text]) => <MenuItem key={value} value={value}>{text}</MenuItem>)}
            </TextField>
          ))}
        </Stack>
      ) : null}
    </Box>
  );
}
