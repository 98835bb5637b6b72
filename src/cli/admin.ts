import { parseArgs } from 'node:util';
import { generatePassword } from '../auth/accounts.js';
import { ConfigError, loadConfig, loadDotEnv } from '../config.js';
import type { Actor } from '../data/actor.js';
import { openDatabase } from '../db/client.js';
import { MODULES, type ModuleName } from '../db/schema/index.js';
import { purgeTrash, trashPurgedMessage } from '../data/trash.js';
import { ApiError } from '../errors.js';
import { administration } from '../modules/iam/users.js';
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

The database is the service's (DATABASE_URL, or the PGlite files in DATA_DIR: stop the service first then).`;

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
  const { values } = parseArgs({
    args: rest, strict: true,
    options: { email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' }, grant: { type: 'string' }, admin: { type: 'boolean' } },
  });
  if (!command || command === 'help' || command === '--help') return USAGE;
  if (!['create-user', 'reset-password', 'disable-2fa', 'purge-trash'].includes(command)) throw new UsageError(`unknown command "${command}"`);
  if (command === 'purge-trash') {
    const given = Object.keys(values);
    if (given.length) throw new UsageError(`purge-trash takes no options (got --${given[0]})`);
  }
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
