import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PGlite, types } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { Logger as DrizzleLogger, SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { CopyOut } from './copy-out.js';
import * as schema from './schema/index.js';
import { withLiterals } from './prepared.js';
import { parseTimestamp } from './timestamps.js';

export type Schema = typeof schema;
/** The drizzle database, whichever driver is underneath (both speak the same PostgreSQL). */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Anything a query can run on: the database or an open transaction. */
export type Executor = Db | Tx;

export type Database = {
  kind: 'pglite' | 'postgres';
  db: Db;
  /** The embedded database itself (PGlite only), e.g. to dump it. */
  pglite?: PGlite;
  /** The server's URL (PostgreSQL only), for work that needs connections of its own (a backup's snapshot). */
  url?: string;
  /** Raw parameterised SQL, for pg-boss's executor and health checks. */
  execute(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  /** Resolves when the database answers within the timeout; rejects otherwise. */
  ping(timeoutMs?: number): Promise<void>;
  migrate(): Promise<void>;
  /** Whether every migration this code ships has been applied (readiness); rejects when the database does not answer. */
  migrationsApplied(timeoutMs?: number): Promise<boolean>;
  /**
   * Connection pool usage (PostgreSQL only): open connections, idle ones, queries waiting for one, and the maximum.
   * PGlite has no pool (one in-process connection), so it has no such numbers.
   */
  pool?: () => { total: number; idle: number; waiting: number; max: number };
  close(): Promise<void>;
  /**
   * PostgreSQL only: the rows of `select` in `COPY`'s binary format (read by src/data/binary-csv.ts), in chunks as
   * they arrive. One connection for the statement; one left half-read (the reader went away) is closed, not reused.
   */
  copyBinary?: (select: SQL) => AsyncIterable<Buffer>;
  /** Observers of every SQL statement drizzle sends (tests count queries with it). */
  queryObservers: Set<(sql: string) => void>;
  /** Told about connection errors outside any query (a server going away). */
  onError?: (err: Error) => void;
  /**
   * Calls `handler` with the payload of every NOTIFY on `channel` (from any process on the database). `listening`
   * says whether notifications arrive: false when the connection is lost (any may be missed from then on), true once
   * it is back. The answer stops listening, or syncs (see Listener).
   */
  listen(channel: string, handler: (payload: string) => void, listening: (on: boolean) => void): Promise<Listener>;
};

export type Listener = {
  stop: () => Promise<void>;
  /**
   * Resolves true once every notification committed before the call has been handed to the handler (a NOTIFY
   * reaches another process a moment after its commit: this waits for it), false when that cannot be known.
   */
  sync: () => Promise<boolean>;
};

const MIGRATIONS = fileURLToPath(new URL('../../drizzle', import.meta.url));
/** Serialises migrations when several instances start against one PostgreSQL server. */
const MIGRATION_LOCK = 72_707_001;

/** When the newest migration of this code was generated: drizzle records that instant for each migration it applies. */
let newestMigration: number | undefined;
const newestMigrationMillis = () =>
  (newestMigration ??= Math.max(0, ...(JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, 'utf8')) as { entries: { when: number }[] }).entries.map((e) => e.when)));

/** True when drizzle's migration table records the newest migration (false when it is missing or behind). */
async function migrationsApplied(execute: Database['execute'], timeoutMs: number): Promise<boolean> {
  const exists = await withTimeout(execute(`select to_regclass('drizzle.__drizzle_migrations') is not null as present`, []), timeoutMs);
  if (!exists.rows[0]?.present) return false;
  const { rows } = await withTimeout(execute('select max(created_at)::text as last from drizzle.__drizzle_migrations', []), timeoutMs);
  return Number(rows[0]?.last ?? 0) >= newestMigrationMillis();
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`database did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export type DatabaseOptions = {
  /** postgres:// URL; without it an embedded PGlite database is used. */
  url?: string;
  /** PGlite data directory; `memory://` for a throwaway database. */
  dataDir?: string;
  /** PGlite: start from this dump (`dumpDataDir()`), e.g. a template database migrated once for a whole test run. */
  loadDataDir?: Blob | File;
  /** PGlite: an instance already open, in place of `dataDir` (the tests lend one migrated database to file after file). */
  pglite?: PGlite;
};

/**
 * Every session prints timestamps in UTC and ISO style, whatever the server's or the database's defaults: the text
 * then always parses (src/db/timestamps.ts), and change-log JSON (`to_jsonb`) and sort keys compare as instants. In
 * another zone, years before standard time print with a local-mean-time offset (`0001-12-31 08:03:52-15:56:08 BC` for
 * year 1 in Asia/Manila) that JavaScript cannot read.
 */
const SESSION = ['TimeZone=UTC', 'DateStyle=ISO'];

/**
 * The pool's connection settings: SESSION as startup options (the session's defaults: `RESET ALL` keeps them, and they
 * outrank per-database and per-role settings), after any `options` the URL carries, which pg would otherwise prefer.
 */
function utcSession(url: string): pg.PoolConfig {
  const options = SESSION.map((setting) => `-c ${setting}`).join(' ');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options };
  }
  const own = parsed.searchParams.get('options');
  if (!own) return { connectionString: url, options };
  parsed.searchParams.set('options', `${own} ${options}`);
  return { connectionString: parsed.toString() };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const queryObservers = new Set<(sql: string) => void>();
  const logger: DrizzleLogger = { logQuery: (query) => queryObservers.forEach((observe) => observe(query)) };

  if (options.url) {
    const pool = new pg.Pool({ ...utcSession(options.url), max: 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
    // An idle client losing its server must not crash the process; health reports it instead.
    pool.on('error', (err) => database.onError?.(err));
    const db = drizzlePg(pool, { schema, logger }) as unknown as Db;
    const execute = async (text: string, values?: unknown[]) => pool.query(text, values);
    const database: Database = {
      kind: 'postgres',
      url: options.url,
      db,
      execute,
      async *copyBinary(select) {
        const client = await pool.connect();
        let finished = false;
        try {
          // A range of an export is planned for its own keys, and its row estimate is poor (a row-value range): planned
          // parallel and compiled (JIT), each range of 50,000 leads took twice as long as read by one process
          // uncompiled. The export already reads two ranges at once. Its rows are wanted in the order of the sort's
          // index: estimated low, a range was read by bitmap and then sorted, spilling to disk (EXPLAIN ANALYZE: 280 ms
          // for 50,000 leads, against 170 walking the index in order).
          await client.query('set max_parallel_workers_per_gather = 0; set jit = off; set enable_sort = off');
          for await (const chunk of client.query(new CopyOut(`copy (${withLiterals(select)}) to stdout (format binary)`) as unknown as pg.Submittable) as unknown as AsyncIterable<Buffer>) yield chunk;
          await client.query('reset max_parallel_workers_per_gather; reset jit; reset enable_sort');
          finished = true;
        } finally {
          client.release(!finished);
        }
      },
      ping: (ms = 2000) => withTimeout(execute('select 1'), ms).then(() => undefined),
      async migrate() {
        const client = await pool.connect();
        try {
          await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
          await migratePg(drizzlePg(client, { schema }), { migrationsFolder: MIGRATIONS });
        } finally {
          await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
          client.release();
        }
      },
      migrationsApplied: (ms = 2000) => migrationsApplied(execute, ms),
      pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max }),
      // Closing twice is harmless (a failed start-up and its shutdown may both close): the pool ends once.
      close: () => (pool.ended ? Promise.resolve() : pool.end()),
      queryObservers,
      listen: (channel, handler, listening) => listenOnServer(options.url!, channel, handler, listening, (err) => database.onError?.(err)),
    };
    return database;
  }

  const dataDir = options.dataDir ?? 'memory://';
  if (!options.pglite && !dataDir.includes('://')) mkdirSync(dataDir, { recursive: true });
  const client = options.pglite ?? await PGlite.create(dataDir, {
    extensions: { pg_trgm },
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    // The session's settings as the server's connections get them (see SESSION), and timestamps read exactly by raw
    // queries too (PGlite's own parser is `new Date(text)`: year 1 would read as 2001).
    startParams: [...PGlite.defaultStartParams, ...SESSION.flatMap((setting) => ['-c', setting])],
    parsers: { [types.TIMESTAMPTZ]: parseTimestamp, [types.TIMESTAMP]: parseTimestamp },
  });
  // And set in the session itself, which outranks any default the data directory could carry (postgresql.conf, ALTER DATABASE).
  await client.exec(SESSION.map((setting) => `SET ${setting.replace('=', " TO '")}'`).join('; '));
  const db = drizzlePglite(client, { schema, logger }) as unknown as Db;
  // Without parameters a text may hold several statements (pg-boss's migrations): PGlite runs those with exec.
  const execute = async (text: string, values?: unknown[]) => {
    if (values?.length) return client.query<Record<string, unknown>>(text, values);
    const results = await client.exec(text);
    return { rows: results.at(-1)?.rows ?? [] };
  };
  return {
    kind: 'pglite',
    pglite: client,
    db,
    execute,
    ping: (ms = 2000) => (client.closed ? Promise.reject(new Error('database is closed')) : withTimeout(execute('select 1'), ms).then(() => undefined)),
    migrate: () => migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: MIGRATIONS }),
    migrationsApplied: (ms = 2000) => (client.closed ? Promise.reject(new Error('database is closed')) : migrationsApplied(execute, ms)),
    close: async () => {
      if (!client.closed) await client.close();
    },
    queryObservers,
    // One process owns a PGlite database: its notifications never get lost.
    listen: async (channel, handler, listening) => {
      const stop = await client.listen(channel, handler);
      listening(true);
      return {
        stop: async () => {
          if (!client.closed) await stop();
        },
        // One connection: a notification is handled while the statement that committed it is answered.
        sync: async () => !client.closed,
      };
    },
  };
}

/**
 * LISTEN on a dedicated connection (a pooled one would be handed to queries), reconnecting with backoff whenever it is
 * lost, and saying so through `listening`.
 */
async function listenOnServer(url: string, channel: string, handler: (payload: string) => void, listening: (on: boolean) => void, onError: (err: Error) => void) {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const gone = new WeakSet<pg.Client>();
  const lost = (which: pg.Client, err: Error, delayMs: number) => {
    if (gone.has(which)) return;
    gone.add(which);
    onError(err);
    void which.end().catch(() => undefined);
    if (client === which) client = undefined;
    listening(false);
    if (!stopped) retry = setTimeout(() => void connect(Math.min(delayMs * 2, 10_000)), delayMs);
  };
  const connect = async (delayMs: number): Promise<void> => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    next.on('notification', (message) => {
      if (message.channel === channel) handler(message.payload ?? '');
    });
    next.on('error', (err) => lost(next, err, delayMs));
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      lost(next, err as Error, delayMs);
      return;
    }
    if (stopped) return void next.end().catch(() => undefined);
    client = next;
    listening(true);
  };
  await connect(100);
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
    // A round trip on the LISTEN connection: the server sends the notifications committed before it, then the answer.
    sync: async () => {
      const current = client;
      if (!current) return false;
      return current.query('select 1').then(() => client === current, () => false);
    },
  };
}
