import { Box, FormControlLabel, FormHelperText, MenuItem, Stack, Switch, TextField, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { usePermissions } from 'react-admin';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { useApiAction } from '../shared/useApiAction';

export type Delivery = 'in_app' | 'email' | 'both' | 'none';
type Settings = Record<string, Delivery>;
type Preferences = { notifications: Settings; weekly_report: boolean };

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

/**
 * My account's notification settings: how each kind reaches me, and (crm readers) the Monday e-mail of the sales
 * reports (PATCH /api/auth/preferences, one setting at a time).
 */
export function NotificationSettings() {
  const { run, busy } = useApiAction();
  const { permissions } = usePermissions<Permission[]>();
  const [preferences, setPreferences] = useState<Preferences | null>(null);
  const settings = preferences?.notifications;

  useEffect(() => {
    void run(() => api<Preferences>('/api/auth/preferences')).then((answer) => answer && setPreferences(answer));
  }, [run]);

  const save = async (body: Partial<Preferences> | { notifications: Partial<Settings> }, done: string) => {
    const answer = await run(() => api<Preferences>('/api/auth/preferences', { method: 'PATCH', body }), done);
    if (answer) setPreferences(answer);
  };
  const change = (kind: string, delivery: Delivery) => save({ notifications: { [kind]: delivery } }, 'Notification settings saved');

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
          {can(permissions, 'crm', 'read') ? (
            <Box>
              <FormControlLabel
                control={<Switch checked={preferences!.weekly_report} disabled={busy} onChange={(event) => void save({ weekly_report: event.target.checked }, event.target.checked ? 'The weekly report will come on Mondays' : 'No more weekly report e-mails')} slotProps={{ input: { 'aria-describedby': 'weekly-report-help' } }} />}
                label="Weekly report e-mail (Mondays)"
              />
              <FormHelperText id="weekly-report-help" sx={{ mt: 0 }}>The sales reports' key figures for the week before, within what you may see, each with a link to its report.</FormHelperText>
            </Box>
          ) : null}
        </Stack>
      ) : null}
    </Box>
  );
}
