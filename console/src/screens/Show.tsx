import { Box } from '@mui/material';
import { Suspense } from 'react';
import { DeleteButton, EditButton, Labeled, Loading, Show, SimpleShowLayout, TopToolbar, useRecordContext } from 'react-admin';
import { FieldValue } from '../resources/fields';
import type { ResourceSpec } from '../resources/types';
import { useSpec } from './useSpec';

function Actions({ spec }: { spec: ResourceSpec }) {
  const record = useRecordContext();
  if (spec.readOnly || !record) return <TopToolbar />;
  return (
    <TopToolbar>
      <EditButton label="Edit" />
      <DeleteButton mutationMode="pessimistic" label="Delete" confirmTitle={`Delete ${spec.singular.toLowerCase()} "${spec.title(record)}"?`} confirmContent="This cannot be undone." />
    </TopToolbar>
  );
}

function Title({ spec }: { spec: ResourceSpec }) {
  const record = useRecordContext();
  return <>{record ? `${spec.singular}: ${spec.title(record)}` : spec.singular}</>;
}

/** A record's detail: every field, then the panels of its own (gallery, reservation, module access). */
export default function ResourceShow() {
  const spec = useSpec();
  const Extras = spec.showExtras;
  return (
    <Show title={<Title spec={spec} />} actions={<Actions spec={spec} />}>
      <SimpleShowLayout>
        <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', lg: 'repeat(3, minmax(0, 1fr))' }, gap: 2 }}>
          {spec.fields.filter((field) => !field.hideInShow).map((field) => (
            <Labeled key={field.source} label={field.label}>
              <FieldValue field={field} />
            </Labeled>
          ))}
        </Box>
      </SimpleShowLayout>
      {Extras ? <Suspense fallback={<Loading />}><Extras /></Suspense> : null}
    </Show>
  );
}
