import { randomBytes } from 'node:crypto';
import type { Executor } from '../db/client.js';
import { accounts, users } from '../db/schema/index.js';
import { passwordProblem } from './passwords.js';

export type NewUser = {
  email: string;
  name: string;
  password: string;
  emailVerified?: boolean;
  image?: string | null;
  departmentId?: string | null;
  ssoRequired?: boolean;
};

/** Inserts a user with a credential account (what Better Auth's sign-in reads). Hash first, outside any transaction. */
export async function insertUserWithPassword(tx: Executor, user: Omit<NewUser, 'password'>, passwordHash: string, id?: string) {
  const [created] = await tx
    .insert(users)
    .values({ ...(id ? { id } : {}), email: user.email.toLowerCase(), name: user.name, emailVerified: user.emailVerified ?? false, image: user.image ?? null, departmentId: user.departmentId ?? null, ssoRequired: user.ssoRequired ?? false })
    .returning();
  await tx.insert(accounts).values({ accountId: created.id, providerId: 'credential', userId: created.id, password: passwordHash });
  return created;
}

/** A random password that satisfies the policy. */
export function generatePassword(): string {
  const candidate = `${randomBytes(18).toString('base64url')}aA1!`;
  return passwordProblem(candidate) ? generatePassword() : candidate;
}

