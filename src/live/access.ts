import { and, getTableColumns, inArray } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { keyOf } from '../data/filters.js';
import { ownedBy, type Resource } from '../data/resource.js';
import type { Executor } from '../db/client.js';
import type { ModuleName } from '../db/schema/index.js';

/** What a stream's user may read, as of the last time their principal was read. */
export type Access = {
  userId: string;
  /** When their session (or API token) expires: the stream ends then. */
  expiresAt: number;
  /** Modules they may read. */
  modules: Set<ModuleName>;
  /** The users whose crm records they see; undefined: every record. */
  owners: string[] | undefined;
  /** Reads the activity log's crm entries (every crm record, or an administrator). */
  everyCrmRecord: boolean;
};

/** A logged row read back by the table's property names (the log has PostgreSQL's column names), as predicates test rows. */
export type Row = Record<string, unknown>;

const propertyNames = new WeakMap<PgTable, Map<string, string>>();

export function byProperty(table: PgTable, logged: Row): Row {
  let names = propertyNames.get(table);
  if (!names) {
    names = new Map(Object.entries(getTableColumns(table)).map(([key, column]) => [column.name, key]));
    propertyNames.set(table, names);
  }
  const row: Row = {};
  for (const [column, value] of Object.entries(logged)) row[names.get(column) ?? column] = value;
  return row;
}

/**
 * Whether a change of `resource` (its row before and after, either absent; none for a bulk change) is the user's to
 * hear of: they read its module, and the record is within their scope before or after. `parents`: the record is the
 * user's only if one of these parent records is (a lead's activity by someone else): the database says.
 */
export function verdict(access: Access, resource: Resource, rows: Row[] | null): boolean | { parents: string[] } {
  if (!access.modules.has(resource.module)) return false;
  if (!rows) return true;
  if (resource.walledBy && !access.everyCrmRecord) {
    const wall = resource.walledBy();
    if (!rows.some((row) => wall.test(row) === true)) return false;
  }
  if (resource.module !== 'crm' || !access.owners) return true;
  const owned = ownedBy(resource, access.owners);
  if (!owned) return true;
  const answers = rows.map((row) => owned.test(row));
  if (answers.includes(true)) return true;
  const through = resource.ownershipThrough;
  if (!through || !answers.includes(undefined)) return false;
  const key = keyOf(through.column);
  const parents = rows.map((row) => row[key]).filter((id): id is string => typeof id === 'string');
  return parents.length ? { parents } : false;
}

/** Of `ids` (records of `parent`), those within the scope of `owners`: one query. */
export async function ownedAmong(db: Executor, parent: Resource, owners: string[], ids: string[]): Promise<Set<string>> {
  const owned = ownedBy(parent, owners);
  if (!ids.length || !owned) return new Set(owned ? [] : ids);
  const rows = await db.select({ id: parent.id }).from(parent.table as never).where(and(inArray(parent.id, ids), owned.sql));
  return new Set(rows.map((row) => String((row as { id: unknown }).id)));
}
