import RestoreFromTrashIcon from '@mui/icons-material/RestoreFromTrash';
import {
  Alert, Box, Button, Card, CardContent, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, FormControl, InputLabel, MenuItem,
  Select, Skeleton, TableCell, TableRow, Typography,
} from '@mui/material';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Title, useLogoutIfAccessDenied } from 'react-admin';
import { useParams } from 'react-router-dom';
import { api } from '../api/http';
import { RESOURCES } from '../resources/declarations';
import { MODULE_LABELS, type Module } from '../resources/types';
import { PagedTable } from '../shared/PagedTable';
import { useApiAction } from '../shared/useApiAction';

type Entry = { id: string; resource: string; record_id: string; title: string | null; deleted_by: { name: string } | null; deleted_at: string; deleted_with: number };
type Page = { data: Entry[]; pagination: { total: number } };

/** Each module's trash resources (the API's `resource` values), as people call them. */
const RESOURCES_OF: Record<'cms' | 'crm', Record<string, string>> = {
  cms: { projects: 'Project', galleries: 'Gallery image', articles: 'Article', careers: 'Job posting', amenities: 'Amenity' },
  crm: { leads: 'Lead', inventory: 'Inventory unit', reservations: 'Reservation', inquiries: 'Inquiry', newsletters: 'Subscriber', campaigns: 'Campaign', activities: 'Lead activity', tasks: 'Follow-up' },
};
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * A module's trash: records deleted in the last TRASH_RETENTION_DAYS, newest first, filterable by kind,
 * each with *Restore* (confirmed first). Needs the module's delete permission, as the API does.
 */
export default function TrashPage() {
  const module = (useParams().module === 'crm' ? 'crm' : 'cms') as 'cms' | 'crm';
  const kinds = RESOURCES_OF[module];
  const [resource, setResource] = useState('');
  const [page, setPage] = useState(0);
  const [limit, setLimit] = useState(10);
  const [restoring, setRestoring] = useState<Entry | undefined>();
  const { run, busy } = useApiAction();
  const queryClient = useQueryClient();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const trash = useQuery({
    queryKey: ['trash', module, resource, page, limit],
    queryFn: ({ signal }) => api<Page>(`/api/${module}/trash`, { query: { page: page + 1, limit, resource }, signal }),
    staleTime: 0,
  });
  useEffect(() => {
    if (trash.error) void logoutIfAccessDenied(trash.error);
  }, [trash.error, logoutIfAccessDenied]);
  useEffect(() => setPage(0), [module, resource]);

  const restore = async () => {
    const entry = restoring!;
    const label = kinds[entry.resource] ?? entry.resource;
    const done = await run(() => api(`/api/${module}/trash/${encodeURIComponent(entry.id)}/restore`, { method: 'POST' }), `${label} restored`);
    setRestoring(undefined);
    if (!done) return;
    // The restored record is in its lists again.
    const spec = RESOURCES.find((r) => r.name === entry.resource);
    await Promise.all([queryClient.invalidateQueries({ queryKey: ['trash', module] }), spec ? queryClient.invalidateQueries({ queryKey: [spec.name] }) : undefined]);
  };

  return (
    <Card sx={{ mt: 2 }}>
      <Title title={`Trash: ${MODULE_LABELS[module as Module]}`} />
      <CardContent>
        <Typography variant="h5" component="h1" gutterBottom>Trash: {MODULE_LABELS[module as Module]}</Typography>
        <Typography variant="body2" color="text.secondary" gutterBottom>Deleted records stay here for a while (30 days unless configured otherwise); restoring one brings it back with everything deleted with it.</Typography>
        <FormControl size="small" sx={{ minWidth: 220, my: 1 }}>
          <InputLabel id={`trash-kind-${module}`}>Kind of record</InputLabel>
          <Select labelId={`trash-kind-${module}`} label="Kind of record" value={resource} onChange={(event) => setResource(String(event.target.value))}>
            <MenuItem value="">Every kind</MenuItem>
            {Object.entries(kinds).map(([name, label]) => <MenuItem key={name} value={name}>{label}</MenuItem>)}
          </Select>
        </FormControl>
        {trash.error ? <Alert severity="error">{(trash.error as Error).message}</Alert> : null}
        {!trash.data && !trash.error ? <Skeleton height={120} aria-label="Loading the trash" /> : null}
        {trash.data && !trash.data.pagination.total ? <Typography sx={{ my: 2 }}>The trash is empty.</Typography> : null}
        {trash.data?.pagination.total ? (
          <PagedTable
            label="Deleted records" tableLabel={`Deleted ${MODULE_LABELS[module as Module].toLowerCase()} records`} total={trash.data.pagination.total} page={page} limit={limit}
            onPage={setPage} onLimit={setLimit} rowsLabel="Records per page"
            head={<><TableCell>Record</TableCell><TableCell>Kind</TableCell><TableCell>Deleted</TableCell><TableCell>By</TableCell><TableCell>With it</TableCell><TableCell><Box component="span" sx={{ position: 'absolute', left: -9999 }}>Actions</Box></TableCell></>}
          >
            {trash.data.data.map((entry) => (
              <TableRow key={entry.id}>
                <TableCell component="th" scope="row">{entry.title ?? entry.record_id}</TableCell>
                <TableCell>{kinds[entry.resource] ?? entry.resource}</TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{dateTime.format(new Date(entry.deleted_at))}</TableCell>
                <TableCell>{entry.deleted_by?.name ?? 'the system'}</TableCell>
                <TableCell>{entry.deleted_with ? `${entry.deleted_with} record${entry.deleted_with === 1 ? '' : 's'}` : '—'}</TableCell>
                <TableCell>
                  <Button size="small" startIcon={<RestoreFromTrashIcon />} onClick={() => setRestoring(entry)} aria-label={`Restore ${entry.title ?? entry.record_id}`}>Restore</Button>
                </TableCell>
              </TableRow>
            ))}
          </PagedTable>
        ) : null}
      </CardContent>
      <Dialog open={!!restoring} onClose={() => setRestoring(undefined)} aria-labelledby="trash-restore-title">
        <DialogTitle id="trash-restore-title">Restore {restoring?.title ?? 'this record'}?</DialogTitle>
        <DialogContent>
          <DialogContentText>
            The {(restoring && kinds[restoring.resource])?.toLowerCase() ?? 'record'} comes back as it was when deleted, with the same id
            {restoring?.deleted_with ? ` and the ${restoring.deleted_with} record${restoring.deleted_with === 1 ? '' : 's'} deleted with it` : ''}.
          </DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setRestoring(undefined)}>Cancel</Button>
          <Button variant="contained" onClick={restore} disabled={busy}>Restore</Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}
