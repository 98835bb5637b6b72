import { lt } from 'drizzle-orm';
import { clock } from '../clock.js';
import { newsletterSignups, usedFormTokens } from '../db/schema/index.js';
import { defineJob } from './registry.js';

/**
 * Forgets what the public forms keep only for a while: newsletter sign-ups whose confirmation link expired (the
 * visitor's address, IP and browser go with them) and used form tokens past their expiry.
 */
export const publicFormsCleanup = defineJob('public-forms-cleanup', async (_data, { database, log }) => {
  const now = clock.now();
  const signups = await database.db.delete(newsletterSignups).where(lt(newsletterSignups.expires_at, now)).returning({ id: newsletterSignups.id });
  const tokens = await database.db.delete(usedFormTokens).where(lt(usedFormTokens.expires_at, now)).returning({ id: usedFormTokens.id });
  if (signups.length || tokens.length) log.info({ signups: signups.length, tokens: tokens.length }, 'expired newsletter sign-ups and used form tokens removed');
}, { schedule: '47 * * * *' });
