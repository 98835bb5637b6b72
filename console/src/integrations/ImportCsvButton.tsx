import UploadFileIcon from '@mui/icons-material/UploadFile';
import { Button } from '@mui/material';
import { lazy, Suspense, useState } from 'react';
import { useCanAccess } from 'react-admin';
import type { ResourceSpec } from '../resources/types';

/** The lists a CSV can be imported into, and where (README "Import"). */
export const IMPORT_PATHS: Record<string, string> = {
  leads: '/api/crm/leads/import',
  inventory: '/api/crm/inventory/import',
  newsletters: '/api/crm/newsletters/import',
};

const ImportDialog = lazy(() => import('./ImportDialog'));

/** "Import CSV" on the lists that take one, for users who may create their records (crm write). */
export function ImportCsvButton({ spec }: { spec: ResourceSpec }) {
  const importable = spec.name in IMPORT_PATHS;
  const { canAccess } = useCanAccess({ resource: spec.name, action: 'create', enabled: importable });
  const [open, setOpen] = useState(false);
  if (!importable || !canAccess) return null;
  return (
    <>
      <Button size="small" startIcon={<UploadFileIcon />} onClick={() => setOpen(true)}>Import CSV</Button>
      {open ? (
        <Suspense fallback={null}>
          <ImportDialog spec={spec} onClose={() => setOpen(false)} />
        </Suspense>
      ) : null}
    </>
  );
}
