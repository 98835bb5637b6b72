import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { serviceSettings } from '../../db/schema/index.js';

const SECRET_KEY = 'unsubscribe_secret';
const secrets = new WeakMap<Database, string>();

/**
 * The secret unsubscribe links are signed with: generated once and kept in the database, not derived from
 * AUTH_SECRET, so every link already sent keeps working when AUTH_SECRET changes. Loaded at start-up.
 */
export async function loadUnsubscribeSecret(database: Database): Promise<string> {
  const read = async () => (await database.db.select({ value: serviceSettings.value }).from(serviceSettings).where(eq(serviceSettings.key, SECRET_KEY)))[0]?.value;
  let secret = await read();
  if (!secret) {
    // Several instances starting at once: the first insert wins, everyone reads it.
    await database.db.insert(serviceSettings).values({ key: SECRET_KEY, value: randomBytes(32).toString('base64url') }).onConflictDoNothing();
    secret = (await read())!;
  }
  secrets.set(database, secret);
  return secret;
}

/** The loaded unsubscribe secret of a database (see loadUnsubscribeSecret). */
export function unsubscribeSecretOf(database: Database): string {
  const secret = secrets.get(database);
  if (!secret) throw new Error('the unsubscribe secret is not loaded: call loadUnsubscribeSecret at start-up');
  return secret;
}

/** The unsubscribe token of a campaign e-mail: `base64url(address).base64url(HMAC-SHA256(secret, address))`. */
export function signUnsubscribeToken(secret: string, email: string): string {
  const payload = Buffer.from(email.toLowerCase(), 'utf8').toString('base64url');
  return `${payload}.${mac(secret, payload)}`;
}

/** The address a token names, or null when it is malformed or not signed with `secret`. */
export function verifyUnsubscribeToken(secret: string, token: string): string | null {
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) return null;
  const expected = Buffer.from(mac(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  const email = Buffer.from(payload, 'base64url').toString('utf8');
  return email.includes('@') ? email : null;
}

const mac = (secret: string, payload: string) => createHmac('sha256', `unsubscribe:${secret}`).update(payload).digest('base64url');

export const unsubscribeUrl = (baseUrl: string, secret: string, email: string) =>
  `${baseUrl.replace(/\/$/, '')}/api/public/newsletter/unsubscribe?token=${signUnsubscribeToken(secret, email)}`;
