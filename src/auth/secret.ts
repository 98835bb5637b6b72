import { createHmac } from 'node:crypto';
import { symmetricDecrypt, symmetricEncrypt } from 'better-auth/crypto';
import { eq, sql } from 'drizzle-orm';
import type { Config } from '../config.js';
import { SYSTEM } from '../data/actor.js';
import { audited } from '../data/mutations.js';
import type { Database, Executor } from '../db/client.js';
import { serviceSettings, sessions, twoFactors } from '../db/schema/index.js';
import { apiTokenResource } from '../modules/iam/api-token-resource.js';

const KEY = 'auth_secret_fingerprint';

export type SecretRotation = {
  /** Sessions ended because AUTH_SECRET changed. */
  sessions: number;
  /** API tokens revoked because AUTH_SECRET changed (each audited, by the system). */
  apiTokens: number;
  /** Two-factor records re-encrypted from a secret of AUTH_SECRET_PREVIOUS to AUTH_SECRET. */
  twoFactorReencrypted: number;
  /** Two-factor records no configured secret can read: their users need `npm run admin -- disable-2fa`. */
  twoFactorUnreadable: number;
};

/**
 * At start-up. CONTRACT §4: changing AUTH_SECRET ends all sessions. A signed cookie stops verifying by itself, but a
 * bearer token is the raw session token and would survive; so when the secret's fingerprint differs from the one
 * stored, every session is deleted, and every API token revoked (a token minted from a stolen session must not outlive
 * the rotation that recovers from the theft), audited by the system. Two-factor is kept: see `reencryptTwoFactor`.
 */
export async function applySecretRotation(database: Database, config: Config): Promise<SecretRotation> {
  const fingerprint = createHmac('sha256', config.authSecret).update('session-secret-fingerprint').digest('hex');
  return audited(database.db, SYSTEM, async (work) => {
    const { tx } = work;
    const [stored] = await tx.select().from(serviceSettings).where(eq(serviceSettings.key, KEY)).for('update');
    let revokedSessions = 0;
    let revokedTokens = 0;
    if (stored?.value !== fingerprint) {
      if (stored) {
        revokedSessions = (await tx.delete(sessions).returning({ id: sessions.id })).length;
        revokedTokens = (await work.removeAll(apiTokenResource, sql`true`)).length;
      }
      await tx.insert(serviceSettings).values({ key: KEY, value: fingerprint })
        .onConflictDoUpdate({ target: serviceSettings.key, set: { value: fingerprint } });
    }
    const rotated = stored !== undefined && stored.value !== fingerprint;
    const twoFactor = rotated || config.authSecretPrevious.length ? await reencryptTwoFactor(tx, config) : { reencrypted: 0, unreadable: 0 };
    return { sessions: revokedSessions, apiTokens: revokedTokens, twoFactorReencrypted: twoFactor.reencrypted, twoFactorUnreadable: twoFactor.unreadable };
  });
}

/** The text `data` encrypted with `secret` (as Better Auth's two-factor plugin stores it), or undefined. */
async function decryptWith(secret: string, data: string): Promise<string | undefined> {
  try {
    return await symmetricDecrypt({ key: secret, data });
  } catch {
    return undefined;
  }
}

/**
 * Better Auth's two-factor plugin encrypts each TOTP secret and backup-code list with AUTH_SECRET. After a rotation,
 * each one still encrypted with a former secret (AUTH_SECRET_PREVIOUS) is re-encrypted with the current one. It runs
 * at the start that sees the change and on every start while AUTH_SECRET_PREVIOUS is set, so an operator who forgot it
 * at the rotation can add it later; a record none of the secrets opens is left as it is and counted (its user is told
 * to ask an administrator).
 */
async function reencryptTwoFactor(db: Executor, config: Config): Promise<{ reencrypted: number; unreadable: number }> {
  const rows = await db.select({ id: twoFactors.id, secret: twoFactors.secret, backupCodes: twoFactors.backupCodes }).from(twoFactors).for('update');
  let reencrypted = 0;
  let unreadable = 0;
  for (const row of rows) {
    const fields = { secret: row.secret, backupCodes: row.backupCodes };
    let changed = false;
    let lost = false;
    for (const field of ['secret', 'backupCodes'] as const) {
      if ((await decryptWith(config.authSecret, fields[field])) !== undefined) continue;
      let plain: string | undefined;
      for (const previous of config.authSecretPrevious) {
        plain = await decryptWith(previous, fields[field]);
        if (plain !== undefined) break;
      }
      if (plain === undefined) {
        lost = true;
        continue;
      }
      fields[field] = await symmetricEncrypt({ key: config.authSecret, data: plain });
      changed = true;
    }
    if (changed) {
      await db.update(twoFactors).set(fields).where(eq(twoFactors.id, row.id));
      reencrypted++;
    }
    if (lost) unreadable++;
  }
  return { reencrypted, unreadable };
}
