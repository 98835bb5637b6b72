import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import * as tar from 'tar';
import type { Config } from '../config.js';
import { openDatabase, type Database } from '../db/client.js';
import { filesOf, STORED_NAME } from '../media/library.js';
import { LocalStorage, storageOf, closeStorage } from '../media/storage.js';

/**
 * One backup is one gzipped tar archive:
 *   manifest.json             what it holds (Manifest), written last, read first
 *   database/pglite.tar       PGlite: the data directory as `dumpDataDir` gives it
 *   database/postgres.json    PostgreSQL: each table's columns and each sequence's value
 *   database/tables/<t>.copy  PostgreSQL: each table of the public schema, as COPY's text format
 *   uploads/<name>            every stored file the database's uploads name (local storage only)
 */
export const BACKUP_FORMAT = 1;

export type Manifest = {
  format: typeof BACKUP_FORMAT;
  service: { name: string; version: string };
  created_at: string;
  database: {
    kind: 'pglite' | 'postgres';
    /** drizzle's record of the migrations applied, oldest first: a restore needs the same ones. */
    migrations: { hash: string; created_at: number }[];
    /** Rows per table of the public schema, as the snapshot saw them; a restore checks it gets the same. */
    tables: Record<string, number>;
  };
  uploads: {
    storage: 'local' | 's3';
    /** False with S3 storage: the bucket keeps its files (its own versioning or replication backs them up). */
    included: boolean;
    files: number;
    bytes: number;
    /** Files an upload names that were not in the storage when the backup was taken. */
    missing: string[];
  };
};

type PostgresTables = { columns: Record<string, string[]>; sequences: Record<string, number | null> };

/** A backup or restore refused or failed for a reason the operator can act on; the message says what to do. */
export class BackupError extends Error {}

// The compiled trees the tests run carry a package.json without name or version.
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name?: string; version?: string };
const MIGRATIONS = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** A table or sequence name as SQL: every name in the public schema is one the migrations chose. */
const ident = (name: string) => pg.escapeIdentifier(name);

const TABLES = `select c.relname as name from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relispartition order by 1`;
const MIGRATIONS_APPLIED = 'select hash, created_at::text as created_at from drizzle.__drizzle_migrations order by created_at, id';

type UploadRow = { name: string; variants: { name: string }[] | string };
const storedFiles = (rows: UploadRow[]) => rows.flatMap((row) => filesOf({ name: row.name, variants: typeof row.variants === 'string' ? JSON.parse(row.variants) : row.variants }));
const migrationsOf = (rows: Record<string, unknown>[]) => rows.map((row) => ({ hash: String(row.hash), created_at: Number(row.created_at) }));

/** The stored files in a local upload directory (none in a new one). */
async function storedFilesIn(dir: string) {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  return names.filter((name) => STORED_NAME.test(name));
}

/**
 * Hard-links (or, across file systems, copies) into `target` the files the database's uploads name, and any other
 * stored file beside them (uploads from before the uploads table, which are still served). Taken while nothing can
 * delete the named ones (see the callers), so the archive gets each even if it is deleted a moment later. Linking is
 * instant and takes no space; a link never changes, since a stored name is never written again.
 */
async function stageUploads(source: string, named: string[], target: string) {
  const names = [...new Set([...named, ...(await storedFilesIn(source))])];
  await mkdir(target, { recursive: true });
  const missing: string[] = [];
  for (const name of names) {
    try {
      await link(join(source, name), join(target, name));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A file of no upload gone meanwhile was being removed; one an upload names is reported.
      if (code === 'ENOENT') {
        if (named.includes(name)) missing.push(name);
      } else if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EMLINK') await copyFile(join(source, name), join(target, name));
      else throw err;
    }
  }
  const files = await readdir(target);
  let bytes = 0;
  for (const name of files) bytes += (await stat(join(target, name))).size;
  return { files: files.length, bytes, missing };
}

type Snapshot = { migrations: Manifest['database']['migrations']; tables: Record<string, number>; uploads: Awaited<ReturnType<typeof stageUploads>> };

/**
 * PGlite is one connection: while a transaction is open nothing else of the service runs, so the upload list, the row
 * counts, the data directory and the files are taken at one instant. The dump is PGlite's own (`dumpDataDir`): the
 * files as they are, a transaction in progress rolled back when it is opened again, as after a crash.
 */
async function snapshotPglite(database: Database, staging: string, uploadDir: string | undefined): Promise<Snapshot> {
  const pglite = database.pglite!;
  // Written out first, so the dump's recovery has little to replay.
  await pglite.exec('checkpoint');
  return pglite.transaction(async (tx) => {
    const { rows: names } = await tx.query<{ name: string }>(TABLES);
    const counts = names.length
      ? (await tx.query<{ name: string; rows: number }>(names.map(({ name }) => `select '${name}' as name, count(*)::int as rows from ${ident(name)}`).join(' union all '))).rows
      : [];
    const migrations = migrationsOf((await tx.query<Record<string, unknown>>(MIGRATIONS_APPLIED)).rows);
    const uploads = uploadDir ? storedFiles((await tx.query<UploadRow>('select name, variants from uploads')).rows) : [];
    const dump = await pglite.dumpDataDir('none');
    await writeFile(join(staging, 'database', 'pglite.tar'), Buffer.from(await dump.arrayBuffer()));
    return {
      migrations,
      tables: Object.fromEntries(counts.map((row) => [row.name, Number(row.rows)])),
      uploads: uploadDir ? await stageUploads(uploadDir, uploads, join(staging, 'uploads')) : { files: 0, bytes: 0, missing: [] },
    };
  });
}

/** A connection whose text forms of dates and times read back the same whatever the server's defaults. */
async function connect(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`set timezone to 'UTC'; set datestyle to 'ISO'; set intervalstyle to 'postgres'; set extra_float_digits to 3`);
  return client;
}

const SERIALIZATION_FAILURE = '40001';
const BACKUP_LOCK = 72_707_002;
const RUNNING = 'another backup of this database is being taken: try again when it has finished';
/** The PGlite databases being backed up (by this process: the only one that can open them). */
const pgliteBackups = new WeakSet<object>();

/**
 * PostgreSQL: one REPEATABLE READ snapshot for every table. A first transaction takes it while locking the upload rows
 * (FOR SHARE: deleting an upload, which removes its files before it commits, waits), exports it to the reading
 * transaction, links the files and ends: uploads are held only while their files are linked, not for the whole dump.
 */
async function snapshotPostgres(url: string, staging: string, uploadDir: string | undefined): Promise<Snapshot> {
  const holder = await connect(url);
  const reader = await connect(url);
  try {
    // One backup of a database at a time (a scheduled one still running, an operator's by hand): the lock goes with the connection.
    const { rows: [{ locked }] } = await reader.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [BACKUP_LOCK]);
    if (!locked) throw new BackupError(RUNNING);
    let uploads: Snapshot['uploads'] = { files: 0, bytes: 0, missing: [] };
    for (let attempt = 1; ; attempt++) {
      try {
        await holder.query('begin isolation level repeatable read');
        const { rows } = await holder.query<UploadRow>(`select name, variants from uploads ${uploadDir ? 'for share' : ''}`);
        const { rows: [{ snapshot }] } = await holder.query<{ snapshot: string }>('select pg_export_snapshot() as snapshot');
        await reader.query('begin isolation level repeatable read read only');
        await reader.query(`set transaction snapshot ${pg.escapeLiteral(snapshot)}`);
        if (uploadDir) uploads = await stageUploads(uploadDir, storedFiles(rows), join(staging, 'uploads'));
        await holder.query('commit');
        break;
      } catch (err) {
        await holder.query('rollback').catch(() => undefined);
        await reader.query('rollback').catch(() => undefined);
        // An upload changed between the snapshot and its lock: take a newer snapshot.
        if ((err as { code?: string }).code !== SERIALIZATION_FAILURE || attempt >= 5) throw err;
        await rm(join(staging, 'uploads'), { recursive: true, force: true });
      }
    }
    const tables: Record<string, number> = {};
    const details: PostgresTables = { columns: {}, sequences: {} };
    await mkdir(join(staging, 'database', 'tables'), { recursive: true });
    for (const { name } of (await reader.query<{ name: string }>(TABLES)).rows) {
      // Generated columns are computed again on restore; COPY cannot write them.
      const { rows: columns } = await reader.query<{ name: string }>(
        `select attname as name from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = '' order by attnum`,
        [ident(name)],
      );
      details.columns[name] = columns.map((column) => column.name);
      const copy = reader.query(copyTo(`copy ${ident(name)} (${details.columns[name].map(ident).join(', ')}) to stdout`));
      await pipeline(copy, createWriteStream(join(staging, 'database', 'tables', `${name}.copy`)));
      tables[name] = copy.rowCount;
    }
    for (const row of (await reader.query<{ name: string; value: string | null }>(`select sequencename as name, last_value::text as value from pg_sequences where schemaname = 'public'`)).rows) {
      details.sequences[row.name] = row.value === null ? null : Number(row.value);
    }
    const migrations = migrationsOf((await reader.query(MIGRATIONS_APPLIED)).rows);
    await reader.query('commit');
    await writeFile(join(staging, 'database', 'postgres.json'), JSON.stringify(details, null, 2));
    return { migrations, tables, uploads };
  } finally {
    await Promise.all([holder.end(), reader.end()].map((ending) => ending.catch(() => undefined)));
  }
}

/**
 * Writes one backup archive to `file`: the database as one consistent snapshot, the local uploads it names, and the
 * manifest. Safe while the service runs (PostgreSQL; PGlite within the service's own process). The archive appears
 * under its name only once complete.
 */
export async function writeBackup(database: Database, config: Config, file: string): Promise<Manifest> {
  await mkdir(dirname(file), { recursive: true });
  const staging = await mkdtemp(join(dirname(file), '.backup-'));
  try {
    await mkdir(join(staging, 'database'));
    await mkdir(join(staging, 'uploads'));
    const uploadDir = config.s3 ? undefined : config.uploadDir;
    let snapshot: Snapshot;
    if (database.kind === 'pglite') {
      const pglite = database.pglite!;
      if (pgliteBackups.has(pglite)) throw new BackupError(RUNNING);
      pgliteBackups.add(pglite);
      try {
        snapshot = await snapshotPglite(database, staging, uploadDir);
      } finally {
        pgliteBackups.delete(pglite);
      }
    } else {
      snapshot = await snapshotPostgres(database.url ?? config.databaseUrl!, staging, uploadDir);
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      service: { name: PACKAGE.name ?? 'unknown', version: PACKAGE.version ?? 'unknown' },
      created_at: new Date().toISOString(),
      database: { kind: database.kind, migrations: snapshot.migrations, tables: snapshot.tables },
      uploads: { storage: config.s3 ? 's3' : 'local', included: !config.s3, ...snapshot.uploads },
    };
    await writeFile(join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const partial = join(staging, basename(file));
    await tar.create({ gzip: true, file: partial, cwd: staging, portable: true }, ['manifest.json', 'database', 'uploads']);
    await rename(partial, file);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

// ── Restoring ─────────────────────────────────────────────────────────────────────────────────────────────────

/** Only what a backup holds is unpacked: nothing else of an archive reaches the disk. */
const MEMBER = /^(manifest\.json|database\/?|database\/(pglite\.tar|postgres\.json)|database\/tables\/?|database\/tables\/[a-z0-9_]+\.copy|uploads\/?|uploads\/[a-z0-9.-]+)$/;

async function unpack(archive: string, target: string): Promise<Manifest> {
  try {
    await tar.extract({ file: archive, cwd: target, strict: true, filter: (path) => MEMBER.test(path.replace(/^\.\//, '')) });
  } catch (err) {
    throw new BackupError(`${archive} is not a readable backup archive (${(err as Error).message}); it may be damaged or incomplete: use another one`);
  }
  const file = join(target, 'manifest.json');
  if (!existsSync(file)) throw new BackupError(`${archive} holds no manifest.json: it is not a backup of this service`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(file, 'utf8')) as Manifest;
  } catch {
    throw new BackupError(`${archive}: its manifest.json is damaged; use another backup`);
  }
  if (manifest?.format !== BACKUP_FORMAT || !['pglite', 'postgres'].includes(manifest.database?.kind) || typeof manifest.database.tables !== 'object') {
    throw new BackupError(`${archive}: its manifest is not one this version writes (format ${String(manifest?.format)}); restore it with the version that took it (${manifest?.service?.version ?? 'unknown'})`);
  }
  return manifest;
}

type Migration = { tag: string; when: number };

/**
 * The migrations the archive's database had, as a folder drizzle migrates from: this version's first ones, when they
 * are the same. Restoring to that point and letting the service migrate the rest at its start keeps every row
 * loadable as it was dumped.
 */
async function migrationsUpTo(manifest: Manifest, scratch: string): Promise<string> {
  const journal = JSON.parse(await readFile(join(MIGRATIONS, 'meta', '_journal.json'), 'utf8')) as { entries: Migration[] };
  const taken = manifest.database.migrations;
  if (taken.length > journal.entries.length) {
    throw new BackupError(`the backup was taken by a newer version of the service (${manifest.service.version}, ${taken.length} migrations; this one has ${journal.entries.length}): restore it with that version or a later one`);
  }
  const differing = taken.findIndex((migration, i) => migration.created_at !== journal.entries[i].when);
  if (differing >= 0) throw new BackupError(`the backup's migration ${differing + 1} is not this version's ${journal.entries[differing].tag}: restore it with the version that took it (${manifest.service.version})`);
  const folder = join(scratch, 'migrations');
  await mkdir(join(folder, 'meta'), { recursive: true });
  const entries = journal.entries.slice(0, taken.length);
  await writeFile(join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
  for (const entry of entries) await copyFile(join(MIGRATIONS, `${entry.tag}.sql`), join(folder, `${entry.tag}.sql`));
  return folder;
}

/** Rows per table of the restored database, compared with the manifest's. */
async function checkCounts(manifest: Manifest, count: (table: string) => Promise<number>) {
  const wrong: string[] = [];
  for (const [table, rows] of Object.entries(manifest.database.tables)) {
    const restored = await count(table);
    if (restored !== rows) wrong.push(`${table}: ${restored} rows, the backup says ${rows}`);
  }
  if (wrong.length) throw new BackupError(`the restored database does not match the backup's manifest (${wrong.join('; ')})`);
}

async function restorePglite(manifest: Manifest, scratch: string, dataDir: string) {
  const dump = join(scratch, 'database', 'pglite.tar');
  if (!existsSync(dump)) throw new BackupError('the archive holds no database/pglite.tar: it is incomplete; use another backup');
  const database = await openDatabase({ dataDir, loadDataDir: new Blob([await readFile(dump)]) });
  try {
    await checkCounts(manifest, async (table) => Number((await database.execute(`select count(*)::int as n from ${ident(table)}`, [])).rows[0].n));
  } finally {
    await database.close();
  }
}

/** Every relation a database holds outside the system's schemas: an empty database has none. */
const USER_RELATIONS = `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_toast%' and n.nspname not like 'pg\\_temp%'
    and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')`;

/**
 * PostgreSQL: the schema as the archive's migrations made it, then every table's rows in one transaction. Foreign keys
 * are dropped while loading (two tables refer to each other, so no order of tables fits) and added back, which checks
 * every row; the tables' own triggers (change log, principal cache) stay off while their rows arrive as they were.
 */
async function restorePostgres(manifest: Manifest, scratch: string, url: string) {
  const detailsFile = join(scratch, 'database', 'postgres.json');
  if (!existsSync(detailsFile)) throw new BackupError('the archive holds no database/postgres.json: it is incomplete; use another backup');
  const details = JSON.parse(await readFile(detailsFile, 'utf8')) as PostgresTables;
  const folder = await migrationsUpTo(manifest, scratch);
  const client = await connect(url);
  try {
    await migrate(drizzle(client), { migrationsFolder: folder });
    await client.query('begin');
    const { rows: foreignKeys } = await client.query<{ tbl: string; name: string; definition: string }>(
      `select c.relname as tbl, k.conname as name, pg_get_constraintdef(k.oid) as definition
         from pg_constraint k join pg_class c on c.oid = k.conrelid where k.contype = 'f' and k.connamespace = 'public'::regnamespace`,
    );
    for (const key of foreignKeys) await client.query(`alter table ${ident(key.tbl)} drop constraint ${ident(key.name)}`);
    const tables = Object.keys(manifest.database.tables);
    // Migrations may have seeded rows of their own: the archive's rows replace them.
    if (tables.length) await client.query(`truncate ${tables.map(ident).join(', ')}`);
    for (const table of tables) {
      const columns = details.columns[table];
      const file = join(scratch, 'database', 'tables', `${table}.copy`);
      if (!columns || !existsSync(file)) throw new BackupError(`the archive holds no rows for the table ${table}: it is incomplete; use another backup`);
      await client.query(`alter table ${ident(table)} disable trigger user`);
      await pipeline(createReadStream(file), client.query(copyFrom(`copy ${ident(table)} (${columns.map(ident).join(', ')}) from stdin`)));
      await client.query(`alter table ${ident(table)} enable trigger user`);
    }
    for (const key of foreignKeys) await client.query(`alter table ${ident(key.tbl)} add constraint ${ident(key.name)} ${key.definition}`);
    for (const [sequence, value] of Object.entries(details.sequences)) {
      await client.query(value === null ? `select setval($1::regclass, 1, false)` : `select setval($1::regclass, $2)`, value === null ? [ident(sequence)] : [ident(sequence), value]);
    }
    await checkCounts(manifest, async (table) => (await client.query<{ n: number }>(`select count(*)::int as n from ${ident(table)}`)).rows[0].n);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const CONTENT_TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif', avif: 'image/avif' };

export type Restored = { manifest: Manifest; rows: number; files: number };

/**
 * Restores an archive into the configured database and upload storage, which must be empty: the embedded database's
 * directory (DATA_DIR/pglite) new or empty, or a PostgreSQL database without any table; the local upload directory
 * without stored files. Row counts are checked against the manifest before it answers.
 */
export async function restoreBackup(archive: string, config: Config): Promise<Restored> {
  if (!existsSync(archive)) throw new BackupError(`${archive}: no such file`);
  await mkdir(config.dataDir, { recursive: true });
  const scratch = await mkdtemp(join(config.dataDir, '.restore-'));
  try {
    const manifest = await unpack(archive, scratch);
    const pgliteDir = join(config.dataDir, 'pglite');
    if (manifest.database.kind === 'postgres' && !config.databaseUrl) {
      throw new BackupError('the backup holds a PostgreSQL database: set DATABASE_URL to a new, empty database and restore again');
    }
    if (manifest.database.kind === 'pglite' && config.databaseUrl) {
      throw new BackupError('the backup holds an embedded (PGlite) database: unset DATABASE_URL and restore into a new DATA_DIR');
    }
    if (manifest.database.kind === 'pglite') {
      await migrationsUpTo(manifest, scratch);
      if ((await readdir(pgliteDir).catch(() => [])).length) {
        throw new BackupError(`${pgliteDir} already holds a database: restore into an empty data directory (set DATA_DIR to a new directory, or move this one away)`);
      }
    } else {
      const client = await connect(config.databaseUrl!);
      try {
        const { rows: [{ n }] } = await client.query<{ n: number }>(USER_RELATIONS);
        if (n > 0) throw new BackupError(`the database at DATABASE_URL is not empty (${n} tables, views or sequences): restore into a new, empty database (createdb), never over one in use`);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    const uploads = (await readdir(join(scratch, 'uploads')).catch(() => [] as string[])).filter((name) => STORED_NAME.test(name));
    if (uploads.length < manifest.uploads.files) throw new BackupError(`the archive holds ${uploads.length} of the ${manifest.uploads.files} uploaded files its manifest lists: it is incomplete; use another backup`);
    if (uploads.length && !config.s3 && (await storedFilesIn(config.uploadDir)).length) {
      throw new BackupError(`${config.uploadDir} already holds uploaded files: restore into an empty upload directory (UPLOAD_DIR)`);
    }

    if (manifest.database.kind === 'pglite') {
      try {
        await restorePglite(manifest, scratch, pgliteDir);
      } catch (err) {
        // It was empty: leave it so, ready for another attempt.
        await rm(pgliteDir, { recursive: true, force: true });
        throw err;
      }
    } else {
      try {
        await restorePostgres(manifest, scratch, config.databaseUrl!);
      } catch (err) {
        const reason = err instanceof BackupError ? err.message : `the restore failed: ${(err as Error).message}`;
        throw new BackupError(`${reason}. The database may now hold the schema without the data: drop it and create it again before another attempt`);
      }
    }

    // Through the configured storage: local files are written beside and renamed into place; S3 gets each object.
    const storage = config.s3 ? storageOf(config) : new LocalStorage(config.uploadDir);
    try {
      for (const name of uploads) {
        await storage.put(name, await readFile(join(scratch, 'uploads', name)), CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream');
      }
    } finally {
      if (config.s3) await closeStorage(config);
    }
    return { manifest, rows: Object.values(manifest.database.tables).reduce((sum, n) => sum + n, 0), files: uploads.length };
  } finally {
    // A damaged archive stops the unpacking while files it started are still being written: retried until they are.
    await rm(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => undefined);
  }
}
