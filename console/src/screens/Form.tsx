import { Box } from '@mui/material';
import { Create, DeleteButton, Edit, SaveButton, SimpleForm, Toolbar, useRecordContext } from 'react-admin';
import { useLocation } from 'react-router-dom';
import { writable } from '../api/dataProvider';
import { FieldInput } from '../resources/fields';
import { FieldGrid } from '../shared/FieldGrid';
import type { FieldSpec, ResourceSpec } from '../resources/types';
import { useSpec } from './useSpec';

/** Reservation status moves the contract allows (CONTRACT §12): pending → confirmed | cancelled; confirmed → cancelled. */
const RESERVATION_MOVES: Record<string, readonly string[]> = {
  pending: ['pending', 'confirmed', 'cancelled'],
  confirmed: ['confirmed', 'cancelled'],
  cancelled: ['cancelled'],
};

/** The choices a select offers for this record: only the moves the API accepts. */
function choicesFor(spec: ResourceSpec, field: FieldSpec, record: Record<string, any> | undefined, mode: 'create' | 'edit') {
  if (spec.name === 'reservations' && field.source === 'status') return mode === 'create' ? ['pending', 'confirmed'] : RESERVATION_MOVES[record?.status ?? 'pending'];
  return field.choices;
}

function EditToolbar({ spec }: { spec: ResourceSpec }) {
  const record = useRecordContext();
  return (
    <Toolbar sx={{ justifyContent: 'space-between' }}>
      <SaveButton label="Save" />
      {record ? <DeleteButton mutationMode="pessimistic" label="Delete" confirmTitle={`Delete ${spec.singular.toLowerCase()} "${spec.title(record)}"?`} confirmContent={spec.module === 'iam' ? 'This cannot be undone.' : 'It goes to the trash, where it can be restored for 30 days.'} /> : null}
    </Toolbar>
  );
}

function Inputs({ spec, mode }: { spec: ResourceSpec; mode: 'create' | 'edit' }) {
  const record = useRecordContext();
  // Fields this form does not write are shown for context (an inquiry's message above its response).
  const context = mode === 'edit' ? spec.fields.filter((field) => (field.readOnly || field.only === 'create') && !field.hideInShow && field.type !== 'password') : [];
  return (
    <Box sx={{ width: '100%', maxWidth: 720 }}>
      {context.length ? (
        <Box sx={{ mb: 2 }}><FieldGrid fields={context} columns={2} /></Box>
      ) : null}
      {writable(spec, mode).map((field) => {
        const choices = choicesFor(spec, field, record, mode);
        // No move left (a cancelled reservation): the status is shown, nothing is offered.
        const final = mode === 'edit' && field.type === 'select' && choices !== field.choices && choices?.length === 1;
        return (
          <FieldInput key={`${field.source}-${field.type}`} field={final ? { ...field, helper: `${choices[0]} is final` } : field} choices={choices} readOnly={final} />
        );
      })}
    </Box>
  );
}

const titleOf = (spec: ResourceSpec, record?: Record<string, any>) => (record ? `Edit ${spec.singular.toLowerCase()}: ${spec.title(record)}` : spec.singular);

function EditTitle({ spec }: { spec: ResourceSpec }) {
  return <>{titleOf(spec, useRecordContext())}</>;
}

/** Edit: only the changed fields are sent; the API's validation messages appear next to their fields. */
export function ResourceEdit() {
  const spec = useSpec();
  return (
    <Edit title={<EditTitle spec={spec} />} mutationMode="pessimistic" redirect="show" actions={false}>
      {/* The record is read again when the live stream says someone changed it: their changes come in, the fields being edited here stay. */}
      <SimpleForm toolbar={<EditToolbar spec={spec} />} warnWhenUnsavedChanges resetOptions={{ keepDirtyValues: true }}>
        <Inputs spec={spec} mode="edit" />
      </SimpleForm>
    </Edit>
  );
}

/** Create: starts from the values a link passed (a reservation of a unit), the API fills in its defaults. */
export function ResourceCreate() {
  const spec = useSpec();
  const location = useLocation();
  return (
    <Create title={`Create ${spec.singular.toLowerCase()}`} redirect="show" record={(location.state as { record?: object } | null)?.record}>
      <SimpleForm toolbar={<Toolbar><SaveButton label="Save" /></Toolbar>}>
        <Inputs spec={spec} mode="create" />
      </SimpleForm>
    </Create>
  );
}
