import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Constant-time check of `Authorization: Bearer <secret>` against a configured secret (CRON_SECRET, METRICS_TOKEN).
 * Both sides are hashed first, so neither the comparison's time nor its length check tells anything about the
 * secret. No secret configured → nobody passes.
 */
export function bearerMatches(secret: string | undefined, header: string | undefined): boolean {
  if (!secret || !header?.startsWith('Bearer ')) return false;
  return timingSafeEqual(digest(header.slice(7)), digest(secret));
}
