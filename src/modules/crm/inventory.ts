import { Type } from '@sinclair/typebox';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { App } from '../../types.js';
import { anyOf, equals } from '../../data/filters.js';
import { audited, type Patch, type Work } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import type { Executor } from '../../db/client.js';
import { inventoryUnits, projects, reservations, UNIT_STATUSES } from '../../db/schema/index.js';
import { conflict, validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { recordScope } from '../../auth/guard.js';
import { requireReadable } from '../../http/record-walls.js';
import { resourceRoutes } from '../../http/resource-routes.js';
// A cycle (reservations change their unit through here), used only inside handlers, never while loading.
import { reservationResource } from './reservation-resource.js';
import { errorResponses, Measure, Message, Money, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

/** Inventory units: the lots of a project, their price and whether they are available, reserved or sold. */
const SOLD_TO_UNKNOWN = 'must be an existing reservation or null';

export const inventoryResource = defineResource({
  name: 'inventory',
  module: 'crm',
  label: 'Inventory unit',
  table: inventoryUnits,
  id: inventoryUnits.id,
  view: {
    fields: {
      id: inventoryUnits.id,
      project: { id: projects.id, name: projects.name, slug: projects.slug },
      inventory_code: inventoryUnits.inventory_code, block: inventoryUnits.block, lot: inventoryUnits.lot,
      house_model: inventoryUnits.house_model, floor_area: inventoryUnits.floor_area, lot_area: inventoryUnits.lot_area,
      price: inventoryUnits.price, status: inventoryUnits.status, sold_to: inventoryUnits.sold_to, created_at: inventoryUnits.created_at,
    },
    joins: (query) => query.innerJoin(projects, eq(projects.id, inventoryUnits.project_id)),
  },
  list: {
    sortable: {
      created_at: inventoryUnits.created_at, inventory_code: inventoryUnits.inventory_code, price: inventoryUnits.price,
      block: inventoryUnits.block, lot: inventoryUnits.lot,
    },
    defaultSort: 'created_at',
    filters: {
      project_id: equals(inventoryUnits.project_id, Uuid()),
      status: anyOf(inventoryUnits.status, StringEnum(UNIT_STATUSES)),
      block: equals(inventoryUnits.block, Type.String({ maxLength: 50 })),
      house_model: equals(inventoryUnits.house_model, Type.String({ maxLength: 500 })),
    },
  },
  export: {},
  // A unit is stock every crm reader sees; its buyer is shown only to a reader whose scope reaches that reservation.
  references: () => ({ sold_to: reservationResource }),
});

type Unit = typeof inventoryUnits.$inferSelect;

/** `{ProjectInitials}-{Block}-{Lot}`: "Arcadia Residences", "3", "12" → "AR-3-12". */
export function inventoryCode(projectName: string, block: string, lot: string): string {
  const initials = projectName
    .split(/\s+/)
    .map((word) => word.match(/[\p{L}\p{N}]/u)?.[0] ?? '')
    .join('')
    .toUpperCase();
  return `${initials}-${block}-${lot}`;
}

/**
 * A code no other unit has: the derived one, else it with `-2`, `-3`, … (block "3-1" lot "2" and block "3" lot "1-2"
 * derive the same). Same-code creators queue on an advisory lock for the rest of their transaction, so two of
 * them never pick the same suffix; each probe is one indexed look-up of a run of candidates.
 */
export async function freeInventoryCode(work: Work, derived: string, exceptId?: string): Promise<string> {
  await work.tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`inventory_code:${derived}`}))`);
  for (let first = 1; ; first += 50) {
    const candidates = Array.from({ length: 50 }, (_, i) => (first + i === 1 ? derived : `${derived}-${first + i}`));
    const taken = new Set((await work.tx.select({ code: inventoryUnits.inventory_code, id: inventoryUnits.id }).from(inventoryUnits)
      .where(inArray(inventoryUnits.inventory_code, candidates))).filter((row) => row.id !== exceptId).map((row) => row.code));
    const free = candidates.find((code) => !taken.has(code));
    if (free) return free;
  }
}

const HOLDING = ['pending', 'confirmed'] as const;

/**
 * Staff changes keep a unit's state consistent (CONTRACT §13): a unit a pending or confirmed reservation holds
 * does not go back on sale, and its buyer is a reservation of that very unit.
 */
async function checkUnitState(work: Work, unit: Unit, next: Patch<typeof inventoryUnits>): Promise<Patch<typeof inventoryUnits>> {
  if (next.status === 'available' && unit.status !== 'available') {
    const [held] = await work.tx.select({ status: reservations.status }).from(reservations)
      .where(and(eq(reservations.inventory_id, unit.id), inArray(reservations.status, HOLDING))).limit(1);
    if (held) {
      throw conflict(`The unit is held by a ${held.status} reservation; cancel that reservation to put the unit back on sale`, { status: `cannot be available while a ${held.status} reservation holds the unit` });
    }
  }
  if (next.sold_to) {
    const [reservation] = await work.tx.select({ inventory_id: reservations.inventory_id }).from(reservations).where(eq(reservations.id, next.sold_to)).limit(1);
    if (!reservation) throw validationError({ sold_to: SOLD_TO_UNKNOWN });
    if (reservation.inventory_id !== unit.id) throw validationError({ sold_to: 'must be a reservation of this unit' });
  }
  // Back on sale: nobody holds it any more.
  return next.status === 'available' && next.sold_to === undefined ? { ...next, sold_to: null } : next;
}

/**
 * The one owner of a unit's state: every change of a unit (its status and buyer included), from the inventory
 * routes, reservations or anywhere else, goes through here and is audited in the caller's transaction.
 */
export function changeUnit(work: Work, unitId: string, values: Patch<typeof inventoryUnits> | ((current: Unit) => Patch<typeof inventoryUnits> | Promise<Patch<typeof inventoryUnits>>)) {
  return work.update(inventoryResource, unitId, values);
}

/** A change a staff member asked for: checked against the unit's reservations first. */
const changeUnitAsStaff = (work: Work, unitId: string, values: (current: Unit) => Promise<Patch<typeof inventoryUnits>>) =>
  changeUnit(work, unitId, async (current) => checkUnitState(work, current, await values(current)));

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

const Area = () => Type.Optional(Nullable(Measure()));
export const UnitInput = Strict({
  project_id: Uuid(),
  block: RequiredText({ maxLength: 50 }),
  lot: RequiredText({ maxLength: 50 }),
  house_model: Type.Optional(Nullable(RequiredText())),
  floor_area: Area(),
  lot_area: Area(),
  price: Money(),
  status: Type.Optional(StringEnum(UNIT_STATUSES)),
});

const SoldToInput = Strict({
  inventory_id: Uuid(),
  sold_to: Type.Optional(Nullable(Uuid())),
  status: Type.Optional(StringEnum(UNIT_STATUSES)),
}, { minProperties: 2 });

async function projectName(db: Executor, id: string): Promise<string> {
  const [project] = await db.select({ name: projects.name }).from(projects).where(eq(projects.id, id)).limit(1);
  if (!project) throw validationError({ project_id: 'must be an existing project' });
  return project.name;
}

export default async function inventoryRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, inventoryResource, {
    path: '/api/crm/inventory',
    Item: InventoryUnit,
    create: {
      body: UnitInput,
      summary: 'Create an inventory unit (its code is derived from the project, block and lot; -2, -3… when taken)',
      values: async (body) => ({ ...body, inventory_code: inventoryCode(await projectName(db, body.project_id), body.block, body.lot) }),
      insert: async (work, values) => work.create(inventoryResource, { ...values, inventory_code: await freeInventoryCode(work, values.inventory_code!) }),
      answer: {
        schema: { 201: Strict({ id: Uuid(), inventory_code: Type.String(), message: Type.String() }, { examples: [{ id: '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d', inventory_code: 'AZR-B-12', message: 'Inventory unit created' }] }) },
        send: (row) => ({ code: 201, body: { id: row.id, inventory_code: row.inventory_code, message: 'Inventory unit created' } }),
      },
    },
    update: {
      body: PartialStrict(UnitInput),
      change: changeUnitAsStaff,
      validate: async (body) => {
        if (body.project_id) await projectName(db, body.project_id);
      },
      // The code follows the project, block and lot (a unit keeps its suffix while they derive the same code).
      values: async (body, current, work) => {
        if (body.block === undefined && body.lot === undefined && body.project_id === undefined) return body;
        const derived = (projectId: string, block: string, lot: string) => projectName(work.tx, projectId).then((name) => inventoryCode(name, block, lot));
        const code = await derived(body.project_id ?? current.project_id, body.block ?? current.block, body.lot ?? current.lot);
        if (code === await derived(current.project_id, current.block, current.lot)) return body;
        return { ...body, inventory_code: await freeInventoryCode(work, code, current.id) };
      },
    },
    remove: {
      summary: 'Delete an inventory unit (not while reserved or sold)',
      before: async (current, work) => {
        if (current.status !== 'available') throw conflict(`A ${current.status} unit cannot be deleted`);
        // Its (cancelled) reservations stay, no longer pointing at it: each change logged.
        await work.updateAll(reservationResource, eq(reservations.inventory_id, current.id), { inventory_id: null });
      },
    },
  });

  app.patch('/api/projects/inventory', {
    schema: { 'x-answer-message': 'Inventory unit updated', summary: "Set a unit's buyer reservation and status", body: SoldToInput, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const { inventory_id, ...state } = request.body;
    // The buyer is read with the caller's scope: a colleague's reservation is refused as an unknown one.
    await requireReadable(db, reservationResource, state.sold_to, await recordScope(app, request, reservationResource), 'sold_to', SOLD_TO_UNKNOWN);
    await audited(db, await actorOf(app, request), (work) => changeUnitAsStaff(work, inventory_id, async () => state));
    return { message: 'Inventory unit updated' };
  });
}
