import { CreateButton, DataTable, FilterButton, List, Pagination, TextInput, TopToolbar } from 'react-admin';
import { FieldValue, filterInput } from '../resources/fields';
import type { ResourceSpec } from '../resources/types';
import { ExportCsvButton } from './ExportCsvButton';
import { useSpec } from './useSpec';

function Actions({ spec }: { spec: ResourceSpec }) {
  return (
    <TopToolbar>
      {spec.filters?.length ? <FilterButton /> : null}
      {spec.readOnly ? null : <CreateButton label="Create" />}
      {spec.exportable ? <ExportCsvButton spec={spec} /> : null}
    </TopToolbar>
  );
}

/** Every list alike: exact totals and paging from the API, sortable columns, its filters, the search box, export. */
export default function ResourceList() {
  const spec = useSpec();
  const filters = [
    ...(spec.search || spec.whole ? [<TextInput key="q" source="q" label="Search" alwaysOn resettable={false} helperText={false} />] : []),
    ...(spec.filters ?? []).map(filterInput),
  ];
  const sortField = spec.defaultSort ?? spec.sortable[0];
  return (
    <List
      title={spec.label}
      filters={filters.length ? filters : undefined}
      actions={<Actions spec={spec} />}
      sort={sortField ? { field: sortField, order: spec.whole ? 'ASC' : 'DESC' } : undefined}
      perPage={25}
      pagination={<Pagination rowsPerPageOptions={[10, 25, 50, 100]} />}
      disableSyncWithLocation={false}
      storeKey={false}
    >
      <DataTable bulkActionButtons={false} rowClick="show">
        {spec.fields.filter((field) => field.list).map((field) => (
          <DataTable.Col key={field.source} source={field.source} label={field.label} disableSort={!spec.sortable.includes(field.source)} render={() => <FieldValue field={field} />} />
        ))}
      </DataTable>
    </List>
  );
}
