import { Alert, Box, Button, LinearProgress, Stack, Typography } from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Labeled, Show, TopToolbar, useRecordContext } from 'react-admin';
import { Link } from 'react-router-dom';
import { specOf } from '../resources/declarations';
import { FieldValue } from '../resources/fields';
import type { FieldSpec } from '../resources/types';
import { RowErrorTable, type RowError } from './RowErrorTable';
import { short } from './short';

type Import = {
  id: string; resource: 'leads' | 'inventory' | 'newsletters'; filename: string; status: 'queued' | 'running' | 'completed' | 'failed';
  total_rows: number; processed_rows: number; created: number; skipped: number; failed: number; errors?: RowError[];
  errors_truncated: boolean; failure_reason: string | null; created_by: { id: string; name: string } | null;
  created_at: string; started_at: string | null; finished_at: string | null;
};

const finished = (status?: string) => status === 'completed' || status === 'failed';
const STATUS_TEXT: Record<Import['status'], string> = {
  queued: 'Waiting to start',
  running: 'Importing',
  completed: 'Completed',
  failed: 'Failed',
};

const MORE: FieldSpec[] = [
  { source: 'created_by', label: 'By', type: 'ref', ref: { resource: 'users', param: 'created_by', text: 'name' } },
  { source: 'created_at', label: 'Uploaded', type: 'datetime' },
  { source: 'started_at', label: 'Started', type: 'datetime' },
  { source: 'finished_at', label: 'Finished', type: 'datetime' },
];

function Count({ label, value }: { label: string; value: number }) {
  return (
    <Box>
      <Typography variant="caption" component="p" color="text.secondary">{label}</Typography>
      <Typography variant="h6" component="p">{value.toLocaleString()}</Typography>
    </Box>
  );
}

/** The progress and then the result of one import: a bar, the counts, every refused row. */
function Progress() {
  const record = useRecordContext<Import>();
  const queryClient = useQueryClient();
  const status = record?.status;
  const resource = record?.resource;
  // Once done, the imported list is read again (its cached pages predate the new records).
  useEffect(() => {
    if (resource && finished(status)) void queryClient.invalidateQueries({ queryKey: [resource] });
  }, [resource, status, queryClient]);
  if (!record) return null;
  const target = specOf(record.resource);
  const percent = record.total_rows ? Math.round((record.processed_rows / record.total_rows) * 100) : finished(record.status) ? 100 : 0;
  const rows = `${record.processed_rows.toLocaleString()} of ${record.total_rows.toLocaleString()} rows`;
  return (
    <Box sx={{ p: 2, display: 'grid', gap: 2 }}>
      <Typography variant="body1">
        {record.filename} into {target.label.toLowerCase()}
      </Typography>
      <Box role="status" aria-live="polite">
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600 }}>
          {STATUS_TEXT[record.status]}: {rows}
        </Typography>
      </Box>
      <LinearProgress
        variant={record.status === 'queued' ? 'indeterminate' : 'determinate'}
        value={percent}
        color={record.status === 'failed' ? 'error' : record.status === 'completed' ? 'success' : 'primary'}
        aria-label="Import progress"
        aria-valuetext={rows}
        sx={{ height: 8, borderRadius: 1 }}
      />
      <Stack direction="row" spacing={4} useFlexGap sx={{ flexWrap: 'wrap' }}>
        <Count label="Created" value={record.created} />
        <Count label="Skipped (already known)" value={record.skipped} />
        <Count label="Failed" value={record.failed} />
      </Stack>
      {record.status === 'completed' ? (
        <Alert severity={record.failed ? 'warning' : 'success'} action={<Button component={Link} to={`/${target.name}`} color="inherit" size="small">Open {target.label.toLowerCase()}</Button>}>
          Import completed: {record.created.toLocaleString()} created, {record.skipped.toLocaleString()} skipped, {record.failed.toLocaleString()} failed.
        </Alert>
      ) : null}
      {record.status === 'failed' ? (
        <Alert severity="error">The import stopped: {record.failure_reason ?? 'unknown reason'}. The rows before it stay imported.</Alert>
      ) : null}
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', lg: 'repeat(4, minmax(0, 1fr))' } }}>
        {MORE.map((field) => (
          <Labeled key={field.source} label={field.label}>
            <FieldValue field={field} />
          </Labeled>
        ))}
      </Box>
      {record.errors?.length ? (
        <Box>
          <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, mb: 1 }}>Refused rows</Typography>
          <RowErrorTable errors={record.errors} truncated={record.errors_truncated} label="Refused rows" />
        </Box>
      ) : null}
    </Box>
  );
}

function Title() {
  const record = useRecordContext<Import>();
  return <>{record ? `Import: ${short(record.filename)}` : 'Import'}</>;
}

/**
 * An import's page: polled while it is queued or running, twice a second for its first seconds on screen (a small file
 * is done by then), then every second.
 */
export default function ImportShow() {
  const [shown] = useState(() => Date.now());
  return (
    <Show
      title={<Title />}
      actions={<TopToolbar />}
      queryOptions={{ refetchInterval: (query: { state: { data?: Import } }) => (finished(query.state.data?.status) ? false : Date.now() - shown < 15_000 ? 500 : 1000) } as never}
    >
      <Progress />
    </Show>
  );
}
