import { type TSchema, Type } from '@sinclair/typebox';
import { listFilters, type Resource } from '../data/resource.js';
import { StringEnum } from './schemas.js';

/** Query-string schema of a list: common parameters plus the resource's filters; anything else is a 400. */
export function listQuerySchema(resource: Resource, options: { paging?: boolean; hiddenFilters?: string[]; params?: Record<string, TSchema> } = {}) {
  const list = resource.list;
  if (!list) throw new Error(`${resource.name} has no list`);
  // Every parameter is optional (page, limit, sort and order get their defaults from the validator).
  const properties: Record<string, TSchema> = {};
  if (options.paging !== false) {
    properties.page = Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }));
    properties.limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 }));
  }
  if (list.sortParams !== false) {
    properties.sort = Type.Optional(StringEnum(Object.keys(list.sortable), { default: list.defaultSort }));
    properties.order = Type.Optional(StringEnum(['asc', 'desc'] as const, { default: 'desc' }));
  }
  if (list.search?.length) properties.q = Type.Optional(Type.String({ maxLength: 200 }));
  for (const [name, filter] of Object.entries(listFilters(list))) {
    if (!options.hiddenFilters?.includes(name)) properties[name] = Type.Optional(filter.schema);
  }
  // Parameters of the route's own, which it turns into filters itself (tasks' `mine` and `due`).
  for (const [name, schema] of Object.entries(options.params ?? {})) properties[name] = Type.Optional(schema);
  return Type.Object(properties, { additionalProperties: false });
}
