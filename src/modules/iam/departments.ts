import { Type } from '@sinclair/typebox';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { App } from '../../app.js';
import type { Executor, Tx } from '../../db/client.js';
import { departments, users } from '../../db/schema/index.js';
import { type Collection, createRecord, deleteRecord, findOne, updateRecord } from '../../http/crud.js';
import { conflict } from '../../http/errors.js';
import { bumpVersion, type View } from '../../http/list.js';
import { Created, errorResponses, IdParams, Message, RequiredText, Strict, Uuid } from '../../http/schemas.js';

export const departmentCollection: Collection = { table: departments, id: departments.id, module: 'iam', resource: 'departments', label: 'Department' };

export const Department = Strict({ id: Uuid(), name: Type.String() });
const DepartmentInput = Strict({ name: RequiredText({ maxLength: 200 }) });

export const departmentView = { fields: { id: departments.id, name: departments.name } } satisfies View;

/** 409 when another department already has this name (compared case-insensitively). */
async function assertNameFree(db: Executor, name: string, exceptId?: string) {
  const [taken] = await db
    .select({ id: departments.id })
    .from(departments)
    .where(and(sql`lower(${departments.name}) = lower(${name})`, exceptId ? ne(departments.id, exceptId) : undefined))
    .limit(1);
  if (taken) throw conflict(`A department named "${name}" already exists`);
}

/** Users are filtered by department name, so every department change also changes what user lists answer. */
const touchUsers = { after: async (_row: unknown, tx: Tx) => bumpVersion(tx, 'users') };

/** Departments: a short list, answered whole and ordered by name (CONTRACT §8). */
export default async function departmentRoutes(app: App) {
  const { db } = app.database;

  app.get('/api/iam/departments', {
    schema: { summary: 'All departments, ordered by name', response: { 200: Strict({ data: Type.Array(Department) }), ...errorResponses } },
  }, async () => ({ data: await db.select(departmentView.fields).from(departments).orderBy(asc(departments.name), asc(departments.id)) }));

  app.get('/api/iam/departments/:id', {
    schema: { summary: 'One department', params: IdParams, response: { 200: Department, ...errorResponses } },
  }, async (request) => findOne(db, departmentCollection, departmentView, request.params.id));

  app.post('/api/iam/departments', {
    schema: { summary: 'Create a department', body: DepartmentInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    await assertNameFree(db, request.body.name);
    const row = await createRecord(app, request, departmentCollection, { name: request.body.name }, touchUsers);
    return reply.code(201).send({ id: row.id, message: 'Department created' });
  });

  app.patch('/api/iam/departments/:id', {
    schema: { summary: 'Rename a department', params: IdParams, body: DepartmentInput, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await updateRecord(app, request, departmentCollection, request.params.id, { name: request.body.name }, {
      check: (_current, tx) => assertNameFree(tx, request.body.name, request.params.id),
      ...touchUsers,
    });
    return { message: 'Department updated' };
  });

  app.delete('/api/iam/departments/:id', {
    schema: { summary: 'Delete a department (409 while users belong to it)', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, departmentCollection, request.params.id, {
      check: async (_current, tx) => {
        const [member] = await tx.select({ id: users.id }).from(users).where(eq(users.departmentId, request.params.id)).limit(1);
        if (member) throw conflict('The department still has users; move them to another department first');
      },
      ...touchUsers,
    });
    return { message: 'Department deleted' };
  });
}
