import type { PGlite } from '@electric-sql/pglite';

/**
 * In-memory PGlite databases lent to test files one after another within a worker. Opening a copy of the template
 * costs about half a second of CPU, most of a small file's time; emptying a used one costs a few milliseconds.
 *
 * A database goes back to the pool only as the template was: its catalog unchanged (no table, column, default,
 * constraint, trigger, function, schema, statistics or per-database setting added, dropped or altered; a file that
 * did any of that leaves its database to be closed), the tables seeded by migrations unchanged, every other table
 * emptied (`truncate … restart identity`, which also gives it fresh empty files, so no dead rows sway later plans),
 * sequences restarted, the session reset (`discard all`) and no listener left behind. A borrower's handle stops
 * working when it is closed: work that outlives the file fails as on a closed database instead of writing into the
 * next file's.
 */

type Spare = { pglite: PGlite; catalog: string };
type Template = { tables: string[]; seeded: string[]; sequences: Map<string, string | null> };

/** More spares than files a worker runs at once only hold memory. */
const MOST_SPARES = 3;
const spares: Promise<Spare | undefined>[] = [];
let template: Promise<Template> | undefined;
/** Why databases were not lent again (PMS_TEST_POOL_LOG=1 prints each). */
const log = process.env.PMS_TEST_POOL_LOG === '1' ? (why: string) => console.error(`[database-pool] ${why}`) : () => undefined;

const quoted = (name: string) => name.split('.').map((part) => `"${part.replace(/"/g, '""')}"`).join('.');

/** Everything a file could change beside rows, and the seeded tables' rows. */
function catalogQuery(seeded: string[]) {
  const parts = [
    `(select md5(string_agg(concat_ws(':', oid, relname, relkind, relfilenode, relpages, reltuples, relhastriggers, relnatts, relrowsecurity), ',' order by oid)) from pg_class)`,
    `(select md5(coalesce(string_agg(concat_ws(':', oid, tgname, tgenabled), ',' order by oid), '')) from pg_trigger)`,
    `(select md5(string_agg(concat_ws(':', oid, proname, md5(prosrc), proconfig::text), ',' order by oid)) from pg_proc where pronamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace))`,
    `(select md5(string_agg(concat_ws(':', attrelid, attnum, attname, atttypid, attnotnull, attisdropped), ',' order by attrelid, attnum)) from pg_attribute where attrelid >= 16384)`,
    `(select md5(coalesce(string_agg(concat_ws(':', oid, conname, convalidated), ',' order by oid), '')) from pg_constraint)`,
    `(select md5(coalesce(string_agg(adbin::text, ',' order by oid), '')) from pg_attrdef)`,
    `(select md5(string_agg(nspname, ',' order by oid)) from pg_namespace)`,
    `(select md5(coalesce(string_agg(setconfig::text, ',' order by setdatabase, setrole), '')) from pg_db_role_setting)`,
    `(select md5(string_agg(concat_ws(':', rolname, rolsuper, rolconfig::text), ',' order by oid)) from pg_roles)`,
    `(select count(*) from pg_statistic)`,
    `(select count(*) from pg_extension)`,
    ...seeded.map((table) => `(select md5(coalesce(string_agg(t::text, ',' order by t::text), '')) from ${quoted(table)} t)`),
  ];
  return `select concat_ws('|', ${parts.join(', ')}) as catalog`;
}

const nonEmptyQuery = (tables: string[]) => tables.map((table) => `select '${table}' as t where exists (select 1 from ${quoted(table)})`).join(' union all ');

async function catalogOf(pglite: PGlite, facts: Template) {
  return String((await pglite.query<{ catalog: string }>(catalogQuery(facts.seeded))).rows[0].catalog);
}

/** The template's tables (those it holds rows in are "seeded") and sequences, read off a fresh copy. */
async function readTemplate(pglite: PGlite): Promise<Template> {
  const tables = (await pglite.query<{ t: string }>(`select schemaname || '.' || tablename as t from pg_tables where schemaname not in ('pg_catalog', 'information_schema') order by 1`)).rows.map((row) => row.t);
  const seeded = tables.length ? (await pglite.query<{ t: string }>(nonEmptyQuery(tables))).rows.map((row) => row.t) : [];
  const sequences = new Map((await pglite.query<{ s: string; v: string | null }>(`select schemaname || '.' || sequencename as s, last_value::text as v from pg_sequences`)).rows.map((row) => [row.s, row.v]));
  return { tables: tables.filter((table) => !seeded.includes(table)), seeded, sequences };
}

/** Empties a returned database back to the template's contents; undefined (and closed) when it cannot be. */
async function restore(pglite: PGlite, catalog: string, facts: Template): Promise<Spare | undefined> {
  const refuse = async (why: string) => {
    log(why);
    if (!pglite.closed) await pglite.close().catch(() => undefined);
    return undefined;
  };
  if (pglite.closed) return undefined;
  try {
    // Fails inside a transaction a file left open: such a database is not lent again.
    await pglite.exec('discard all');
    // pg-boss notes when it last ran its maintenance, monitor and cron on its version row (seeded by the template, where
    // they are empty, see test/global-setup.ts): bookkeeping, not a change a later file could see.
    if (facts.seeded.includes('pgboss.version')) await pglite.exec('update pgboss.version set maintained_on = null, monitored_on = null, cron_on = null');
    if ((await catalogOf(pglite, facts)) !== catalog) return await refuse('catalog changed');
    const used = (await pglite.query<{ t: string }>(nonEmptyQuery(facts.tables))).rows.map((row) => quoted(row.t));
    if (used.length) await pglite.exec(`truncate ${used.join(', ')} restart identity cascade`);
    const sequences = (await pglite.query<{ s: string; v: string | null }>(`select schemaname || '.' || sequencename as s, last_value::text as v from pg_sequences`)).rows;
    for (const { s, v } of sequences) {
      const wanted = facts.sequences.get(s);
      if (wanted === undefined) return await refuse(`sequence ${s} is new`);
      if (v === wanted) continue;
      await pglite.exec(wanted === null ? `alter sequence ${quoted(s)} restart` : `select setval('${quoted(s)}', ${wanted}, true)`);
    }
    // Truncation gave the emptied tables new files: their catalog rows changed with them.
    return { pglite, catalog: await catalogOf(pglite, facts) };
  } catch (err) {
    return await refuse(`reset failed: ${(err as Error).message}`);
  }
}

/**
 * A handle on `pglite` for one borrower: `close()` ends the loan (the database is restored and kept), and after it
 * the handle answers as a closed PGlite does. Listeners the borrower leaves behind keep the database from being lent again.
 */
function lend(spare: Spare, facts: Template): PGlite {
  const { pglite } = spare;
  let returned = false;
  let listening = 0;
  const closedError = () => Promise.reject(new Error('PGlite is closed'));
  const close = async () => {
    if (returned) return;
    returned = true;
    const restored = listening > 0 ? (log(`${listening} listener(s) left`), pglite.close().then(() => undefined)) : restore(pglite, spare.catalog, facts);
    spares.push(restored);
    // Spares beyond the limit are closed.
    while (spares.length > MOST_SPARES) void spares.shift()!.then((extra) => extra?.pglite.close());
  };
  const counted = (subscribe: (...args: unknown[]) => Promise<() => Promise<void>>) => async (...args: unknown[]) => {
    const unsubscribe = await subscribe(...args);
    listening++;
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      listening--;
      await unsubscribe();
    };
  };
  return new Proxy(pglite, {
    get(target, property) {
      if (property === 'close') return close;
      if (property === 'closed') return returned || target.closed;
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (returned) return closedError;
      const bound = value.bind(target);
      return property === 'listen' ? counted(bound) : bound;
    },
  });
}

/** A migrated in-memory database for one borrower: a spare restored from an earlier file, or a fresh copy by `open`. */
export async function borrowDatabase(open: () => Promise<PGlite>): Promise<PGlite> {
  while (spares.length) {
    const spare = await spares.pop()!;
    if (spare) return lend(spare, await template!);
  }
  const pglite = await open();
  template ??= readTemplate(pglite);
  const facts = await template;
  return lend({ pglite, catalog: await catalogOf(pglite, facts) }, facts);
}
