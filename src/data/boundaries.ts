import type { PgColumn } from 'drizzle-orm/pg-core';
import { parseTimestamp } from '../db/timestamps.js';
import { covers, type LoggedChange, netChange, type Snapshot, visibleIn, weightOf } from './changes.js';
import { keyOf, type Predicate } from './filters.js';

/** A remembered row of a walk (a list's filters and order): the row at `offset`, as of `snapshot`. */
export type Boundary = { offset: number; sort: unknown; param: string; id: string; snapshot: Snapshot };

const PER_WALK = 32;
const MAX_WALKS = 2000;

/** How a sort column's values compare in memory exactly as PostgreSQL orders them; undefined: they cannot (text collations). */
function comparable(column: PgColumn): ((value: unknown) => number) | undefined {
  // Sort values are PostgreSQL's JSON text of the timestamp (`to_jsonb`), read exactly in every year (src/db/timestamps.ts).
  if (/Timestamp|Date/.test(column.columnType)) return (value) => (typeof value === 'string' ? parseTimestamp(value).getTime() : Number.NaN);
  if (/Integer|Numeric|Real|Double|BigInt|Serial/.test(column.columnType)) return (value) => Number(value);
  return undefined;
}

/**
 * Deep pages without walking every skipped row: the first row of each deep page read is remembered, and the next
 * request for a page at or after it takes a keyset step from it. Rows written before a remembered one move it; the
 * changes logged since it was remembered say by how many places (each changed row tested, before and after, against
 * the list's predicate and compared with it), or that it cannot be told, and then the page is read by offset.
 */
export class Boundaries {
  private walks = new Map<string, Boundary[]>();

  nearest(walk: string, offset: number): Boundary | undefined {
    let best: Boundary | undefined;
    for (const boundary of this.walks.get(walk) ?? []) if (boundary.offset <= offset && (!best || boundary.offset > best.offset)) best = boundary;
    return best;
  }

  remember(walk: string, boundary: Boundary) {
    if (boundary.sort === null) return;
    const kept = (this.walks.get(walk) ?? []).filter((b) => b.offset !== boundary.offset);
    kept.push(boundary);
    if (kept.length > PER_WALK) kept.shift();
    this.walks.delete(walk);
    if (this.walks.size >= MAX_WALKS) this.walks.delete(this.walks.keys().next().value!);
    this.walks.set(walk, kept);
  }

  forget(walk: string, boundary: Boundary) {
    const kept = this.walks.get(walk)?.filter((b) => b !== boundary);
    if (kept) this.walks.set(walk, kept);
  }

  /**
   * How many places the boundary's row moved by the changes between its snapshot and `snapshot` (rows entering the
   * walk before it push it down, rows leaving from before it pull it up); undefined when that cannot be told.
   */
  shift(boundary: Boundary, snapshot: Snapshot, changes: LoggedChange[], predicate: Predicate | undefined, column: PgColumn, id: PgColumn, descending: boolean): number | undefined {
    if (!covers(snapshot, boundary.snapshot) || !column.notNull) return undefined;
    const valueOf = comparable(column);
    if (!valueOf) return changes.some((c) => !visibleIn(c.xid, boundary.snapshot)) ? undefined : 0;
    const at = valueOf(boundary.sort);
    const sortKey = keyOf(column);
    const idKey = keyOf(id);
    /** 1 when the row is in the walk before the boundary, 0 when not, undefined when that cannot be told. */
    const before = (row: Record<string, unknown>) => {
      const matches = predicate ? predicate.test(row) : true;
      if (matches !== true) return weightOf(matches);
      const value = valueOf(row[sortKey]);
      if (Number.isNaN(value) || typeof row[idKey] !== 'string') return undefined;
      const rowId = String(row[idKey]);
      const precedes = value === at ? (descending ? rowId > boundary.id : rowId < boundary.id) : descending ? value > at : value < at;
      return weightOf(precedes);
    };
    return netChange(changes, boundary.snapshot, before);
  }
}
