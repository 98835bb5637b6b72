import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { seedLeads } from './seed.js';
import { type Service, signIn, startService } from './server.js';

export const ADMIN = { email: 'bench@example.com', password: 'Bench#Passw0rd' };

/**
 * A running service on a seeded database: a fresh PostgreSQL database when DATABASE_URL is set, otherwise
 * PGlite in a temporary DATA_DIR. PGlite allows one process, so the service is stopped while seeding.
 */
export async function seededService(leads: number): Promise<Service & { token: string; database: string; env: Record<string, string>; drop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pms-bench-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, NODE_ENV: 'production', AUTH_SECRET: 'bench-secret-0123456789-0123456789-abc' };
  let database = `PGlite (${dataDir})`;
  let drop = async () => rmSync(dataDir, { recursive: true, force: true });
  if (process.env.DATABASE_URL) {
    const name = `pms_bench_${Date.now()}`;
    drop = async () => {
      rmSync(dataDir, { recursive: true, force: true });
      const dropper = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`);
      await dropper.end();
    };
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    env.DATABASE_URL = url.toString();
    database = `PostgreSQL (${name})`;
  }
  const first = await startService(env); // migrates and creates the administrator
  await first.stop();
  const ms = await seedLeads({ url: env.DATABASE_URL, dataDir: env.DATABASE_URL ? undefined : `${dataDir}/pglite`, count: leads });
  console.log(`seeded ${leads} leads into ${database} in ${ms} ms`);
  const service = await startService(env);
  const token = await signIn(service.url, ADMIN.email, ADMIN.password);
  return { ...service, token, database, env, drop };
}
