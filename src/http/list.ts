import { type TSchema, Type } from '@sinclair/typebox';
import { and, asc, desc, eq, ilike, or, type SQL, sql } from 'drizzle-orm';
import { type PgColumn, PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import { collectionVersions } from '../db/schema/index.js';
import { StringEnum } from './schemas.js';

export type Filter = { schema: TSchema; where: (value: any) => SQL | undefined };

/** What a resource declares about its list: the rest (paging, sorting, search, totals) is done here once. */
export type ListSpec = {
  /** Change-version key: the collection's name, bumped by every mutation of it. */
  collection: string;
  table: PgTable;
  id: PgColumn;
  /** API sort name → column; must include the creation timestamp. */
  sortable: Record<string, PgColumn>;
  defaultSort: string;
  filters?: Record<string, Filter>;
  /** Columns `q` searches (case-insensitive substring); none → no `q` parameter. */
  search?: PgColumn[];
  /** false → the list takes no `sort`/`order` (newsletters). */
  sortParams?: boolean;
  /** Always applied, e.g. "not deleted". */
  scope?: SQL;
  /**
   * Cache key of a scope that changes with time (the public "publish date has come"): totals are then cached
   * per key rather than per exact scope. Without it the key is derived from the scope's SQL.
   */
  scopeKey?: string;
};

/** How a resource reads its rows: its fields (nested objects allowed) and the joins they need. */
export type View = {
  fields: Record<string, any>;
  joins?: (query: any) => any;
};

/** `select <view fields + extra> from <table> <view joins>`, ready for where/order/limit. */
export function selectView(db: Executor, table: PgTable, view: View, extra: Record<string, any> = {}): any {
  const query = (db.select({ ...view.fields, ...extra }).from(table as any) as any).$dynamic();
  return view.joins ? view.joins(query) : query;
}

export type ListQuery = { page: number; limit: number; sort?: string; order?: 'asc' | 'desc'; q?: string } & Record<string, unknown>;
export type Page<T> = { data: T[]; pagination: { page: number; limit: number; total: number; totalPages: number } };

const PAGING = ['page', 'limit', 'sort', 'order', 'q'];

/** Query-string schema of a list: common parameters plus the resource's filters; anything else is a 400. */
export function listQuerySchema(spec: ListSpec, options: { paging?: boolean } = {}) {
  // Every parameter is optional (page, limit, sort and order get their defaults from the validator).
  const properties: Record<string, TSchema> = {};
  if (options.paging !== false) {
    properties.page = Type.Optional(Type.Integer({ minimum: 1, default: 1 }));
    properties.limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 }));
  }
  if (spec.sortParams !== false) {
    properties.sort = Type.Optional(StringEnum(Object.keys(spec.sortable), { default: spec.defaultSort }));
    properties.order = Type.Optional(StringEnum(['asc', 'desc'] as const, { default: 'desc' }));
  }
  if (spec.search?.length) properties.q = Type.Optional(Type.String({ maxLength: 200 }));
  for (const [name, filter] of Object.entries(spec.filters ?? {})) properties[name] = Type.Optional(filter.schema);
  return Type.Object(properties, { additionalProperties: false });
}

const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function listWhere(spec: ListSpec, query: Record<string, unknown>): SQL | undefined {
  const conditions: (SQL | undefined)[] = [spec.scope];
  for (const [name, filter] of Object.entries(spec.filters ?? {})) {
    if (query[name] !== undefined && query[name] !== '') conditions.push(filter.where(query[name]));
  }
  const q = typeof query.q === 'string' ? query.q.trim() : '';
  if (q && spec.search?.length) conditions.push(or(...spec.search.map((column) => ilike(column, likePattern(q)))));
  return and(...conditions);
}

/** Sort column, then id in the same direction, so pages never overlap. */
export function listOrder(spec: ListSpec, query: Record<string, unknown>): SQL[] {
  const column = spec.sortable[(query.sort as string) ?? spec.defaultSort] ?? spec.sortable[spec.defaultSort];
  const direction = query.order === 'asc' ? asc : desc;
  return [direction(column), direction(spec.id)];
}

const dialect = new PgDialect();
const scopeKeys = new WeakMap<ListSpec, string>();

/** The fixed scope of a list as text: two lists over one collection with different scopes have different totals. */
function scopeKey(spec: ListSpec): string {
  if (spec.scopeKey !== undefined) return spec.scopeKey;
  if (!spec.scope) return '';
  let key = scopeKeys.get(spec);
  if (key === undefined) {
    const { sql: text, params } = dialect.sqlToQuery(spec.scope);
    key = JSON.stringify([text, params]);
    scopeKeys.set(spec, key);
  }
  return key;
}

/** The filter part of a list request (scope included), normalised: the key of a cached total. */
function filterKey(spec: ListSpec, query: Record<string, unknown>): string {
  const entries = Object.entries(query).filter(([k, v]) => (k === 'q' ? Boolean(v) : v !== undefined && !PAGING.includes(k)));
  return JSON.stringify([scopeKey(spec), ...entries.sort(([a], [b]) => a.localeCompare(b))]);
}

const versionOf = (collection: string) =>
  sql<number>`(select ${collectionVersions.version} from ${collectionVersions} where ${collectionVersions.collection} = ${collection})`;

/** Bumps a collection's change version; call inside the mutation's transaction (the audit path does). */
export async function bumpVersion(tx: Executor, collection: string) {
  await tx
    .insert(collectionVersions)
    .values({ collection, version: 1 })
    .onConflictDoUpdate({ target: collectionVersions.collection, set: { version: sql`${collectionVersions.version} + 1` } });
}

/**
 * Runs lists with exact totals that are only recounted when the collection changed: totals are cached by
 * (collection, change version, filters). The version is read in the same statement as the page or the count,
 * so a cached total always belongs to the snapshot it is served with.
 */
export class ListRunner {
  private totals = new Map<string, number>();
  constructor(private readonly db: Executor, private readonly maxEntries = 5000) {}

  async page<T = any>(spec: ListSpec, view: View, query: ListQuery): Promise<Page<T>> {
    const { page, limit } = query;
    const where = listWhere(spec, query);
    const order = listOrder(spec, query);
    const table = spec.table as any;
    // Deferred join: the page's ids come from the (covering) index alone, then only those rows are read.
    const ids = this.db.select({ id: spec.id }).from(table).where(where).orderBy(...order).limit(limit).offset((page - 1) * limit).as('page_ids');
    const rows: any[] = await selectView(this.db, table, view, { __version: versionOf(spec.collection) })
      .innerJoin(ids, eq(spec.id, (ids as any).id))
      .orderBy(...order);

    const key = filterKey(spec, query);
    let version: number | null = rows.length ? Number(rows[0].__version ?? 0) : await this.version(spec.collection);
    let total = this.totals.get(`${spec.collection}|${version}|${key}`);
    if (total === undefined) {
      const [counted] = await this.db
        .select({ total: sql<number>`count(*)::int`, version: versionOf(spec.collection) })
        .from(table)
        .where(where);
      total = Number(counted.total);
      version = Number(counted.version ?? 0);
      this.remember(`${spec.collection}|${version}|${key}`, total);
    }
    for (const row of rows) delete row.__version;
    return { data: rows as T[], pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  private async version(collection: string): Promise<number> {
    const [row] = await this.db.select({ version: collectionVersions.version }).from(collectionVersions).where(eq(collectionVersions.collection, collection));
    return Number(row?.version ?? 0);
  }

  private remember(key: string, total: number) {
    if (this.totals.size >= this.maxEntries) this.totals.delete(this.totals.keys().next().value!);
    this.totals.set(key, total);
  }
}
