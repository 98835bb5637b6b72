import { createHmac, timingSafeEqual } from 'node:crypto';

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
