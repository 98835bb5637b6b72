import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../app.js';
import type { Tx } from '../../db/client.js';
import { inventoryUnits, PAYMENT_STATUSES, projects, RESERVATION_STATUSES, reservations, users } from '../../db/schema/index.js';
import { type AuditFn, auditedTransaction, type Collection, findOne, lockRow, updateRecord } from '../../http/crud.js';
import { conflict, validationError } from '../../http/errors.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { Created, Email, errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, TimestampInput, Uuid } from '../../http/schemas.js';
import { currentPrincipal } from '../../auth/guard.js';
import { inventoryCollection } from './inventory.js';
import { lower, UserRef, userRefFields } from './shared.js';

const collection: Collection = { table: reservations, id: reservations.id, module: 'crm', resource: 'reservations', label: 'Reservation' };

export const Reservation = Strict({
  id: Uuid(),
  inventory: Nullable(Strict({
    id: Uuid(), inventory_code: Type.String(), block: Type.String(), lot: Type.String(), house_model: Nullable(Type.String()), price: Type.Number(),
  })),
  project_name: Nullable(Type.String()),
  client_name: Type.String(),
  contact_number: Nullable(Type.String()),
  email: Nullable(Type.String()),
  reservation_date: Timestamp(),
  status: StringEnum(RESERVATION_STATUSES),
  payment_status: StringEnum(PAYMENT_STATUSES),
  notes: Nullable(Type.String()),
  created_by: UserRef,
  created_at: Timestamp(),
});

const ReservationFields = {
  project_name: Type.Optional(Nullable(RequiredText())),
  client_name: RequiredText(),
  contact_number: Type.Optional(Nullable(RequiredText({ maxLength: 50 }))),
  email: Type.Optional(Nullable(Email())),
  reservation_date: Type.Optional(TimestampInput()),
  payment_status: Type.Optional(StringEnum(PAYMENT_STATUSES)),
  notes: Type.Optional(Nullable(Text())),
};
const ReservationInput = Strict({
  inventory_id: Uuid(),
  ...ReservationFields,
  // A reservation starts pending or (already agreed) confirmed; a cancelled one would hold nothing.
  status: Type.Optional(StringEnum(['pending', 'confirmed'] as const)),
});
const ReservationPatch = PartialStrict(Strict({ ...ReservationFields, status: StringEnum(RESERVATION_STATUSES) }));

export const reservationList: ListSpec = {
  collection: 'reservations',
  table: reservations,
  id: reservations.id,
  sortable: { created_at: reservations.created_at, reservation_date: reservations.reservation_date, client_name: reservations.client_name },
  defaultSort: 'created_at',
  filters: {
    status: { schema: StringEnum(RESERVATION_STATUSES), where: (v) => eq(reservations.status, v) },
    payment_status: { schema: StringEnum(PAYMENT_STATUSES), where: (v) => eq(reservations.payment_status, v) },
    project_name: { schema: Type.String({ maxLength: 500 }), where: (v) => eq(reservations.project_name, v) },
  },
  search: [reservations.client_name, reservations.email],
};

export const reservationView: View = {
  fields: {
    id: reservations.id,
    inventory: {
      id: inventoryUnits.id, inventory_code: inventoryUnits.inventory_code, block: inventoryUnits.block, lot: inventoryUnits.lot,
      house_model: inventoryUnits.house_model, price: inventoryUnits.price,
    },
    project_name: reservations.project_name, client_name: reservations.client_name, contact_number: reservations.contact_number,
    email: reservations.email, reservation_date: reservations.reservation_date, status: reservations.status,
    payment_status: reservations.payment_status, notes: reservations.notes, created_by: userRefFields, created_at: reservations.created_at,
  },
  joins: (query) => query.leftJoin(inventoryUnits, eq(inventoryUnits.id, reservations.inventory_id)).leftJoin(users, eq(users.id, reservations.created_by)),
};

/** Legal status moves (CONTRACT §12): pending → confirmed | cancelled, confirmed → cancelled; cancelled is final. */
const MOVES: Record<string, string[]> = { pending: ['confirmed', 'cancelled'], confirmed: ['cancelled'], cancelled: [] };

/** Frees the unit a reservation holds (available, no buyer), audited; a unit held by another reservation is left alone. */
async function releaseUnit(tx: Tx, audit: AuditFn, reservation: Record<string, any>) {
  if (!reservation.inventory_id) return;
  const unit = await lockRow(tx, inventoryCollection, reservation.inventory_id).catch(() => null);
  if (!unit || unit.sold_to !== reservation.id) return;
  const [row] = await tx.update(inventoryUnits).set({ status: 'available', sold_to: null }).where(eq(inventoryUnits.id, unit.id)).returning();
  await audit(tx, { action: 'update', module: 'crm', resource: 'inventory', resourceId: unit.id, before: unit, after: row });
}

/** Reservations: a client holding an inventory unit; reserving locks the unit so exactly one of many wins. */
export default async function reservationRoutes(app: App) {
  app.get('/api/crm/reservations', {
    schema: { summary: 'List reservations', querystring: listQuerySchema(reservationList), response: { 200: Paginated(Reservation), ...errorResponses } },
  }, async (request) => app.lists.page(reservationList, reservationView, request.query as ListQuery));

  app.get('/api/crm/reservations/:id', {
    schema: { summary: 'One reservation', params: IdParams, response: { 200: Reservation, ...errorResponses } },
  }, async (request) => findOne(app.database.db, collection, reservationView, request.params.id));

  app.post('/api/crm/reservations', {
    schema: { summary: 'Reserve an inventory unit', body: ReservationInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const body = request.body as typeof ReservationInput.static;
    if (!body.contact_number && !body.email) {
      throw validationError({ contact_number: 'contact_number or email is required', email: 'contact_number or email is required' });
    }
    const [unit] = await app.database.db
      .select({ id: inventoryUnits.id, project_name: projects.name })
      .from(inventoryUnits)
      .innerJoin(projects, eq(projects.id, inventoryUnits.project_id))
      .where(eq(inventoryUnits.id, body.inventory_id))
      .limit(1);
    if (!unit) throw validationError({ inventory_id: 'must be an existing inventory unit' });
    const principal = await currentPrincipal(app, request);

    const row = await auditedTransaction(app, request, async (tx, audit) => {
      const locked = await lockRow(tx, inventoryCollection, unit.id);
      if (locked.status !== 'available') throw conflict(`The unit is ${locked.status}`);
      const [reservation] = await tx.insert(reservations).values({
        ...body,
        email: lower(body.email),
        reservation_date: body.reservation_date ? new Date(body.reservation_date) : undefined,
        project_name: body.project_name ?? unit.project_name,
        created_by: principal.user.id,
      }).returning();
      await audit(tx, { action: 'create', module: 'crm', resource: 'reservations', resourceId: reservation.id, after: reservation });
      const [updated] = await tx.update(inventoryUnits).set({ status: 'reserved', sold_to: reservation.id }).where(eq(inventoryUnits.id, unit.id)).returning();
      await audit(tx, { action: 'update', module: 'crm', resource: 'inventory', resourceId: unit.id, before: locked, after: updated });
      return reservation;
    });
    return reply.code(201).send({ id: row.id, message: 'Reservation created' });
  });

  app.patch('/api/crm/reservations/:id', {
    schema: { summary: 'Update a reservation (cancelling frees its unit)', params: IdParams, body: ReservationPatch, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const body = request.body as Record<string, any>;
    const patch: Record<string, any> = { ...body };
    if (body.email !== undefined) patch.email = lower(body.email);
    if (body.reservation_date !== undefined) patch.reservation_date = new Date(body.reservation_date);
    let cancelling = false;
    await updateRecord(app, request, collection, request.params.id, patch, {
      check: (current) => {
        if (body.status === undefined || body.status === current.status) return;
        if (!MOVES[current.status]?.includes(body.status)) throw conflict(`A ${current.status} reservation cannot become ${body.status}`);
        cancelling = body.status === 'cancelled';
      },
      after: async (row, tx, audit) => {
        if (cancelling) await releaseUnit(tx, audit, row);
      },
    });
    return { message: 'Reservation updated' };
  });

  app.delete('/api/crm/reservations/:id', {
    schema: { summary: 'Delete a reservation (frees its unit)', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await auditedTransaction(app, request, async (tx, audit) => {
      const current = await lockRow(tx, collection, request.params.id);
      await releaseUnit(tx, audit, current);
      await tx.delete(reservations).where(eq(reservations.id, current.id));
      await audit(tx, { action: 'delete', module: 'crm', resource: 'reservations', resourceId: current.id, before: current });
    });
    return { message: 'Reservation deleted' };
  });
}
