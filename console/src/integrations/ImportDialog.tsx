import UploadFileIcon from '@mui/icons-material/UploadFile';
import {
  Alert, Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, LinearProgress, Link as MuiLink, Stack, Typography,
} from '@mui/material';
import { useId, useRef, useState } from 'react';
import { HttpError, useLogoutIfAccessDenied } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { exportUrl } from '../api/dataProvider';
import { api, detailsText } from '../api/http';
import type { ResourceSpec } from '../resources/types';
import { IMPORT_PATHS } from '../resources/integrations';
import { RowErrorTable, type RowError } from './RowErrorTable';

type DryRun = { total_rows: number; valid_rows: number; duplicate_rows: number; invalid_rows: number; errors: RowError[]; errors_truncated: boolean };

/** The columns an import needs (docs/integrators/csv-import-export.md); every other column of the export is accepted too. */
const REQUIRED: Record<string, string> = {
  leads: 'first_name, last_name and an email or phone column',
  inventory: 'project_id, block, lot and price',
  newsletters: 'email',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/** The API's refusal as one readable sentence (a 400 names the file's problem in `details`). */
function problemOf(error: unknown): string {
  if (error instanceof HttpError && error.status === 400 && error.body?.details) return detailsText(error.body.details);
  return (error as Error)?.message || 'The request failed';
}

/**
 * Import a CSV into a list: choose the file, see the dry run (totals and every bad row), then start the import,
 * whose progress opens on the import's own page.
 */
export default function ImportDialog({ spec, onClose }: { spec: ResourceSpec; onClose: () => void }) {
  const titleId = useId();
  const fileInput = useRef<HTMLInputElement>(null);
  const navigate = useNavigate();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [file, setFile] = useState<File>();
  const [result, setResult] = useState<DryRun>();
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState<'checking' | 'starting'>();
  const path = IMPORT_PATHS[spec.name];
  const what = spec.label.toLowerCase();

  const send = (chosen: File, dryRun: boolean) => {
    const form = new FormData();
    form.append('file', chosen, chosen.name);
    return api<any>(path, { method: 'POST', form, query: dryRun ? { dry_run: true } : undefined });
  };

  const fail = async (error: unknown) => {
    if (!(await logoutIfAccessDenied(error))) setProblem(problemOf(error));
  };

  const check = async (chosen: File | undefined) => {
    if (fileInput.current) fileInput.current.value = '';
    if (!chosen) return;
    setFile(chosen);
    setResult(undefined);
    setProblem(undefined);
    setBusy('checking');
    try {
      setResult(await send(chosen, true));
    } catch (error) {
      await fail(error);
    } finally {
      setBusy(undefined);
    }
  };

  const start = async () => {
    if (!file) return;
    setBusy('starting');
    try {
      const queued = await send(file, false) as { id: string };
      onClose();
      navigate(`/imports/${queued.id}/show`);
    } catch (error) {
      await fail(error);
      setBusy(undefined);
    }
  };

  return (
    <Dialog open onClose={busy ? undefined : onClose} aria-labelledby={titleId} fullWidth maxWidth="md">
      <DialogTitle id={titleId}>Import {what} from CSV</DialogTitle>
      <DialogContent>
        <Typography variant="body2" sx={{ mb: 1 }}>
          The file uses the columns of the {what} export (a header row, UTF-8): an exported file, edited or not, imports as it
          is. Required: {REQUIRED[spec.name]}. Rows already known are skipped, so importing a file twice creates nothing twice.
        </Typography>
        <Typography variant="body2" sx={{ mb: 2 }}>
          <MuiLink href={exportUrl(spec, {})} download>Download the current export</MuiLink> to start from its columns.
        </Typography>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap', mb: 2 }}>
          {/* A real button (keyboard: Enter or Space) that opens the hidden file chooser. */}
          <Button variant="outlined" startIcon={<UploadFileIcon />} disabled={!!busy} onClick={() => fileInput.current?.click()}>
            {file ? 'Choose another file' : 'Choose CSV file'}
          </Button>
          <input ref={fileInput} hidden type="file" accept=".csv,text/csv" data-testid="import-file" onChange={(event) => check(event.target.files?.[0])} />
          {file ? <Typography variant="body2">{file.name}</Typography> : null}
        </Stack>
        {busy === 'checking' ? <LinearProgress aria-label="Checking the file" /> : null}
        <Box role="status" aria-live="polite">
          {problem ? <Alert severity="error" sx={{ mb: 2 }}>The file cannot be imported: {problem}</Alert> : null}
          {result ? (
            <Box>
              <Typography variant="subtitle1" component="h3" sx={{ fontWeight: 600 }}>Dry run: nothing was written yet</Typography>
              <Typography variant="body2">
                {plural(result.total_rows, 'row')} in the file: {plural(result.valid_rows, 'new record')} to create,{' '}
                {plural(result.duplicate_rows, 'row')} already known (skipped), {plural(result.invalid_rows, 'bad row')}.
              </Typography>
            </Box>
          ) : null}
        </Box>
        {result && result.errors.length ? (
          <Box sx={{ mt: 2 }}>
            <Typography variant="body2" sx={{ mb: 1 }}>
              Bad rows are left out of the import and listed again in its result. Fix them in the file and choose it again, or import the rest.
            </Typography>
            <RowErrorTable errors={result.errors} truncated={result.errors_truncated} label="Bad rows of the file" />
          </Box>
        ) : null}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} disabled={!!busy}>Cancel</Button>
        {result ? (
          <Button variant="contained" onClick={start} disabled={!!busy || result.valid_rows === 0}>
            {result.valid_rows === 0 ? 'Nothing new to import' : `Import ${plural(result.valid_rows, 'row')}`}
          </Button>
        ) : null}
      </DialogActions>
    </Dialog>
  );
}
