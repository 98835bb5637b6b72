import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { serviceSettings, sessions } from '../db/schema/index.js';

const KEY = 'auth_secret_fingerprint';

/**
 * CONTRACT §4: changing AUTH_SECRET ends all sessions. A signed cookie stops verifying by itself, but a bearer
 * token is the raw session token and would survive; so at start-up, when the secret's fingerprint differs from
 * the one stored, every session is deleted. Returns how many were.
 */
export async function revokeSessionsIfSecretChanged(database: Database, config: Config): Promise<number> {
  const fingerprint = createHmac('sha256', config.authSecret).update('session-secret-fingerprint').digest('hex');
  return database.db.transaction(async (tx) => {
    const [stored] = await tx.select().from(serviceSettings).where(eq(serviceSettings.key, KEY)).for('update');
    if (stored?.value === fingerprint) return 0;
    const revoked = stored ? (await tx.delete(sessions).returning({ id: sessions.id })).length : 0;
    await tx.insert(serviceSettings).values({ key: KEY, value: fingerprint })
      .onConflictDoUpdate({ target: serviceSettings.key, set: { value: fingerprint } });
    return revoked;
  });
}
