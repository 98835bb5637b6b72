import { Type } from '@sinclair/typebox';
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { App } from '../../types.js';
import { defineResource } from '../../data/resource.js';
import type { Executor } from '../../db/client.js';
import { MODULES, moduleAccess, RECORD_SCOPES, users } from '../../db/schema/index.js';
import { conflict, notFound, validationError } from '../../errors.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { errorResponses, PartialStrict, Strict, StringEnum, Uuid } from '../../http/schemas.js';
import { assertIamWriterRemains, lockIamWriters } from './writers.js';

const accessFields = {
  id: moduleAccess.id, module: moduleAccess.module, can_read: moduleAccess.can_read, can_write: moduleAccess.can_write, can_delete: moduleAccess.can_delete,
  scope: moduleAccess.scope,
};

/** Module access: a user's read/write/delete flags per module; read per user, written per row (CONTRACT §8). */
export const moduleAccessResource = defineResource({
  name: 'module_access',
  module: 'iam',
  label: 'Module access',
  table: moduleAccess,
  id: moduleAccess.id,
  view: { fields: accessFields },
});

const SCOPE_DESCRIPTION = 'Which records the user sees (crm only): `all` (the default), `department` (records assigned to or created by '
  + 'anyone in their department; without a department, their own) or `own` (assigned to or created by them). Administrators (iam write) always see all.';
const Scope = () => StringEnum(RECORD_SCOPES, { description: SCOPE_DESCRIPTION });

export const ModuleAccess = Strict({ id: Uuid(), module: StringEnum(MODULES), can_read: Type.Boolean(), can_write: Type.Boolean(), can_delete: Type.Boolean(), scope: Scope() });

const Flag = () => Type.Boolean({ default: false });
const AccessInput = Strict({
  user_id: Uuid(), module: StringEnum(MODULES), can_read: Type.Optional(Flag()), can_write: Type.Optional(Flag()), can_delete: Type.Optional(Flag()),
  scope: Type.Optional(StringEnum(RECORD_SCOPES, { default: 'all', description: SCOPE_DESCRIPTION })),
});
const AccessPatch = PartialStrict(Strict({ can_read: Type.Boolean(), can_write: Type.Boolean(), can_delete: Type.Boolean(), scope: Scope() }));

/** Record scopes are the crm module's (its leads, reservations, inquiries…): cms and iam records have no owner. */
function assertScopeFits(module: string, scope: string | undefined) {
  if (scope !== undefined && scope !== 'all' && module !== 'crm') {
    throw validationError({ scope: `must be all for the ${module} module: record scopes (department, own) apply to the crm module only` });
  }
}

const activeUser = async (db: Executor, id: string) =>
  (await db.select({ id: users.id }).from(users).where(and(eq(users.id, id), isNull(users.deletedAt))).limit(1))[0];

type Access = typeof moduleAccess.$inferSelect;
/** Whether a grant stops giving iam write: then someone else must still hold it (CONTRACT §5). */
const losesIamWrite = (current: Access, next: Partial<Access> | 'deleted') =>
  current.module === 'iam' && current.can_write && (next === 'deleted' || next.can_write === false);

export default async function moduleAccessRoutes(app: App) {
  const { db } = app.database;

  app.get('/api/iam/module-access/:userId', {
    schema: { summary: "A user's module permissions", params: Strict({ userId: Uuid() }), response: { 200: Strict({ data: Type.Array(ModuleAccess) }), ...errorResponses } },
  }, async (request) => {
    if (!(await activeUser(db, request.params.userId))) throw notFound('User');
    return { data: await db.select(accessFields).from(moduleAccess).where(eq(moduleAccess.user_id, request.params.userId)).orderBy(asc(moduleAccess.module)) };
  });

  // Lock-out checks are serialised (the advisory lock first, then the row), so two changes never race past them.
  resourceRoutes(app, moduleAccessResource, {
    path: '/api/iam/module-access',
    Item: ModuleAccess,
    detail: false,
    create: {
      body: AccessInput,
      summary: 'Grant a user permissions on a module',
      values: async (body) => {
        assertScopeFits(body.module, body.scope);
        if (!(await activeUser(db, body.user_id))) throw validationError({ user_id: 'does not name an existing user' });
        const [existing] = await db.select({ id: moduleAccess.id }).from(moduleAccess)
          .where(and(eq(moduleAccess.user_id, body.user_id), eq(moduleAccess.module, body.module))).limit(1);
        if (existing) throw conflict(`The user already has a ${body.module} permission row; change it with PATCH`);
        return { can_read: false, can_write: false, can_delete: false, ...body };
      },
    },
    update: {
      body: AccessPatch,
      summary: 'Change permission flags or the crm record scope (only the fields sent)',
      change: async (work, id, values) => {
        await lockIamWriters(work.tx);
        return work.update(moduleAccessResource, id, async (current) => {
          const next = await values(current);
          assertScopeFits(current.module, next.scope);
          if (losesIamWrite(current, next)) await assertIamWriterRemains(work.tx, { accessId: id });
          return next;
        });
      },
    },
    remove: {
      summary: 'Remove a permission row',
      remove: async (work, id) => {
        await lockIamWriters(work.tx);
        await work.remove(moduleAccessResource, id, async (current) => {
          if (losesIamWrite(current, 'deleted')) await assertIamWriterRemains(work.tx, { accessId: id });
        });
      },
    },
  });
}
