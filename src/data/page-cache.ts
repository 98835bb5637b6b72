import { Column, type Placeholder, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { clock } from '../clock.js';
import { covers, type LoggedChange, type Snapshot, visibleIn } from './changes.js';
import type { Predicate } from './filters.js';
import { type Resource, resourceOfTable, type View } from './resource.js';

/**
 * A page kept: read in snapshot `readAt`, and found exact in every snapshot from there to `snapshot` (each check that
 * found nothing that could change it moves `snapshot` on).
 */
export type KeptPage = { rows: Record<string, unknown>[]; ids: Set<string>; readAt: Snapshot; snapshot: Snapshot; at: number };

/**
 * Reading a page slower than this (ms) keeps it. 0, the default: every page is kept, because serving a kept page (one
 * small indexed read of the change log, one row back) costs both the database and the service less than reading the
 * page again (its rows mapped from the driver's values), however fast that read is.
 */
export const SLOW_PAGE_MS = 0;
const MAX_PAGES = 1000;
/** Rows kept across all pages at most (about a kilobyte each), so pages of 100 rows cannot take 100 MB. */
const MAX_ROWS = 20_000;
/**
 * A page found changed is not kept again for this long (ms): while writes keep changing it, checking first is waste.
 * Measured on the service's clock (src/clock.ts), so tests move past it without sleeping.
 */
export const UNSTABLE_MS = 1000;

/**
 * Pages that were slow to read. A kept page is served again while the change log shows nothing since its snapshot
 * that could change it: no change to one of its rows, to a row the list's predicate takes before or after the change,
 * or to a resource its view joins. The check is one small indexed read; the page's own query is not run.
 */
export class PageCache {
  private pages = new Map<string, KeptPage>();
  /** Rows of the kept pages. */
  private rows = 0;
  /** When a kept page was last found changed: a page that changes often is cheaper read than checked and read. */
  private changed = new Map<string, number>();

  get(key: string, maxAgeMs: number): KeptPage | undefined {
    const kept = this.pages.get(key);
    if (kept && Date.now() - kept.at >= maxAgeMs) this.drop(key);
    return kept && Date.now() - kept.at < maxAgeMs ? kept : undefined;
  }

  keep(key: string, page: KeptPage) {
    const changedAt = this.changed.get(key);
    if (changedAt !== undefined && clock.now().getTime() - changedAt < UNSTABLE_MS) return;
    this.drop(key);
    // The least recently kept go first.
    while (this.pages.size && (this.pages.size >= MAX_PAGES || this.rows + page.rows.length > MAX_ROWS)) this.drop(this.pages.keys().next().value!);
    this.pages.set(key, page);
    this.rows += page.rows.length;
  }

  private drop(key: string) {
    const kept = this.pages.get(key);
    if (!kept) return;
    this.pages.delete(key);
    this.rows -= kept.rows.length;
  }

  /** The kept page was found changed: forgotten, and not kept again for a while. */
  forget(key: string) {
    this.drop(key);
    this.changed.delete(key);
    if (this.changed.size >= MAX_PAGES) this.changed.delete(this.changed.keys().next().value!);
    this.changed.set(key, clock.now().getTime());
  }
}

/**
 * The other resources a view reads (its joins), or undefined when it cannot tell: a field that is an SQL expression
 * (it may read anything) or a table that is no declared resource. Such views are never served from the cache.
 */
export function joinedResources(resource: Resource, view: View): string[] | undefined {
  const tables = new Set<PgTable>();
  const walk = (fields: Record<string, unknown>): boolean => Object.values(fields).every((field) => {
    if (field instanceof Column) return tables.add(field.table as PgTable);
    return field !== null && typeof field === 'object' && !('getSQL' in field) && walk(field as Record<string, unknown>);
  });
  if (!walk(view.fields)) return undefined;
  tables.delete(resource.table);
  const names = [...tables].map(resourceOfTable);
  return names.every((name): name is string => name !== undefined) ? names : undefined;
}

/** Whether any of `resources` changed in a transaction from `fromXid` on (false for none), as a scalar subquery. */
export function anyChangeSince(resources: string[], fromXid: string | Placeholder) {
  if (!resources.length) return sql<boolean>`false`;
  return sql<boolean>`pms_changed_since(array[${sql.join(resources.map((r) => sql`${r}`), sql`, `)}]::text[], ${fromXid}::xid8)`;
}

/**
 * Whether a kept page is exact in `snapshot`, a check's, given the `changes` logged since the page's snapshot:
 * `newer` when the snapshot covers the page's and none of the changes could alter it (the page is then exact up to
 * it); `within` when the snapshot lies between the page's reading and its last check, where it is known exact (a
 * request whose snapshot was taken just before a concurrent one moved the page on: without this it found the page
 * "not covered" and dropped it, which a sign-in's commit beside 42 readers did twice a second); false otherwise.
 */
export function keptPageIn(kept: KeptPage, snapshot: Snapshot, changes: LoggedChange[], predicate: Predicate | undefined): 'newer' | 'within' | false {
  if (covers(snapshot, kept.snapshot)) return untouched(kept, changes, predicate) ? 'newer' : false;
  return covers(snapshot, kept.readAt) && covers(kept.snapshot, snapshot) ? 'within' : false;
}

/** Whether a kept page is still exact after `changes` (those its snapshot had not seen). */
export function untouched(kept: KeptPage, changes: LoggedChange[], predicate: Predicate | undefined): boolean {
  for (const change of changes) {
    if (visibleIn(change.xid, kept.snapshot)) continue;
    if (change.rowId === null || kept.ids.has(change.rowId)) return false;
    // A row the list takes (before or after the change) may enter, leave or move within it.
    for (const row of [change.before, change.after]) if (row && (!predicate || predicate.test(row) !== false)) return false;
  }
  return true;
}
