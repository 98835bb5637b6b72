import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, id } from './common.js';

export const PRIVACY_REQUEST_KINDS = ['export', 'erase'] as const;
/** Who started it: a person through the API, or the service's retention job. */
export const PRIVACY_REQUEST_ORIGINS = ['request', 'retention'] as const;
export type PrivacyRequestKind = (typeof PRIVACY_REQUEST_KINDS)[number];

/** What a privacy request found: per section (leads, inquiries…), the ids of the records (files for stored mail). */
export type PrivacyFound = Record<string, string[]>;

/**
 * A person's data exported or erased on request, or erased by the retention job: kept as the record that it was done.
 * It never holds the e-mail address or phone in clear: `email_hash` and `phone_hash` are keyed hashes (HMAC-SHA-256 with
 * AUTH_SECRET) of the normalised values, so the same person asking again can be recognised. `found`: the records by
 * section; an export's download is read again from them.
 */
export const privacyRequests = pgTable('privacy_requests', {
  id: id(),
  kind: text('kind', { enum: PRIVACY_REQUEST_KINDS }).notNull(),
  origin: text('origin', { enum: PRIVACY_REQUEST_ORIGINS }).notNull().default('request'),
  /** Who asked (null: the retention job). No foreign key: the record outlives its actor, as activity logs do. */
  requested_by: uuid('requested_by'),
  email_hash: text('email_hash'),
  phone_hash: text('phone_hash'),
  found: jsonb('found').$type<PrivacyFound>().notNull(),
  created_at: createdAt(),
}, (t) => [
  index('privacy_requests_created_idx').on(t.created_at, t.id),
  index('privacy_requests_kind_idx').on(t.kind, t.created_at, t.id),
  check('privacy_requests_kind_check', sql`${t.kind} in ('export', 'erase')`),
  check('privacy_requests_origin_check', sql`${t.origin} in ('request', 'retention')`),
]);
