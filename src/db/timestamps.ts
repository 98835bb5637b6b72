import { entityKind } from 'drizzle-orm';
import type { ColumnBaseConfig, ColumnBuilderBaseConfig } from 'drizzle-orm';
import { type AnyPgTable, PgTimestamp, PgTimestampBuilder, type PgTimestampBuilderInitial } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL's text of a timestamp, as the session prints it with DateStyle ISO (`0001-01-01 00:00:00+00`,
 * `2026-11-23 09:30:00.123+00`, `1900-01-01 08:04:00+08:04`, `0044-03-15 00:00:00+00 BC`) or as JSON holds it
 * (`0001-01-01T00:00:00+00:00`). The zone offset may have seconds (local mean time before standard zones); a
 * timestamp without time zone has none (read as UTC).
 */
const TEXT = /^(\d{4,})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?( BC)?$/i;

/**
 * The instant a timestamp's text names, to the millisecond (the precision the service keeps). Exact for every year
 * PostgreSQL holds: `new Date(text)` (what drizzle and PGlite do) reads `0001-01-01 00:00:00+00` as 2001 (V8's
 * legacy parser takes years below 50 as 20xx and below 100 as 19xx) and cannot read offsets with seconds at all.
 * `infinity`, `-infinity` and text in another DateStyle fall back to `Date`'s own reading.
 */
export function parseTimestamp(text: string): Date {
  // What the service reads all day: a year 1000–9999 in UTC (the session's zone), which `Date.parse` reads exactly as
  // ISO text (milliseconds truncated, as below) at a fraction of the cost of the full reading.
  if (text.length >= 22 && text.charCodeAt(4) === 45 && text.charCodeAt(10) === 32 && text.charCodeAt(0) !== 48 && text.endsWith('+00')) {
    const ms = Date.parse(`${text.slice(0, 10)}T${text.slice(11, -3)}Z`);
    if (!Number.isNaN(ms)) return new Date(ms);
  }
  const m = TEXT.exec(text);
  if (!m) return new Date(text);
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, oh, om, os, bc] = m;
  // 1 BC is year 0 in JavaScript's (proleptic, astronomical) calendar.
  const year = bc ? 1 - Number(y) : Number(y);
  const ms = fraction ? Number(fraction.padEnd(3, '0').slice(0, 3)) : 0;
  const date = new Date(0);
  // setUTCFullYear: Date.UTC would take years 0–99 as 1900–1999.
  date.setUTCFullYear(year, Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), ms);
  if (!zulu && sign) {
    const offset = (Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0)) * 1000;
    return new Date(date.getTime() - (sign === '-' ? -offset : offset));
  }
  return date;
}

/** A `timestamp … with time zone` column (columnType `PgTimestamp`, mode date) that reads PostgreSQL's text exactly. */
export class ExactTimestamp<T extends ColumnBaseConfig<'date', 'PgTimestamp'>> extends PgTimestamp<T> {
  static override readonly [entityKind]: string = 'ExactTimestamp';

  override mapFromDriverValue(value: Date | string): Date {
    return typeof value === 'string' ? parseTimestamp(value) : value;
  }
}

export class ExactTimestampBuilder<T extends ColumnBuilderBaseConfig<'date', 'PgTimestamp'>> extends PgTimestampBuilder<T> {
  static override readonly [entityKind]: string = 'ExactTimestampBuilder';

  /** @internal drizzle builds the column when the table is declared. */
  build(table: AnyPgTable<{ name: string }>) {
    return new ExactTimestamp(table, this.config as never);
  }
}

/** `timestamp(name, { withTimezone: true, precision, mode: 'date' })`, read back exactly (see parseTimestamp). */
export const exactTimestamp = <TName extends string>(name: TName, precision?: 0 | 1 | 2 | 3 | 4 | 5 | 6): PgTimestampBuilderInitial<TName> =>
  new ExactTimestampBuilder(name, true, precision) as unknown as PgTimestampBuilderInitial<TName>;
