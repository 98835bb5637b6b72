import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { and, arrayContains, arrayOverlaps, eq, getTableColumns, gte, ilike, inArray, isNull, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { parseTimestamp } from '../db/timestamps.js';

/**
 * A condition on a resource's rows, twice: as SQL for the database, and as a test of one row in memory (by the
 * table's property names) for code that must know whether a changed row matches a list. `test` answers undefined
 * when it cannot tell (a condition on another table).
 */
export type Predicate = {
  sql: SQL;
  test: (row: Record<string, unknown>) => boolean | undefined;
  /** The properties `test` reads (so a changed row's other fields need not be fetched). */
  reads: string[];
};

/** A list filter: the query-string schema of its value and the predicate a value selects. */
export type Filter = { schema: TSchema; where: (value: never) => Predicate | undefined };

const keys = new WeakMap<PgColumn, string>();

/** The property name of a column in its table's rows (`departmentId` for `department_id`). */
export function keyOf(column: PgColumn): string {
  let key = keys.get(column);
  if (key === undefined) {
    const columns = getTableColumns(column.table as PgTable);
    key = Object.keys(columns).find((name) => columns[name] === column) ?? column.name;
    keys.set(column, key);
  }
  return key;
}

const valueIn = (row: Record<string, unknown>, column: PgColumn) => row[keyOf(column)];
/** An instant as a row holds it: a Date, or text as the change log's JSON has it (PostgreSQL's, in any session zone). */
const timeOf = (value: unknown) => (value instanceof Date ? value.getTime() : typeof value === 'string' ? parseTimestamp(value).getTime() : Number.NaN);
/** UUIDs compare case-insensitively in PostgreSQL. */
const same = (column: PgColumn, a: unknown, b: unknown) =>
  column.columnType === 'PgUUID' && typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b;

const DAY_MS = 24 * 3600 * 1000;
/** 00:00 UTC of a `YYYY-MM-DD` day. */
export const startOfDay = (day: string) => new Date(`${day}T00:00:00.000Z`);
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export const is = {
  equal: (column: PgColumn, value: unknown): Predicate => ({ sql: eq(column, value), test: (row) => same(column, valueIn(row, column), value), reads: [keyOf(column)] }),
  /** The column equals one of the values. */
  oneOf: (column: PgColumn, values: unknown[]): Predicate => ({
    sql: inArray(column, values),
    test: (row) => values.some((value) => same(column, valueIn(row, column), value)),
    reads: [keyOf(column)],
  }),
  null: (column: PgColumn): Predicate => ({ sql: isNull(column), test: (row) => valueIn(row, column) == null, reads: [keyOf(column)] }),
  /** An array column holding the value. */
  containing: (column: PgColumn, value: unknown): Predicate => ({
    sql: arrayContains(column, [value]),
    test: (row) => {
      const list = valueIn(row, column);
      return Array.isArray(list) && list.includes(value);
    },
    reads: [keyOf(column)],
  }),
  /**
   * An array column holding any of the values (`&&`, PostgreSQL's array overlap). A null array, like one sharing
   * nothing with the values, is not selected; null elements never match (the values are never null). No values: none.
   */
  overlapping: (column: PgColumn, values: unknown[]): Predicate => ({
    sql: values.length ? arrayOverlaps(column, values) : sql`false`,
    test: (row) => {
      const list = valueIn(row, column);
      return Array.isArray(list) && list.some((item) => item != null && values.includes(item));
    },
    reads: [keyOf(column)],
  }),
  onOrBefore: (column: PgColumn, time: Date): Predicate => ({ sql: lte(column, time), test: (row) => timeOf(valueIn(row, column)) <= time.getTime(), reads: [keyOf(column)] }),
  onOrAfter: (column: PgColumn, time: Date): Predicate => ({ sql: gte(column, time), test: (row) => timeOf(valueIn(row, column)) >= time.getTime(), reads: [keyOf(column)] }),
  /** Before `from` or from `to` on: the two ends of a time line without the span between. */
  outside: (column: PgColumn, from: Date, to: Date): Predicate => ({
    sql: or(lt(column, from), gte(column, to))!,
    test: (row) => timeOf(valueIn(row, column)) < from.getTime() || timeOf(valueIn(row, column)) >= to.getTime(),
    reads: [keyOf(column)],
  }),
  /** From 00:00 UTC of the day on. */
  onOrAfterDay: (column: PgColumn, day: string): Predicate => {
    const start = startOfDay(day);
    return { sql: gte(column, start), test: (row) => timeOf(valueIn(row, column)) >= start.getTime(), reads: [keyOf(column)] };
  },
  /**
   * Up to the end of the day (UTC), inclusive: to its last millisecond (the precision timestamps are kept at), which
   * for 9999-12-31 is still an instant PostgreSQL can read, unlike the next day's midnight.
   */
  onOrBeforeDay: (column: PgColumn, day: string): Predicate => {
    const last = new Date(startOfDay(day).getTime() + DAY_MS - 1);
    return { sql: lte(column, last), test: (row) => timeOf(valueIn(row, column)) <= last.getTime(), reads: [keyOf(column)] };
  },
  /** `q`: any of the columns contains the text, case-insensitively. */
  matching: (columns: PgColumn[], q: string): Predicate => {
    const needle = q.toLowerCase();
    return {
      sql: or(...columns.map((column) => ilike(column, likePattern(q))))!,
      test: (row) => columns.some((column) => {
        const value = valueIn(row, column);
        return typeof value === 'string' && value.toLowerCase().includes(needle);
      }),
      reads: columns.map(keyOf),
    };
  },
  /** A condition a row alone cannot answer (it reads another table). */
  opaque: (condition: SQL): Predicate => ({ sql: condition, test: () => undefined, reads: [] }),
};

/** All of the predicates (none → undefined). */
export function allOf(predicates: (Predicate | undefined)[]): Predicate | undefined {
  const parts = predicates.filter((p): p is Predicate => p !== undefined);
  if (parts.length === 0) return undefined;
  if (parts.length === 1) return parts[0];
  return {
    sql: and(...parts.map((p) => p.sql))!,
    test: (row) => {
      let known = true;
      for (const part of parts) {
        const result = part.test(row);
        if (result === false) return false;
        if (result === undefined) known = false;
      }
      return known ? true : undefined;
    },
    reads: [...new Set(parts.flatMap((p) => p.reads))],
  };
}

/** `?name=value`: the column equals the value. Single-valued: an enum's filter is `anyOf` (every enum filter takes several). */
export const equals = <S extends TSchema>(column: PgColumn, schema: S): Filter => ({ schema, where: (value: Static<S>) => is.equal(column, value) });
/** `?name=value`: the array column holds the value. */
export const contains = <S extends TSchema>(column: PgColumn, schema: S): Filter => ({ schema, where: (value: Static<S>) => is.containing(column, value) });
/**
 * The query-string schema of a filter taking several values (`?name=a,b` or `?name=a&name=b`): an array of `schema`.
 * The query string's comma-separated values are split before validation (src/http/validation.ts splits every array
 * parameter), so each is checked by `schema`; the OpenAPI document declares it an array (style form, explode true).
 * Every enum filter takes several values through this.
 */
export const several = <S extends TSchema>(schema: S) =>
  Type.Array(schema, { minItems: 1, maxItems: 50, description: 'One value, several separated by commas, or the parameter repeated' });

/** `?name=a,b` or `?name=a&name=b`: the column equals any of the values (one value: equals it). */
export const anyOf = <S extends TSchema>(column: PgColumn, schema: S): Filter => ({
  schema: several(schema),
  where: (values: Static<S>[]) => (values.length === 1 ? is.equal(column, values[0]) : is.oneOf(column, [...new Set(values)])),
});
/**
 * `?name=a,b` or `?name=a&name=b` on an array column: rows whose array holds any of the values (`&&`). `wildcards`:
 * elements that stand for every value (an endpoint subscribed to `*` receives every event), so they match too.
 */
export const overlaps = <S extends TSchema>(column: PgColumn, schema: S, options: { wildcards?: readonly unknown[] } = {}): Filter => ({
  schema: several(schema),
  where: (values: Static<S>[]) => is.overlapping(column, [...new Set<unknown>([...values, ...(options.wildcards ?? [])])]),
});

/** A day (`YYYY-MM-DD`, UTC) or an instant (ISO 8601 date-time with zone): the value of a range bound. */
export const DayOrInstant = () => Type.String({ format: 'day-or-instant', maxLength: 40, description: 'A day (YYYY-MM-DD, UTC) or an ISO 8601 date-time with zone' });
const isDay = (value: string) => value.length === 10;
/** Instants PostgreSQL and JavaScript both read (an offset may carry 9999-12-31 into year 10000): beyond, the bound. */
const FIRST = new Date('0001-01-01T00:00:00.000Z').getTime();
const LAST = new Date('9999-12-31T23:59:59.999Z').getTime();
const instant = (value: string) => new Date(Math.min(LAST, Math.max(FIRST, Date.parse(value))));
/** `?name_from=`: from 00:00 UTC of the day, or from the instant, on. */
export const since = (column: PgColumn): Filter => ({
  schema: DayOrInstant(),
  where: (value: string) => (isDay(value) ? is.onOrAfterDay(column, value) : is.onOrAfter(column, instant(value))),
});
/** `?name_to=`: up to the end of the day (UTC) inclusive, or up to the instant inclusive. */
export const until = (column: PgColumn): Filter => ({
  schema: DayOrInstant(),
  where: (value: string) => (isDay(value) ? is.onOrBeforeDay(column, value) : is.onOrBefore(column, instant(value))),
});

/** `?name=YYYY-MM-DD`: on or after that day (UTC). */
export const fromDay = (column: PgColumn, schema: TSchema): Filter => ({ schema, where: (day: string) => is.onOrAfterDay(column, day) });
/** `?name=YYYY-MM-DD`: on or before that day (UTC), inclusive. */
export const untilDay = (column: PgColumn, schema: TSchema): Filter => ({ schema, where: (day: string) => is.onOrBeforeDay(column, day) });
