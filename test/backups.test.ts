import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BackupError, type Manifest } from '../src/backups/archive.js';
import { scheduledBackup } from '../src/backups/job.js';
import { runAdmin } from '../src/cli/admin.js';
import { claimPglite } from '../src/cli/pglite-owner.js';
import { DEMO_ADMIN, runSeedDemo } from '../src/cli/seed-demo.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/client.js';
import type { Services } from '../src/jobs/registry.js';
import { STORED_NAME } from '../src/media/library.js';
import { compiled } from './compiled.js';
import { make } from './factories.js';
import { as, createTestApp, createTestDatabase, CRON_SECRET, login, none, pgliteDataDir, serverUrl, type TestContext, onServer } from './helpers.js';

// `npm run admin -- backup` and `restore`: the demo's data and files, backed up and restored into an empty place,
// read back the same through the API; a place that is not empty, and an archive that is not whole, are refused.

const root = mkdtempSync(join(tmpdir(), 'pms-backup-'));
const sourceDir = join(root, 'source');
const archive = join(root, 'demo.tar.gz');
const SECRET = 'backup-test-secret-0123456789-0123456789';
let server: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let sourceEnv: Record<string, string>;
let password: string;
const emptyDatabases: string[] = [];


/** Where a restore may go: a new DATA_DIR, and on a server a new database without any table. */
async function emptyTarget(): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(root, 'target-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, AUTH_SECRET: SECRET, BCRYPT_COST: '4', LOG_LEVEL: 'silent' };
  if (!serverUrl) return env;
  const name = `pms_test_restore_${uuidv7().replace(/-/g, '')}`;
  await onServer(`create database ${name}`);
  emptyDatabases.push(name);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { ...env, DATABASE_URL: url.toString() };
}

/** The service on a restored (or the source) database, with the data directory's uploads; the demo administrator signed in. */
async function serviceOn(env: Record<string, string>, database?: Database) {
  const db = database ?? (await openDatabase({ url: env.DATABASE_URL, dataDir: join(env.DATA_DIR, 'pglite') }));
  if (!database) await db.migrate();
  const ctx = await createTestApp({ UPLOAD_DIR: join(env.DATA_DIR, 'uploads'), BASE_URL: 'https://demo.example.com' }, { database: db });
  const admin = as(ctx, await login(ctx, DEMO_ADMIN.email, password));
  return {
    ctx, admin, close: async () => {
      await ctx.close();
      if (!database) await db.close();
    },
  };
}

const manifestOf = async (file: string) => {
  const dir = mkdtempSync(join(root, 'manifest-'));
  await tar.extract({ file, cwd: dir }, ['manifest.json']);
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
};

const storedFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((name) => STORED_NAME.test(name)).sort() : []);

let backupSummary: string;
let leadsSeeded: number;

beforeAll(async () => {
  if (serverUrl) server = await createTestDatabase();
  else await pgliteDataDir(join(sourceDir, 'pglite'));
  sourceEnv = { DATA_DIR: sourceDir, AUTH_SECRET: SECRET, BCRYPT_COST: '4', BASE_URL: 'https://demo.example.com', ...(server ? { DATABASE_URL: server.url! } : {}) };
  const seeded = await runSeedDemo([], sourceEnv);
  password = /with the password (\S+) \(shown once\)/.exec(seeded)![1];
  leadsSeeded = Number(/(\d+) leads \(/.exec(seeded)![1]) + Number(/history: (\d+) earlier leads/.exec(seeded)![1]);
  backupSummary = await runAdmin(['backup', '--out', archive], sourceEnv);
  // A hang guard only: the seed takes about 15 s on a quiet machine, far longer on a busy one.
}, 900_000);

afterAll(async () => {
  await server?.close();
  for (const name of emptyDatabases) await onServer(`drop database if exists ${name} with (force)`).catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});

describe('backup and restore', () => {
  let target: Record<string, string>;
  let restoreSummary: string;

  beforeAll(async () => {
    target = await emptyTarget();
    restoreSummary = await runAdmin(['restore', archive], target);
  }, 300_000);

  test('the backup is one archive: the database, the uploaded files and a manifest with versions, migrations and row counts', async () => {
    const manifest = await manifestOf(archive);
    expect(manifest).toMatchObject({ format: 1, database: { kind: serverUrl ? 'postgres' : 'pglite' }, uploads: { storage: 'local', included: true, missing: [] } });
    expect(manifest.service.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest.database.migrations.length).toBe(JSON.parse(readFileSync('drizzle/meta/_journal.json', 'utf8')).entries.length);
    expect(manifest.database.tables).toMatchObject({ leads: leadsSeeded, projects: 6, uploads: 30 });
    expect(manifest.uploads.files).toBe(storedFiles(join(sourceDir, 'uploads')).length);
    expect(backupSummary).toMatch(new RegExp(`^backup written to ${archive}: \\d+ tables, \\d+ rows, ${manifest.uploads.files} uploaded files \\(\\d+\\.\\d MB\\)$`));
    expect(restoreSummary).toContain(`${manifest.uploads.files} uploaded files`);
    expect(restoreSummary).toContain("each table's count checked");
  });

  test('every list total, a sample of records and every uploaded file are the same after the restore', async () => {
    const source = await serviceOn(sourceEnv, server);
    const restored = await serviceOn(target);
    try {
      const lists = [
        '/api/cms/projects', '/api/cms/articles', '/api/cms/careers', '/api/cms/amenities', '/api/uploads', '/api/crm/leads', '/api/crm/inventory',
        '/api/crm/reservations', '/api/crm/inquiries', '/api/crm/newsletters', '/api/crm/campaigns', '/api/crm/tasks', '/api/iam/users',
        '/api/iam/departments', '/api/iam/activity-logs', '/api/crm/leads?status=converted&limit=100', '/api/crm/inventory?status=sold', '/api/crm/trash',
      ];
      for (const url of lists) {
        const [before, after] = await Promise.all([source.admin.get(url), restored.admin.get(url)]);
        expect(before.statusCode, `${url}: ${before.body}`).toBe(200);
        // The activity log has the sign-ins to each since: the same number, not the same entries.
        if (url.includes('activity-logs')) expect(after.json().pagination.total, url).toBe(before.json().pagination.total);
        else expect(after.json(), url).toEqual(before.json());
      }
      // A sample of records, with what their pages show beside them (a project's gallery, a lead's timeline).
      for (const path of ['/api/crm/leads', '/api/cms/projects', '/api/crm/reservations', '/api/crm/campaigns']) {
        for (const { id } of (await source.admin.get(`${path}?limit=3`)).json().data) {
          const [before, after] = await Promise.all([source.admin.get(`${path}/${id}`), restored.admin.get(`${path}/${id}`)]);
          expect(after.statusCode, `${path}/${id}`).toBe(200);
          expect(after.json(), `${path}/${id}`).toEqual(before.json());
        }
      }
      const [lead] = (await source.admin.get('/api/crm/leads?limit=1&status=converted')).json().data;
      expect((await restored.admin.get(`/api/crm/leads/${lead.id}/timeline`)).json()).toEqual((await source.admin.get(`/api/crm/leads/${lead.id}/timeline`)).json());
      // Every stored file, byte for byte, and served.
      const files = storedFiles(join(sourceDir, 'uploads'));
      expect(files.length).toBeGreaterThan(30);
      expect(storedFiles(join(target.DATA_DIR, 'uploads'))).toEqual(files);
      for (const name of files) expect(readFileSync(join(target.DATA_DIR, 'uploads', name)).equals(readFileSync(join(sourceDir, 'uploads', name))), name).toBe(true);
      const served = await as(restored.ctx, none).get(`/uploads/${files[0]}`);
      expect(served.statusCode).toBe(200);
      // The restored database works on: a new lead.
      expect((await restored.admin.post('/api/crm/leads', { first_name: 'After', last_name: 'Restore', phone: '+63 900 000 0001' })).statusCode).toBe(201);
    } finally {
      await restored.close();
      await source.close();
    }
  });

  test('a target that is not empty is refused, and left as it was', async () => {
    await expect(runAdmin(['restore', archive], target)).rejects.toThrow(serverUrl ? /database at DATABASE_URL is not empty.*restore into a new, empty database/ : /already holds a database: restore into an empty data directory/);
    // Only the upload directory holding files: refused too.
    const other = await emptyTarget();
    mkdirSync(join(other.DATA_DIR, 'uploads'));
    copyFileSync(join(sourceDir, 'uploads', storedFiles(join(sourceDir, 'uploads'))[0]), join(other.DATA_DIR, 'uploads', storedFiles(join(sourceDir, 'uploads'))[0]));
    await expect(runAdmin(['restore', archive], other)).rejects.toThrow(/already holds uploaded files: restore into an empty upload directory/);
    expect(existsSync(join(other.DATA_DIR, 'pglite'))).toBe(false);
  });
});

describe('a damaged archive', () => {
  const damaged = (name: string, bytes: Buffer) => {
    const file = join(root, name);
    writeFileSync(file, bytes);
    return file;
  };

  test('is refused with a message, and the target stays empty', async () => {
    const whole = readFileSync(archive);
    const noManifestDir = mkdtempSync(join(root, 'nomanifest-'));
    writeFileSync(join(noManifestDir, 'notes.txt'), 'not a backup');
    const noManifest = join(root, 'no-manifest.tar.gz');
    await tar.create({ gzip: true, file: noManifest, cwd: noManifestDir }, ['notes.txt']);
    const cases: [string, RegExp][] = [
      [damaged('truncated.tar.gz', whole.subarray(0, Math.floor(whole.length / 2))), /is not a readable backup archive .*damaged or incomplete/],
      [damaged('garbage.tar.gz', Buffer.from('this is not an archive at all\n'.repeat(100))), /is not a readable backup archive|holds no manifest\.json/],
      [noManifest, /holds no manifest\.json: it is not a backup of this service/],
      [join(root, 'missing.tar.gz'), /missing\.tar\.gz: no such file/],
    ];
    for (const [file, message] of cases) {
      const target = await emptyTarget();
      const refused = await runAdmin(['restore', file], target).catch((err: unknown) => err);
      expect(refused, file).toBeInstanceOf(BackupError);
      expect((refused as Error).message, file).toMatch(message);
      expect(existsSync(join(target.DATA_DIR, 'pglite')), file).toBe(false);
      expect(storedFiles(join(target.DATA_DIR, 'uploads')), file).toEqual([]);
    }
  });

  test('as a process: one line on stderr, no stack trace, exit code 1', async () => {
    const target = await emptyTarget();
    const file = damaged('truncated-cli.tar.gz', readFileSync(archive).subarray(0, 5000));
    // The script by its real path: the command line runs only as the file node was given (not through a symlinked node_modules).
    const [flags, script] = await compiled('cli/admin.ts');
    const failed = await promisify(execFile)(process.execPath, [flags, realpathSync(script), 'restore', file], { env: { PATH: process.env.PATH ?? '', ...target } })
      .catch((err: { code: number; stderr: string }) => err);
    expect((failed as { code: number }).code).toBe(1);
    const { stderr } = failed as { stderr: string };
    expect(stderr).toMatch(/^admin: .*truncated-cli\.tar\.gz is not a readable backup archive/);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('scheduled backups', () => {
  let ctx: TestContext;
  let database: Database;

  beforeAll(async () => {
    const target = await emptyTarget();
    await runAdmin(['restore', archive], target);
    database = await openDatabase({ url: target.DATABASE_URL, dataDir: join(target.DATA_DIR, 'pglite') });
    await database.migrate();
    ctx = await createTestApp({ ...target, UPLOAD_DIR: join(target.DATA_DIR, 'uploads'), BACKUP_KEEP: '2', BACKUP_SCHEDULE: '30 2 * * *' }, { database });
  }, 300_000);
  afterAll(async () => {
    await ctx?.close();
    await database?.close();
  });

  test('BACKUP_SCHEDULE gives the job its schedule; a schedule that does not parse stops start-up naming the variable', () => {
    expect(scheduledBackup.schedule).toBeTypeOf('function');
    expect((scheduledBackup.schedule as (c: typeof ctx.config) => string | undefined)(ctx.config)).toBe('30 2 * * *');
    expect((scheduledBackup.schedule as (c: typeof ctx.config) => string | undefined)(loadConfig({ AUTH_SECRET: SECRET, DATA_DIR: root }))).toBeUndefined();
    expect(() => loadConfig({ AUTH_SECRET: SECRET, DATA_DIR: root, BACKUP_SCHEDULE: 'every night' })).toThrow(ConfigError);
    expect(() => loadConfig({ AUTH_SECRET: SECRET, DATA_DIR: root, BACKUP_SCHEDULE: 'every night' })).toThrow(/^BACKUP_SCHEDULE must be a cron expression/);
    expect(() => loadConfig({ AUTH_SECRET: SECRET, DATA_DIR: root, BACKUP_KEEP: '0' })).toThrow(/^BACKUP_KEEP must be between 1 and 10000/);
    expect(loadConfig({ AUTH_SECRET: SECRET, DATA_DIR: root }).backupDir).toBe(join(root, 'backups'));
  });

  test('the job queue schedules the backup on BACKUP_SCHEDULE, and forgets the schedule when it is unset', { timeout: 120_000 }, async () => {
    // A database of its own (restored: the demo's), with pg-boss installed as the template's is.
    const target = await emptyTarget();
    await runAdmin(['restore', archive], target);
    const db = await openDatabase({ url: target.DATABASE_URL, dataDir: join(target.DATA_DIR, 'pglite') });
    await db.migrate();
    const schedules = async () => (await db.execute(`select cron, timezone from pgboss.schedule where name = 'backup'`, [])).rows;
    try {
      const scheduled = await createTestApp({ BACKUP_SCHEDULE: '15 1 * * *' }, { database: db, jobs: true });
      await scheduled.close();
      expect(await schedules()).toEqual([{ cron: '15 1 * * *', timezone: 'UTC' }]);
      const unscheduled = await createTestApp({}, { database: db, jobs: true });
      await unscheduled.close();
      expect(await schedules()).toEqual([]);
    } finally {
      await db.close();
    }
  });

  test('the job writes into BACKUP_DIR while the service works, keeps the newest BACKUP_KEEP, and each restores', async () => {
    const services = { database, config: ctx.config, log: ctx.app.log } as unknown as Services;
    const who = await login(ctx, DEMO_ADMIN.email, password);
    for (let run = 0; run < 3; run++) {
      // Requests go on while the backup is taken: it holds what was committed at one instant, whatever that was.
      await Promise.all([scheduledBackup.handler({}, services), ...Array.from({ length: 5 }, () => make.lead(ctx, {}, who))]);
    }
    const kept = readdirSync(ctx.config.backupDir).sort();
    expect(kept).toHaveLength(2);
    for (const name of kept) expect(name).toMatch(/^backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.tar\.gz$/);
    const newest = join(ctx.config.backupDir, kept[1]);
    const manifest = await manifestOf(newest);
    expect(manifest.database.tables.leads).toBeGreaterThanOrEqual(130);
    const target = await emptyTarget();
    await runAdmin(['restore', newest], target);
    const restored = await serviceOn(target);
    try {
      expect((await restored.admin.get('/api/crm/leads?limit=1')).json().pagination.total).toBe(manifest.database.tables.leads);
    } finally {
      await restored.close();
    }
  });
});

describe('a backup asked of the running service', () => {
  let ctx: TestContext;
  let database: Database;
  let target: Record<string, string>;
  let port: number;
  const cron = (authorization?: string) => ctx.app.inject({ method: 'POST', url: '/api/cron/backup', headers: authorization ? { authorization } : {} });
  const leadsTotal = async () => {
    const who = await login(ctx, DEMO_ADMIN.email, password);
    return (await as(ctx, who).get('/api/crm/leads?limit=1')).json().pagination.total as number;
  };

  beforeAll(async () => {
    target = await emptyTarget();
    await runAdmin(['restore', archive], target);
    database = await openDatabase({ url: target.DATABASE_URL, dataDir: join(target.DATA_DIR, 'pglite') });
    await database.migrate();
    ctx = await createTestApp({ ...target, UPLOAD_DIR: join(target.DATA_DIR, 'uploads'), BACKUP_DIR: join(target.DATA_DIR, 'backups') }, { database });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as { port: number }).port;
  }, 300_000);
  afterAll(async () => {
    await ctx?.close();
    await database?.close();
  });

  test('POST /api/cron/backup: 401 without CRON_SECRET; 201 with an archive in BACKUP_DIR holding what the lists hold', async () => {
    expect((await cron()).statusCode).toBe(401);
    expect((await cron('Bearer not-the-secret-0123456789-0123456789')).statusCode).toBe(401);
    const taken = await cron(`Bearer ${CRON_SECRET}`);
    expect(taken.statusCode, taken.body).toBe(201);
    const body = taken.json();
    expect(body.file.startsWith(ctx.config.backupDir)).toBe(true);
    expect(existsSync(body.file)).toBe(true);
    const manifest = await manifestOf(body.file);
    expect(body).toMatchObject({ tables: Object.keys(manifest.database.tables).length, uploads: manifest.uploads.files, removed: 0 });
    expect(manifest.database.tables.leads).toBe(await leadsTotal());
  });

  test.skipIf(Boolean(serverUrl))('on the embedded database, `npm run admin -- backup` has the running service take it, and moves it to --out', async () => {
    // This process is the service on these files: the command line (a process of its own) finds it running.
    const release = claimPglite(target.DATA_DIR);
    try {
      const [flags, script] = await compiled('cli/admin.ts');
      const run = (env: Record<string, string>, out: string) => promisify(execFile)(process.execPath, [flags, realpathSync(script), 'backup', '--out', out],
        { env: { PATH: process.env.PATH ?? '', ...target, PORT: String(port), HOST: '127.0.0.1', ...env } });
      const refused = await run({}, join(root, 'no-secret.tar.gz')).catch((err: { code: number; stderr: string }) => err);
      expect((refused as { code: number }).code).toBe(1);
      expect((refused as { stderr: string }).stderr).toMatch(/is running on the embedded database .*set CRON_SECRET/);

      const out = join(root, 'asked-of-the-service.tar.gz');
      const { stdout } = await run({ CRON_SECRET }, out);
      expect(stdout).toMatch(/backup written to .*asked-of-the-service\.tar\.gz by the running service: \d+ tables, \d+ rows, \d+ uploaded files/);
      const manifest = await manifestOf(out);
      expect(manifest.database.tables.leads).toBe(await leadsTotal());
      // Moved, not copied: BACKUP_DIR keeps only the backup of the test before.
      expect(readdirSync(ctx.config.backupDir)).toHaveLength(1);
    } finally {
      release();
    }
  });
});
