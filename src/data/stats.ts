import type { ListRunner } from './list.js';
import type { Resource } from './resource.js';

/** Counts named by the values they were counted for, in order: `{new: 12, contacted: 3, …}`. */
export const byValue = <V extends string>(values: readonly V[], counts: number[]) =>
  Object.fromEntries(values.map((value, i) => [value, counts[i]])) as Record<V, number>;

/** The list queries that count a resource's rows per value of one of its (multi-value) filters. */
export const perValue = (filter: string, values: readonly string[], base: Record<string, unknown> = {}) => values.map((value) => ({ ...base, [filter]: [value] }));

/** Exact counts of a resource's rows per value of one list filter (`status` → `{new: 12, …}`), all from one read of the change log. */
export async function countsBy<V extends string>(lists: ListRunner, resource: Resource, filter: string, values: readonly V[], base: Record<string, unknown> = {}): Promise<Record<V, number>> {
  return byValue(values, await lists.totalsOf(resource, perValue(filter, values, base)));
}

const DAY_MS = 24 * 3600 * 1000;

const FIRST_DAY = Date.parse('0001-01-01T00:00:00Z');
const LAST_DAY = Date.parse('9999-12-31T00:00:00Z');

/**
 * The day `n` days after `day` (before, for a negative `n`), kept within years 1–9999: a range's default bound computed
 * from the other one (the 30 days up to `to`) stays a day PostgreSQL and `YYYY-MM-DD` can hold.
 */
export const shiftDay = (day: string, n: number) =>
  new Date(Math.min(LAST_DAY, Math.max(FIRST_DAY, Date.parse(`${day}T00:00:00Z`) + n * DAY_MS))).toISOString().slice(0, 10);

/** How many days from `from` to `to` inclusive (UTC): a range's size, known before any day of it is listed. */
export const dayCount = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;

/** The days from `from` to `to` inclusive, as `YYYY-MM-DD` (UTC). */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}
