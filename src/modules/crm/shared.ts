import { Type } from '@sinclair/typebox';
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { users } from '../../db/schema/index.js';
import { validationError } from '../../errors.js';
import { Nullable, Strict, Uuid } from '../../http/schemas.js';

/** A user named by a record, as answers show it: `{id, name}` or null. */
export const UserRef = Nullable(Strict({ id: Uuid(), name: Type.String() }));

/** The `{id, name}` of a user joined to a record (drizzle answers null when the left join found nobody). */
export const userRefFields = { id: users.id, name: users.name };

/** 400 unless `id` names an existing, non-deleted user. */
export async function requireUser(db: Executor, id: string | null | undefined, field: string) {
  if (id === undefined || id === null) return;
  const [user] = await db.select({ id: users.id }).from(users).where(and(eq(users.id, id), isNull(users.deletedAt))).limit(1);
  if (!user) throw validationError({ [field]: 'must be an existing user' });
}

/** E-mail addresses are stored lower-case (CONTRACT §2). */
export const lower = <T extends string | null | undefined>(value: T): T => (typeof value === 'string' ? (value.toLowerCase() as T) : value);

/** The same object with `email` lower-cased when present. */
export const withLowerEmail = <T extends { email?: string | null }>(values: T): T => (values.email === undefined ? values : { ...values, email: lower(values.email) });
