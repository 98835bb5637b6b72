import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import { Accordion, AccordionDetails, AccordionSummary, Alert, Box, Skeleton, Table, TableBody, TableCell, TableHead, TablePagination, TableRow, Typography } from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useCanAccess, useLogoutIfAccessDenied, useRecordContext } from 'react-admin';
import { api } from '../api/http';
import type { ResourceSpec } from '../resources/types';
import { RestoreButton } from '../undo/RestoreButton';
import { ScrollX } from './ScrollX';

type Entry = {
  id: string;
  user: { id: string; name: string; email: string } | null;
  action: 'create' | 'update' | 'delete';
  created_at: string;
  changes: { before: Record<string, unknown>; after: Record<string, unknown> };
};
type Page = { data: Entry[]; pagination: { total: number } };

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** Fields that change with every write and say nothing a person wants to read. */
const NOISE = new Set(['id', 'updated_at', 'updatedAt', 'created_at', 'createdAt']);
const text = (value: unknown) => (value === undefined || value === null || value === '' ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value));
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The fields an entry changed: an update's differences, a creation's values, a deletion's last values. */
export function changedFields({ action, changes }: Pick<Entry, 'action' | 'changes'>): { field: string; before: unknown; after: unknown }[] {
  const before = changes?.before ?? {};
  const after = changes?.after ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => !NOISE.has(field));
  return fields
    .filter((field) => (action === 'update' ? !same(before[field], after[field]) : (action === 'create' ? after[field] : before[field]) != null))
    .map((field) => ({ field, before: before[field], after: after[field] }));
}

function Changes({ entry }: { entry: Entry }) {
  const fields = changedFields(entry);
  if (!fields.length) return <Typography variant="body2" color="text.secondary">No field changed</Typography>;
  return (
    <Box component="ul" sx={{ m: 0, pl: 2, wordBreak: 'break-word' }}>
      {fields.map(({ field, before, after }) => (
        <Typography component="li" variant="body2" key={field}>
          <Box component="code" sx={{ fontWeight: 600 }}>{field}</Box>:{' '}
          {entry.action === 'update' ? (
            <><Box component="del">{text(before)}</Box> → <Box component="ins" sx={{ textDecoration: 'none', fontWeight: 600 }}>{text(after)}</Box></>
          ) : text(entry.action === 'create' ? after : before)}
        </Typography>
      ))}
    </Box>
  );
}

/** One page of the history, read when the panel opens (and again each time it does: it changes with every save). */
function HistoryTable({ spec, id }: { spec: ResourceSpec; id: string }) {
  // cms and crm records can be set back to their state before a change, by who may edit them.
  const { canAccess: canEdit } = useCanAccess({ resource: spec.name, action: 'edit' });
  const restorable = spec.module !== 'iam' && !spec.readOnly && !!canEdit;
  const [page, setPage] = useState(0);
  const [limit, setLimit] = useState(10);
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const history = useQuery({
    queryKey: ['history', spec.name, id, page, limit],
    queryFn: ({ signal }) => api<Page>(`${spec.path}/${encodeURIComponent(id)}/history`, { query: { page: page + 1, limit }, signal }),
    staleTime: 0,
  });
  useEffect(() => {
    if (history.error) void logoutIfAccessDenied(history.error);
  }, [history.error, logoutIfAccessDenied]);
  if (history.error) return <Alert severity="error">{(history.error as Error).message}</Alert>;
  if (!history.data) return <Skeleton height={80} aria-label="Loading the history" />;
  const { data, pagination } = history.data;
  if (!pagination.total) return <Typography variant="body2">No recorded change.</Typography>;
  return (
    <>
      <Box sx={{ contain: 'inline-size' }}><ScrollX label="History of changes">
        <Table size="small" aria-label={`History of this ${spec.singular.toLowerCase()}`}>
          <TableHead>
            <TableRow><TableCell>When</TableCell><TableCell>Who</TableCell><TableCell>Action</TableCell><TableCell>Changes</TableCell>{restorable ? <TableCell><Box component="span" sx={{ position: 'absolute', left: -9999 }}>Restore</Box></TableCell> : null}</TableRow>
          </TableHead>
          <TableBody>
            {data.map((entry) => (
              <TableRow key={entry.id} sx={{ verticalAlign: 'top' }}>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{dateTime.format(new Date(entry.created_at))}</TableCell>
                <TableCell>{entry.user?.name ?? 'the system'}</TableCell>
                <TableCell>{entry.action}</TableCell>
                <TableCell sx={{ minWidth: 220 }}><Changes entry={entry} /></TableCell>
                {restorable ? (
                  <TableCell>
                    {entry.action === 'update' ? <RestoreButton path={spec.path} recordId={id} logId={entry.id} label={spec.singular} onRestored={() => void history.refetch()} /> : null}
                  </TableCell>
                ) : null}
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </ScrollX></Box>
      <TablePagination
        component="div"
        count={pagination.total}
        page={page}
        onPageChange={(_, next) => setPage(next)}
        rowsPerPage={limit}
        rowsPerPageOptions={[10, 25, 50]}
        onRowsPerPageChange={(event) => {
          setLimit(Number(event.target.value));
          setPage(0);
        }}
        labelRowsPerPage="Changes per page"
      />
    </>
  );
}

/** A record's history (who changed what, when), under its detail page; read from the API only when opened. */
export function HistoryPanel({ spec }: { spec: ResourceSpec }) {
  const record = useRecordContext();
  const [open, setOpen] = useState(false);
  if (!record || spec.noHistory) return null;
  const headingId = `history-${spec.name}`;
  return (
    <Accordion expanded={open} onChange={(_, next) => setOpen(next)} disableGutters slotProps={{ transition: { unmountOnExit: true }, heading: { component: 'h2' } as object }} sx={{ mt: 2 }}>
      <AccordionSummary expandIcon={<ExpandMoreIcon />} id={headingId} aria-controls={`${headingId}-content`}>
        <Typography variant="subtitle1">History</Typography>
      </AccordionSummary>
      <AccordionDetails id={`${headingId}-content`} role="region" aria-labelledby={headingId}>
        <HistoryTable spec={spec} id={String(record.id)} />
      </AccordionDetails>
    </Accordion>
  );
}
