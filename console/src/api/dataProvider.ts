import { type DataProvider, HttpError } from 'react-admin';
import { specOf } from '../resources/declarations';
import { listFiltersOf } from '../resources/ranges';
import type { FieldSpec, ResourceSpec } from '../resources/types';
import { api, type Query } from './http';
import { queryClient } from './queryClient';

type Paginated = { data: any[]; pagination: { page: number; limit: number; total: number; totalPages: number } };
type AnyRecord = Record<string, any>;

const get = (record: AnyRecord | undefined, path: string): any =>
  path.split('.').reduce<any>((value, key) => (value == null ? undefined : value[key]), record);

const empty = (value: unknown) => value === undefined || value === null || value === '' || (typeof value === 'number' && Number.isNaN(value)) || (Array.isArray(value) && !value.length);

/** A form value as the API takes it. */
function requestValue(field: FieldSpec, value: unknown): unknown {
  switch (field.type) {
    case 'ref':
      return empty(value) ? null : value;
    case 'number':
    case 'money':
      return empty(value) ? null : Number(value);
    case 'datetime': {
      if (empty(value)) return null;
      const date = value instanceof Date ? value : new Date(String(value));
      return Number.isNaN(date.getTime()) ? value : date.toISOString();
    }
    case 'strings':
      return Array.isArray(value) ? value.map((item) => String(item ?? '').trim()).filter(Boolean) : [];
    case 'landmarks':
      return Array.isArray(value) ? value.filter((item) => item && (item.name || item.distance)).map(({ name, distance }) => ({ name, distance })) : [];
    case 'boolean':
      return value === undefined ? undefined : Boolean(value);
    case 'permissions':
      return Array.isArray(value)
        ? value.filter((item) => item?.module).map(({ module, can_read, can_write, can_delete }) => ({ module, can_read: !!can_read, can_write: !!can_write, can_delete: !!can_delete }))
        : [];
    default:
      // An optional text left empty clears it; a required one is sent as it is, and the API says what is wrong.
      return value === '' && !field.required ? null : value;
  }
}

/** The fields a form of this kind writes. */
export const writable = (spec: ResourceSpec, mode: 'create' | 'edit') =>
  spec.fields.filter((field) => !field.readOnly && (!field.only || field.only === mode));

/** Where a form holds a reference's id: in the referenced object, or the field itself when the API answers an id alone. */
export const refPath = (field: FieldSpec) => (field.ref?.idOnly ? field.source : `${field.source}.id`);

/** The request body for a record as the form holds it: reference objects become ids, groups become objects. */
export function toRequest(spec: ResourceSpec, data: AnyRecord, mode: 'create' | 'edit'): AnyRecord {
  const body: AnyRecord = {};
  const groups = new Map<string, AnyRecord>();
  for (const field of writable(spec, mode)) {
    if (field.type === 'password') {
      if (!empty(data[field.source])) body[field.source] = data[field.source];
      continue;
    }
    if (field.type === 'ref') {
      const value = requestValue(field, get(data, refPath(field)));
      body[field.ref!.param] = value;
      continue;
    }
    const value = requestValue(field, get(data, field.source));
    const [top, inner] = field.source.split('.');
    if (inner) {
      const group = groups.get(top) ?? {};
      group[inner] = value;
      groups.set(top, group);
    } else if (value !== undefined) {
      body[top] = value;
    }
  }
  // A group with nothing in it is null (no price range), otherwise the whole object.
  for (const [top, group] of groups) body[top] = Object.values(group).every(empty) ? null : group;
  if (mode === 'create') for (const key of Object.keys(body)) if (body[key] === null) delete body[key];
  return body;
}

/** Only what changed: PATCH takes the fields sent and nothing else. */
export function changed(next: AnyRecord, before: AnyRecord): AnyRecord {
  const patch: AnyRecord = {};
  for (const [key, value] of Object.entries(next)) if (JSON.stringify(value) !== JSON.stringify(before[key])) patch[key] = value;
  return patch;
}

/**
 * The API's 400 `details` as react-admin's server-side validation errors, keyed by the form's field paths
 * (`project_id` → `project.id`, `price_range` → its last input); what belongs to no field goes to the form's root.
 */
export function formErrors(spec: ResourceSpec, error: unknown): unknown {
  if (!(error instanceof HttpError) || error.status !== 400 || !error.body?.details) return error;
  const details = error.body.details as Record<string, string>;
  const errors: AnyRecord = {};
  const elsewhere: string[] = [];
  for (const [key, message] of Object.entries(details)) {
    const ref = spec.fields.find((field) => field.ref?.param === key);
    const exact = spec.fields.find((field) => field.source === key && field.type !== 'ref');
    const inGroup = spec.fields.filter((field) => field.source.startsWith(`${key}.`)).pop();
    const path = ref ? refPath(ref) : exact ? exact.source : inGroup ? inGroup.source : /^[a-z_]+\.\d+/.test(key) && spec.fields.some((f) => f.source === key.split('.')[0]) ? key.split('.')[0] : undefined;
    if (path) errors[path] = message;
    else elsewhere.push(`${key}: ${message}`);
  }
  if (elsewhere.length) errors.root = { serverError: elsewhere.join('; ') };
  return new HttpError(error.message, 400, { ...error.body, errors });
}

/** List query parameters exactly as the API names them: page, limit, sort, order, q and the declared filters. */
export function listQuery(spec: ResourceSpec, params: { pagination?: { page: number; perPage: number }; sort?: { field: string; order: string }; filter?: AnyRecord }): Query {
  const query: Query = {};
  if (params.pagination) {
    query.page = params.pagination.page;
    query.limit = Math.min(100, params.pagination.perPage);
  }
  if (params.sort && spec.sortable.includes(params.sort.field)) {
    query.sort = params.sort.field;
    query.order = params.sort.order.toLowerCase() === 'asc' ? 'asc' : 'desc';
  }
  const allowed = new Set([...listFiltersOf(spec).map((filter) => filter.source), ...(spec.search ? ['q'] : [])]);
  // Several values of an enum filter go as one comma-separated parameter (`status=new,contacted`).
  for (const [name, value] of Object.entries(params.filter ?? {})) if (allowed.has(name) && !empty(value)) query[name] = Array.isArray(value) ? value.join(',') : value;
  return query;
}

/** Amenities and departments answer every row at once: paged, sorted and searched here. */
async function wholeList(spec: ResourceSpec, params: { pagination?: { page: number; perPage: number }; sort?: { field: string; order: string }; filter?: AnyRecord }, signal?: AbortSignal) {
  const { data } = await api<{ data: any[] }>(spec.path, { signal });
  let rows = data;
  const q = String(params.filter?.q ?? '').toLowerCase();
  if (q) rows = rows.filter((row) => Object.values(row).some((value) => typeof value === 'string' && value.toLowerCase().includes(q)));
  const sort = params.sort;
  if (sort && spec.sortable.includes(sort.field)) {
    const factor = sort.order === 'ASC' ? 1 : -1;
    rows = [...rows].sort((a, b) => factor * String(a[sort.field] ?? '').localeCompare(String(b[sort.field] ?? '')));
  }
  const { page, perPage } = params.pagination ?? { page: 1, perPage: rows.length || 1 };
  return { data: rows.slice((page - 1) * perPage, page * perPage), total: rows.length };
}

/**
 * Writes that change records of another resource on the server: a reservation holds or frees its unit (CONTRACT §8),
 * deleting a unit clears its reservations' unit. react-admin refreshes only the resource it wrote; these are asked
 * again too, or a unit's page would show it free for as long as its cached copy is fresh.
 */
const DEPENDENTS: Record<string, readonly string[]> = { reservations: ['inventory'], inventory: ['reservations'] };
const wrote = (resource: string) => {
  for (const other of DEPENDENTS[resource] ?? []) {
    // Dropped rather than marked stale when no screen shows them: react-admin's reference inputs put records they
    // read back into the getOne cache only where it is empty ("oldRecord ?? record"), which would make the old copy
    // of a unit fresh again.
    queryClient.removeQueries({ queryKey: [other], type: 'inactive' });
    void queryClient.invalidateQueries({ queryKey: [other] });
  }
};

const itemPath = (spec: ResourceSpec, id: unknown) => `${spec.path}/${encodeURIComponent(String(id))}`;

/** react-admin's data provider over the service's API (CONTRACT §2, §3). */
export const dataProvider: DataProvider = {
  supportAbortSignal: true,

  async getList(resource, params) {
    const spec = specOf(resource);
    if (spec.whole) return wholeList(spec, params, params.signal);
    const answer = await api<Paginated>(spec.path, { query: listQuery(spec, params), signal: params.signal });
    return { data: answer.data, total: answer.pagination.total };
  },

  async getOne(resource, params) {
    const spec = specOf(resource);
    return { data: await api<any>(itemPath(spec, params.id), { signal: params.signal }) };
  },

  async getMany(resource, params) {
    const spec = specOf(resource);
    if (spec.whole) {
      const { data } = await api<{ data: any[] }>(spec.path, { signal: params.signal });
      return { data: data.filter((row) => params.ids.includes(row.id)) };
    }
    // The API has no "ids" filter: one detail per id (react-admin batches and caches them).
    const found = await Promise.all(params.ids.map((id) => api<any>(itemPath(spec, id), { signal: params.signal }).catch(() => undefined)));
    return { data: found.filter((row) => !!row) };
  },

  async getManyReference(resource, params) {
    return dataProvider.getList(resource, { ...params, filter: { ...params.filter, [params.target]: params.id } });
  },

  async create(resource, params) {
    const spec = specOf(resource);
    try {
      const answer = await api<AnyRecord>(spec.path, { method: 'POST', body: toRequest(spec, params.data, 'create') });
      // The answer is only `{id, message}`: the record as the API now holds it (defaults, derived fields) is read back.
      const record = spec.whole ? undefined : await api<any>(itemPath(spec, answer.id)).catch(() => undefined);
      wrote(resource);
      return { data: record ?? ({ ...params.data, ...answer, id: answer.id } as any) };
    } catch (error) {
      throw formErrors(spec, error);
    }
  },

  async update(resource, params) {
    const spec = specOf(resource);
    const patch = changed(toRequest(spec, params.data, 'edit'), toRequest(spec, params.previousData ?? {}, 'edit'));
    try {
      if (Object.keys(patch).length) await api(itemPath(spec, params.id), { method: 'PATCH', body: patch });
    } catch (error) {
      throw formErrors(spec, error);
    }
    wrote(resource);
    return { data: await api<any>(itemPath(spec, params.id)) };
  },

  async updateMany() {
    throw new HttpError('Changing several records at once is not offered', 400);
  },

  async delete(resource, params) {
    const spec = specOf(resource);
    await api(itemPath(spec, params.id), { method: 'DELETE' });
    wrote(resource);
    return { data: params.previousData as any };
  },

  async deleteMany(resource, params) {
    const spec = specOf(resource);
    for (const id of params.ids) await api(itemPath(spec, id), { method: 'DELETE' });
    wrote(resource);
    return { data: params.ids };
  },
};

/** The export URL of a list with its current filters, search and sort (CONTRACT §10: no page or limit). */
export function exportUrl(spec: ResourceSpec, filter: AnyRecord, sort?: { field: string; order: string }): string {
  const query = listQuery(spec, { filter, sort });
  const params = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const text = params.toString();
  return `${spec.path}/export${text ? `?${text}` : ''}`;
}
