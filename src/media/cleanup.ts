import { defineJob } from '../jobs/registry.js';
import { removeUnusedUploads } from './library.js';
import { storageOf } from './storage.js';

/** Hourly: uploads referenced by nothing for UPLOAD_UNUSED_RETENTION_HOURS go, with their variants. */
export const unusedUploadsCleanup = defineJob('unused-uploads-cleanup', async (_data, { database, config, log }) => {
  const removed = await removeUnusedUploads(database.db, storageOf(config), config.uploadUnusedRetentionHours);
  if (removed) log.info({ removed }, 'unused uploads removed');
}, { schedule: '41 * * * *' });
