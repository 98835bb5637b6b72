import { pruneChangeLog } from '../data/changes.js';
import { defineJob } from './registry.js';

/** Keeps the change log short. */
export const changeLogPrune = defineJob('change-log-prune', async (_data, { database }) => pruneChangeLog(database.db), { schedule: '*/10 * * * *' });
