import { Type } from '@sinclair/typebox';
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.js';
import type { Executor } from '../../db/client.js';
import { MODULES, moduleAccess, users } from '../../db/schema/index.js';
import { auditedTransaction, type Collection, createRecord, lockRow } from '../../http/crud.js';
import { conflict, notFound, validationError } from '../../http/errors.js';
import type { View } from '../../http/list.js';
import { Created, errorResponses, IdParams, Message, PartialStrict, Strict, StringEnum, Uuid } from '../../http/schemas.js';
import { assertIamWriterRemains, lockIamWriters } from './writers.js';

export const moduleAccessCollection: Collection = { table: moduleAccess, id: moduleAccess.id, module: 'iam', resource: 'module_access', label: 'Module access' };

export const ModuleAccess = Strict({ id: Uuid(), module: StringEnum(MODULES), can_read: Type.Boolean(), can_write: Type.Boolean(), can_delete: Type.Boolean() });

export const moduleAccessView = {
  fields: { id: moduleAccess.id, module: moduleAccess.module, can_read: moduleAccess.can_read, can_write: moduleAccess.can_write, can_delete: moduleAccess.can_delete },
} satisfies View;

const Flag = () => Type.Boolean({ default: false });
const AccessInput = Strict({ user_id: Uuid(), module: StringEnum(MODULES), can_read: Type.Optional(Flag()), can_write: Type.Optional(Flag()), can_delete: Type.Optional(Flag()) });
const AccessPatch = PartialStrict(Strict({ can_read: Type.Boolean(), can_write: Type.Boolean(), can_delete: Type.Boolean() }));

const activeUser = async (db: Executor, id: string) =>
  (await db.select({ id: users.id }).from(users).where(and(eq(users.id, id), isNull(users.deletedAt))).limit(1))[0];

type Access = typeof moduleAccess.$inferSelect;

/** PATCH and DELETE of a grant: lock-out checks are serialised, then the audited change (CONTRACT §5). */
function changeGrant(app: App, request: FastifyRequest, id: string, change: (current: Access) => Partial<Access> | 'delete') {
  return auditedTransaction(app, request, async (tx, audit) => {
    await lockIamWriters(tx);
    const current = (await lockRow(tx, moduleAccessCollection, id)) as Access;
    const next = change(current);
    const losesIamWrite = current.module === 'iam' && current.can_write && (next === 'delete' || next.can_write === false);
    if (losesIamWrite) await assertIamWriterRemains(tx, { accessId: id });
    const base = { action: 'update' as const, module: 'iam' as const, resource: 'module_access', resourceId: id, before: current };
    if (next === 'delete') {
      await tx.delete(moduleAccess).where(eq(moduleAccess.id, id));
      await audit(tx, { ...base, action: 'delete' });
    } else {
      const [row] = await tx.update(moduleAccess).set(next).where(eq(moduleAccess.id, id)).returning();
      await audit(tx, { ...base, after: row });
    }
  });
}

/** Module access: read per user, written per row (CONTRACT §8). */
export default async function moduleAccessRoutes(app: App) {
  const { db } = app.database;

  app.get('/api/iam/module-access/:userId', {
    schema: {
      summary: "A user's module permissions",
      params: Strict({ userId: Uuid() }),
      response: { 200: Strict({ data: Type.Array(ModuleAccess) }), ...errorResponses },
    },
  }, async (request) => {
    if (!(await activeUser(db, request.params.userId))) throw notFound('User');
    const data = await db.select(moduleAccessView.fields).from(moduleAccess).where(eq(moduleAccess.user_id, request.params.userId)).orderBy(asc(moduleAccess.module));
    return { data };
  });

  app.post('/api/iam/module-access', {
    schema: { summary: 'Grant a user permissions on a module', body: AccessInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const body = request.body;
    if (!(await activeUser(db, body.user_id))) throw validationError({ user_id: 'does not name an existing user' });
    const [existing] = await db.select({ id: moduleAccess.id }).from(moduleAccess)
      .where(and(eq(moduleAccess.user_id, body.user_id), eq(moduleAccess.module, body.module))).limit(1);
    if (existing) throw conflict(`The user already has a ${body.module} permission row; change it with PATCH`);
    const row = await createRecord(app, request, moduleAccessCollection, {
      user_id: body.user_id, module: body.module, can_read: body.can_read ?? false, can_write: body.can_write ?? false, can_delete: body.can_delete ?? false,
    });
    return reply.code(201).send({ id: row.id, message: 'Module access created' });
  });

  app.patch('/api/iam/module-access/:id', {
    schema: { summary: 'Change permission flags (only the flags sent)', params: IdParams, body: AccessPatch, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await changeGrant(app, request, request.params.id, () => request.body);
    return { message: 'Module access updated' };
  });

  app.delete('/api/iam/module-access/:id', {
    schema: { summary: 'Remove a permission row', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await changeGrant(app, request, request.params.id, () => 'delete');
    return { message: 'Module access deleted' };
  });
}
