import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { defineJob } from '../jobs/registry.js';
import { writeBackup } from './archive.js';

/** Scheduled backups' names: the instant, so that they sort oldest first and never collide. */
const NAME = /^backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.tar\.gz$/;
export const backupName = (at: Date) => `backup-${at.toISOString().replace(/[:.]/g, '-')}.tar.gz`;

/** A new backup in BACKUP_DIR; then only the newest BACKUP_KEEP of the backups named so stay. */
export async function backupIntoDir(database: Database, config: Config) {
  const file = join(config.backupDir, backupName(clock.now()));
  const manifest = await writeBackup(database, config, file);
  const kept = (await readdir(config.backupDir)).filter((name) => NAME.test(name)).sort().reverse();
  const removed = kept.slice(config.backupKeep);
  for (const name of removed) await rm(join(config.backupDir, name), { force: true });
  return { file, manifest, removed };
}

/** On BACKUP_SCHEDULE, by one instance. */
export const scheduledBackup = defineJob('backup', async (_data, { database, config, log }) => {
  const { file, manifest, removed } = await backupIntoDir(database, config);
  log.info({ file, tables: Object.keys(manifest.database.tables).length, uploads: manifest.uploads.files, removed: removed.length }, 'backup written');
  if (manifest.uploads.missing.length) log.warn({ file, missing: manifest.uploads.missing }, 'backup: files named by uploads were not in the storage');
}, {
  schedule: (config) => config.backupSchedule,
  // A large database takes a while: not expired after pg-boss's 15 minutes (another instance would start a second
  // one), and a failed one is not retried at once: the next is due on schedule, and the log says why this one failed.
  scheduleOptions: { expireInSeconds: 12 * 3600, retryLimit: 0 },
});
