import { Type } from '@sinclair/typebox';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { users } from '../../db/schema/index.js';
import { validationError } from '../../errors.js';
import { Nullable, Strict, Uuid } from '../../http/schemas.js';

/** A user named by a record, as answers show it: `{id, name}` or null. */
export const UserRef = Nullable(Strict({ id: Uuid(), name: Type.String() }));

/** The `{id, name}` of a user joined to a record (drizzle answers null when the left join found nobody). */
export const userRefFields = { id: users.id, name: users.name };

/**
 * A user who may be handed crm records: crm read at least (they read what is theirs; nobody else is told of it). The
 * table is named: drizzle writes a column of a select list without it, which the subquery would read as its own.
 */
export const crmReader = sql<boolean>`exists (select 1 from module_access a where a.user_id = ${users}.id and a.module = 'crm' and a.can_read)`;

export const NOT_A_CRM_READER = 'must be a user with access to the crm (read at least): give them crm access first';

/**
 * 400 unless `id` names an existing, non-deleted user who may read the crm: a record is assigned, and its client's
 * details mailed, only to someone who may read it.
 */
export async function requireAssignee(db: Executor, id: string | null | undefined, field: string) {
  if (id === undefined || id === null) return;
  const [user] = await db.select({ crmReader }).from(users).where(and(eq(users.id, id), isNull(users.deletedAt))).limit(1);
  if (!user) throw validationError({ [field]: 'must be an existing user' });
  if (!user.crmReader) throw validationError({ [field]: NOT_A_CRM_READER });
}

/** E-mail addresses are stored lower-case (CONTRACT §2). */
export const lower = <T extends string | null | undefined>(value: T): T => (typeof value === 'string' ? (value.toLowerCase() as T) : value);

/** The same object with `email` lower-cased when present. */
export const withLowerEmail = <T extends { email?: string | null }>(values: T): T => (values.email === undefined ? values : { ...values, email: lower(values.email) });
