import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db, Tx } from './client.js';

/** The statement renderer drizzle itself uses (the database is made without a casing option, so the default). */
const dialect = new PgDialect();

/**
 * Runs `query` as a named prepared statement, named by its text: PostgreSQL parses and plans it once per connection
 * instead of on every call. For the audited writes, whose statements are long CTE chains (row, activity log, change
 * log, webhook deliveries) with the same text for every create of a resource: parsing and planning them cost more
 * than running them (pgbench, 8 clients: 3,300 statements/s unnamed, 8,800 named). Only for statements whose text
 * is one of a few per resource and action: each name lives as long as its connection. PGlite ignores the name.
 */
export async function executePrepared(db: Db | Tx, query: SQL): Promise<{ rows: Record<string, unknown>[] }> {
  const compiled = dialect.sqlToQuery(query);
  const name = `pms_${createHash('sha1').update(compiled.sql).digest('base64url')}`;
  // Without fields, the prepared query answers the driver's raw result, as `db.execute` does: library boundary.
  return (await db._.session.prepareQuery(compiled, undefined, name, false).execute()) as { rows: Record<string, unknown>[] };
}

/** pg's own conversion of a parameter to the text it sends (arrays, dates, buffers, JSON): library boundary. */
const parameterText = (createRequire(import.meta.url)('pg/lib/utils') as { prepareValue: (value: unknown) => string | Buffer | null }).prepareValue;

/**
 * The text of `query` with each parameter written in place as a quoted literal, for a statement that takes no
 * parameters (`COPY`). A quoted literal is untyped until its context types it, as a parameter is, so the statement
 * means the same; pg's `escapeLiteral` doubles quotes and backslashes.
 */
export function withLiterals(query: SQL): string {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return text.replace(/\$(\d+)/g, (placeholder, n: string) => {
    if (Number(n) < 1 || Number(n) > params.length) return placeholder;
    const value = parameterText(params[Number(n) - 1]);
    if (value === null) return 'null';
    return pg.escapeLiteral(Buffer.isBuffer(value) ? `\\x${value.toString('hex')}` : value);
  });
}
