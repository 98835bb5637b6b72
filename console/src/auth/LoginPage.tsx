import { Box, Button, Divider, Link as MuiLink, Stack, TextField } from '@mui/material';
import { type FormEvent, useEffect, useState } from 'react';
import { useLogin } from 'react-admin';
import { Link, useLocation } from 'react-router-dom';
import { lastSignOutReason, TwoFactorRequired } from '../api/authProvider';
import { api } from '../api/http';
import { AuthCard } from './AuthCard';

type Step = 'password' | 'code' | 'backup';
type Provider = { id: string; name: string };

/** The identity providers offered for single sign-on (none when the service has none, or cannot say). */
function useSsoProviders(): Provider[] {
  const [providers, setProviders] = useState<Provider[]>([]);
  useEffect(() => {
    const controller = new AbortController();
    api<{ data: Provider[] }>('/api/auth/sso', { signal: controller.signal }).then((answer) => setProviders(answer.data), () => undefined);
    return () => controller.abort();
  }, []);
  return providers;
}

/**
 * Sign-in: e-mail and password, then (for accounts with two-factor) the authenticator's code or a backup code; or
 * *Sign in with <name>* per identity provider, whose refusals come back as `?sso_error=`.
 */
export function LoginPage() {
  const login = useLogin();
  const location = useLocation();
  const [step, setStep] = useState<Step>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const notice = (location.state as { message?: string } | null)?.message ?? lastSignOutReason();
  const ssoError = new URLSearchParams(location.search).get('sso_error') ?? undefined;
  const providers = useSsoProviders();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (step === 'password') await login({ email, password });
      else await login(step === 'code' ? { code } : { backupCode: code });
    } catch (err) {
      if (err instanceof TwoFactorRequired) {
        setStep('code');
        setCode('');
      } else {
        const message = (err as Error).message;
        // An expired or used-up challenge: start again from the password.
        if (step !== 'password' && /sign in again/i.test(message)) setStep('password');
        setError(message || 'Sign-in failed');
      }
    } finally {
      setBusy(false);
    }
  };

  const title = step === 'password' ? 'Sign in' : 'Two-factor verification';
  return (
    <AuthCard title={title} message={error ?? ssoError ?? notice} severity={error || ssoError ? 'error' : 'info'}>
      <Box component="form" onSubmit={submit} noValidate>
        {step === 'password' ? (
          <Stack spacing={2}>
            <TextField label="Email" type="email" name="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus fullWidth />
            <TextField label="Password" type="password" name="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required fullWidth />
            <Button type="submit" variant="contained" disabled={busy || !email || !password} fullWidth>Sign in</Button>
            <MuiLink component={Link} to="/forgot-password">Forgot password?</MuiLink>
            {providers.length ? <Divider>or</Divider> : null}
            {providers.map((provider) => (
              // A full navigation: the identity provider's pages, then back to the console signed in.
              <Button key={provider.id} variant="outlined" href={`/api/auth/sso/${encodeURIComponent(provider.id)}`} fullWidth>
                Sign in with {provider.name}
              </Button>
            ))}
          </Stack>
        ) : (
          <Stack spacing={2}>
            {step === 'code' ? (
              <TextField key="code" label="Verification code" name="code" autoComplete="one-time-code" helperText="The 6-digit code from your authenticator app"
                slotProps={{ htmlInput: { inputMode: 'numeric', pattern: '[0-9 ]*', maxLength: 8 } }}
                value={code} onChange={(e) => setCode(e.target.value)} required autoFocus fullWidth />
            ) : (
              <TextField key="backup" label="Backup code" name="backupCode" autoComplete="off" helperText="One of the codes you saved when you turned on two-factor; each works once"
                value={code} onChange={(e) => setCode(e.target.value)} required autoFocus fullWidth />
            )}
            <Button type="submit" variant="contained" disabled={busy || !code.trim()} fullWidth>Verify</Button>
            <Button onClick={() => { setStep(step === 'code' ? 'backup' : 'code'); setCode(''); setError(undefined); }}>
              {step === 'code' ? 'Use a backup code instead' : 'Use the authenticator code instead'}
            </Button>
            <Button onClick={() => { setStep('password'); setCode(''); setError(undefined); }}>Back to sign-in</Button>
          </Stack>
        )}
      </Box>
    </AuthCard>
  );
}
