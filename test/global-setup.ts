import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/client.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PGlite: a migrated database, dumped (`dumpDataDir`) to this file; every test database starts from it. */
    pgliteTemplate?: string;
    /** PostgreSQL: a migrated database every test database is created from (`create database … template …`). */
    postgresTemplate?: string;
  }
}

/** Migrates once per run: a template every test database is a copy of. Dropped when the run ends. */
export default async function setup(project: TestProject) {
  const serverUrl = process.env.DATABASE_URL || undefined;
  if (!serverUrl) {
    const database = await openDatabase({ dataDir: 'memory://' });
    await database.migrate();
    const dump = await database.pglite!.dumpDataDir('none');
    await database.close();
    const file = join(tmpdir(), `pms-test-template-${process.pid}-${uuidv7()}.tar`);
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    project.provide('pgliteTemplate', file);
    return () => rmSync(file, { force: true });
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
  } finally {
    // A template must have no open connection while databases are created from it.
    await database.close();
  }
  project.provide('postgresTemplate', name);
  return () => admin(`drop database if exists ${name} with (force)`);
}
