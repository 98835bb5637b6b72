import type { ListRunner } from './list.js';
import type { Resource } from './resource.js';

/** Exact counts of a resource's rows per value of one list filter (`status` → `{new: 12, …}`), all from one read of the change log. */
export async function countsBy<V extends string>(lists: ListRunner, resource: Resource, filter: string, values: readonly V[], base: Record<string, unknown> = {}): Promise<Record<V, number>> {
  const totals = await lists.totalsOf(resource, values.map((value) => ({ ...base, [filter]: [value] })));
  return Object.fromEntries(values.map((value, i) => [value, totals[i]])) as Record<V, number>;
}

const DAY_MS = 24 * 3600 * 1000;

/** The days from `from` to `to` inclusive, as `YYYY-MM-DD` (UTC). */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}
