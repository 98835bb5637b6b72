import { Alert, Box, Button, Card, CardContent, Chip, Stack, TextField, Typography } from '@mui/material';
import { QRCodeSVG } from 'qrcode.react';
import { type FormEvent, useEffect, useState } from 'react';
import { HttpError, Title, useAuthenticated, useNotify } from 'react-admin';
import { currentSession, type SessionInfo } from '../api/authProvider';
import { api } from '../api/http';
import { PasswordStrength } from '../shared/PasswordStrength';
import { useApiAction } from '../shared/useApiAction';
import { ApiTokens } from './ApiTokens';
import { NotificationSettings } from './NotificationSettings';

const detailsOf = (error: unknown): Record<string, string> => (error instanceof HttpError && error.body?.details) || {};

/** Calls the API; field messages come back for the form, anything else becomes a notification. */
function useFormCall() {
  const notify = useNotify();
  const { run } = useApiAction();
  return async (call: () => Promise<unknown>, success: string): Promise<Record<string, string> | null> => {
    try {
      await call();
      notify(success, { type: 'success' });
      return null;
    } catch (error) {
      const details = detailsOf(error);
      if (Object.keys(details).length) return details;
      await run(() => Promise.reject(error));
      return {};
    }
  };
}

function ChangePassword() {
  const call = useFormCall();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problems = await call(() => api('/api/auth/change-password', { method: 'POST', body: { currentPassword: current, newPassword: next } }), 'Password changed; your other sessions were ended');
    setErrors(problems ?? {});
    if (!problems) {
      setCurrent('');
      setNext('');
    }
  };
  return (
    <Box component="form" onSubmit={submit} noValidate aria-labelledby="change-password">
      <Typography id="change-password" variant="h6" component="h2" gutterBottom>Change password</Typography>
      <Stack spacing={2} sx={{ maxWidth: 420 }}>
        <TextField label="Current password" type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} error={!!errors.currentPassword} helperText={errors.currentPassword} required />
        <TextField label="New password" type="password" autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} error={!!errors.newPassword} helperText={errors.newPassword ?? '8+ characters with upper and lower case, a digit and another character'} required />
        <PasswordStrength password={next} />
        <Box><Button type="submit" variant="contained" disabled={!current || !next}>Change password</Button></Box>
      </Stack>
    </Box>
  );
}

/** The secret of an otpauth:// URI, for typing into an authenticator by hand. */
const secretOf = (uri: string) => new URL(uri).searchParams.get('secret') ?? '';

function TwoFactor({ info, refresh }: { info: SessionInfo; refresh: () => void }) {
  const call = useFormCall();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [setup, setSetup] = useState<{ totpURI: string; backupCodes: string[] }>();
  const [confirmed, setConfirmed] = useState<string[]>();
  const enabled = info.user.twoFactorEnabled;

  const start = async (event: FormEvent) => {
    event.preventDefault();
    let answer: { totpURI: string; backupCodes: string[] } | undefined;
    const problems = await call(async () => (answer = await api('/api/auth/two-factor/enable', { method: 'POST', body: { password } })), 'Scan the code, then enter the code your app shows');
    setErrors(problems ?? {});
    if (!problems && answer) {
      setSetup(answer);
      setPassword('');
    }
  };
  const confirm = async (event: FormEvent) => {
    event.preventDefault();
    const problems = await call(() => api('/api/auth/two-factor/confirm', { method: 'POST', body: { code: code.replace(/\s+/g, '') } }), 'Two-factor authentication is on');
    setErrors(problems ?? {});
    if (!problems) {
      setConfirmed(setup!.backupCodes);
      setSetup(undefined);
      setCode('');
      refresh();
    }
  };
  const disable = async (event: FormEvent) => {
    event.preventDefault();
    const problems = await call(() => api('/api/auth/two-factor/disable', { method: 'POST', body: { password } }), 'Two-factor authentication is off');
    setErrors(problems ?? {});
    if (!problems) {
      setPassword('');
      setConfirmed(undefined);
      refresh();
    }
  };

  return (
    <Box aria-labelledby="two-factor">
      <Typography id="two-factor" variant="h6" component="h2" gutterBottom>
        Two-factor authentication <Chip size="small" label={enabled ? 'On' : 'Off'} color={enabled ? 'success' : 'default'} />
      </Typography>
      {confirmed ? (
        <Alert severity="warning" sx={{ mb: 2 }}>
          <Typography variant="subtitle2" component="h3">Your backup codes — shown only this once</Typography>
          <Typography variant="body2">Keep them somewhere safe. Each one signs you in once if you lose your authenticator.</Typography>
          <Box component="ul" aria-label="Backup codes" sx={{ columns: 2, fontFamily: 'monospace', pl: 2 }}>
            {confirmed.map((backup) => <li key={backup}>{backup}</li>)}
          </Box>
          <Button onClick={() => setConfirmed(undefined)}>I have saved them</Button>
        </Alert>
      ) : null}
      {enabled ? (
        <Box component="form" onSubmit={disable} noValidate>
          <Stack spacing={2} sx={{ maxWidth: 420 }}>
            <TextField label="Password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} error={!!errors.password} helperText={errors.password ?? 'Your password, to turn two-factor off'} required />
            <Box><Button type="submit" variant="outlined" color="error" disabled={!password}>Turn off two-factor</Button></Box>
          </Stack>
        </Box>
      ) : setup ? (
        <Box component="form" onSubmit={confirm} noValidate>
          <Stack spacing={2} sx={{ maxWidth: 420 }}>
            <Typography variant="body2">Scan this code with an authenticator app (or type the secret), then enter the 6-digit code it shows.</Typography>
            <Box sx={{ bgcolor: 'common.white', p: 1, width: 'fit-content' }}>
              <QRCodeSVG value={setup.totpURI} size={176} title="QR code of the two-factor secret" />
            </Box>
            <TextField label="Secret" value={secretOf(setup.totpURI)} slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'totp-secret' } }} helperText="For entering by hand" />
            <TextField label="Verification code" autoComplete="one-time-code" slotProps={{ htmlInput: { inputMode: 'numeric', maxLength: 8 } }} value={code} onChange={(e) => setCode(e.target.value)} error={!!errors.code} helperText={errors.code} required />
            <Stack direction="row" spacing={1}>
              <Button type="submit" variant="contained" disabled={!code.trim()}>Confirm</Button>
              <Button onClick={() => setSetup(undefined)}>Cancel</Button>
            </Stack>
          </Stack>
        </Box>
      ) : (
        <Box component="form" onSubmit={start} noValidate>
          <Stack spacing={2} sx={{ maxWidth: 420 }}>
            <Typography variant="body2">A code from an authenticator app will be asked for at every sign-in.</Typography>
            <TextField label="Password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} error={!!errors.password} helperText={errors.password ?? 'Your password, to turn two-factor on'} required />
            <Box><Button type="submit" variant="contained" disabled={!password}>Turn on two-factor</Button></Box>
          </Stack>
        </Box>
      )}
    </Box>
  );
}

/** My account: who I am, my password, my second factor, my API tokens; then how notifications reach me. */
export default function AccountPage() {
  useAuthenticated();
  const [info, setInfo] = useState<SessionInfo | null>(null);
  const refresh = () => void currentSession(true).then(setInfo);
  useEffect(refresh, []);
  return (
    <Box sx={{ mt: 2 }}>
      <Title title="My account" />
      <Card>
        <CardContent>
          <Stack spacing={4}>
            {info ? (
              <Box>
                <Typography variant="h6" component="h2">{info.user.name}</Typography>
                <Typography variant="body2">{info.user.email}{info.user.department ? ` — ${info.user.department.name}` : ''}</Typography>
                <Typography variant="body2" color="text.secondary">
                  Access: {info.permissions.filter((p) => p.can_read).map((p) => `${p.module} (${['read', p.can_write && 'write', p.can_delete && 'delete'].filter(Boolean).join(', ')})`).join('; ') || 'none'}
                </Typography>
              </Box>
            ) : null}
            <ChangePassword />
            {info ? <TwoFactor info={info} refresh={refresh} /> : null}
            {info ? <ApiTokens info={info} /> : null}
          </Stack>
        </CardContent>
      </Card>
      <Card sx={{ mt: 2 }}>
        <CardContent>
          <NotificationSettings />
        </CardContent>
      </Card>
    </Box>
  );
}
