import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { allOf, is } from '../data/filters.js';
import type { ScopeOption } from '../data/list.js';
import type { Resource } from '../data/resource.js';
import type { Executor } from '../db/client.js';
import { validationError } from '../errors.js';

/**
 * Record scopes are walls, not filters: a record a request names anywhere (a body field, a list filter) is read with
 * the caller's scope, and a record outside it answers exactly as one that does not exist; an answer never carries the
 * id of a record outside it. The path's own record is read by `findOne` with the same scope.
 */

/** The caller's record scope on a resource (`recordScope` of the request). */
export type ScopeOf = (resource: Resource) => Promise<ScopeOption>;

/** A filter value that names no record: a hidden record's id is replaced by it, so the list is the unknown id's. */
const NO_RECORD = '00000000-0000-0000-0000-000000000000';

const referencesOf = (resource: Resource) => Object.entries(resource.references?.() ?? {});

/** The ids among `ids` of records of `resource` that the caller may read (lower-case). */
async function readableIds(db: Executor, resource: Resource, ids: string[], scope: ScopeOption): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const where = allOf([is.oneOf(resource.id, ids), scope.scope ?? resource.scope])!;
  const rows: { id: unknown }[] = await db.select({ id: resource.id }).from(resource.table as never).where(where.sql);
  return new Set(rows.map((row) => String(row.id).toLowerCase()));
}

/** The message for a record that does not exist or lies outside the caller's scope: one text for both. */
export const unknownRecord = (resource: Resource) => `must be an existing ${resource.label.toLowerCase()}`;

/** 400 `details.<field>` unless `id` names a record of `resource` the caller may read (null and undefined pass). */
export async function requireReadable(db: Executor, resource: Resource, id: unknown, scope: ScopeOption, field: string, message = unknownRecord(resource)) {
  if (typeof id !== 'string') return;
  if (!(await readableIds(db, resource, [id], scope)).has(id.toLowerCase())) throw validationError({ [field]: message });
}

/** Every reference a body names is a record the caller may read (400 naming the first field that is not). */
export async function requireReferences(db: Executor, resource: Resource, body: Record<string, unknown>, scopeOf: ScopeOf) {
  for (const [field, target] of referencesOf(resource)) {
    if (typeof body[field] === 'string') await requireReadable(db, target, body[field], await scopeOf(target), field);
  }
}

/** A list's query with every reference filter naming a record outside the caller's scope turned into one naming none. */
export async function walledQuery(db: Executor, resource: Resource, query: Record<string, unknown>, scopeOf: ScopeOf): Promise<Record<string, unknown>> {
  let walled = query;
  for (const [field, target] of referencesOf(resource)) {
    const id = query[field];
    if (typeof id !== 'string') continue;
    const scope = await scopeOf(target);
    if (!scope.scope) continue;
    if (!(await readableIds(db, target, [id], scope)).has(id.toLowerCase())) walled = { ...walled, [field]: NO_RECORD };
  }
  return walled;
}

/**
 * Rows as the caller may see them: each reference to a record outside their scope is null (a changed row is a copy;
 * the rows given, which a list may keep for others, are never changed). One query per referenced resource.
 */
export async function withoutHidden<R extends Record<string, unknown>>(db: Executor, resource: Resource, rows: R[], scopeOf: ScopeOf): Promise<R[]> {
  let seen = rows;
  for (const [field, target] of referencesOf(resource)) {
    const scope = await scopeOf(target);
    if (!scope.scope) continue;
    const ids = [...new Set(seen.map((row) => row[field]).filter((id): id is string => typeof id === 'string'))];
    if (!ids.length) continue;
    const readable = await readableIds(db, target, ids, scope);
    seen = seen.map((row) => (typeof row[field] === 'string' && !readable.has((row[field] as string).toLowerCase()) ? { ...row, [field]: null } : row));
  }
  return seen;
}

/**
 * For an export's columns: the SQL condition under which a reference column may be shown to the caller, by column
 * header; none when the caller may read every record it could name.
 */
export async function readableColumns(resource: Resource, columns: { header: string; value: unknown }[], scopeOf: ScopeOf): Promise<Map<string, SQL>> {
  const only = new Map<string, SQL>();
  for (const [field, target] of referencesOf(resource)) {
    const scope = await scopeOf(target);
    const column = columns.find((c) => c.header === field)?.value as PgColumn | undefined;
    if (!scope.scope || !column) continue;
    only.set(field, sql`${column} in (select ${target.id} from ${target.table} where ${scope.scope.sql})`);
  }
  return only;
}

type Entry = { changes: unknown };
type Sides = { before?: Record<string, unknown>; after?: Record<string, unknown> };

/** A record's history as the caller may see it: references in each change's before and after hidden as in answers. */
export async function historyWithoutHidden<E extends Entry>(db: Executor, resource: Resource, entries: E[], scopeOf: ScopeOf): Promise<E[]> {
  if (!resource.references) return entries;
  const sidesOf = (entry: E) => (entry.changes ?? {}) as Sides;
  const sides = entries.flatMap((entry) => [sidesOf(entry).before ?? {}, sidesOf(entry).after ?? {}]);
  const shown = await withoutHidden(db, resource, sides, scopeOf);
  return entries.map((entry, i) => {
    const [before, after] = [shown[2 * i], shown[2 * i + 1]];
    if (before === sides[2 * i] && after === sides[2 * i + 1]) return entry;
    return { ...entry, changes: { ...sidesOf(entry), before, after } };
  });
}
