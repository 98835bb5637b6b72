import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { leadGroupMembers, leadGroups, moduleAccess, type RecordScope, users } from '../db/schema/index.js';
import { allOf, is } from './filters.js';
import { ownersScope } from './list.js';
import type { Resource } from './resource.js';

/** Which crm records a user sees: their crm access's scope and their department. */
export type RecordScopeOf = { scope: RecordScope; departmentId: string | null };

/** The record scope of user `userId`: one query. Administrators (iam write) see every record, whatever their crm row says. */
export async function recordScopeOf(db: Executor, userId: string): Promise<RecordScopeOf> {
  const [row] = await db.select({
    departmentId: users.departmentId,
    scope: sql<RecordScope | null>`(select a.scope from module_access a where a.user_id = ${userId} and a.module = 'crm')`,
    admin: sql<boolean>`exists (select 1 from module_access a where a.user_id = ${userId} and a.module = 'iam' and a.can_write)`,
  }).from(users).where(eq(users.id, userId)).limit(1);
  return { scope: !row || row.admin ? 'all' : row.scope ?? 'all', departmentId: row?.departmentId ?? null };
}

/**
 * The owners whose crm records a user with this scope sees: undefined for every record. Users, and the lead-flow
 * groups (ponds, first to claim) the user is a member of: a lead waiting in such a group (`leads.pool_id`) is its
 * members' to see. Read afresh for each request, so a change of membership holds from the next one on.
 */
export async function ownersWith(db: Executor, userId: string, { scope, departmentId }: RecordScopeOf): Promise<string[] | undefined> {
  if (scope === 'all') return undefined;
  const [people, pools] = await Promise.all([
    scope === 'own' || !departmentId ? [{ id: userId }] : db.select({ id: users.id }).from(users).where(eq(users.departmentId, departmentId)),
    db.select({ id: leadGroupMembers.group_id }).from(leadGroupMembers)
      .innerJoin(leadGroups, eq(leadGroups.id, leadGroupMembers.group_id))
      .where(and(eq(leadGroupMembers.user_id, userId), inArray(leadGroups.kind, POOL_KINDS))),
  ]);
  return [...new Set([userId, ...people.map((member) => member.id), ...pools.map((pool) => pool.id)])].sort();
}

/** Groups a lead waits in until someone takes it (`leads.pool_id`). */
const POOL_KINDS = ['pond', 'first_to_claim'] as const;

/**
 * `ownersOf` for work done for a user outside their requests (a mail, a notice): the users whose crm records user
 * `userId` sees now. A few queries.
 */
export async function ownersOfUser(db: Executor, userId: string): Promise<string[] | undefined> {
  return ownersWith(db, userId, await recordScopeOf(db, userId));
}


/**
 * Whether user `userId` may read record `id` of crm resource `resource` now: crm read, and the record within their
 * record scope. What a mail or notice about the record may be sent to.
 */
export async function mayRead(db: Executor, userId: string, resource: Resource, id: string): Promise<boolean> {
  if (!(await readsCrm(db, userId))) return false;
  const { scope } = ownersScope(resource, await ownersOfUser(db, userId));
  const found = await db.select({ one: sql`1` }).from(resource.table as never).where(allOf([is.equal(resource.id, id), scope ?? resource.scope])!.sql).limit(1);
  return found.length > 0;
}

/** Whether user `userId` has crm read. */
export async function readsCrm(db: Executor, userId: string): Promise<boolean> {
  const [access] = await db.select({ one: sql`1` }).from(moduleAccess)
    .where(and(eq(moduleAccess.user_id, userId), eq(moduleAccess.module, 'crm'), eq(moduleAccess.can_read, true))).limit(1);
  return !!access;
}
