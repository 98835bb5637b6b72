import { Box, Link as MuiLink, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { Show, SimpleShowLayout, useCanAccess, useRecordContext } from 'react-admin';
import { Link } from 'react-router-dom';
import { RESOURCES, specOf } from '../resources/declarations';
import { FieldGrid } from '../shared/FieldGrid';
import { ScrollX } from '../shared/ScrollX';
import { RestoreButton } from '../undo/RestoreButton';

type Log = { id: string; action: string; resource: string; resource_id: string; changes: { before: Record<string, unknown>; after: Record<string, unknown> } };
const spec = specOf('activity-logs');

const text = (value: unknown) => (value === undefined ? '' : value === null ? 'null' : typeof value === 'object' ? JSON.stringify(value) : String(value));

/** Before and after of each changed field, side by side. */
function Changes() {
  const log = useRecordContext<Log>();
  if (!log) return null;
  const { before = {}, after = {} } = log.changes ?? {};
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return (
    <Box component="section" aria-labelledby="changes-title" sx={{ p: 2 }}>
      <Typography id="changes-title" variant="h6" component="h2" gutterBottom>Changes</Typography>
      <ScrollX label="Changed fields">
        <Table size="small" aria-labelledby="changes-title">
          <TableHead>
            <TableRow><TableCell>Field</TableCell><TableCell>Before</TableCell><TableCell>After</TableCell></TableRow>
          </TableHead>
          <TableBody>
            {fields.map((field) => (
              <TableRow key={field}>
                <TableCell component="th" scope="row" sx={{ fontFamily: 'monospace' }}>{field}</TableCell>
                <TableCell sx={{ wordBreak: 'break-word', bgcolor: field in before ? '#fdecea' : undefined }}>{text(before[field])}</TableCell>
                <TableCell sx={{ wordBreak: 'break-word', bgcolor: field in after ? '#e8f5e9' : undefined }}>{text(after[field])}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </ScrollX>
    </Box>
  );
}

/** A link to the changed record, when the console has a page for it and it still exists. */
function RecordLink() {
  const log = useRecordContext<Log>();
  const target = RESOURCES.find((r) => r.name === log?.resource);
  const { canAccess } = useCanAccess({ resource: target?.name ?? 'activity-logs', action: 'show' });
  if (!log || !target || log.action === 'delete' || !canAccess) return null;
  return <MuiLink component={Link} to={`/${target.name}/${log.resource_id}/show`}>Open the {target.singular.toLowerCase()}</MuiLink>;
}

/** *Restore*: an update of a cms or crm record can be undone from here too, by who may edit that record. */
function RestoreLink() {
  const log = useRecordContext<Log>();
  const target = RESOURCES.find((r) => r.name === log?.resource);
  const { canAccess } = useCanAccess({ resource: target?.name ?? 'activity-logs', action: 'edit' });
  if (!log || !target || target.module === 'iam' || target.readOnly || !canAccess) return null;
  if (log.action === 'delete') return <MuiLink component={Link} to={`/trash/${target.module}`}>Find it in the trash</MuiLink>;
  if (log.action !== 'update') return null;
  return <RestoreButton path={target.path} recordId={log.resource_id} logId={log.id} label={target.singular} />;
}

export default function ActivityLogShow() {
  return (
    <Show title="Activity">
      <SimpleShowLayout>
        <FieldGrid fields={spec.fields} columns={4} />
        <RecordLink />
        <RestoreLink />
      </SimpleShowLayout>
      <Changes />
    </Show>
  );
}
