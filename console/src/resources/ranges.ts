import type { FilterSpec, RangeSpec, ResourceSpec } from './types';

/** A list's date ranges: its own, or `created` on every paged list (the API's `created_from`/`created_to`). */
export const rangesOf = (spec: ResourceSpec): readonly RangeSpec[] => spec.ranges ?? (spec.whole ? [] : [{ source: 'created', label: 'Created' }]);

/** Every filter of a list: its declared ones, then a "from" and a "to" day per date range. */
export function listFiltersOf(spec: ResourceSpec): FilterSpec[] {
  const ranges = rangesOf(spec).flatMap((range): FilterSpec[] => [
    { source: `${range.source}_from`, label: `${range.label} from`, type: 'date' },
    { source: `${range.source}_to`, label: `${range.label} to`, type: 'date' },
  ]);
  return [...(spec.filters ?? []), ...ranges];
}
