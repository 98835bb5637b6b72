import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` + base64 of random bytes; a
 * message is signed as `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` with the decoded bytes as the key.
 */
export const SECRET_PREFIX = 'whsec_';
const MIN_BYTES = 24;
const MAX_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A new secret: 32 random bytes. */
export const newSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** Why `secret` is not a usable Standard Webhooks secret, or null when it is. */
export function secretProblem(secret: string): string | null {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : undefined;
  if (!encoded || !BASE64.test(encoded)) return `must be "${SECRET_PREFIX}" followed by base64 (standard alphabet, padded)`;
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < MIN_BYTES || bytes > MAX_BYTES) return `must encode ${MIN_BYTES} to ${MAX_BYTES} random bytes (this one encodes ${bytes})`;
  return null;
}

/** The `webhook-signature` header of one message. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
