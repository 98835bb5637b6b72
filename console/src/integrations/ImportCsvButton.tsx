import InboxIcon from '@mui/icons-material/Inbox';
import UploadFileIcon from '@mui/icons-material/UploadFile';
import { Box, Button, Stack, Typography } from '@mui/material';
import { lazy, Suspense } from 'react';
import { CreateButton, useCanAccess } from 'react-admin';
import { IMPORT_PATHS } from '../resources/integrations';
import type { ResourceSpec } from '../resources/types';

const ImportDialog = lazy(() => import('./ImportDialog'));

/** "Import CSV" on the lists that take one, for users who may create their records (crm write). */
export function ImportCsvButton({ spec, onOpen }: { spec: ResourceSpec; onOpen: () => void }) {
  const importable = spec.name in IMPORT_PATHS;
  const { canAccess } = useCanAccess({ resource: spec.name, action: 'create', enabled: importable });
  if (!importable || !canAccess) return null;
  return <Button size="small" startIcon={<UploadFileIcon />} onClick={onOpen}>Import CSV</Button>;
}

/**
 * A list's import dialog while it is open. The list screen holds it, not the button: the list's toolbar and its empty
 * page each have a button and replace each other (the list loads, or fills), and a dialog held by one closed when the
 * other took its place (Import CSV clicked while an empty list was still loading opened nothing).
 */
export function ImportCsvDialog({ spec, open, onClose }: { spec: ResourceSpec; open: boolean; onClose: () => void }) {
  if (!open) return null;
  return (
    <Suspense fallback={null}>
      <ImportDialog spec={spec} onClose={onClose} />
    </Suspense>
  );
}

/** An importable list with nothing in it yet: what react-admin's empty page says, with Create and Import CSV. */
export function ImportableEmpty({ spec, onImport }: { spec: ResourceSpec; onImport: () => void }) {
  return (
    <Box sx={{ textAlign: 'center', mt: 6, mx: 'auto', px: 2 }}>
      <InboxIcon sx={{ width: 120, height: 120, color: 'text.secondary' }} aria-hidden />
      <Typography variant="h4" component="p" color="text.secondary" sx={{ mb: 1 }}>No {spec.label} yet.</Typography>
      <Typography variant="body1" color="text.secondary">Add one, or import a CSV file in the columns of the export.</Typography>
      <Stack direction="row" spacing={2} sx={{ justifyContent: 'center', mt: 3 }}>
        <CreateButton variant="contained" label="Create" />
        <ImportCsvButton spec={spec} onOpen={onImport} />
      </Stack>
    </Box>
  );
}
