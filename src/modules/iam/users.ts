import { Type } from '@sinclair/typebox';
import { clock } from '../../clock.js';
import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import type { App } from '../../types.js';
import { generatePassword, insertUserWithPassword } from '../../auth/accounts.js';
import { bcryptHasher, passwordProblem } from '../../auth/passwords.js';
import type { Config } from '../../config.js';
import { type Actor, userActor } from '../../data/actor.js';
import { equals, is } from '../../data/filters.js';
import { audited, type Work } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import type { Database, Executor } from '../../db/client.js';
import { accounts, apiTokens, departments, type Grant, MODULES, type ModuleName, moduleAccess, sessions, twoFactors, users } from '../../db/schema/index.js';
import { conflict, notFound, validationError } from '../../errors.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Email, Nullable, PartialStrict, RequiredText, Strict, Timestamp, Uuid } from '../../http/schemas.js';
import { welcomeMail } from '../../mail/templates.js';
import { assertIamWriterRemains, lockIamWriters } from './writers.js';
import { apiTokenResource, revokeTokensOf } from './api-token-resource.js';
import { moduleAccessResource } from './module-access.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const inDepartmentNamed = (name: string) =>
  sql`${users.departmentId} in (select ${departments.id} from ${departments} where lower(${departments.name}) = lower(${name}))`;

/** Users (CONTRACT §3, §8, §12): tombstones (deleted users) never appear; `department` is a name or an id. */
export const userResource = defineResource({
  name: 'users',
  module: 'iam',
  label: 'User',
  table: users,
  id: users.id,
  view: {
    fields: {
      id: users.id, email: users.email, name: users.name, image: users.image, emailVerified: users.emailVerified,
      department: { id: departments.id, name: departments.name }, sso_required: users.ssoRequired, createdAt: users.createdAt, updatedAt: users.updatedAt,
    },
    joins: (query) => query.leftJoin(departments, eq(departments.id, users.departmentId)),
  },
  list: {
    sortable: { createdAt: users.createdAt, name: users.name, email: users.email },
    defaultSort: 'createdAt',
    filters: {
      department: {
        schema: Type.String({ minLength: 1, maxLength: 200 }),
        where: (value: string) => is.opaque(UUID.test(value) ? sql`(${users.departmentId} = ${value} or ${inDepartmentNamed(value)})` : inDepartmentNamed(value)),
      },
      emailVerified: equals(users.emailVerified, Type.Boolean()),
    },
    search: [users.name, users.email],
  },
  scope: is.null(users.deletedAt),
  export: {},
});

const SSO_REQUIRED = 'Signs in only with single sign-on (an identity provider): password sign-in and password reset are refused, and '
  + 'turning it on ends the user\'s sessions. '
  + 'An SSO sign-in is not asked for the service\'s two-factor code (the identity provider owns authentication and its MFA).';

/** SPEC's User: never a password or hash. */
export const User = Strict({
  id: Uuid(),
  email: Type.String(),
  name: Type.String(),
  image: Nullable(Type.String()),
  emailVerified: Type.Boolean(),
  department: Nullable(Strict({ id: Uuid(), name: Type.String() })),
  sso_required: Type.Boolean({ description: SSO_REQUIRED }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

const Password = Type.String({ minLength: 1, maxLength: 1024 });
const UserInput = Strict({
  email: Email(),
  name: RequiredText({ maxLength: 200 }),
  password: Password,
  department_id: Type.Optional(Nullable(Uuid())),
  emailVerified: Type.Optional(Type.Boolean()),
  image: Type.Optional(Nullable(RequiredText({ maxLength: 2000 }))),
  sso_required: Type.Optional(Type.Boolean({ default: false, description: SSO_REQUIRED })),
});

type UserRow = typeof users.$inferSelect;

/** What the audit trail records of a user (the password lives in `accounts` and is never part of it). */
const auditedFields = (row: UserRow) => ({
  id: row.id, email: row.email, name: row.name, image: row.image, emailVerified: row.emailVerified,
  department_id: row.departmentId, sso_required: row.ssoRequired, createdAt: row.createdAt,
});

function assertPassword(password: string) {
  const problem = passwordProblem(password);
  if (problem) throw validationError({ password: problem });
}

async function assertDepartment(db: Executor, id: string | null | undefined) {
  if (!id) return;
  const [found] = await db.select({ id: departments.id }).from(departments).where(eq(departments.id, id)).limit(1);
  if (!found) throw validationError({ department_id: 'does not name an existing department' });
}

/** 409 when another non-deleted user has this address (stored lower-case, so compared case-insensitively). */
async function assertEmailFree(db: Executor, email: string, exceptId?: string) {
  const [taken] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.email, email.toLowerCase()), isNull(users.deletedAt), exceptId ? ne(users.id, exceptId) : undefined))
    .limit(1);
  if (taken) throw conflict('A user with this e-mail address already exists');
}

/** A new password for a user (hashed beforehand): their credential replaced, every session and API token of theirs ended. */
async function replaceCredential(work: Work, id: string, passwordHash: string) {
  const changed = await work.tx.update(accounts).set({ password: passwordHash, updatedAt: clock.now() })
    .where(and(eq(accounts.userId, id), eq(accounts.providerId, 'credential'))).returning({ id: accounts.id });
  if (!changed.length) await work.tx.insert(accounts).values({ accountId: id, providerId: 'credential', userId: id, password: passwordHash });
  await work.tx.delete(sessions).where(eq(sessions.userId, id));
  await revokeTokensOf(work, id);
}

/** The live user with this address, locked, or 404. */
async function lockUserByEmail(work: Work, email: string): Promise<UserRow> {
  const [found] = await work.tx.select({ id: users.id }).from(users).where(and(eq(users.email, email.toLowerCase()), isNull(users.deletedAt))).limit(1);
  if (!found) throw notFound('User');
  return lockUser(work, found.id);
}

/**
 * What an operator does from the command line (`npm run admin`), each change audited like the API's:
 * create a user, set a password, turn two-factor off for someone locked out.
 */
export const administration = {
  /** A new user with the given module flags; 409 when the address is taken. */
  async createUser(database: Database, actor: Actor, user: { email: string; name: string; password: string; grants: Partial<Record<ModuleName, { can_read: boolean; can_write: boolean; can_delete: boolean }>> }, bcryptCost: number) {
    assertPassword(user.password);
    await assertEmailFree(database.db, user.email);
    const hash = await bcryptHasher(bcryptCost).hash(user.password);
    return audited(database.db, actor, async (work) => {
      const row = await createUser(work, { email: user.email, name: user.name, emailVerified: true }, hash);
      for (const [module, flags] of Object.entries(user.grants)) await work.create(moduleAccessResource, { user_id: row.id, module: module as ModuleName, ...flags });
      return row;
    });
  },
  /** A new password; the user's sessions end. */
  async setPassword(database: Database, actor: Actor, email: string, password: string, bcryptCost: number) {
    assertPassword(password);
    const hash = await bcryptHasher(bcryptCost).hash(password);
    return audited(database.db, actor, async (work) => {
      const user = await lockUserByEmail(work, email);
      await replaceCredential(work, user.id, hash);
      await work.audit({ action: 'update', resource: userResource, id: user.id, before: { credential: null }, after: { credential: 'replaced' } });
      return user;
    });
  },
  /** Two-factor off (its secret and backup codes gone); false when it was not on. The password is unchanged. */
  async disableTwoFactor(database: Database, actor: Actor, email: string) {
    return audited(database.db, actor, async (work) => {
      const user = await lockUserByEmail(work, email);
      const removed = await work.tx.delete(twoFactors).where(eq(twoFactors.userId, user.id)).returning({ id: twoFactors.id });
      if (!user.twoFactorEnabled && !removed.length) return false;
      await work.tx.update(users).set({ twoFactorEnabled: false, updatedAt: clock.now() }).where(eq(users.id, user.id));
      await work.audit({ action: 'update', resource: userResource, id: user.id, before: { twoFactorEnabled: user.twoFactorEnabled }, after: { twoFactorEnabled: false } });
      return true;
    });
  },
};

/**
 * A user an identity provider vouched for and the service did not know (just-in-time provisioning): no password (they
 * sign in with single sign-on only), the provider's default department and grants; audited as their own act.
 */
export async function provisionSsoUser(work: Work, user: { id: string; email: string; name: string; departmentId: string | null; grants: Grant[] }) {
  const [row] = await work.tx.insert(users).values({
    id: user.id, email: user.email.toLowerCase(), name: user.name, emailVerified: true, departmentId: user.departmentId, ssoRequired: true,
  }).returning();
  await work.audit({ action: 'create', resource: userResource, id: row.id, after: auditedFields(row) });
  for (const grant of user.grants) await work.create(moduleAccessResource, { user_id: row.id, ...grant });
  return row;
}

/** Locks a non-deleted user, or 404. */
async function lockUser(work: Work, id: string): Promise<UserRow> {
  const row = await work.lock(userResource, id);
  if (row.deletedAt) throw notFound('User');
  return row;
}

/** Creates a user with a credential (hashed beforehand, outside any transaction), audited. */
async function createUser(work: Work, user: Parameters<typeof insertUserWithPassword>[1], passwordHash: string, id?: string) {
  const row = await insertUserWithPassword(work.tx, user, passwordHash, id);
  await work.audit({ action: 'create', resource: userResource, id: row.id, after: auditedFields(row) });
  return row;
}

/**
 * CONTRACT §1: with no users at start-up, create the administrator (all permissions, e-mail verified), audited as
 * their own act. A generated password is printed once, since nobody could sign in otherwise.
 */
export async function ensureFirstAdmin(database: Database, config: Config, log: Pick<FastifyBaseLogger, 'info' | 'warn'>) {
  const [{ count }] = await database.db.select({ count: sql<number>`count(*)::int` }).from(users);
  if (Number(count) > 0) return;
  const password = config.adminPassword ?? generatePassword();
  const problem = passwordProblem(password);
  if (problem) throw new Error(`ADMIN_PASSWORD ${problem}`);
  const passwordHash = await bcryptHasher(config.bcryptCost).hash(password);
  const id = uuidv7();
  const created = await audited(database.db, userActor(id), async (work) => {
    // Several instances starting at once on an empty database: one creates the administrator, the others see it.
    await work.tx.execute(sql`select pg_advisory_xact_lock(hashtext('first-admin'))`);
    const [{ count: now }] = await work.tx.select({ count: sql<number>`count(*)::int` }).from(users);
    if (Number(now) > 0) return false;
    await createUser(work, { email: config.adminEmail, name: 'Administrator', emailVerified: true }, passwordHash, id);
    await work.tx.insert(moduleAccess).values(MODULES.map((module) => ({ user_id: id, module, can_read: true, can_write: true, can_delete: true })));
    return true;
  });
  if (!created) return;
  if (config.adminPassword) log.info({ email: config.adminEmail }, 'first administrator created with ADMIN_PASSWORD');
  else log.warn(`first administrator created: ${config.adminEmail} with generated password ${password} (shown once; change it after signing in)`);
}

export default async function userRoutes(app: App) {
  const { db } = app.database;
  const hasher = bcryptHasher(app.config.bcryptCost);

  resourceRoutes(app, userResource, {
    path: '/api/iam/users',
    Item: User,
    create: {
      body: UserInput,
      summary: 'Create a user; a welcome e-mail is sent',
      values: async (body) => {
        assertPassword(body.password);
        await assertDepartment(db, body.department_id);
        await assertEmailFree(db, body.email);
        return body;
      },
      // bcrypt runs on the thread pool, before the transaction holds a connection or a lock.
      insert: async (work, _values, body) => createUser(work, {
        email: body.email, name: body.name, emailVerified: body.emailVerified ?? false, image: body.image ?? null, departmentId: body.department_id ?? null,
        ssoRequired: body.sso_required ?? false,
      }, await hasher.hash(body.password)),
      // Fire and forget: the user exists whether or not the mail goes out; never the password.
      committed: (row, _body, { app }) => {
        app.mailer.send({ to: row.email, ...welcomeMail(row.name, row.email, `${app.config.baseUrl}/login`) })
          .catch((err: unknown) => app.log.error({ err, userId: row.id }, 'welcome mail not sent'));
      },
    },
    update: {
      body: PartialStrict(UserInput),
      summary: 'Update a user (only the fields sent; a new password ends their sessions and revokes their API tokens)',
      // The new password is hashed here, before the transaction holds a connection or a lock.
      validate: async (body) => {
        if (body.password !== undefined) assertPassword(body.password);
        await assertDepartment(db, body.department_id);
        return body.password !== undefined ? await hasher.hash(body.password) : undefined;
      },
      change: async (work, id, _values, body, passwordHash) => {
        const { password: _password, department_id, sso_required, ...rest } = body;
        const current = await lockUser(work, id);
        if (rest.email !== undefined) await assertEmailFree(work.tx, rest.email, id);
        const values: Partial<UserRow> = { ...rest, ...(rest.email !== undefined ? { email: rest.email.toLowerCase() } : {}) };
        if (department_id !== undefined) values.departmentId = department_id;
        if (sso_required !== undefined) values.ssoRequired = sso_required;
        const [updated] = await work.tx.update(users).set({ ...values, updatedAt: clock.now() }).where(eq(users.id, id)).returning();
        const after: Record<string, unknown> = auditedFields(updated);
        const before: Record<string, unknown> = auditedFields(current);
        // Single sign-on required from now on: sessions a password opened end (they sign in again through the provider).
        if (sso_required && !current.ssoRequired) await work.tx.delete(sessions).where(eq(sessions.userId, id));
        if (passwordHash) {
          await replaceCredential(work, id, passwordHash);
          // The log says the credential changed, never what it is.
          before.credential = null;
          after.credential = 'replaced';
        }
        await work.audit({ action: 'update', resource: userResource, id, before, after });
        return updated;
      },
    },
    remove: {
      summary: 'Delete a user (their sessions and permissions end; records naming them keep the name)',
      remove: async (work, id) => {
        await lockIamWriters(work.tx);
        const current = await lockUser(work, id);
        if (id === work.actor.userId) throw conflict('You cannot delete your own account');
        await assertIamWriterRemains(work.tx, { userId: id });
        // A tombstone: the row stays, with its name and e-mail, so records naming the user still show who it was.
        await work.tx.update(users).set({ deletedAt: clock.now(), departmentId: null, updatedAt: clock.now() }).where(eq(users.id, id));
        await work.tx.delete(sessions).where(eq(sessions.userId, id));
        await work.tx.delete(accounts).where(eq(accounts.userId, id));
        await work.tx.delete(twoFactors).where(eq(twoFactors.userId, id));
        await work.removeAll(moduleAccessResource, eq(moduleAccess.user_id, id));
        await work.removeAll(apiTokenResource, eq(apiTokens.user_id, id));
        await work.audit({ action: 'delete', resource: userResource, id, before: auditedFields(current) });
      },
    },
  });
}
