import type { ComponentType } from 'react';

export type Module = 'cms' | 'crm' | 'iam';
export const MODULES: readonly Module[] = ['cms', 'crm', 'iam'];
export const MODULE_LABELS: Record<Module, string> = { cms: 'Content', crm: 'Customers', iam: 'Access' };

export type FieldType =
  | 'text' // one line
  | 'longtext' // several lines (Markdown where the API says so)
  | 'email'
  | 'number'
  | 'money'
  | 'boolean'
  | 'datetime'
  | 'select' // one of `choices`
  | 'ref' // answers {id, name…}, written as the uuid `ref.param`
  | 'strings' // an array of strings
  | 'image' // a path from POST /api/uploads
  | 'landmarks' // [{name, distance}]
  | 'password' // written only
  | 'permissions'; // [{module, can_read, can_write, can_delete}] (API tokens), shown only

export type FieldSpec = {
  /** Where the value is in the API's record (`price_range.min`, `assigned_to`). */
  source: string;
  label: string;
  type: FieldType;
  choices?: readonly string[];
  /**
   * type ref: the referenced resource, the request field holding its id, the text shown for it; `idOnly`: the API
   * answers the id alone (`manager_id`), whose name is read from the referenced resource.
   */
  ref?: { resource: string; param: string; text: string; idOnly?: boolean };
  required?: boolean;
  /** A column of the list. */
  list?: boolean;
  /** Not on the detail page (a password). */
  hideInShow?: boolean;
  /** Shown, never written (inventory_code, timestamps). */
  readOnly?: boolean;
  /** Only in the create form (a user's first password), or only in the edit form. */
  only?: 'create' | 'edit';
  helper?: string;
};

export type FilterSpec = {
  source: string;
  label: string;
  type: 'select' | 'ref' | 'text' | 'boolean' | 'date';
  choices?: readonly string[];
  ref?: { resource: string; text: string };
  /** select: several values at once (the API takes `status=new,contacted`). */
  multiple?: boolean;
};

/** A date range of a list: `<source>_from` and `<source>_to` (a day, inclusive). */
export type RangeSpec = { source: string; label: string };

export type ResourceSpec = {
  /** The console's route and react-admin's resource name. */
  name: string;
  module: Module;
  /** The collection path of the API. */
  path: string;
  /** Plural for menus and titles ("Leads"), singular for buttons ("Lead"). */
  label: string;
  singular: string;
  /** What names a record in titles and references. */
  title: (record: Record<string, any>) => string;
  fields: FieldSpec[];
  /** The list's sortable fields (CONTRACT §12); none: no column sorts. */
  sortable: readonly string[];
  defaultSort?: string;
  filters?: FilterSpec[];
  /** The list takes `q`. */
  search?: boolean;
  /** `GET …/export` exists. */
  exportable?: boolean;
  /** The list answers `{data}` only (amenities, departments): paged and sorted here. */
  whole?: boolean;
  /** Read-only resource (activity logs). */
  readOnly?: boolean;
  /** A read-only resource whose records may still be deleted, under this button label (API tokens: "Revoke"). */
  deletable?: string;
  /** The list's date ranges; default: `created` on every paged list (CONTRACT: `created_from`/`created_to`). */
  ranges?: readonly RangeSpec[];
  /** `GET …/:id/history` does not exist (activity logs). */
  noHistory?: boolean;
  /** Icon component for the menu. */
  icon?: ComponentType;
};
