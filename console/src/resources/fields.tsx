import { Box, Link as MuiLink, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import {
  ArrayInput, AutocompleteInput, BooleanInput, DateInput, DateTimeInput, NumberInput, PasswordInput, ReferenceInput,
  required, SelectArrayInput, SelectInput, SimpleFormIterator, TextArrayInput, TextInput, useCanAccess, useGetManyAggregate, useRecordContext,
} from 'react-admin';
import { Link } from 'react-router-dom';
import { refPath } from '../api/dataProvider';
import { UploadInput } from '../shared/UploadInput';
import { specOf } from './declarations';
import type { FieldSpec, FilterSpec } from './types';

const get = (record: Record<string, any> | undefined, path: string): any =>
  path.split('.').reduce<any>((value, key) => (value == null ? undefined : value[key]), record);

export const choicesOf = (values: readonly string[]) => values.map((value) => ({ id: value, name: value.replace(/-/g, ' ') }));

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

/** The name of a referenced record, a link to it when the user may read it. */
function RefLink({ resource, id, text }: { resource: string; id?: string; text: string }) {
  const { canAccess } = useCanAccess({ resource, action: 'show' });
  if (!id || !canAccess) return <Typography component="span" variant="body2">{text}</Typography>;
  return (
    <MuiLink component={Link} to={`/${resource}/${id}/show`} onClick={(event) => event.stopPropagation()}>
      {text}
    </MuiLink>
  );
}

/** A reference the API answers as an id alone: its name read from the referenced resource (cached, batched). */
function RefById({ resource, id, text }: { resource: string; id: string; text: string }) {
  const { data } = useGetManyAggregate(resource, { ids: [id] });
  return <RefLink resource={resource} id={id} text={data?.[0]?.[text] ?? '…'} />;
}

/** An uploaded image at the size shown: the browser picks from its WebP variants (`<field>_variants.srcset`). */
function Picture({ field, src, dense }: { field: FieldSpec; src: string; dense?: boolean }) {
  const record = useRecordContext();
  const variants = get(record, `${field.source}_variants`) as { srcset?: string } | null | undefined;
  const name = record?.name ?? record?.title ?? 'the record';
  const size = dense ? { width: 64, height: 48, objectFit: 'cover' as const } : { maxWidth: 240, maxHeight: 160 };
  return (
    <Box component="img" src={src} srcSet={variants?.srcset} sizes={dense ? '64px' : '240px'} loading={dense ? 'lazy' : undefined}
      alt={`${field.label} of ${name}`} sx={{ ...size, borderRadius: 1, display: 'block' }} />
  );
}

/** A value as a person reads it, from the record in context; `dense`: as a list's cell shows it (a thumbnail). */
export function FieldValue({ field, dense }: { field: FieldSpec; dense?: boolean }): ReactNode {
  const record = useRecordContext();
  const value = get(record, field.source);
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && !value.length)) return <Typography component="span" variant="body2" color="text.secondary">—</Typography>;
  switch (field.type) {
    case 'boolean':
      return <Typography component="span" variant="body2">{value ? 'Yes' : 'No'}</Typography>;
    case 'datetime':
      return <Typography component="span" variant="body2">{dateTime.format(new Date(value))}</Typography>;
    case 'number':
    case 'money':
      return <Typography component="span" variant="body2">{number.format(value)}</Typography>;
    case 'ref': {
      if (field.ref!.idOnly) return <RefById resource={field.ref!.resource} id={String(value)} text={field.ref!.text} />;
      return <RefLink resource={field.ref!.resource} id={value.id} text={value[field.ref!.text] ?? value.name ?? value.id} />;
    }
    case 'strings':
      return <Typography component="span" variant="body2">{(value as string[]).join(', ')}</Typography>;
    case 'permissions':
      return <Typography component="span" variant="body2">{permissionsText(value)}</Typography>;
    case 'landmarks':
      return (
        <Box component="ul" sx={{ m: 0, pl: 2 }}>
          {(value as { name: string; distance: string }[]).map((item, i) => <li key={i}>{item.name} — {item.distance}</li>)}
        </Box>
      );
    case 'image':
      return <Picture field={field} src={value} dense={dense} />;
    case 'longtext':
      return <Typography component="span" variant="body2" sx={{ whiteSpace: 'pre-wrap' }}>{String(value)}</Typography>;
    case 'email':
      return <MuiLink href={`mailto:${value}`} onClick={(event) => event.stopPropagation()}>{value}</MuiLink>;
    case 'select':
      return <Typography component="span" variant="body2">{String(value).replace(/-/g, ' ')}</Typography>;
    default:
      return <Typography component="span" variant="body2">{String(value)}</Typography>;
  }
}

/**
 * A reference picker: a search box where the API has `q`, otherwise a list to choose from. The referenced resource is
 * `reference`, not `resource`: a list's filter form gives each of its inputs `resource` (the list's own), and a picker
 * that read it offered the list's records (leads under "Assigned to") to anyone who could read the list.
 */
function ReferencePicker({ source, label, reference: resource, text, validate, filter, helperText }: {
  source: string; label: string; reference: string; text: string; validate?: ReturnType<typeof required>; filter?: Record<string, unknown>; helperText?: string | false;
  /** Read by the list's filter form from this element. */
  alwaysOn?: boolean;
}) {
  const target = specOf(resource);
  // Without read access to the referenced module (a sales agent and the users list) there is nothing to choose from.
  const { canAccess } = useCanAccess({ resource, action: 'list' });
  if (!canAccess) return null;
  return (
    <ReferenceInput source={source} reference={resource} filter={filter} perPage={target.search ? 25 : 100} sort={{ field: target.defaultSort ?? target.sortable[0] ?? 'created_at', order: target.whole ? 'ASC' : 'DESC' }}>
      {target.search
        ? <AutocompleteInput label={label} optionText={text} validate={validate} helperText={helperText} filterToQuery={(q) => ({ q })} fullWidth />
        : <SelectInput label={label} optionText={text} validate={validate} helperText={helperText} fullWidth />}
    </ReferenceInput>
  );
}

/** The input of a field in a create or edit form. */
export function FieldInput({ field, choices, readOnly }: { field: FieldSpec; choices?: readonly string[]; readOnly?: boolean }) {
  const validate = field.required ? required() : undefined;
  const common = { source: field.source, label: field.label, helperText: field.helper ?? false, validate, fullWidth: true } as const;
  switch (field.type) {
    case 'longtext':
      return <TextInput {...common} multiline minRows={3} />;
    case 'email':
      return <TextInput {...common} type="email" autoComplete="off" />;
    case 'password':
      return <PasswordInput {...common} autoComplete="new-password" />;
    case 'number':
    case 'money':
      return <NumberInput {...common} />;
    case 'boolean':
      return <BooleanInput source={field.source} label={field.label} helperText={field.helper ?? false} />;
    case 'datetime':
      return <DateTimeInput {...common} />;
    case 'select':
      return <SelectInput {...common} choices={choicesOf(choices ?? field.choices ?? [])} emptyText="—" readOnly={readOnly} />;
    case 'ref': {
      // Reserving offers the units that are free.
      const filter = field.ref!.resource === 'inventory' ? { status: 'available' } : undefined;
      return <ReferencePicker source={refPath(field)} label={field.label} reference={field.ref!.resource} text={field.ref!.text} validate={validate} filter={filter} helperText={field.helper} />;
    }
    case 'strings':
      return <TextArrayInput {...common} helperText={field.helper ?? 'Type and press Enter to add'} />;
    case 'image':
      return <UploadInput source={field.source} label={field.label} />;
    case 'permissions':
      return (
        <ArrayInput source={field.source} label={field.label} helperText={field.helper ?? false}>
          <SimpleFormIterator inline disableReordering>
            <SelectInput source="module" label="Module" choices={choicesOf(['cms', 'crm', 'iam'])} helperText={false} validate={required()} />
            <BooleanInput source="can_read" label="Read" helperText={false} />
            <BooleanInput source="can_write" label="Write" helperText={false} />
            <BooleanInput source="can_delete" label="Delete" helperText={false} />
          </SimpleFormIterator>
        </ArrayInput>
      );
    case 'landmarks':
      return (
        <ArrayInput source={field.source} label={field.label}>
          <SimpleFormIterator inline disableReordering>
            <TextInput source="name" label="Landmark" helperText={false} />
            <TextInput source="distance" label="Distance" helperText={false} />
          </SimpleFormIterator>
        </ArrayInput>
      );
    default:
      return <TextInput {...common} />;
  }
}

/** "crm: read, write; cms: read" from [{module, can_read, can_write, can_delete}]. */
export function permissionsText(permissions: { module: string; can_read: boolean; can_write: boolean; can_delete: boolean }[]): string {
  return permissions
    .map((p) => [p.module, [p.can_read && 'read', p.can_write && 'write', p.can_delete && 'delete'].filter(Boolean).join(', ')] as const)
    .filter(([, flags]) => flags)
    .map(([module, flags]) => `${module}: ${flags}`)
    .join('; ') || 'none';
}

/** A list filter; the search box (`q`) is separate. */
export function filterInput(filter: FilterSpec) {
  const { source, label } = filter;
  const common = { source, label, alwaysOn: true, helperText: false } as const;
  switch (filter.type) {
    case 'select':
      // Several values at once where the API takes them (`status=new,contacted`); none chosen: any.
      return filter.multiple
        ? <SelectArrayInput key={source} {...common} choices={choicesOf(filter.choices ?? [])} sx={{ minWidth: 160 }} />
        : <SelectInput key={source} {...common} choices={choicesOf(filter.choices ?? [])} emptyText="Any" />;
    case 'boolean':
      return <SelectInput key={source} {...common} choices={[{ id: 'true', name: 'Yes' }, { id: 'false', name: 'No' }]} emptyText="Any" />;
    case 'date':
      return <DateInput key={source} {...common} />;
    case 'ref':
      return <ReferencePicker key={source} {...common} reference={filter.ref!.resource} text={filter.ref!.text} />;
    default:
      return <TextInput key={source} {...common} />;
  }
}
