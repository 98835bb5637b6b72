import { or, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { ModuleName } from '../db/schema/index.js';
import { type Filter, keyOf, type Predicate, since, until } from './filters.js';

/**
 * A drizzle select builder in dynamic mode. Its static type depends on the exact fields and joins of each view, which
 * a declaration shared by every resource cannot name, so views pass it on untyped.
 */
export type SelectQuery = any;

/** How a resource reads its rows: its fields (nested objects allowed) and the joins they need. */
export type View = {
  fields: Record<string, unknown>;
  joins?: (query: SelectQuery) => SelectQuery;
};

/** What a resource's list offers: the rest (paging, sorting, search, totals) is done once, in list.ts. */
export type ListDeclaration = {
  /** API sort name → column; must include the creation timestamp. */
  sortable: Record<string, PgColumn>;
  defaultSort: string;
  filters?: Record<string, Filter>;
  /**
   * Date ranges, each giving `<name>_from` and `<name>_to` (a day or an instant, inclusive). Default: `created` on the
   * creation timestamp (the `created_at`/`createdAt` sort).
   */
  ranges?: Record<string, PgColumn>;
  /** Columns `q` searches (case-insensitive substring); none → no `q` parameter. */
  search?: PgColumn[];
  /** false → the list takes no `sort`/`order` (newsletters). */
  sortParams?: boolean;
  /** A short list answered whole, ordered by the default sort ascending (amenities, departments). */
  whole?: boolean;
};

/**
 * One declaration per resource. `name` is at once the activity log's `resource` (CONTRACT §7) and the key its
 * changes are tracked by, so a list's cached totals and its mutations can never disagree about which is which.
 */
export type Resource<T extends PgTable = PgTable> = {
  name: string;
  module: ModuleName;
  /** For messages: "Project", "Lead". */
  label: string;
  table: T;
  id: PgColumn;
  /** The record as the API shows it (detail; lists too unless `listView`). */
  view: View;
  listView?: View;
  list?: ListDeclaration;
  /** Rows the API never shows (deleted users). */
  scope?: Predicate;
  /**
   * Record scopes: the columns naming the users a record belongs to (its assignee, its creator…). A caller
   * whose scope in the resource's module is `own` or `department` reaches only the records one of these columns names
   * one of their users (themselves; everyone now in their department) — in lists and their totals, details, `q`,
   * exports, history, stats, and writes (404 outside, as for a record that does not exist). The columns are the
   * record's own, so a changed row is known to be in a scope or not from the row alone: exact totals and kept pages
   * are brought forward from the change log as for any filter (they are cached per set of users).
   */
  ownership?: PgColumn[];
  /**
   * Record scopes through a parent record: a row is also the caller's when the parent its `column` names is (a lead's
   * activity is seen with its lead). Such a condition reads another table, so lists of such a resource are counted
   * for each request of a scoped caller rather than brought forward (a parent handed to someone else changes no row
   * of this resource).
   */
  ownershipThrough?: { column: PgColumn; parent: Resource };
  /**
   * Fields naming another scoped record (`lead_id` → leads), in bodies, list filters and answers alike. The route
   * factory reads each through the caller's record scope: in a body, a record outside it is refused exactly as an
   * unknown one (400 naming the field); in a filter it matches nothing, as an unknown id does; in an answer it shows as
   * null. A function, as resources name each other.
   */
  references?: () => Record<string, Resource>;
  /**
   * The rows a caller who may not read every crm record reads (crm scope other than `all`, or no crm read), on a
   * resource that mirrors crm records without owning them (the activity log). Administrators read every row.
   */
  walledBy?: () => Predicate;
  /** `GET …/export`: the list as CSV; `json` fields stay one JSON column. */
  export?: { json?: string[] };
  /** Fields naming uploaded images, and the sibling each answer gives their variants in (media/library.ts). */
  images?: ImageFields;
};

/**
 * Image fields of a resource's answers → the sibling field that gives the variants (`cover_photo` →
 * `cover_photo_variants`); a nested list maps its own fields (`galleries: {image_url: 'image'}`).
 */
export type ImageFields = Record<string, string | Record<string, string>>;

/** A row of the resource's table, as drizzle returns it. */
export type RowOf<T extends PgTable> = T['$inferSelect'];

/**
 * The records of `resource` that one of `owners` (user ids) owns, by its `ownership` columns; undefined when it declares
 * none (every caller sees all of it). The ids travel as one text parameter, so every scope's statement has one text.
 */
export function ownedBy(resource: Resource, owners: readonly string[]): Predicate | undefined {
  const columns = resource.ownership ?? [];
  const through = resource.ownershipThrough;
  if (!columns.length && !through) return undefined;
  const ids = new Set(owners.map((id) => id.toLowerCase()));
  const list = [...ids].join(',');
  const parent = through && ownedBy(through.parent, owners);
  const conditions = [
    ...columns.map((column) => sql`${column} = any(string_to_array(${list}, ',')::uuid[])`),
    ...(through && parent ? [sql`${through.column} in (select ${through.parent.id} from ${through.parent.table} where ${parent.sql})`] : []),
  ];
  return {
    sql: ids.size && conditions.length ? or(...conditions)! : sql`false`,
    // Its own columns tell when they name an owner; the parent's owners only the database knows.
    test: (row) => columns.some((column) => {
      const value = row[keyOf(column)];
      return typeof value === 'string' && ids.has(value.toLowerCase());
    }) || (through ? undefined : false),
    reads: columns.map(keyOf),
  };
}

/** Every declared resource's name, by its table: which resource's changes a join reads. */
const resourceNames = new Map<PgTable, string>();
const declared: Resource[] = [];

export const defineResource = <T extends PgTable>(resource: Resource<T>): Resource<T> => {
  resourceNames.set(resource.table, resource.name);
  declared.push(resource as unknown as Resource);
  return resource;
};

/** Every resource declared so far (each module declares its own when loaded). */
export const declaredResources = (): readonly Resource[] => declared;

/** The resource a table belongs to, when one was declared. */
export const resourceOfTable = (table: PgTable): string | undefined => resourceNames.get(table);

const allFilters = new WeakMap<ListDeclaration, Record<string, Filter>>();

/** Every filter a list takes: its own, then a `_from` and a `_to` for each of its date ranges. */
export function listFilters(list: ListDeclaration): Record<string, Filter> {
  let filters = allFilters.get(list);
  if (!filters) {
    const created = list.sortable.created_at ?? list.sortable.createdAt;
    const ranges = list.ranges ?? (created ? { created } : {});
    filters = { ...list.filters };
    for (const [name, column] of Object.entries(ranges)) {
      filters[`${name}_from`] = since(column);
      filters[`${name}_to`] = until(column);
    }
    allFilters.set(list, filters);
  }
  return filters;
}
