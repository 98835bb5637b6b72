import { CALL_NOTES, EMAIL_NOTES, FIRST_NAMES, LAST_NAMES, MEETING_PLACES, FOLLOW_UPS, type DemoProject } from './content.js';
import { at } from './at.js';
import type { SeedContext, Seeded } from './seed.js';

/** Leads of the months before the rest of the demo, so the sales reports have half a year to show. */
export const HISTORY_SIZE = { leads: 90 };
const DAY = 24 * 3600 * 1000;
/** The history's leads arrived between these many days ago (the rest of the demo's come after). */
const OLDEST_DAYS = 180;
const NEWEST_DAYS = 80;

type Unit = { id: string; project: DemoProject & { id: string } };

/**
 * Half a year of sales work for the reports: leads arriving 80 to 180 days ago, each worked on over the following weeks
 * (a first call, an e-mail, site visits, follow-ups done), contacted, qualified, lost or converted when it happened,
 * and the converted ones reserving a unit still on sale, most of which were paid and sold a few weeks later, one
 * cancelled. Every record through the API at the time it happened, so each report has months to show.
 */
export async function seedHistory(ctx: SeedContext, made: { units: Unit[]; sales: string[] }, seeded: Seeded) {
  const { random, api } = ctx;
  const ago = (days: number) => new Date(Date.now() - days * DAY);
  const after = (from: Date, days: number) => new Date(from.getTime() + days * DAY);
  const available = new Set((await api.get<{ data: { id: string }[] }>('/api/crm/inventory?status=available&limit=100')).data.map((unit) => unit.id));
  const onSale = made.units.filter((unit) => available.has(unit.id) && unit.project.status !== 'on-hold');
  let leads = 0;
  let activities = 0;
  let reserved = 0;
  let sold = 0;
  for (let i = 0; i < HISTORY_SIZE.leads; i++) {
    const arrived = ago(NEWEST_DAYS + (OLDEST_DAYS - NEWEST_DAYS) * random.next());
    const project = random.pick(made.units).project;
    const first = random.pick(FIRST_NAMES);
    const last = random.pick(LAST_NAMES);
    const assignee = random.weighted([[ctx.adminId, 2], [random.pick(made.sales), 3]] as const);
    const { id } = await at(arrived, () => api.post('/api/crm/leads', {
      first_name: first, last_name: last, phone: `+63 917 ${String(100_0000 + i * 7919).slice(0, 3)} ${String(1000 + i).padStart(4, '0')}`,
      email: `${first}.${last}.${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, ''),
      source: random.weighted([['website', 40], ['referral', 20], ['event', 15], ['social', 25]] as const),
      interest: random.pick(project.interests), assigned_to: assignee,
    }));
    leads++;
    const log = async (when: Date, body: Record<string, unknown>) => {
      await at(when, () => api.post(`/api/crm/leads/${id}/activities`, { ...body, occurred_at: when.toISOString() }));
      activities++;
    };
    const move = (when: Date, status: string) => at(when, () => api.patch(`/api/crm/leads/${id}`, { status }));
    // A quarter never answer and are let go; the rest are contacted within days.
    const called = after(arrived, random.between(0.02, 3));
    if (random.chance(0.25)) {
      await log(called, { kind: 'call', outcome: random.pick(['no_answer', 'voicemail', 'busy'] as const), body: 'No luck reaching them.' });
      if (random.chance(0.6)) await move(after(called, random.between(5, 15)), 'lost');
      continue;
    }
    await log(called, { kind: 'call', outcome: 'answered', body: random.pick(CALL_NOTES.answered) });
    await move(called, 'contacted');
    await log(after(called, 0.1), { kind: 'email', body: random.pick(EMAIL_NOTES) });
    if (random.chance(0.45)) {
      if (random.chance(0.3)) await move(after(called, random.between(7, 20)), 'lost');
      continue;
    }
    const visit = after(called, random.between(2, 10));
    await log(visit, { kind: random.chance(0.6) ? 'site_visit' : 'meeting', place: random.pick(MEETING_PLACES), body: 'Walked through the model units and the payment terms.' });
    const followUp = await at(called, () => api.post('/api/crm/tasks', { title: random.pick(FOLLOW_UPS), due_at: after(called, 2).toISOString(), lead_id: id, assigned_to: assignee }));
    await at(after(called, random.between(0.5, 2.5)), () => api.patch(`/api/crm/tasks/${followUp.id}`, { done: true }));
    await move(visit, 'qualified');
    if (!onSale.length || random.chance(0.4)) continue;
    // Converted: a reservation of a unit of the project they came for (else any on sale), and mostly a sale weeks later.
    const unit = onSale.find((u) => u.project.id === project.id) ?? onSale[0];
    onSale.splice(onSale.indexOf(unit), 1);
    const reservedAt = after(visit, random.between(3, 20));
    await move(reservedAt, 'converted');
    const reservation = await at(reservedAt, () => api.post('/api/crm/reservations', {
      inventory_id: unit.id, client_name: `${first} ${last}`, email: `${first}.${last}.${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, ''),
      reservation_date: reservedAt.toISOString(), lead_id: id,
    }));
    reserved++;
    const decided = after(reservedAt, random.between(10, 30));
    if (reserved % 5 === 0) {
      await at(decided, () => api.patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled', notes: 'Financing fell through.' }));
      onSale.push(unit);
    } else if (random.chance(0.75)) {
      await at(decided, () => api.patch(`/api/crm/reservations/${reservation.id}`, { status: 'confirmed', payment_status: 'paid' }));
      await at(after(decided, 1), () => api.patch('/api/projects/inventory', { inventory_id: unit.id, sold_to: reservation.id, status: 'sold' }));
      sold++;
    } else {
      await at(decided, () => api.patch(`/api/crm/reservations/${reservation.id}`, { status: 'confirmed', payment_status: 'partial' }));
    }
  }
  seeded['history leads'] = leads;
  seeded['history activities'] = activities;
  seeded['history reservations'] = reserved;
  seeded['history sales'] = sold;
}
