import { Box, Button, Link as MuiLink, Stack, TextField } from '@mui/material';
import { type FormEvent, useState } from 'react';
import { HttpError } from 'react-admin';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { api } from '../api/http';
import { PasswordStrength, passwordProblem } from '../shared/PasswordStrength';
import { AuthCard } from './AuthCard';

/** The page the e-mailed link opens: `/reset-password?token=…`. Success ends every session and leads to sign-in. */
export default function ResetPasswordPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const navigate = useNavigate();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<{ password?: string; token?: string; other?: string }>({});
  const [busy, setBusy] = useState(false);
  const mismatch = confirm !== '' && confirm !== password;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problem = passwordProblem(password);
    if (problem || mismatch) return setErrors({ password: problem });
    setBusy(true);
    try {
      await api('/api/auth/reset-password', { method: 'POST', body: { token, password } });
      navigate('/login', { state: { message: 'Your password was changed. Sign in with the new password.' } });
    } catch (error) {
      const details = error instanceof HttpError ? error.body?.details : undefined;
      setErrors(details ? { password: details.password, token: details.token && `This link ${details.token}. Ask for a new one.` } : { other: (error as Error).message });
    } finally {
      setBusy(false);
    }
  };

  if (!token) {
    return (
      <AuthCard title="Reset password" message="This page needs the link from the reset e-mail.">
        <MuiLink component={Link} to="/forgot-password">Ask for a reset link</MuiLink>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Choose a new password" message={errors.token ?? errors.other}>
      <Box component="form" onSubmit={submit} noValidate>
        <Stack spacing={2}>
          <TextField label="New password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)}
            error={!!errors.password} helperText={errors.password ?? '8+ characters with upper and lower case, a digit and another character'} required autoFocus fullWidth />
          <PasswordStrength password={password} />
          <TextField label="Repeat new password" type="password" autoComplete="new-password" value={confirm} onChange={(e) => setConfirm(e.target.value)}
            error={mismatch} helperText={mismatch ? 'The passwords differ' : ' '} required fullWidth />
          <Button type="submit" variant="contained" disabled={busy || !password || mismatch || !confirm} fullWidth>Set new password</Button>
          {errors.token ? <MuiLink component={Link} to="/forgot-password">Ask for a new reset link</MuiLink> : <MuiLink component={Link} to="/login">Back to sign-in</MuiLink>}
        </Stack>
      </Box>
    </AuthCard>
  );
}
