import { Type } from '@sinclair/typebox';
import { and, eq, isNull, ne, or, type SQL, sql } from 'drizzle-orm';
import type { App } from '../../app.js';
import { currentPrincipal } from '../../auth/guard.js';
import { insertUserWithPassword } from '../../auth/accounts.js';
import { bcryptHasher, passwordProblem } from '../../auth/passwords.js';
import type { Executor, Tx } from '../../db/client.js';
import { accounts, departments, moduleAccess, sessions, twoFactors, users } from '../../db/schema/index.js';
import { recordChange } from '../../audit/record.js';
import { auditedTransaction, findOne } from '../../http/crud.js';
import { conflict, notFound, validationError } from '../../http/errors.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { Created, Email, errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, RequiredText, Strict, Timestamp, Uuid } from '../../http/schemas.js';
import { welcomeMail } from '../../mail/templates.js';
import { assertIamWriterRemains, lockIamWriters } from './writers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const byDepartmentName = (name: string): SQL =>
  sql`${users.departmentId} in (select ${departments.id} from ${departments} where lower(${departments.name}) = lower(${name}))`;

/** Users list (CONTRACT §3, §8, §12): tombstones never appear; `department` is a name or an id. */
export const userList: ListSpec = {
  collection: 'users',
  table: users,
  id: users.id,
  sortable: { createdAt: users.createdAt, name: users.name, email: users.email },
  defaultSort: 'createdAt',
  filters: {
    department: {
      schema: Type.String({ minLength: 1, maxLength: 200 }),
      where: (value: string) => (UUID.test(value) ? or(eq(users.departmentId, value), byDepartmentName(value)) : byDepartmentName(value)),
    },
    emailVerified: { schema: Type.Boolean(), where: (value: boolean) => eq(users.emailVerified, value) },
  },
  search: [users.name, users.email],
  scope: isNull(users.deletedAt),
};

export const userView = {
  fields: {
    id: users.id, email: users.email, name: users.name, image: users.image, emailVerified: users.emailVerified,
    department: { id: departments.id, name: departments.name }, createdAt: users.createdAt, updatedAt: users.updatedAt,
  },
  joins: (query) => query.leftJoin(departments, eq(departments.id, users.departmentId)),
} satisfies View;

/** SPEC's User: never a password or hash. */
export const User = Strict({
  id: Uuid(),
  email: Type.String(),
  name: Type.String(),
  image: Nullable(Type.String()),
  emailVerified: Type.Boolean(),
  department: Nullable(Strict({ id: Uuid(), name: Type.String() })),
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
});
const UserPatch = PartialStrict(UserInput);
const ListQuerySchema = listQuerySchema(userList);

type UserRow = typeof users.$inferSelect;

/** What the audit trail records of a user (the password lives in `accounts` and is never part of it). */
const audited = (row: UserRow) => ({
  id: row.id, email: row.email, name: row.name, image: row.image, emailVerified: row.emailVerified,
  department_id: row.departmentId, createdAt: row.createdAt,
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

/** Locks a non-deleted user, or 404. */
async function lockUser(tx: Tx, id: string): Promise<UserRow> {
  const [row] = await tx.select().from(users).where(and(eq(users.id, id), isNull(users.deletedAt))).for('update');
  if (!row) throw notFound('User');
  return row;
}

/** `ensureFirstAdmin`'s audit callback: the administrator's creation is logged (as their own, from no address). */
export async function auditFirstAdmin(tx: Executor, userId: string, after: object) {
  await recordChange(tx, { userId, ip: null, userAgent: null }, { action: 'create', module: 'iam', resource: 'users', resourceId: userId, after: { id: userId, ...after } });
}

export default async function userRoutes(app: App) {
  const { db } = app.database;
  const hasher = bcryptHasher(app.config.bcryptCost);

  app.get('/api/iam/users', {
    schema: { summary: 'Users (paginated; filters department, emailVerified; q over name and email)', querystring: ListQuerySchema, response: { 200: Paginated(User), ...errorResponses } },
  }, async (request) => app.lists.page(userList, userView, request.query as ListQuery));

  app.get('/api/iam/users/:id', {
    schema: { summary: 'One user', params: IdParams, response: { 200: User, ...errorResponses } },
  }, async (request) => {
    return findOne(db, { table: users, id: users.id, label: 'User' }, userView, request.params.id, userList.scope);
  });

  app.post('/api/iam/users', {
    schema: { summary: 'Create a user; a welcome e-mail is sent', body: UserInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const body = request.body;
    assertPassword(body.password);
    await assertDepartment(db, body.department_id);
    await assertEmailFree(db, body.email);
    // bcrypt runs on the thread pool, before any transaction holds a connection or a lock.
    const passwordHash = await hasher.hash(body.password);
    const created = await auditedTransaction(app, request, async (tx, audit) => {
      const row = await insertUserWithPassword(tx, {
        email: body.email, name: body.name, emailVerified: body.emailVerified ?? false, image: body.image ?? null, departmentId: body.department_id ?? null,
      }, passwordHash);
      await audit(tx, { action: 'create', module: 'iam', resource: 'users', resourceId: row.id, after: audited(row) });
      return row;
    });
    // Fire and forget: the user exists whether or not the mail goes out; never the password.
    const mail = welcomeMail(created.name, created.email, `${app.config.baseUrl}/login`);
    app.mailer.send({ to: created.email, ...mail }).catch((err) => request.log.error({ err, userId: created.id }, 'welcome mail not sent'));
    return reply.code(201).send({ id: created.id, message: 'User created' });
  });

  app.patch('/api/iam/users/:id', {
    schema: { summary: 'Update a user (only the fields sent; a new password ends their sessions)', params: IdParams, body: UserPatch, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const { id } = request.params;
    const { password, department_id, ...rest } = request.body;
    if (password !== undefined) assertPassword(password);
    await assertDepartment(db, department_id);
    const passwordHash = password !== undefined ? await hasher.hash(password) : undefined;
    await auditedTransaction(app, request, async (tx, audit) => {
      const current = await lockUser(tx, id);
      if (rest.email !== undefined) await assertEmailFree(tx, rest.email, id);
      const values: Partial<UserRow> = { ...rest, ...(rest.email !== undefined ? { email: rest.email.toLowerCase() } : {}) };
      if (department_id !== undefined) values.departmentId = department_id;
      const [updated] = await tx.update(users).set({ ...values, updatedAt: new Date() }).where(eq(users.id, id)).returning();
      const after: Record<string, unknown> = audited(updated);
      const before: Record<string, unknown> = audited(current);
      if (passwordHash) {
        const changed = await tx.update(accounts).set({ password: passwordHash, updatedAt: new Date() })
          .where(and(eq(accounts.userId, id), eq(accounts.providerId, 'credential'))).returning({ id: accounts.id });
        if (!changed.length) await tx.insert(accounts).values({ accountId: id, providerId: 'credential', userId: id, password: passwordHash });
        await tx.delete(sessions).where(eq(sessions.userId, id));
        // The log says the credential changed, never what it is.
        before.credential = null;
        after.credential = 'replaced';
      }
      await audit(tx, { action: 'update', module: 'iam', resource: 'users', resourceId: id, before, after });
    });
    return { message: 'User updated' };
  });

  app.delete('/api/iam/users/:id', {
    schema: { summary: 'Delete a user (their sessions and permissions end; records naming them keep the name)', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const { id } = request.params;
    const principal = await currentPrincipal(app, request);
    await auditedTransaction(app, request, async (tx, audit) => {
      await lockIamWriters(tx);
      const current = await lockUser(tx, id);
      if (id === principal.user.id) throw conflict('You cannot delete your own account');
      await assertIamWriterRemains(tx, { userId: id });
      // A tombstone: the row stays so names in other records survive; the address is released for reuse.
      await tx.update(users).set({ deletedAt: new Date(), email: `deleted+${id}@invalid`, departmentId: null, updatedAt: new Date() }).where(eq(users.id, id));
      await tx.delete(sessions).where(eq(sessions.userId, id));
      await tx.delete(accounts).where(eq(accounts.userId, id));
      await tx.delete(twoFactors).where(eq(twoFactors.userId, id));
      await tx.delete(moduleAccess).where(eq(moduleAccess.user_id, id));
      await audit(tx, { action: 'delete', module: 'iam', resource: 'users', resourceId: id, before: audited(current) });
    });
    return { message: 'User deleted' };
  });
}
