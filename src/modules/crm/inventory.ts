import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../app.js';
import { inventoryUnits, projects, reservations, UNIT_STATUSES } from '../../db/schema/index.js';
import { type Collection, createRecord, deleteRecord, findOne, lockRow, updateRecord, auditedTransaction } from '../../http/crud.js';
import { conflict, validationError } from '../../http/errors.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

export const inventoryCollection: Collection = { table: inventoryUnits, id: inventoryUnits.id, module: 'crm', resource: 'inventory', label: 'Inventory unit' };

/** `{ProjectInitials}-{Block}-{Lot}`: "Arcadia Residences", "3", "12" → "AR-3-12". */
export function inventoryCode(projectName: string, block: string, lot: string): string {
  const initials = projectName
    .split(/\s+/)
    .map((word) => word.match(/[\p{L}\p{N}]/u)?.[0] ?? '')
    .join('')
    .toUpperCase();
  return `${initials}-${block}-${lot}`;
}

export const InventoryUnit = Strict({
  id: Uuid(),
  project: Strict({ id: Uuid(), name: Type.String(), slug: Type.String() }),
  inventory_code: Type.String(),
  block: Type.String(),
  lot: Type.String(),
  house_model: Nullable(Type.String()),
  floor_area: Nullable(Type.Number()),
  lot_area: Nullable(Type.Number()),
  price: Type.Number(),
  status: StringEnum(UNIT_STATUSES),
  sold_to: Nullable(Uuid()),
  created_at: Timestamp(),
});

const Area = () => Type.Optional(Nullable(Type.Number({ minimum: 0 })));
const UnitInput = Strict({
  project_id: Uuid(),
  block: RequiredText({ maxLength: 50 }),
  lot: RequiredText({ maxLength: 50 }),
  house_model: Type.Optional(Nullable(RequiredText())),
  floor_area: Area(),
  lot_area: Area(),
  price: Type.Number({ minimum: 0 }),
  status: Type.Optional(StringEnum(UNIT_STATUSES)),
});
type UnitBody = typeof UnitInput.static;

const SoldToInput = Strict({
  inventory_id: Uuid(),
  sold_to: Type.Optional(Nullable(Uuid())),
  status: Type.Optional(StringEnum(UNIT_STATUSES)),
}, { minProperties: 2 });

export const inventoryList: ListSpec = {
  collection: 'inventory',
  table: inventoryUnits,
  id: inventoryUnits.id,
  sortable: {
    created_at: inventoryUnits.created_at, inventory_code: inventoryUnits.inventory_code, price: inventoryUnits.price,
    block: inventoryUnits.block, lot: inventoryUnits.lot,
  },
  defaultSort: 'created_at',
  filters: {
    project_id: { schema: Uuid(), where: (v) => eq(inventoryUnits.project_id, v) },
    status: { schema: StringEnum(UNIT_STATUSES), where: (v) => eq(inventoryUnits.status, v) },
    block: { schema: Type.String({ maxLength: 50 }), where: (v) => eq(inventoryUnits.block, v) },
    house_model: { schema: Type.String({ maxLength: 500 }), where: (v) => eq(inventoryUnits.house_model, v) },
  },
};

export const inventoryView: View = {
  fields: {
    id: inventoryUnits.id,
    project: { id: projects.id, name: projects.name, slug: projects.slug },
    inventory_code: inventoryUnits.inventory_code, block: inventoryUnits.block, lot: inventoryUnits.lot,
    house_model: inventoryUnits.house_model, floor_area: inventoryUnits.floor_area, lot_area: inventoryUnits.lot_area,
    price: inventoryUnits.price, status: inventoryUnits.status, sold_to: inventoryUnits.sold_to, created_at: inventoryUnits.created_at,
  },
  joins: (query) => query.innerJoin(projects, eq(projects.id, inventoryUnits.project_id)),
};

async function projectName(app: App, id: string): Promise<string> {
  const [project] = await app.database.db.select({ name: projects.name }).from(projects).where(eq(projects.id, id)).limit(1);
  if (!project) throw validationError({ project_id: 'must be an existing project' });
  return project.name;
}

/** Inventory units: the lots of a project, their price and whether they are available, reserved or sold. */
export default async function inventoryRoutes(app: App) {
  app.get('/api/crm/inventory', {
    schema: { summary: 'List inventory units', querystring: listQuerySchema(inventoryList), response: { 200: Paginated(InventoryUnit), ...errorResponses } },
  }, async (request) => app.lists.page(inventoryList, inventoryView, request.query as ListQuery));

  app.get('/api/crm/inventory/:id', {
    schema: { summary: 'One inventory unit', params: IdParams, response: { 200: InventoryUnit, ...errorResponses } },
  }, async (request) => findOne(app.database.db, inventoryCollection, inventoryView, request.params.id));

  app.post('/api/crm/inventory', {
    schema: {
      summary: 'Create an inventory unit (its code is derived from the project, block and lot)',
      body: UnitInput,
      response: { 201: Strict({ id: Uuid(), inventory_code: Type.String(), message: Type.String() }), ...errorResponses },
    },
  }, async (request, reply) => {
    const body = request.body as UnitBody;
    const code = inventoryCode(await projectName(app, body.project_id), body.block, body.lot);
    const row = await createRecord(app, request, inventoryCollection, { ...body, inventory_code: code });
    return reply.code(201).send({ id: row.id, inventory_code: row.inventory_code, message: 'Inventory unit created' });
  });

  app.patch('/api/crm/inventory/:id', {
    schema: { summary: 'Update an inventory unit (only the fields sent)', params: IdParams, body: PartialStrict(UnitInput), response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const body = request.body as Partial<UnitBody>;
    const newProject = body.project_id ? await projectName(app, body.project_id) : undefined;
    let name = newProject;
    await updateRecord(app, request, inventoryCollection, request.params.id, (current) => {
      if (body.block === undefined && body.lot === undefined && body.project_id === undefined) return body;
      return { ...body, inventory_code: inventoryCode(name!, body.block ?? current.block, body.lot ?? current.lot) };
    }, {
      check: async (current, tx) => {
        if (name === undefined) {
          const [project] = await tx.select({ name: projects.name }).from(projects).where(eq(projects.id, current.project_id));
          name = project.name;
        }
      },
    });
    return { message: 'Inventory unit updated' };
  });

  app.delete('/api/crm/inventory/:id', {
    schema: { summary: 'Delete an inventory unit (not while reserved or sold)', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, inventoryCollection, request.params.id, {
      check: (current) => {
        if (current.status !== 'available') throw conflict(`A ${current.status} unit cannot be deleted`);
      },
    });
    return { message: 'Inventory unit deleted' };
  });

  app.patch('/api/projects/inventory', {
    schema: { summary: "Set a unit's buyer reservation and status", body: SoldToInput, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const body = request.body as typeof SoldToInput.static;
    if (body.sold_to) {
      const [reservation] = await app.database.db.select({ id: reservations.id }).from(reservations).where(eq(reservations.id, body.sold_to)).limit(1);
      if (!reservation) throw validationError({ sold_to: 'must be an existing reservation or null' });
    }
    await auditedTransaction(app, request, async (tx, audit) => {
      const current = await lockRow(tx, inventoryCollection, body.inventory_id);
      const values: Record<string, unknown> = {};
      if (body.sold_to !== undefined) values.sold_to = body.sold_to;
      if (body.status !== undefined) values.status = body.status;
      const [row] = await tx.update(inventoryUnits).set(values).where(eq(inventoryUnits.id, body.inventory_id)).returning();
      await audit(tx, { action: 'update', module: 'crm', resource: 'inventory', resourceId: row.id, before: current, after: row });
    });
    return { message: 'Inventory unit updated' };
  });
}
