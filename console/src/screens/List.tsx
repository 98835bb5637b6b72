import { type Theme, useMediaQuery } from '@mui/material';
import { CreateButton, DataTable, DeleteButton, List, Pagination, SimpleList, TextInput, TopToolbar, useRecordContext } from 'react-admin';
import { FieldValue, filterInput } from '../resources/fields';
import { listFiltersOf } from '../resources/ranges';
import type { ResourceSpec } from '../resources/types';
import { IMPORT_PATHS, ImportableEmpty, ImportCsvButton } from '../integrations/ImportCsvButton';
import { ExportCsvButton } from './ExportCsvButton';
import { useSpec } from './useSpec';

function Actions({ spec }: { spec: ResourceSpec }) {
  return (
    <TopToolbar>
      {spec.readOnly ? null : <CreateButton label="Create" />}
      {spec.exportable ? <ExportCsvButton spec={spec} /> : null}
      <ImportCsvButton spec={spec} />
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
  const filters = [
    ...(spec.search || spec.whole ? [<TextInput key="q" source="q" label="Search" alwaysOn resettable={false} helperText={false} />] : []),
    // Every filter is on screen (they wrap on a narrow one): nothing to discover behind an "Add filter" menu.
    ...listFiltersOf(spec).map(filterInput),
  ];
  const sortField = spec.defaultSort ?? spec.sortable[0];
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down('sm'));
  const columns = spec.fields.filter((field) => field.list);
  return (
    <List
      title={spec.label}
      filters={filters.length ? filters : undefined}
      actions={<Actions spec={spec} />}
      empty={spec.name in IMPORT_PATHS ? <ImportableEmpty spec={spec} /> : undefined}
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
          secondaryText={() => <Summary fields={columns.map((field) => field.source)} spec={spec} />}
        />
      ) : (
      <DataTable bulkActionButtons={false} rowClick="show">
        {columns.map((field) => (
          <DataTable.Col key={field.source} source={field.source} label={field.label} disableSort={!spec.sortable.includes(field.source)} render={() => <FieldValue field={field} />} />
        ))}
        {spec.deletable ? <DataTable.Col label="Actions" render={() => <RowDelete spec={spec} />} /> : null}
      </DataTable>
      )}
    </List>
  );
}
