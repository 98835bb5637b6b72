import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import PgBoss from 'pg-boss';
import type { TestProject } from 'vitest/node';
import { type Database, openDatabase } from '../src/db/client.js';
import { JOBS } from '../src/jobs/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PGlite: a migrated database, dumped (`dumpDataDir`) to this file; every test database starts from it. */
    pgliteTemplate?: string;
    /** PostgreSQL: a migrated database every test database is created from (`create database … template …`). */
    postgresTemplate?: string;
  }
}

/**
 * The job queue's schema and queues, as the service's first start with jobs on creates them (pg-boss's own
 * migration, then `createQueue` per job): in the template, a test app with jobs on finds them made instead of
 * creating a partition per queue on each database, and its database can be lent again (test/database-pool.ts).
 */
async function installJobQueues(database: Database) {
  const boss = new PgBoss({
    db: { executeSql: (text: string, values: unknown[]) => database.execute(text, values) },
    schema: 'pgboss',
  } as PgBoss.ConstructorOptions);
  await boss.start();
  for (const job of JOBS) await boss.createQueue(job.name);
  await boss.stop({ graceful: false, wait: true });
  // When it last ran maintenance, monitor and cron: as on a new install (test/database-pool.ts resets them likewise).
  await database.execute('update pgboss.version set maintained_on = null, monitored_on = null, cron_on = null');
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TEMPLATES = join(ROOT, 'node_modules', '.cache', 'pms-test-template');

/**
 * Everything the PGlite template is made of: the migrations, the job queues, PGlite, pg-boss and drizzle (their
 * versions) and the code that makes it. The same inputs make the same database, so a run reuses the last run's dump
 * instead of migrating again (2.5 s before any test can start).
 */
function templateKey(): string {
  const hash = createHash('sha256');
  for (const name of ['@electric-sql/pglite', 'pg-boss', 'drizzle-orm']) hash.update(readFileSync(join(ROOT, 'node_modules', name, 'package.json'))).update('\0');
  hash.update(JOBS.map((job) => job.name).join(',')).update('\0');
  const migrations = join(ROOT, 'drizzle');
  const files = (readdirSync(migrations, { recursive: true }) as string[]).sort();
  for (const name of files) if (name.endsWith('.sql') || name.endsWith('.json')) hash.update(name).update('\0').update(readFileSync(join(migrations, name))).update('\0');
  for (const name of ['test/global-setup.ts', 'src/db/client.ts']) hash.update(readFileSync(join(ROOT, name))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** The migrated PGlite database dumped (`dumpDataDir`) to a file: the last run's when its inputs are the same. */
async function pgliteTemplateFile(): Promise<string> {
  const file = join(TEMPLATES, `${templateKey()}.tar`);
  if (existsSync(file)) return file;
  const database = await openDatabase({ dataDir: 'memory://' });
  await database.migrate();
  await installJobQueues(database);
  const dump = await database.pglite!.dumpDataDir('none');
  await database.close();
  // Written beside and renamed into place (another run may write the same at the same moment); older ones removed.
  mkdirSync(TEMPLATES, { recursive: true });
  for (const old of readdirSync(TEMPLATES)) if (old.endsWith('.tar')) rmSync(join(TEMPLATES, old), { force: true });
  const partial = `${file}.${process.pid}-${uuidv7()}`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  return file;
}

/** Migrates once per run: a template every test database is a copy of. Dropped when the run ends. */
export default async function setup(project: TestProject) {
  const serverUrl = process.env.DATABASE_URL || undefined;
  if (!serverUrl) {
    project.provide('pgliteTemplate', await pgliteTemplateFile());
    return;
  }

  const name = `pms_template_${uuidv7().replace(/-/g, '')}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  try {
    await database.migrate();
    await installJobQueues(database);
  } finally {
    // A template must have no open connection while databases are created from it.
    await database.close();
  }
  project.provide('postgresTemplate', name);
  return () => admin(`drop database if exists ${name} with (force)`);
}
