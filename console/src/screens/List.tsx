import FilterListIcon from '@mui/icons-material/FilterList';
import { Box, Button, type Theme, useMediaQuery } from '@mui/material';
import { type ReactNode, useState } from 'react';
import { CreateButton, DataTable, DeleteButton, List, Pagination, SimpleList, TextInput, TopToolbar, useListContext, useRecordContext } from 'react-admin';
import { FieldValue, filterInput } from '../resources/fields';
import { listFiltersOf } from '../resources/ranges';
import type { ResourceSpec } from '../resources/types';
import { ImportableEmpty, ImportCsvButton, ImportCsvDialog } from '../integrations/ImportCsvButton';
import { IMPORT_PATHS } from '../resources/integrations';
import { ExportCsvButton } from './ExportCsvButton';
import { useSpec } from './useSpec';

function Actions({ spec, toggle, onImport }: { spec: ResourceSpec; toggle?: ReactNode; onImport: () => void }) {
  return (
    <TopToolbar sx={{ flexWrap: 'wrap' }}>
      {toggle}
      {spec.readOnly ? null : <CreateButton label="Create" />}
      {spec.exportable ? <ExportCsvButton spec={spec} /> : null}
      <ImportCsvButton spec={spec} onOpen={onImport} />
    </TopToolbar>
  );
}

/** A row's own delete, where the resource is read-only but deletable (an API token's "Revoke"). */
function RowDelete({ spec }: { spec: ResourceSpec }) {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <DeleteButton mutationMode="pessimistic" label={spec.deletable} aria-label={`${spec.deletable} ${spec.title(record)}`} redirect={false}
      confirmTitle={`${spec.deletable} ${spec.singular.toLowerCase()} "${spec.title(record)}"?`} confirmContent="It stops working at once. This cannot be undone." />
  );
}

/** On a phone the filters (all but the search box) wait behind this button; it says how many are in use. */
function FiltersToggle({ open, onToggle, sources }: { open: boolean; onToggle: () => void; sources: string[] }) {
  const { filterValues } = useListContext();
  const used = sources.filter((source) => { const v = filterValues?.[source]; return v !== undefined && v !== '' && !(Array.isArray(v) && !v.length); }).length;
  return (
    <Button size="small" startIcon={<FilterListIcon />} aria-expanded={open} onClick={onToggle}>
      {used ? `Filters (${used})` : 'Filters'}
    </Button>
  );
}

/** Two more fields of a record, as text, for the narrow list. */
function Summary({ spec, fields }: { spec: ResourceSpec; fields: string[] }) {
  const record = useRecordContext();
  const text = (value: unknown) => (value && typeof value === 'object' ? (value as { name?: string }).name ?? '' : value == null ? '' : String(value));
  if (!record) return null;
  const title = spec.title(record);
  // The next two values that the line's title does not already say.
  const values = fields.map((source) => text(source.split('.').reduce<any>((v, k) => v?.[k], record))).filter((value) => value && !title.includes(value));
  return <>{values.slice(0, 2).join(' · ')}</>;
}

/** Every list alike: exact totals and paging from the API, sortable columns, its filters, the search box, export. */
export default function ResourceList() {
  const spec = useSpec();
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down('sm'));
  const [filtersOpen, setFiltersOpen] = useState(false);
  const [importing, setImporting] = useState(false);
  const startImport = () => setImporting(true);
  const declared = listFiltersOf(spec);
  // Every filter is on screen (they wrap): nothing to discover behind an "Add filter" menu. On a phone they would fill
  // the first screen before any record, so there they wait behind a "Filters" button (their values still apply).
  const collapsed = small && !filtersOpen && declared.length > 1;
  const filters = [
    ...(spec.search || spec.whole ? [<TextInput key="q" source="q" label="Search" alwaysOn resettable={false} helperText={false} />] : []),
    ...(collapsed ? [] : declared.map(filterInput)),
  ];
  const toggle = small && declared.length > 1
    ? <FiltersToggle open={filtersOpen} onToggle={() => setFiltersOpen(!filtersOpen)} sources={declared.map((filter) => filter.source)} />
    : undefined;
  const sortField = spec.defaultSort ?? spec.sortable[0];
  // A thumbnail first, where the list shows one (projects' covers).
  const columns = spec.fields.filter((field) => field.list).sort((a, b) => Number(b.type === 'image') - Number(a.type === 'image'));
  const thumbnail = columns.find((field) => field.type === 'image');
  return (
    <>
      <List
        title={spec.label}
        filters={filters.length ? filters : undefined}
        actions={<Actions spec={spec} toggle={toggle} onImport={startImport} />}
        empty={spec.name in IMPORT_PATHS ? <ImportableEmpty spec={spec} onImport={startImport} /> : undefined}
        sort={sortField ? { field: sortField, order: spec.whole ? 'ASC' : 'DESC' } : undefined}
        perPage={25}
        pagination={<Pagination rowsPerPageOptions={[10, 25, 50, 100]} />}
        disableSyncWithLocation={false}
        storeKey={false}
      >
        {small ? (
          // A phone gets one line per record (its name, then two more fields), each a link to the record.
          <SimpleList
            linkType="show"
            primaryText={(record) => spec.title(record)}
            secondaryText={() => <Summary fields={columns.filter((field) => field !== thumbnail).map((field) => field.source)} spec={spec} />}
            leftIcon={thumbnail ? () => <Box sx={{ mr: 1 }}><FieldValue field={thumbnail} dense /></Box> : undefined}
          />
        ) : (
        <DataTable bulkActionButtons={false} rowClick="show">
          {columns.map((field) => (
            <DataTable.Col key={field.source} source={field.source} label={field.label} disableSort={!spec.sortable.includes(field.source)} render={() => <FieldValue field={field} dense />} />
          ))}
          {spec.deletable ? <DataTable.Col label="Actions" render={() => <RowDelete spec={spec} />} /> : null}
        </DataTable>
        )}
      </List>
      <ImportCsvDialog spec={spec} open={importing} onClose={() => setImporting(false)} />
    </>
  );
}
