import { purgeTrash } from '../data/trash.js';
import { defineJob } from './registry.js';

/** The daily purge of the trash. */
export const trashPurge = defineJob('trash-purge', async (_data, { database, config, log }) => {
  const purged = await purgeTrash(database.db, config.trashRetentionDays);
  if (purged) log.info({ purged }, 'trash purged');
}, { schedule: '23 3 * * *' });
