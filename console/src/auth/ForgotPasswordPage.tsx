import { Box, Button, Link as MuiLink, Stack, TextField } from '@mui/material';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router-dom';
import { api } from '../api/http';
import { AuthCard } from './AuthCard';

/** Asks for a reset link; the answer is the same whether or not the address has an account (CONTRACT §4). */
export default function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [result, setResult] = useState<{ ok: boolean; message: string }>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      const answer = await api<{ message: string }>('/api/auth/forgot-password', { method: 'POST', body: { email } });
      setResult({ ok: true, message: `${answer.message}. The link works for one hour.` });
    } catch (error) {
      setResult({ ok: false, message: (error as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthCard title="Forgot password" message={result?.message} severity={result?.ok ? 'success' : 'error'}>
      <Box component="form" onSubmit={submit} noValidate>
        <Stack spacing={2}>
          <TextField label="Email" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus fullWidth />
          <Button type="submit" variant="contained" disabled={busy || !email} fullWidth>Send reset link</Button>
          <MuiLink component={Link} to="/login">Back to sign-in</MuiLink>
        </Stack>
      </Box>
    </AuthCard>
  );
}
