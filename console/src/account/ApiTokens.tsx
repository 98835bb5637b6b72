import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import {
  Alert, Box, Button, Checkbox, Dialog, DialogActions, DialogContent, DialogTitle, FormControlLabel, Stack, Table, TableBody, TableCell,
  TableHead, TableRow, TextField, Typography,
} from '@mui/material';
import { visuallyHidden } from '@mui/utils';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Confirm, HttpError, useLogoutIfAccessDenied, useNotify } from 'react-admin';
import type { Permission, SessionInfo } from '../api/authProvider';
import { api } from '../api/http';
import { permissionsText } from '../resources/fields';
import { MODULE_LABELS, MODULES, type Module } from '../resources/types';
import { ScrollX } from '../shared/ScrollX';
import { useApiAction } from '../shared/useApiAction';

type Token = { id: string; name: string; prefix: string; permissions: Permission[]; expires_at: string | null; last_used_at: string | null; created_at: string };
type Flag = 'can_read' | 'can_write' | 'can_delete';
const FLAGS: { flag: Flag; label: string }[] = [{ flag: 'can_read', label: 'Read' }, { flag: 'can_write', label: 'Write' }, { flag: 'can_delete', label: 'Delete' }];
const KEY = ['account', 'api-tokens'];

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const when = (value: string | null, none: string) => (value ? dateTime.format(new Date(value)) : none);

/** Copies text: the clipboard API, or the old way where it is refused. */
async function copy(text: string, input: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    input?.select();
    return document.execCommand?.('copy') ?? false;
  }
}

/** The new token, shown this once. */
function ShowOnce({ token, onClose }: { token: string; onClose: () => void }) {
  const notify = useNotify();
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <DialogContent>
        <Alert severity="warning" sx={{ mb: 2 }}>
          Copy this token now: <strong>you will not see it again.</strong> Send it as <code>Authorization: Bearer &lt;token&gt;</code>.
        </Alert>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' } }}>
          <TextField label="Your new token" value={token} fullWidth inputRef={input} slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'new-api-token', spellCheck: false, style: { fontFamily: 'monospace' } } }} onFocus={(event) => event.target.select()} />
          <Button variant="outlined" startIcon={<ContentCopyIcon />} onClick={async () => notify((await copy(token, input.current)) ? 'Token copied' : 'Select the token and copy it', { type: 'info' })}>Copy</Button>
        </Stack>
      </DialogContent>
      <DialogActions><Button onClick={onClose} variant="contained">Done</Button></DialogActions>
    </>
  );
}

/** Name, flags (at most the user's own), optional expiry; then the token once. */
function CreateDialog({ open, onClose, own }: { open: boolean; onClose: () => void; own: Permission[] }) {
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [flags, setFlags] = useState<Record<string, Record<Flag, boolean>>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [token, setToken] = useState<string>();
  const holds = (module: Module, flag: Flag) => !!own.find((p) => p.module === module)?.[flag];
  const modules = MODULES.filter((module) => FLAGS.some(({ flag }) => holds(module, flag)));
  const reset = () => {
    setName('');
    setExpires('');
    setFlags({});
    setErrors({});
    setToken(undefined);
  };
  const close = () => {
    reset();
    onClose();
  };
  const permissions = Object.entries(flags)
    .map(([module, f]) => ({ module, can_read: !!f.can_read, can_write: !!f.can_write, can_delete: !!f.can_delete }))
    .filter((p) => p.can_read || p.can_write || p.can_delete);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const body = { name: name.trim(), permissions, ...(expires ? { expires_at: new Date(`${expires}T23:59:59`).toISOString() } : {}) };
    let refused: Record<string, string> | undefined;
    const answer = await run(async () => {
      try {
        return await api<{ id: string; token: string }>('/api/auth/tokens', { method: 'POST', body });
      } catch (error) {
        // Field messages stay in the form; anything else is notified.
        if (error instanceof HttpError && error.status === 400 && error.body?.details) {
          refused = error.body.details;
          return undefined;
        }
        throw error;
      }
    });
    setErrors(refused ?? {});
    if (answer) {
      setToken(answer.token);
      void queryClient.invalidateQueries({ queryKey: KEY });
    }
  };

  return (
    <Dialog open={open} onClose={token ? undefined : close} aria-labelledby="new-token-title" fullWidth maxWidth="sm">
      <DialogTitle id="new-token-title">{token ? 'API token created' : 'New API token'}</DialogTitle>
      {token ? <ShowOnce token={token} onClose={close} /> : (
        <Box component="form" onSubmit={submit} noValidate>
          <DialogContent>
            <Stack spacing={2}>
              <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} required autoFocus error={!!errors.name} helperText={errors.name ?? 'What it is for ("Website lead form")'} />
              <Box component="fieldset" sx={{ border: 0, p: 0, m: 0 }}>
                <Typography component="legend" variant="subtitle2">Permissions</Typography>
                <Typography variant="body2" color="text.secondary">At most your own; the token loses any right you lose.</Typography>
                {modules.map((module) => (
                  <Box key={module} role="group" aria-label={`${MODULE_LABELS[module]} (${module})`} sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', columnGap: 1 }}>
                    <Typography variant="body2" sx={{ width: 130 }}>{MODULE_LABELS[module]} ({module})</Typography>
                    {FLAGS.filter(({ flag }) => holds(module, flag)).map(({ flag, label }) => (
                      <FormControlLabel
                        key={flag}
                        label={label}
                        control={(
                          <Checkbox
                            checked={!!flags[module]?.[flag]}
                            onChange={(e) => setFlags((all) => ({ ...all, [module]: { ...(all[module] ?? {}), [flag]: e.target.checked } as Record<Flag, boolean> }))}
                            slotProps={{ input: { 'aria-label': `${label} ${module}` } as object }}
                          />
                        )}
                      />
                    ))}
                  </Box>
                ))}
                {errors.permissions ? <Typography variant="body2" color="error" role="alert">{errors.permissions}</Typography> : null}
              </Box>
              <TextField
                label="Expires on" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} error={!!errors.expires_at}
                helperText={errors.expires_at ?? 'Optional: empty, it works until revoked'} slotProps={{ inputLabel: { shrink: true } }}
              />
            </Stack>
          </DialogContent>
          <DialogActions>
            <Button onClick={close}>Cancel</Button>
            <Button type="submit" variant="contained" disabled={busy || !name.trim() || !permissions.length}>Create token</Button>
          </DialogActions>
        </Box>
      )}
    </Dialog>
  );
}

/** My account's API tokens: the list, a new one (shown once), revoke with a confirmation. */
export function ApiTokens({ info }: { info: SessionInfo }) {
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<Token>();
  const tokens = useQuery({
    queryKey: KEY,
    // At most 50 per user: one page holds them all.
    queryFn: ({ signal }) => api<{ data: Token[] }>('/api/auth/tokens', { query: { limit: 100 }, signal }),
  });
  useEffect(() => {
    if (tokens.error) void logoutIfAccessDenied(tokens.error);
  }, [tokens.error, logoutIfAccessDenied]);
  const revoke = async () => {
    const token = revoking!;
    setRevoking(undefined);
    await run(() => api(`/api/auth/tokens/${token.id}`, { method: 'DELETE' }), `Token "${token.name}" revoked`);
    await queryClient.invalidateQueries({ queryKey: KEY });
  };
  const rows = tokens.data?.data ?? [];
  return (
    <Box component="section" aria-labelledby="api-tokens">
      <Typography id="api-tokens" variant="h6" component="h2" gutterBottom>API tokens</Typography>
      <Typography variant="body2" sx={{ mb: 1 }}>
        For scripts and other systems: a token acts as you, with the permissions you give it.
      </Typography>
      {tokens.error ? <Alert severity="error">{(tokens.error as Error).message}</Alert> : null}
      {tokens.data && !rows.length ? <Typography variant="body2" color="text.secondary">You have no API tokens.</Typography> : null}
      {rows.length ? (
        <Box sx={{ contain: 'inline-size' }}><ScrollX label="Your API tokens">
          <Table size="small" aria-label="Your API tokens">
            <TableHead>
              <TableRow>
                <TableCell>Name</TableCell><TableCell>Prefix</TableCell><TableCell>Permissions</TableCell><TableCell>Expires</TableCell>
                <TableCell>Last used</TableCell><TableCell sx={{ position: 'relative' }}><Box component="span" sx={visuallyHidden}>Actions</Box></TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {rows.map((token) => (
                <TableRow key={token.id}>
                  <TableCell component="th" scope="row">{token.name}</TableCell>
                  <TableCell sx={{ fontFamily: 'monospace' }}>{token.prefix}…</TableCell>
                  <TableCell>{permissionsText(token.permissions)}</TableCell>
                  <TableCell>{when(token.expires_at, 'never')}</TableCell>
                  <TableCell>{when(token.last_used_at, 'not yet')}</TableCell>
                  <TableCell><Button color="error" size="small" disabled={busy} onClick={() => setRevoking(token)} aria-label={`Revoke ${token.name}`}>Revoke</Button></TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </ScrollX></Box>
      ) : null}
      <Box sx={{ mt: 1 }}><Button variant="contained" onClick={() => setCreating(true)}>New API token</Button></Box>
      <CreateDialog open={creating} onClose={() => setCreating(false)} own={info.permissions} />
      <Confirm
        isOpen={!!revoking}
        title={`Revoke the token "${revoking?.name ?? ''}"?`}
        content="Whatever uses it is refused from its next request. This cannot be undone."
        confirm="Revoke"
        onConfirm={revoke}
        onClose={() => setRevoking(undefined)}
      />
    </Box>
  );
}
