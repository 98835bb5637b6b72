import { existsSync } from 'node:fs';
import { copyFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generatePassword } from '../auth/accounts.js';
import { type Config, ConfigError, loadConfig, loadDotEnv } from '../config.js';
import type { Actor } from '../data/actor.js';
import { openDatabase } from '../db/client.js';
import { MODULES, type ModuleName } from '../db/schema/index.js';
import { purgeTrash, trashPurgedMessage } from '../data/trash.js';
import { ApiError } from '../errors.js';
import { administration } from '../modules/iam/users.js';
import { restoreBackup, writeBackup } from '../backups/archive.js';
import { backupName } from '../backups/job.js';
import { assertServiceStopped } from './pglite-owner.js';

const USAGE = `Usage: npm run admin -- <command> [options]

Commands (each change of a user is audited, by "npm run admin"):
  create-user --email <address> --name <name> [--password <password>] [--grant cms=rwd,crm=rw,iam=r] [--admin]
      A user with those module flags (r read, w write, d delete); --admin grants everything. Without --password
      one is generated and printed once.
  reset-password --email <address> [--password <password>]
      A new password (generated and printed once when not given); the user's sessions end.
  disable-2fa --email <address>
      Turns two-factor authentication off for a user locked out of it; the password stays as it is.
  purge-trash
      Purges now what the daily trash purge would: trash entries deleted more than TRASH_RETENTION_DAYS ago (those
      records can no longer be restored; their delete's activity log stays).
  backup [--out <file>]
      One archive (.tar.gz) of the database, the uploaded files of local storage and a manifest; by default a new
      file in BACKUP_DIR. Safe while the service runs. On the embedded database the running service takes it (it alone
      may open those files): set the same CRON_SECRET for the service and this command.
  restore <archive>
      Restores a backup into an empty database (DATABASE_URL) or an empty DATA_DIR, and an empty UPLOAD_DIR; refuses
      any other. Each table's row count is checked against the backup's manifest.

The database is the service's (DATABASE_URL, or the PGlite files in DATA_DIR: stop the service first then, except
for backup).`;

/** The command line's actor: no user, named in the log's user agent. */
const ACTOR: Actor = { userId: null, ip: null, userAgent: 'npm run admin' };

function grantsOf(text: string | undefined, admin: boolean) {
  const grants: Partial<Record<ModuleName, { can_read: boolean; can_write: boolean; can_delete: boolean }>> = {};
  if (admin) for (const module of MODULES) grants[module] = { can_read: true, can_write: true, can_delete: true };
  for (const part of (text ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const match = /^(cms|crm|iam)=([rwd]+)$/.exec(part);
    if (!match) throw new UsageError(`--grant takes module=flags pairs such as crm=rwd (got "${part}")`);
    grants[match[1] as ModuleName] = { can_read: match[2].includes('r'), can_write: match[2].includes('w'), can_delete: match[2].includes('d') };
  }
  return grants;
}

class UsageError extends Error {}

/** Runs one command; returns the text to print. Exported for the tests, which run it against a test database. */
export async function runAdmin(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest, strict: true,
    allowPositionals: true,
    options: {
      email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' }, grant: { type: 'string' }, admin: { type: 'boolean' },
      out: { type: 'string' },
    },
  });
  if (!command || command === 'help' || command === '--help') return USAGE;
  if (!['create-user', 'reset-password', 'disable-2fa', 'purge-trash', 'backup', 'restore'].includes(command)) throw new UsageError(`unknown command "${command}"`);
  const allowed = command === 'backup' ? ['out'] : command === 'restore' || command === 'purge-trash' ? [] : ['email', 'name', 'password', 'grant', 'admin'];
  const stray = Object.keys(values).find((option) => !allowed.includes(option));
  if (stray) throw new UsageError(allowed.length ? `${command} does not take --${stray}` : `${command} takes no options (got --${stray})`);
  if (command === 'restore' ? positionals.length !== 1 : positionals.length) {
    throw new UsageError(command === 'restore' ? 'restore takes one archive: npm run admin -- restore <file>' : `${command} takes no arguments (got "${positionals[0]}")`);
  }
  if (command === 'backup' || command === 'restore') return runBackupCommand(command, positionals[0], values.out, loadConfig(env));
  const email = values.email ?? '';
  if (command !== 'purge-trash' && !email) throw new UsageError('--email is required');

  const config = loadConfig(env);
  if (!config.databaseUrl) assertServiceStopped(config.dataDir);
  const database = await openDatabase({ url: config.databaseUrl, dataDir: `${config.dataDir}/pglite` });
  try {
    await database.migrate();
    if (command === 'purge-trash') return trashPurgedMessage(await purgeTrash(database.db, config.trashRetentionDays), config.trashRetentionDays);
    if (command === 'create-user') {
      if (!values.name) throw new UsageError('--name is required');
      const password = values.password ?? generatePassword();
      const user = await administration.createUser(database, ACTOR, { email, name: values.name, password, grants: grantsOf(values.grant, values.admin ?? false) }, config.bcryptCost);
      return `created ${user.email} (${user.id})${values.password ? '' : ` with the password ${password} (shown once)`}`;
    }
    if (command === 'reset-password') {
      const password = values.password ?? generatePassword();
      const user = await administration.setPassword(database, ACTOR, email, password, config.bcryptCost);
      return `new password set for ${user.email}; their sessions ended${values.password ? '' : `. Password: ${password} (shown once)`}`;
    }
    const changed = await administration.disableTwoFactor(database, ACTOR, email);
    return changed ? `two-factor authentication is off for ${email}` : `${email} had no two-factor authentication; nothing changed`;
  } finally {
    await database.close();
  }
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** `backup` and `restore`: see src/backups/archive.ts. */
async function runBackupCommand(command: 'backup' | 'restore', archive: string | undefined, out: string | undefined, config: Config): Promise<string> {
  const pgliteDir = join(config.dataDir, 'pglite');
  if (!config.databaseUrl) {
    try {
      assertServiceStopped(config.dataDir);
    } catch (err) {
      if (command === 'backup') return backupThroughService(config, out, (err as Error).message);
      throw err;
    }
  }
  if (command === 'restore') {
    const { manifest, rows, files } = await restoreBackup(resolve(archive!), config);
    const tables = Object.keys(manifest.database.tables).length;
    return `restored ${archive} (taken ${manifest.created_at} by version ${manifest.service.version}): ${tables} tables, ${rows} rows (each table's count checked), `
      + `${files} uploaded files. Start the service: it applies the migrations of a newer version.`;
  }
  if (!config.databaseUrl && !existsSync(join(pgliteDir, 'PG_VERSION'))) throw new Error(`there is no database in ${pgliteDir} to back up (DATA_DIR, or set DATABASE_URL)`);
  const file = resolve(out ?? join(config.backupDir, backupName(new Date())));
  if (existsSync(file)) throw new Error(`${file} already exists: name a new file with --out`);
  const database = await openDatabase({ url: config.databaseUrl, dataDir: pgliteDir });
  try {
    const manifest = await writeBackup(database, config, file);
    const rows = Object.values(manifest.database.tables).reduce((sum, n) => sum + n, 0);
    const uploads = manifest.uploads.included
      ? `${manifest.uploads.files} uploaded files (${megabytes(manifest.uploads.bytes)})${manifest.uploads.missing.length ? `; ${manifest.uploads.missing.length} files named by uploads were missing from ${config.uploadDir} (listed in the manifest)` : ''}`
      : 'no uploaded files (they are in the S3 bucket, which keeps its own)';
    return `backup written to ${file}: ${Object.keys(manifest.database.tables).length} tables, ${rows} rows, ${uploads}`;
  } finally {
    await database.close();
  }
}

/**
 * A backup of the embedded database while the service runs on it: only the service's process may open PGlite's files,
 * so the service takes it (`POST /api/cron/backup`, with CRON_SECRET) into BACKUP_DIR; `--out` then moves it there.
 */
async function backupThroughService(config: Config, out: string | undefined, running: string): Promise<string> {
  if (!config.cronSecret) {
    throw new Error(`${running}; set CRON_SECRET (the same for the service and this command) and the running service takes the backup, or let it take its own (BACKUP_SCHEDULE)`);
  }
  const target = out === undefined ? undefined : resolve(out);
  if (target && existsSync(target)) throw new Error(`${target} already exists: name a new file with --out`);
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/api/cron/backup`;
  const answer = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${config.cronSecret}` } }).catch((err: Error) => {
    throw new Error(`${running}, but it did not answer at ${url} (${err.message}): is PORT (or HOST) the service's?`);
  });
  const body = await answer.json().catch(() => ({})) as { file?: string; tables?: number; rows?: number; uploads?: number; error?: string; message?: string };
  if (answer.status !== 201 || !body.file) {
    const reason = answer.status === 401 ? 'CRON_SECRET is not the service\'s' : body.message ?? body.error ?? `status ${answer.status}`;
    throw new Error(`the running service did not take the backup: ${reason}`);
  }
  let file = body.file;
  if (target) {
    await rename(file, target).catch(async () => {
      await copyFile(file, target);
      await rm(file, { force: true });
    });
    file = target;
  }
  return `backup written to ${file} by the running service: ${body.tables} tables, ${body.rows} rows, ${body.uploads} uploaded files`;
}

/** What a person reads when a command is refused: the API's message and its field details, in words. */
function explain(err: unknown): string {
  if (err instanceof UsageError || err instanceof ConfigError) return err.message;
  if (err instanceof ApiError) {
    const body = err.body as { error: string; message?: string; details?: Record<string, string> };
    const details = Object.entries(body.details ?? {}).map(([field, problem]) => `${field} ${problem}`).join('; ');
    return [body.message ?? body.error, details].filter(Boolean).join(': ');
  }
  return err instanceof Error ? err.message : String(err);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  loadDotEnv();
  runAdmin(process.argv.slice(2)).then(
    (text) => console.log(text),
    (err: unknown) => {
      console.error(`admin: ${explain(err)}`);
      if (err instanceof UsageError) console.error(`\n${USAGE}`);
      process.exit(1);
    },
  );
}
