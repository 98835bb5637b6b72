import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import type { Work } from '../../data/mutations.js';
import { inventoryUnits, PAYMENT_STATUSES, projects, RESERVATION_STATUSES, reservations } from '../../db/schema/index.js';
import { conflict, validationError } from '../../errors.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Email, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, TimestampInput, Uuid } from '../../http/schemas.js';
import { changeUnit, inventoryResource } from './inventory.js';
import { leadOfReservation } from './lead-links.js';
import { leadResource } from './lead-resource.js';
import { UserRef, withLowerEmail } from './shared.js';
import { reservationResource } from './reservation-resource.js';

type ReservationRow = typeof reservations.$inferSelect;

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
  lead_id: Nullable(Uuid({ description: 'The lead this reservation is for' })),
});

const ReservationFields = {
  project_name: Type.Optional(Nullable(RequiredText())),
  client_name: RequiredText(),
  contact_number: Type.Optional(Nullable(RequiredText({ maxLength: 50 }))),
  email: Type.Optional(Nullable(Email())),
  reservation_date: Type.Optional(TimestampInput()),
  payment_status: Type.Optional(StringEnum(PAYMENT_STATUSES)),
  notes: Type.Optional(Nullable(Text())),
  lead_id: Type.Optional(Nullable(Uuid({ description: 'The lead it is for; on create, when omitted, the newest lead with the same e-mail' }))),
};
const ReservationInput = Strict({
  inventory_id: Uuid(),
  ...ReservationFields,
  // A reservation starts pending or (already agreed) confirmed; a cancelled one would hold nothing.
  status: Type.Optional(StringEnum(['pending', 'confirmed'] as const)),
});
const ReservationPatch = PartialStrict(Strict({ ...ReservationFields, status: StringEnum(RESERVATION_STATUSES) }));

/** Legal status moves (CONTRACT §12): pending → confirmed | cancelled, confirmed → cancelled; cancelled is final. */
const MOVES: Record<string, string[]> = { pending: ['confirmed', 'cancelled'], confirmed: ['cancelled'], cancelled: [] };

/** Request timestamps arrive as text. */
const withDate = <T extends { reservation_date?: string }>(body: T) =>
  ({ ...body, reservation_date: body.reservation_date === undefined ? undefined : new Date(body.reservation_date) });

/**
 * Frees the unit a reservation (as it was before it was cancelled or deleted) holds: available, no buyer; a unit held
 * by another reservation is left alone. A sold unit stays sold: its pending or confirmed reservations cannot be
 * cancelled or deleted until staff change the unit (409).
 */
async function releaseUnit(work: Work, reservation: ReservationRow, field?: 'status') {
  if (!reservation.inventory_id || reservation.status === 'cancelled') return;
  const unit = await work.lock(inventoryResource, reservation.inventory_id).catch(() => null);
  if (unit?.status === 'sold') {
    const message = `The unit ${unit.inventory_code} is sold; change the unit's status before cancelling or deleting its reservation`;
    throw conflict(message, field ? { [field]: `cannot be cancelled while the unit ${unit.inventory_code} is sold` } : undefined);
  }
  if (!unit || unit.sold_to !== reservation.id) return;
  await changeUnit(work, unit.id, { status: 'available', sold_to: null });
}

export default async function reservationRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, reservationResource, {
    path: '/api/crm/reservations',
    Item: Reservation,
    create: {
      body: ReservationInput,
      summary: 'Reserve an inventory unit',
      values: async (body, { actor, scopeOf }) => {
        if (!body.contact_number && !body.email) {
          throw validationError({ contact_number: 'contact_number or email is required', email: 'contact_number or email is required' });
        }
        const [unit] = await db.select({ project_name: projects.name }).from(inventoryUnits)
          .innerJoin(projects, eq(projects.id, inventoryUnits.project_id)).where(eq(inventoryUnits.id, body.inventory_id)).limit(1);
        if (!unit) throw validationError({ inventory_id: 'must be an existing inventory unit' });
        return { ...withLowerEmail(withDate(body)), project_name: body.project_name ?? unit.project_name, created_by: actor.userId, lead_id: await leadOfReservation(db, body, await scopeOf(leadResource)) };
      },
      // The unit's row is locked first: of many concurrent reservations of one unit exactly one wins.
      insert: async (work, values, body) => {
        const unit = await work.lock(inventoryResource, body.inventory_id);
        if (unit.status !== 'available') throw conflict(`The unit is ${unit.status}`, { inventory_id: `the unit is ${unit.status}` });
        const reservation = await work.create(reservationResource, values);
        await changeUnit(work, unit.id, { status: 'reserved', sold_to: reservation.id });
        return reservation;
      },
    },
    update: {
      body: ReservationPatch,
      summary: 'Update a reservation (cancelling frees its unit)',
      values: (body, current) => {
        if (body.status !== undefined && body.status !== current.status && !MOVES[current.status]?.includes(body.status)) {
          const allowed = MOVES[current.status]?.length ? `it may become ${MOVES[current.status].join(' or ')}` : 'cancelled is final';
          throw conflict(`A ${current.status} reservation cannot become ${body.status}`, { status: `cannot move from ${current.status} to ${body.status}: ${allowed}` });
        }
        return withLowerEmail(withDate(body));
      },
      after: async (row, before, work) => {
        if (row.status === 'cancelled' && before.status !== 'cancelled') await releaseUnit(work, before, 'status');
      },
    },
    remove: {
      summary: 'Delete a reservation (frees its unit)',
      before: (current, work) => releaseUnit(work, current),
    },
  });
}
