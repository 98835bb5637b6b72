import RestoreIcon from '@mui/icons-material/Restore';
import { Alert, Box, Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, Table, TableBody, TableCell, TableHead, TableRow } from '@mui/material';
import { useState } from 'react';
import { useRefresh } from 'react-admin';
import { api } from '../api/http';
import { useApiAction } from '../shared/useApiAction';

type Changes = { before: Record<string, unknown>; after: Record<string, unknown> };
type Restored = { message: string; changes: Changes; skipped: string[] };

const text = (value: unknown) => (value === undefined || value === null || value === '' ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value));

/**
 * *Restore* on one entry of a record's history: asks the API what the restore would change (a dry run), shows
 * those fields before → after for confirmation, then restores. The API's refusal (a state move, a unique value, a
 * reference gone) is shown in the dialog as it says it.
 */
export function RestoreButton({ path, recordId, logId, label, onRestored }: { path: string; recordId: string; logId: string; label: string; onRestored?: () => void }) {
  const [open, setOpen] = useState(false);
  const [preview, setPreview] = useState<Restored | undefined>();
  const [refusal, setRefusal] = useState<string | undefined>();
  const { run, busy } = useApiAction();
  const refresh = useRefresh();
  const url = `${path}/${encodeURIComponent(recordId)}/history/${encodeURIComponent(logId)}/restore`;

  const ask = async () => {
    setOpen(true);
    setPreview(undefined);
    setRefusal(undefined);
    try {
      setPreview(await api<Restored>(url, { method: 'POST', body: { to: 'before' }, query: { dry_run: true } }));
    } catch (error) {
      setRefusal((error as Error).message);
    }
  };
  const confirm = async () => {
    const done = await run(() => api<Restored>(url, { method: 'POST', body: { to: 'before' } }), `${label} restored`);
    if (!done) return;
    setOpen(false);
    onRestored?.();
    refresh();
  };
  const fields = preview ? Object.keys(preview.changes.after) : [];
  const titleId = `restore-${logId}`;
  return (
    <>
      <Button size="small" startIcon={<RestoreIcon />} onClick={ask} aria-label={`Restore the ${label.toLowerCase()} to its state before this change`}>Restore</Button>
      <Dialog open={open} onClose={() => setOpen(false)} aria-labelledby={titleId} maxWidth="sm" fullWidth>
        <DialogTitle id={titleId}>Restore the {label.toLowerCase()} to its state before this change?</DialogTitle>
        <DialogContent>
          {refusal ? <Alert severity="error">{refusal}</Alert> : null}
          {!refusal && !preview ? <DialogContentText>Checking what would change…</DialogContentText> : null}
          {preview && !fields.length ? <DialogContentText>The {label.toLowerCase()} already is as it was before this change: nothing to restore.</DialogContentText> : null}
          {preview && fields.length ? (
            <>
              <DialogContentText gutterBottom>These fields will change:</DialogContentText>
              <Table size="small" aria-label="Fields that will change">
                <TableHead><TableRow><TableCell>Field</TableCell><TableCell>Now</TableCell><TableCell>Restored</TableCell></TableRow></TableHead>
                <TableBody>
                  {fields.map((field) => (
                    <TableRow key={field}>
                      <TableCell component="th" scope="row"><Box component="code">{field}</Box></TableCell>
                      <TableCell sx={{ wordBreak: 'break-word' }}>{text(preview.changes.before[field])}</TableCell>
                      <TableCell sx={{ wordBreak: 'break-word', fontWeight: 600 }}>{text(preview.changes.after[field])}</TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
              {preview.skipped.length ? <DialogContentText variant="body2" sx={{ mt: 1 }}>Set by the service, not restored: {preview.skipped.join(', ')}.</DialogContentText> : null}
            </>
          ) : null}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)}>Cancel</Button>
          <Button variant="contained" onClick={confirm} disabled={busy || !preview || !fields.length}>Restore</Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
