import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Database, Executor } from '../db/client.js';
import { accounts, MODULES, moduleAccess, users } from '../db/schema/index.js';
import { bcryptHasher, passwordProblem } from './passwords.js';

export type NewUser = {
  email: string;
  name: string;
  password: string;
  emailVerified?: boolean;
  image?: string | null;
  departmentId?: string | null;
};

/** Inserts a user with a credential account (what Better Auth's sign-in reads). Hash first, outside any transaction. */
export async function insertUserWithPassword(tx: Executor, user: Omit<NewUser, 'password'>, passwordHash: string) {
  const [created] = await tx
    .insert(users)
    .values({ email: user.email.toLowerCase(), name: user.name, emailVerified: user.emailVerified ?? false, image: user.image ?? null, departmentId: user.departmentId ?? null })
    .returning();
  await tx.insert(accounts).values({ accountId: created.id, providerId: 'credential', userId: created.id, password: passwordHash });
  return created;
}

/** A random password that satisfies the policy. */
export function generatePassword(): string {
  const candidate = `${randomBytes(18).toString('base64url')}aA1!`;
  return passwordProblem(candidate) ? generatePassword() : candidate;
}

/**
 * CONTRACT §1: with no users at start-up, create the administrator (all permissions, e-mail verified).
 * A generated password is printed once, since nobody could sign in otherwise.
 */
export async function ensureFirstAdmin(database: Database, config: Config, log: FastifyBaseLogger, audit?: (tx: Executor, userId: string, after: object) => Promise<void>) {
  const [{ count }] = await database.db.select({ count: sql<number>`count(*)::int` }).from(users);
  if (Number(count) > 0) return;
  const password = config.adminPassword ?? generatePassword();
  const problem = passwordProblem(password);
  if (problem) throw new Error(`ADMIN_PASSWORD ${problem}`);
  const passwordHash = await bcryptHasher(config.bcryptCost).hash(password);
  await database.db.transaction(async (tx) => {
    const admin = await insertUserWithPassword(tx, { email: config.adminEmail, name: 'Administrator', emailVerified: true }, passwordHash);
    await tx.insert(moduleAccess).values(MODULES.map((module) => ({ user_id: admin.id, module, can_read: true, can_write: true, can_delete: true })));
    await audit?.(tx, admin.id, { email: admin.email, name: admin.name, emailVerified: true });
  });
  if (config.adminPassword) log.info({ email: config.adminEmail }, 'first administrator created with ADMIN_PASSWORD');
  else log.warn(`first administrator created: ${config.adminEmail} with generated password ${password} (shown once; change it after signing in)`);
}
