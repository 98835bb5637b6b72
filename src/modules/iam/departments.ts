import { Type } from '@sinclair/typebox';
import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import type { App } from '../../types.js';
import { defineResource } from '../../data/resource.js';
import type { Executor } from '../../db/client.js';
import { departments, users } from '../../db/schema/index.js';
import { conflict, validationError } from '../../errors.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Nullable, PartialStrict, RequiredText, Strict, Uuid } from '../../http/schemas.js';

/** Departments: a short list, answered whole and ordered by name (CONTRACT §8). */
export const departmentResource = defineResource({
  name: 'departments',
  module: 'iam',
  label: 'Department',
  table: departments,
  id: departments.id,
  view: { fields: { id: departments.id, name: departments.name, manager_id: departments.manager_id } },
  list: { sortable: { name: departments.name }, defaultSort: 'name', whole: true },
});

export const Department = Strict({
  id: Uuid(), name: Type.String(),
  manager_id: Nullable(Uuid({ description: 'Its manager: late leads of its agents are escalated to them, and they may change lead flow settings' })),
});
const DepartmentInput = Strict({ name: RequiredText({ maxLength: 200 }), manager_id: Type.Optional(Nullable(Uuid())) });
const DepartmentPatch = PartialStrict(DepartmentInput);

/** 400 unless `id` names a live (not deleted) user. */
async function assertManager(db: Executor, id: string | null | undefined) {
  if (!id) return;
  const [user] = await db.select({ id: users.id }).from(users).where(and(eq(users.id, id), isNull(users.deletedAt))).limit(1);
  if (!user) throw validationError({ manager_id: 'must be an existing user' });
}

/** 409 when another department already has this name (compared case-insensitively). */
async function assertNameFree(db: Executor, name: string, exceptId?: string) {
  const [taken] = await db
    .select({ id: departments.id })
    .from(departments)
    .where(and(sql`lower(${departments.name}) = lower(${name})`, exceptId ? ne(departments.id, exceptId) : undefined))
    .limit(1);
  if (taken) throw conflict(`A department named "${name}" already exists`);
}

// Users are listed by department name: a department's change also changes user lists, which migration 0012's trigger
// on departments says in the change log.
export default async function departmentRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, departmentResource, {
    path: '/api/iam/departments',
    Item: Department,
    create: {
      body: DepartmentInput,
      values: async (body) => {
        await assertNameFree(db, body.name);
        await assertManager(db, body.manager_id);
        return body;
      },
    },
    update: {
      body: DepartmentPatch,
      summary: 'Rename a department or change its manager',
      values: async (body, current, work) => {
        if (body.name !== undefined) await assertNameFree(work.tx, body.name, current.id);
        await assertManager(work.tx, body.manager_id);
        return body;
      },
    },
    remove: {
      summary: 'Delete a department (409 while users belong to it)',
      before: async (current, work) => {
        const [member] = await work.tx.select({ id: users.id }).from(users).where(eq(users.departmentId, current.id)).limit(1);
        if (member) throw conflict('The department still has users; move them to another department first');
      },
    },
  });
}
