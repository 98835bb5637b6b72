import DownloadIcon from '@mui/icons-material/Download';
import { Button } from '@mui/material';
import { useCanAccess, useListContext } from 'react-admin';
import { exportUrl } from '../api/dataProvider';
import type { ResourceSpec } from '../resources/types';

/** Downloads the server's CSV export of the list as filtered, searched and sorted now (CONTRACT §10). */
export function ExportCsvButton({ spec }: { spec: ResourceSpec }) {
  const { filterValues, sort, total } = useListContext();
  const { canAccess } = useCanAccess({ resource: spec.name, action: 'export' });
  if (!canAccess) return null;
  return (
    <Button component="a" href={exportUrl(spec, filterValues, sort)} download size="small" startIcon={<DownloadIcon />} disabled={total === 0}>
      Export CSV
    </Button>
  );
}
