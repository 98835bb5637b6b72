import { createHash } from 'node:crypto';
import { and, asc, Column, desc, eq, is as isEntity, Param, type Placeholder, SQL, type SQLChunk, sql, StringChunk, Table } from 'drizzle-orm';
import { type PgColumn, PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import { notFound } from '../errors.js';
import { CHANGE_LOG_RETENTION_MS, changesSince, covers, currentSnapshot, type LoggedChange, netChange, parseChanges, parseSnapshot, type Snapshot, weightOf } from './changes.js';
import { allOf, is, keyOf, type Predicate } from './filters.js';
import { type Boundary, Boundaries } from './boundaries.js';
import { anyChangeSince, joinedResources, keptPageIn, PageCache, SLOW_PAGE_MS } from './page-cache.js';
import { SharedReads } from './shared-reads.js';
import { type ListDeclaration, listFilters, ownedBy, type Resource, type SelectQuery, type View } from './resource.js';

/** A validated list query: paging and sort get their defaults from the validator; filters by name. */
export type ListQuery = { page?: number; limit?: number; sort?: string; order?: 'asc' | 'desc'; q?: string } & Record<string, unknown>;
export type Page<T> = { data: T[]; pagination: { page: number; limit: number; total: number; totalPages: number } };
/**
 * A list's fixed scope for one call (the public "published by now"), and the key its totals are cached under.
 * `uncached`: the scope reads other tables whose changes the resource's change log does not show (a record scope
 * through a parent): its totals are counted and its pages read for each call, never kept.
 */
export type ScopeOption = { scope?: Predicate; scopeKey?: string; uncached?: boolean };

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
  for (const [name, filter] of Object.entries(listFilters(list))) {
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

/**
 * Reads one row through the resource's view, or 404; the resource's scope hides what the API never shows, and a
 * caller's record scope (`options.scope`, from `ownersScope`) what they may not see.
 */
export async function findOne<T = Record<string, unknown>>(db: Executor, resource: Resource, id: string, options: ScopeOption = {}): Promise<T> {
  const [row] = await selectView(db, resource.table, resource.view).where(allOf([is.equal(resource.id, id), options.scope ?? resource.scope])!.sql).limit(1);
  if (!row) throw notFound(resource.label);
  return row as T;
}

const dialect = new PgDialect();

/** A predicate's SQL without its values: with the resource and the sort, what a statement's text depends on. */
const predicateText = (predicate: Predicate | undefined) => (predicate ? dialect.sqlToQuery(predicate.sql).sql : '');

/**
 * predicateText by filter key (`filterKey`: the resource, the scope and the normalised filters, values included, so
 * one key is one text): writing the SQL out again on every request of a list was a few per cent of a page's CPU.
 */
const predicateTexts = new Map<string, string>();
function predicateTextOf(key: string, predicate: Predicate | undefined): string {
  let text = predicateTexts.get(key);
  if (text === undefined) {
    text = predicateText(predicate);
    if (predicateTexts.size >= 5000) predicateTexts.delete(predicateTexts.keys().next().value!);
    predicateTexts.set(key, text);
  }
  return text;
}

/**
 * A condition with each of its values replaced by a placeholder (`v0`, `v1`, …), and those values: the statement built
 * from it serves every request of its shape. `cacheable` is false when some part could hold a value this cannot see.
 */
function parameterized(condition: SQL | undefined): { sql: SQL | undefined; values: Record<string, unknown>; cacheable: boolean } {
  const values: Record<string, unknown> = {};
  let n = 0;
  let cacheable = true;
  const placeholder = (value: unknown) => {
    const name = `v${n++}`;
    values[name] = value;
    return sql.placeholder(name);
  };
  const walk = (chunk: unknown): unknown => {
    if (isEntity(chunk, Param)) return new Param(placeholder(chunk.value), chunk.encoder);
    if (isEntity(chunk, SQL)) return new SQL(chunk.queryChunks.map(walk) as SQLChunk[]);
    if (Array.isArray(chunk)) return chunk.map(walk);
    // A bare value in a template is a parameter too.
    if (chunk === null || typeof chunk !== 'object' || chunk instanceof Date) return placeholder(chunk);
    // Columns, tables and text hold no values; anything else (a subquery) might.
    if (!isEntity(chunk, Column) && !isEntity(chunk, Table) && !isEntity(chunk, StringChunk)) cacheable = false;
    return chunk;
  };
  return { sql: condition && (walk(condition) as SQL), values, cacheable };
}

/**
 * A name for a statement of this shape: PostgreSQL parses and plans a named statement once per connection and then
 * only binds values, where an unnamed one is planned on every request (most of a page's cost in the database).
 */
const statementNames = new Map<string, string>();
function statementName(kind: string, shape: unknown[]): string {
  const key = `${kind}\0${JSON.stringify(shape)}`;
  let name = statementNames.get(key);
  if (name === undefined) {
    name = `${kind}_${createHash('sha1').update(key.slice(kind.length + 1)).digest('base64url').slice(0, 22)}`;
    if (statementNames.size >= 10_000) statementNames.delete(statementNames.keys().next().value!);
    statementNames.set(key, name);
  }
  return name;
}
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

/**
 * A caller's record scope on `resource` as a list's scope: the resource's own scope and the records `owners`
 * own, keyed by those users, so cached totals, kept pages and page boundaries are never shared between two scopes.
 * Nothing when the caller sees every record (`owners` undefined) or the resource has no ownership.
 */
export function ownersScope(resource: Resource, owners: readonly string[] | undefined): ScopeOption {
  const owned = owners && ownedBy(resource, owners);
  if (!owned) return {};
  const scopeKey = `${keyOfScope(resource.scope)}|owners:${[...owners].sort().join(',')}`;
  return { scope: allOf([resource.scope, owned]), scopeKey, ...(resource.ownershipThrough ? { uncached: true } : {}) };
}

/** The filter part of a list request (scope included), normalised: the key of a cached total. */
function filterKey(resource: Resource, scopeKey: string, query: Record<string, unknown>): string {
  const entries = Object.entries(query).filter(([k, v]) => (k === 'q' ? typeof v === 'string' && v.trim() !== '' : v !== undefined && !PAGING.has(k)));
  return JSON.stringify([resource.name, scopeKey, ...entries.sort(([a], [b]) => a.localeCompare(b))]);
}

/** A page's rows as read, the snapshot they were read in and the changes logged since `fromXid`. */
type PageRead = { rows: Record<string, unknown>[]; snapshot: Snapshot; logged: LoggedChange[] | undefined; head: { sort: unknown; id: string } | undefined; fromXid: number | undefined };

/** A total and the snapshot it was exact in. */
type Counted = { snapshot: Snapshot; total: number; at: number };

/** Totals kept per filter: a few recent ones, so a request whose snapshot is a little behind the newest finds a base. */
const KEPT_PER_FILTER = 4;
/** Kept totals are at least this far apart in time, the newest excepted. */
const KEEP_SPACING_MS = 250;
/** More changes than this since a cached total: counting again is cheaper than testing them. */
const MAX_CHANGES = 200;
/** A cached total older than this is counted again (the change log it would need is kept much longer). */
const MAX_AGE_MS = CHANGE_LOG_RETENTION_MS / 4;
/** From this offset on, a page's rows are found through a deferred join (cheaper than reading every skipped row). */
const DEFERRED_JOIN_FROM = 1000;
/** Prepared list and count statements kept (each is one shape: resource, filters present, sort, paging mode). */
const MAX_STATEMENTS = 1000;
/**
 * Pages that end within this many rows carry their LIMIT and OFFSET as constants in their statement. With either as a
 * parameter PostgreSQL costs a generic plan as if 10 % of the rows were read, so it plans every execution anew (most of
 * a page's time in the database when the page cannot be kept, as while the list is being written to); with both
 * constant it compares true costs and keeps the generic plan when it is as good. The first pages are the ones read
 * again and again, so these few statements more per shape pay for themselves.
 */
const CONSTANT_PAGING_ROWS = 200;

/**
 * Runs lists with exact totals counted rarely. A total is cached with the snapshot it was counted in; a later request
 * reads, in the same statement as its page, its own snapshot and the changes logged since, and brings the cached
 * total forward by testing each changed row, before and after, against the list's predicate. It counts again only
 * when that is cheaper or impossible (many changes, a bulk change, a predicate a row cannot answer), and concurrent
 * requests share one count.
 */
export class ListRunner {
  private totals = new Map<string, Counted[]>();
  private counting = new Map<string, Promise<Counted>>();
  private boundaries = new Boundaries();
  private pages = new PageCache();
  /** Checks of kept pages and reads of pages, each shared by the requests asking for it at once. */
  private checks = new SharedReads<{ snapshot: Snapshot; logged: LoggedChange[]; joinedChanged: boolean }>();
  private pageReads = new SharedReads<PageRead>();
  /** Statements built once per shape (drizzle's building is most of a page's own CPU), run with their values. */
  private statements = new Map<string, { execute: (values: Record<string, unknown>) => Promise<Record<string, unknown>[]> }>();

  private statement(name: string, build: () => SelectQuery, cacheable = true) {
    if (!cacheable) return build().prepare(name) as { execute: (values: Record<string, unknown>) => Promise<Record<string, unknown>[]> };
    let statement = this.statements.get(name);
    if (!statement) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
      statement = build().prepare(name);
      this.statements.set(name, statement!);
    }
    return statement!;
  }
  constructor(private readonly db: Executor, private readonly options: { maxFilters?: number; slowPageMs?: number } = {}) {}

  async page<T = Record<string, unknown>>(resource: Resource, query: ListQuery, options: ScopeOption = {}): Promise<Page<T>> {
    const page = Number(query.page ?? 1);
    const limit = Number(query.limit ?? 10);
    const scope = options.scope ?? resource.scope;
    const predicate = listPredicate(resource, query, scope);
    const order = listOrder(resource, query);
    const table = resource.table as SelectQuery;
    const key = filterKey(resource, options.scopeKey ?? keyOfScope(scope), query);
    const known = options.uncached ? [] : this.recent(key);
    const offset = (page - 1) * limit;
    const deep = offset >= DEFERRED_JOIN_FROM;
    const column = sortColumn(resource, query);
    const descending = query.order !== 'asc';
    const walk = `${key}|${query.sort ?? ''}|${query.order ?? ''}`;
    const reads = [...new Set([...(predicate?.reads ?? []), ...(deep ? [keyOf(column), keyOf(resource.id)] : [])])];

    // A page that was slow to read is served again while the change log shows nothing that could change it.
    const view = resource.listView ?? resource.view;
    const pageKey = `${walk}|${page}|${limit}`;
    const kept = options.uncached ? undefined : this.pages.get(pageKey, MAX_AGE_MS);
    const joined = kept && joinedResources(resource, view);
    if (kept && joined) {
      const fromXid = Math.min(kept.snapshot.xmin, ...(known.length ? [known[known.length - 1].snapshot.xmin] : []));
      const checkName = statementName('check', [resource.name, joined.join(','), reads.join(',')]);
      const check = this.statement(checkName, () =>
        this.db.select({ snapshot: currentSnapshot, changes: changesSince(resource, sql.placeholder('fromXid'), MAX_CHANGES, reads), joined: anyChangeSince(joined, sql.placeholder('fromXid')) })
          .from(sql`(select 1) as probe`));
      const { snapshot, logged, joinedChanged } = await this.checks.read(`${checkName}|${fromXid}`, async () => {
        const [probe] = await check.execute({ fromXid: String(fromXid) });
        return { snapshot: parseSnapshot(String(probe.snapshot)), logged: parseChanges(String(probe.changes)), joinedChanged: probe.joined === true };
      });
      const exact = !joinedChanged && logged.length < MAX_CHANGES ? keptPageIn(kept, snapshot, logged, predicate) : false;
      if (exact) {
        if (exact === 'newer') kept.snapshot = snapshot; // exact here too: later checks start from now
        const total = this.bringForward(key, known, snapshot, logged, fromXid, predicate) ?? (await this.countSeeing(key, resource, predicate, snapshot));
        return { data: kept.rows as T[], pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
      }
      this.pages.forget(pageKey);
    }

    // One statement: the page, its snapshot, and the changes its cached total or page boundary may not have seen
    // (computed once, repeated on each row: only the fields that are tested, so it stays small).
    const condition = parameterized(predicate?.sql);
    const read = async (boundary: Boundary | undefined) => {
      // Changes since the newest cached total (and the boundary): an older total is a base only if these reach back to it.
      const xmins = [...(known.length ? [known[known.length - 1].snapshot.xmin] : []), ...(boundary ? [boundary.snapshot.xmin] : [])];
      const fromXid = xmins.length ? Math.min(...xmins) : undefined;
      // Everything the statement's text depends on; its values are placeholders.
      const constantPaging = !boundary && !deep && offset + limit <= CONSTANT_PAGING_ROWS;
      const shape = [resource.name, resource.listView ? 'list' : 'view', predicateTextOf(key, predicate), query.sort, query.order, fromXid === undefined, deep, boundary !== undefined, constantPaging ? [limit, offset] : null];
      const name = statementName('page', shape);
      const statement = this.statement(name, () => {
        const changes = fromXid === undefined ? sql`null` : changesSince(resource, sql.placeholder('fromXid'), MAX_CHANGES, reads);
        const extra = { __snapshot: currentSnapshot, __changes: changes, ...(deep ? { __sort: sql<string>`to_jsonb(${column})::text`, __key: resource.id } : {}) };
        const select = selectView(this.db, resource.table, resource.listView ?? resource.view, extra);
        // Validated integers (the query's schema), so safe as text; drizzle writes an SQL chunk given here as it is.
        const constant = (n: number) => sql.raw(String(Math.trunc(n))) as unknown as Placeholder;
        const limitAt = constantPaging ? constant(limit) : sql.placeholder('limit');
        const offsetAt = constantPaging ? constant(offset) : sql.placeholder('offset');
        if (boundary) {
          // A keyset step from a remembered row of this walk: only the rows between it and the page are skipped.
          const at = [sql.placeholder('boundarySort'), sql.placeholder('boundaryId')];
          const from = descending ? sql`(${column}, ${resource.id}) <= (${at[0]}, ${at[1]})` : sql`(${column}, ${resource.id}) >= (${at[0]}, ${at[1]})`;
          return select.where(and(condition.sql, from)).orderBy(...order).limit(limitAt).offset(offsetAt);
        }
        if (deep) {
          // Deferred join: the skipped rows are walked in the (covering) index alone, then only the page's rows are read.
          const ids = this.db.select({ id: resource.id }).from(table).where(condition.sql).orderBy(...order).limit(limitAt).offset(offsetAt).as('page_ids');
          return select.innerJoin(ids, eq(resource.id, (ids as SelectQuery).id)).orderBy(...order);
        }
        return select.where(condition.sql).orderBy(...order).limit(limitAt).offset(offsetAt);
      }, condition.cacheable);
      const values = {
        ...condition.values,
        limit,
        offset: boundary ? offset - boundary.offset : offset,
        ...(fromXid === undefined ? {} : { fromXid: String(fromXid) }),
        ...(boundary ? { boundarySort: boundary.param, boundaryId: boundary.id } : {}),
      };
      // Requests for the same page at the same time share one read (its rows are only read from here on).
      return condition.cacheable ? this.pageReads.read(`${name}|${JSON.stringify(values)}`, () => load(statement, values, fromXid)) : load(statement, values, fromXid);
    };
    const load = async (statement: { execute: (values: Record<string, unknown>) => Promise<Record<string, unknown>[]> }, values: Record<string, unknown>, fromXid: number | undefined) => {
      const rows: Record<string, unknown>[] = await statement.execute(values);
      const [first] = rows.length ? rows : await this.db.select({
        __snapshot: currentSnapshot,
        __changes: fromXid === undefined ? sql`null` : changesSince(resource, String(fromXid), MAX_CHANGES, reads),
      }).from(sql`(select 1) as probe`);
      const snapshot = parseSnapshot(String(first.__snapshot));
      const logged = typeof first.__changes === 'string' ? parseChanges(first.__changes) : undefined;
      const head = deep && rows.length ? { sort: JSON.parse(String(rows[0].__sort)) as unknown, id: String(rows[0].__key) } : undefined;
      // Last added, first deleted: each delete then undoes an addition, and the row keeps its fast shape (deleted in
      // any other order, every row became a dictionary, slower to read for everything after, serializing included).
      for (const row of rows) {
        delete row.__key;
        delete row.__sort;
        delete row.__changes;
        delete row.__snapshot;
      }
      return { rows, snapshot, logged, head, fromXid };
    };

    const keyset = deep && column.notNull && !options.uncached;
    let boundary = keyset ? this.boundaries.nearest(walk, offset) : undefined;
    const started = performance.now();
    let result = await read(boundary);
    // Kept only when every row has its id: a change to one of them must be recognised.
    if (!options.uncached && performance.now() - started > (this.options.slowPageMs ?? SLOW_PAGE_MS) && result.rows.every((row) => typeof row.id === 'string')) {
      this.pages.keep(pageKey, { rows: result.rows, ids: new Set(result.rows.map((row) => String(row.id))), readAt: result.snapshot, snapshot: result.snapshot, at: Date.now() });
    }
    // Rows written before the remembered one since it was remembered move it: follow it once, else read by offset.
    for (let attempt = 0; boundary; attempt++) {
      const shift = result.logged && this.boundaries.shift(boundary, result.snapshot, result.logged, predicate, column, resource.id, descending);
      if (shift === 0) {
        boundary.snapshot = result.snapshot;
        break;
      }
      this.boundaries.forget(walk, boundary);
      boundary = shift !== undefined && attempt === 0 && boundary.offset + shift >= 0 && boundary.offset + shift <= offset ? { ...boundary, offset: boundary.offset + shift, snapshot: result.snapshot } : undefined;
      if (boundary) this.boundaries.remember(walk, boundary);
      result = await read(boundary);
    }
    if (keyset && result.head) this.boundaries.remember(walk, { offset, sort: result.head.sort, param: String(result.head.sort), id: result.head.id, snapshot: result.snapshot });

    const { rows, snapshot, logged } = result;
    const brought = logged && result.fromXid !== undefined ? this.bringForward(key, known, snapshot, logged, result.fromXid, predicate) : undefined;
    const total = brought ?? (await this.countSeeing(key, resource, predicate, snapshot));
    return { data: rows as T[], pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /**
   * Exact totals of several filters of one resource (a dashboard's figures): one statement reads the snapshot and the
   * changes since the oldest of their newest cached totals; each total is brought forward from its cached one, or
   * counted when it cannot be (first time, many changes), the counts running at once.
   */
  async totalsOf(resource: Resource, queries: Record<string, unknown>[], options: ScopeOption = {}): Promise<number[]> {
    const scope = options.scope ?? resource.scope;
    const scopeKey = options.scopeKey ?? keyOfScope(scope);
    const items = queries.map((query) => {
      const key = filterKey(resource, scopeKey, query);
      return { key, predicate: listPredicate(resource, query, scope), known: options.uncached ? [] : this.recent(key) };
    });
    const newest = items.flatMap((item) => (item.known.length ? [item.known[item.known.length - 1].snapshot.xmin] : []));
    const fromXid = newest.length ? Math.min(...newest) : undefined;
    const reads = [...new Set(items.flatMap((item) => item.predicate?.reads ?? []))];
    const changes = fromXid === undefined ? sql`null` : changesSince(resource, String(fromXid), MAX_CHANGES, reads);
    const [probe] = await this.db.select({ snapshot: currentSnapshot, changes }).from(sql`(select 1) as probe`);
    const snapshot = parseSnapshot(String(probe.snapshot));
    const logged = typeof probe.changes === 'string' ? parseChanges(probe.changes) : undefined;
    return Promise.all(items.map(({ key, predicate, known }) =>
      (logged && fromXid !== undefined ? this.bringForward(key, known, snapshot, logged, fromXid, predicate) : undefined)
        ?? this.countSeeing(key, resource, predicate, snapshot)));
  }

  /** A short list, whole: ordered by its default sort, ascending. */
  async whole<T = Record<string, unknown>>(resource: Resource): Promise<{ data: T[] }> {
    const rows = await selectView(this.db, resource.table, resource.listView ?? resource.view)
      .where(resource.scope?.sql)
      .orderBy(...listOrder(resource, { order: 'asc' }));
    return { data: rows as T[] };
  }

  /** The total at `snapshot` from a cached one it covers and the changes between them; undefined when it cannot tell. */
  private bringForward(key: string, known: Counted[], snapshot: Snapshot, changes: LoggedChange[], fromXid: number, predicate: Predicate | undefined): number | undefined {
    // The fetched changes reach back to `fromXid`: a base older than that would miss some.
    const base = [...known].reverse().find((counted) => counted.snapshot.xmin >= fromXid && covers(snapshot, counted.snapshot));
    if (!base || changes.length >= MAX_CHANGES) return undefined;
    const net = netChange(changes, base.snapshot, (row) => weightOf(predicate ? predicate.test(row) : true));
    if (net === undefined) return undefined;
    const total = base.total + net;
    this.remember(key, { snapshot, total, at: Date.now() });
    return total;
  }

  /** A count that sees at least what `snapshot` saw: one already running if it does, else a new one. */
  private async countSeeing(key: string, resource: Resource, predicate: Predicate | undefined, snapshot: Snapshot): Promise<number> {
    const running = this.counting.get(key);
    if (running) {
      const counted = await running;
      if (covers(counted.snapshot, snapshot)) return counted.total;
    }
    let counting = this.counting.get(key);
    if (!counting || counting === running) {
      counting = (async () => {
        const condition = parameterized(predicate?.sql);
        const statement = this.statement(statementName('count', [resource.name, predicateTextOf(key, predicate)]), () =>
          this.db.select({ total: sql<number>`count(*)::int`, snapshot: currentSnapshot }).from(resource.table as SelectQuery).where(condition.sql), condition.cacheable);
        const [row] = await statement.execute(condition.values);
        const counted = { snapshot: parseSnapshot(String(row.snapshot)), total: Number(row.total), at: Date.now() };
        this.remember(key, counted);
        return counted;
      })().finally(() => {
        if (this.counting.get(key) === counting) this.counting.delete(key);
      });
      this.counting.set(key, counting);
    }
    return (await counting).total;
  }

  private recent(key: string): Counted[] {
    const kept = this.totals.get(key);
    if (!kept) return [];
    const fresh = kept.filter((counted) => Date.now() - counted.at < MAX_AGE_MS);
    if (fresh.length !== kept.length) this.totals.set(key, fresh);
    return fresh;
  }

  private remember(key: string, counted: Counted) {
    const kept = this.totals.get(key);
    if (kept) {
      this.totals.delete(key); // re-inserted last: the map's order is least recently used first
      // The newest is replaced while it is young, so the older ones stay spaced out in time: a request whose snapshot
      // is a little behind the newest (many run at once) still finds one it covers, rather than counting again.
      const newest = kept.at(-1);
      if (newest && counted.at - newest.at < KEEP_SPACING_MS && kept.length > 1) kept.pop();
      kept.push(counted);
      if (kept.length > KEPT_PER_FILTER) kept.shift();
      this.totals.set(key, kept);
      return;
    }
    if (this.totals.size >= (this.options.maxFilters ?? 5000)) this.totals.delete(this.totals.keys().next().value!);
    this.totals.set(key, [counted]);
  }
}
