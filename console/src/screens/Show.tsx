import { Suspense } from 'react';
import { DeleteButton, EditButton, Loading, Show, SimpleShowLayout, TopToolbar, useRecordContext } from 'react-admin';
import { FieldGrid } from '../shared/FieldGrid';
import { HistoryPanel } from '../shared/HistoryPanel';
import type { ResourceSpec } from '../resources/types';
import { ownScreensOf } from './registry';
import { useSpec } from './useSpec';

function Actions({ spec }: { spec: ResourceSpec }) {
  const record = useRecordContext();
  if (record && spec.deletable) {
    return (
      <TopToolbar>
        <DeleteButton mutationMode="pessimistic" label={spec.deletable} confirmTitle={`${spec.deletable} ${spec.singular.toLowerCase()} "${spec.title(record)}"?`} confirmContent="It stops working at once. This cannot be undone." />
      </TopToolbar>
    );
  }
  // A record the API marks read-only (the SSO provider set by environment) is changed where it is set.
  if (spec.readOnly || !record || record.read_only === true) return <TopToolbar />;
  return (
    <TopToolbar>
      <EditButton label="Edit" />
      <DeleteButton mutationMode="pessimistic" label="Delete" confirmTitle={`Delete ${spec.singular.toLowerCase()} "${spec.title(record)}"?`} confirmContent={spec.module === 'iam' ? 'This cannot be undone.' : 'It goes to the trash, where it can be restored for 30 days.'} />
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
  const Extras = ownScreensOf(spec.name).showExtras;
  return (
    <Show title={<Title spec={spec} />} actions={<Actions spec={spec} />}>
      <SimpleShowLayout>
        <FieldGrid fields={spec.fields.filter((field) => !field.hideInShow)} />
      </SimpleShowLayout>
      {Extras ? <Suspense fallback={<Loading />}><Extras /></Suspense> : null}
      <HistoryPanel spec={spec} />
    </Show>
  );
}
