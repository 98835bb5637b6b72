import { asc, desc, eq, type SQL, sql } from 'drizzle-orm';
import { type PgColumn, PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import { notFound } from '../errors.js';
import { readVersion, versionOf } from './changes.js';
import { allOf, is, type Predicate } from './filters.js';
import type { ListDeclaration, Resource, SelectQuery, View } from './resource.js';

/** A validated list query: paging and sort get their defaults from the validator; filters by name. */
export type ListQuery = { page?: number; limit?: number; sort?: string; order?: 'asc' | 'desc'; q?: string } & Record<string, unknown>;
export type Page<T> = { data: T[]; pagination: { page: number; limit: number; total: number; totalPages: number } };
/** A list's fixed scope for one call (the public "published by now"), and the key its totals are cached under. */
export type ScopeOption = { scope?: Predicate; scopeKey?: string };

const PAGING = new Set(['page', 'limit', 'sort', 'order', 'q']);

/** `select <view fields + extra> from <table> <view joins>`, ready for where/order/limit. */
export function selectView(db: Executor, table: PgTable, view: View, extra: Record<string, unknown> = {}): SelectQuery {
  const query = (db.select({ ...view.fields, ...extra } as never).from(table as never) as SelectQuery).$dynamic();
  return view.joins ? view.joins(query) : query;
}

function declaredList(resource: Resource): ListDeclaration {
  if (!resource.list) throw new Error(`${resource.name} has no list`);
  return resource.list;
}

/** The rows a list request selects: the scope, every filter sent, and `q` over the search columns. */
export function listPredicate(resource: Resource, query: Record<string, unknown>, scope: Predicate | undefined = resource.scope): Predicate | undefined {
  const list = declaredList(resource);
  const parts: (Predicate | undefined)[] = [scope];
  for (const [name, filter] of Object.entries(list.filters ?? {})) {
    const value = query[name];
    if (value !== undefined && value !== '') parts.push(filter.where(value as never));
  }
  const q = typeof query.q === 'string' ? query.q.trim() : '';
  if (q && list.search?.length) parts.push(is.matching(list.search, q));
  return allOf(parts);
}

/** The column a list request sorts by. */
export function sortColumn(resource: Resource, query: Record<string, unknown>): PgColumn {
  const list = declaredList(resource);
  return list.sortable[String(query.sort ?? list.defaultSort)] ?? list.sortable[list.defaultSort];
}

/** Sort column, then id in the same direction, so pages never overlap. */
export function listOrder(resource: Resource, query: Record<string, unknown>): SQL[] {
  const direction = query.order === 'asc' ? asc : desc;
  return [direction(sortColumn(resource, query)), direction(resource.id)];
}

/** Reads one row through the resource's view, or 404; the resource's scope hides what the API never shows. */
export async function findOne<T = Record<string, unknown>>(db: Executor, resource: Resource, id: string): Promise<T> {
  const [row] = await selectView(db, resource.table, resource.view).where(allOf([is.equal(resource.id, id), resource.scope])!.sql).limit(1);
  if (!row) throw notFound(resource.label);
  return row as T;
}

const dialect = new PgDialect();
const scopeKeys = new WeakMap<Predicate, string>();

/** A fixed scope as text: two lists over one resource with different scopes have different totals. */
function keyOfScope(scope: Predicate | undefined): string {
  if (!scope) return '';
  let key = scopeKeys.get(scope);
  if (key === undefined) {
    const { sql: text, params } = dialect.sqlToQuery(scope.sql);
    key = JSON.stringify([text, params]);
    scopeKeys.set(scope, key);
  }
  return key;
}

/** The filter part of a list request (scope included), normalised: the key of a cached total. */
function filterKey(scopeKey: string, query: Record<string, unknown>): string {
  const entries = Object.entries(query).filter(([k, v]) => (k === 'q' ? typeof v === 'string' && v.trim() !== '' : v !== undefined && !PAGING.has(k)));
  return JSON.stringify([scopeKey, ...entries.sort(([a], [b]) => a.localeCompare(b))]);
}

/**
 * Runs lists with exact totals that are only recounted when the resource changed: totals are cached by (resource,
 * change version, filters). The version is read in the same statement as the page or the count, so a cached total
 * always belongs to the snapshot it is served with.
 */
export class ListRunner {
  private totals = new Map<string, number>();
  constructor(private readonly db: Executor, private readonly maxEntries = 5000) {}

  async page<T = Record<string, unknown>>(resource: Resource, query: ListQuery, options: ScopeOption = {}): Promise<Page<T>> {
    const page = Number(query.page ?? 1);
    const limit = Number(query.limit ?? 10);
    const scope = options.scope ?? resource.scope;
    const where = listPredicate(resource, query, scope)?.sql;
    const order = listOrder(resource, query);
    const table = resource.table as SelectQuery;
    // Deferred join: the page's ids come from the (covering) index alone, then only those rows are read.
    const ids = this.db.select({ id: resource.id }).from(table).where(where).orderBy(...order).limit(limit).offset((page - 1) * limit).as('page_ids');
    const rows: Record<string, unknown>[] = await selectView(this.db, resource.table, resource.listView ?? resource.view, { __version: versionOf(resource.name) })
      .innerJoin(ids, eq(resource.id, (ids as SelectQuery).id))
      .orderBy(...order);

    const key = filterKey(options.scopeKey ?? keyOfScope(scope), query);
    let version = rows.length ? Number(rows[0].__version ?? 0) : await readVersion(this.db, resource.name);
    let total = this.totals.get(`${resource.name}|${version}|${key}`);
    if (total === undefined) {
      const [counted] = await this.db.select({ total: sql<number>`count(*)::int`, version: versionOf(resource.name) }).from(table).where(where);
      total = Number(counted.total);
      version = Number(counted.version ?? 0);
      this.remember(`${resource.name}|${version}|${key}`, total);
    }
    for (const row of rows) delete row.__version;
    return { data: rows as T[], pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /** A short list, whole: ordered by its default sort, ascending. */
  async whole<T = Record<string, unknown>>(resource: Resource): Promise<{ data: T[] }> {
    const rows = await selectView(this.db, resource.table, resource.listView ?? resource.view)
      .where(resource.scope?.sql)
      .orderBy(...listOrder(resource, { order: 'asc' }));
    return { data: rows as T[] };
  }

  private remember(key: string, total: number) {
    if (this.totals.size >= this.maxEntries) this.totals.delete(this.totals.keys().next().value!);
    this.totals.set(key, total);
  }
}
