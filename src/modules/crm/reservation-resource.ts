import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { anyOf, equals } from '../../data/filters.js';
import { defineResource } from '../../data/resource.js';
import { inventoryUnits, PAYMENT_STATUSES, RESERVATION_STATUSES, reservations, users } from '../../db/schema/index.js';
import { StringEnum, Uuid } from '../../http/schemas.js';
import { leadResource } from './lead-resource.js';
import { userRefFields } from './shared.js';

// The declaration alone (its routes and rules are in reservations.ts): inventory, follow-ups and lead links import it
// from here.

/**
 * Reservations: a client holding an inventory unit; reserving locks the unit so exactly one of many wins. A
 * reservation belongs to the user who made it (record scopes): its own `created_by`, never another record's owner, so
 * whether it is in a scope is known from its row alone and the exact totals stay exact per scope.
 */
export const reservationResource = defineResource({
  name: 'reservations',
  module: 'crm',
  label: 'Reservation',
  table: reservations,
  id: reservations.id,
  view: {
    fields: {
      id: reservations.id,
      inventory: {
        id: inventoryUnits.id, inventory_code: inventoryUnits.inventory_code, block: inventoryUnits.block, lot: inventoryUnits.lot,
        house_model: inventoryUnits.house_model, price: inventoryUnits.price,
      },
      project_name: reservations.project_name, client_name: reservations.client_name, contact_number: reservations.contact_number,
      email: reservations.email, reservation_date: reservations.reservation_date, status: reservations.status,
      payment_status: reservations.payment_status, notes: reservations.notes, created_by: userRefFields, created_at: reservations.created_at,
      lead_id: reservations.lead_id,
    },
    joins: (query) => query.leftJoin(inventoryUnits, eq(inventoryUnits.id, reservations.inventory_id)).leftJoin(users, eq(users.id, reservations.created_by)),
  },
  list: {
    sortable: { created_at: reservations.created_at, reservation_date: reservations.reservation_date, client_name: reservations.client_name },
    defaultSort: 'created_at',
    filters: {
      status: anyOf(reservations.status, StringEnum(RESERVATION_STATUSES)),
      payment_status: anyOf(reservations.payment_status, StringEnum(PAYMENT_STATUSES)),
      project_name: equals(reservations.project_name, Type.String({ maxLength: 500 })),
      lead_id: equals(reservations.lead_id, Uuid()),
    },
    search: [reservations.client_name, reservations.email],
    ranges: { created: reservations.created_at, reservation_date: reservations.reservation_date },
  },
  export: {},
  ownership: [reservations.created_by],
  references: () => ({ lead_id: leadResource }),
});
