import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { moduleAccess, users } from '../../db/schema/index.js';
import { conflict } from '../../errors.js';

/** Any key: every change that could remove the last iam writer takes it first, so two such changes never race. */
const IAM_WRITERS_LOCK = 72_707_101;

/** Serialises lock-out-relevant changes (user delete, iam permission change) until the transaction ends. */
export async function lockIamWriters(tx: Executor) {
  await tx.execute(sql`select pg_advisory_xact_lock(${IAM_WRITERS_LOCK})`);
}

/**
 * CONTRACT §5 lock-out protection: refuses (409) a change after which no non-deleted user would hold iam write.
 * `without` names what the change takes away: a user (deleted) or a module-access row (losing can_write or deleted).
 */
export async function assertIamWriterRemains(tx: Executor, without: { userId?: string; accessId?: string }) {
  const [{ count }] = await tx
    .select({ count: sql<number>`count(*)::int` })
    .from(moduleAccess)
    .innerJoin(users, eq(users.id, moduleAccess.user_id))
    .where(and(
      eq(moduleAccess.module, 'iam'),
      eq(moduleAccess.can_write, true),
      isNull(users.deletedAt),
      without.userId ? ne(moduleAccess.user_id, without.userId) : undefined,
      without.accessId ? ne(moduleAccess.id, without.accessId) : undefined,
    ));
  if (Number(count) === 0) throw conflict('At least one user must keep write access to the iam module');
}
