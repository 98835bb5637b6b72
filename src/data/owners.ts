import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { moduleAccess, type RecordScope, users } from '../db/schema/index.js';
import { allOf, is } from './filters.js';
import { ownersScope } from './list.js';
import type { Resource } from './resource.js';

/**
 * Which crm records a user sees: their crm access's scope, their department, and the lead-flow groups (ponds, first
 * to claim) they are a member of: a lead waiting in such a group (`leads.pool_id`) is its members' to see.
 */
export type RecordScopeOf = { scope: RecordScope; departmentId: string | null; pools: string[] };

/**
 * The record scope of user `userId`: one query. Administrators (iam write) see every record, whatever their crm row
 * says. Kept with the user's principal: a change of their access or of their groups' membership (database triggers,
 * migrations 0013 and 0020) makes every instance read it again.
 */
export async function recordScopeOf(db: Executor, userId: string): Promise<RecordScopeOf> {
  const [row] = await db.select({
    departmentId: users.departmentId,
    scope: sql<RecordScope | null>`(select a.scope from module_access a where a.user_id = ${userId} and a.module = 'crm')`,
    admin: sql<boolean>`exists (select 1 from module_access a where a.user_id = ${userId} and a.module = 'iam' and a.can_write)`,
    pools: sql<string[] | string>`(select coalesce(array_agg(m.group_id::text order by m.group_id), '{}') from lead_group_members m join lead_groups g on g.id = m.group_id
      where m.user_id = ${userId} and g.kind in ('pond', 'first_to_claim'))`,
  }).from(users).where(eq(users.id, userId)).limit(1);
  return { scope: !row || row.admin ? 'all' : row.scope ?? 'all', departmentId: row?.departmentId ?? null, pools: textArray(row?.pools) };
}

/** A text[] as the driver gives it: an array, or PostgreSQL's literal `{a,b}` where no parser is registered. */
const textArray = (value: string[] | string | undefined): string[] =>
  Array.isArray(value) ? value : typeof value === 'string' && value.length > 2 ? value.slice(1, -1).split(',') : [];

/** The owners whose crm records a user with this scope sees: undefined for every record; users and pool groups. */
export async function ownersWith(db: Executor, userId: string, { scope, departmentId, pools }: RecordScopeOf): Promise<string[] | undefined> {
  if (scope === 'all') return undefined;
  const people = scope === 'own' || !departmentId ? [] : await db.select({ id: users.id }).from(users).where(eq(users.departmentId, departmentId));
  return [...new Set([userId, ...people.map((member) => member.id), ...pools])].sort();
}

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
