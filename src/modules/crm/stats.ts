import { type TSchema, Type } from '@sinclair/typebox';
import { asc, desc, eq, sql } from 'drizzle-orm';
import type { App } from '../../types.js';
import { clock } from '../../clock.js';
import { byValue, countsBy, dayCount, daysBetween, perValue, shiftDay } from '../../data/stats.js';
import { campaigns, INQUIRY_STATUSES, inventoryUnits, LEAD_SOURCES, LEAD_STATUSES, projects, RESERVATION_STATUSES, SUBSCRIPTION_STATUSES, UNIT_STATUSES } from '../../db/schema/index.js';
import { validationError } from '../../errors.js';
import { recordScope } from '../../auth/guard.js';
import { errorResponses, Strict, Timestamp, Uuid } from '../../http/schemas.js';
import { deliveryCounts, Deliveries } from './campaigns.js';
import { inquiryResource } from './inquiries.js';
import { leadResource } from './lead-resource.js';
import { newsletterResource } from './newsletters.js';
import { reservationResource } from './reservation-resource.js';
import { named } from '../../http/openapi.js';

/** The longest range `new_per_day` covers: a year, one figure per day. */
const MAX_DAYS = 366;
const RECENT_CAMPAIGNS = 5;
/** Inquiries someone still has to deal with. */
const OPEN_INQUIRIES = ['unread', 'read'] as const;

const Count = () => Type.Integer({ minimum: 0 });
const CountsOf = (values: readonly string[]) => Strict(Object.fromEntries(values.map((value) => [value, Count()])) as Record<string, TSchema>);
const Day = () => Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

const StatsQuery = Strict({
  from: Type.Optional(Day()),
  to: Type.Optional(Day()),
}, { description: 'The range of new_per_day and new_in_range, inclusive (UTC days); default: the last 30 days up to today (`to` defaults to today, `from` to 29 days before `to`, never before 0001-01-01)' });

const CrmStats = Strict({
  range: Strict({ from: Day(), to: Day() }),
  leads: Strict({
    total: Count(),
    new_in_range: Count(),
    by_status: CountsOf(LEAD_STATUSES),
    by_source: CountsOf(LEAD_SOURCES),
    new_per_day: Type.Array(Strict({ day: Day(), count: Count() })),
  }),
  inventory: Strict({
    total: Count(),
    by_status: CountsOf(UNIT_STATUSES),
    by_project: Type.Array(Strict({ project: Strict({ id: Uuid(), name: Type.String() }), total: Count(), by_status: CountsOf(UNIT_STATUSES) })),
  }),
  reservations: Strict({ by_status: CountsOf(RESERVATION_STATUSES) }),
  inquiries: Strict({ open: Count(), by_status: CountsOf(INQUIRY_STATUSES) }),
  newsletter: Strict({ by_status: CountsOf(SUBSCRIPTION_STATUSES) }),
  recent_campaigns: Type.Array(Strict({
    id: Uuid(), name: Type.String(), status: Type.String(), scheduled_at: Type.Union([Timestamp(), Type.Null()]), sent_at: Type.Union([Timestamp(), Type.Null()]),
    deliveries: Deliveries,
  })),
}, {
  description: 'Every figure is exact at the time of the request',
  examples: [{
    range: { from: '2026-03-01', to: '2026-03-02' },
    leads: {
      total: 1200, new_in_range: 35,
      by_status: { new: 400, contacted: 300, qualified: 200, converted: 150, lost: 150 },
      by_source: { website: 700, referral: 250, event: 150, social: 100 },
      new_per_day: [{ day: '2026-03-01', count: 20 }, { day: '2026-03-02', count: 15 }],
    },
    inventory: {
      total: 120, by_status: { available: 80, reserved: 25, sold: 15 },
      by_project: [{ project: { id: '019a0000-0000-7000-8000-000000000001', name: 'Alpha Homes' }, total: 120, by_status: { available: 80, reserved: 25, sold: 15 } }],
    },
    reservations: { by_status: { pending: 12, confirmed: 25, cancelled: 3 } },
    inquiries: { open: 9, by_status: { unread: 6, read: 3, responded: 40, closed: 12 } },
    newsletter: { by_status: { subscribed: 860, unsubscribed: 40 } },
    recent_campaigns: [{ id: '019a0000-0000-7000-8000-000000000002', name: 'Spring launch', status: 'sent', scheduled_at: null, sent_at: '2026-03-01T09:00:00.000Z', deliveries: { total: 860, sent: 850, failed: 2, pending: 8 } }],
  }],
});

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const today = () => clock.now().toISOString().slice(0, 10);

/** The crm dashboard in one request, guarded by crm read like every crm route. */
export default async function crmStatsRoutes(app: App) {
  const { db } = app.database;
  const { lists } = app;

  app.get('/api/crm/stats', {
    schema: {
      summary: 'Figures for the crm dashboard',
      description: 'Leads by status and source, new leads per day over a range, units by status per project, reservations by status, '
        + 'open inquiries, subscribers and the last campaigns\' delivery progress. Totals are exact and kept up to date from the change log, so a '
        + 'dashboard may poll this.',
      querystring: StatsQuery, response: { 200: named('CrmStats', CrmStats), ...errorResponses },
    },
  }, async (request) => {
    const to = request.query.to ?? today();
    // The default start is computed from the end: never before the first day PostgreSQL stores (`to=0001-01-01`).
    const from = request.query.from ?? shiftDay(to, -29);
    if (from > to) throw validationError({ from: request.query.to === undefined ? `must not be after to (default: today, ${to})` : 'must not be after to' });
    // Measured before the days are listed: years 1 to 9999 would be 3.65 million of them, built only to be refused.
    if (dayCount(from, to) > MAX_DAYS) throw validationError({ from: `must be at most ${MAX_DAYS} days before to` });
    const days = daysBetween(from, to);

    // Every lead figure from one read of the change log.
    const leadQueries = [
      {}, { created_from: from, created_to: to }, ...days.map((day) => ({ created_from: day, created_to: day })),
      ...perValue('status', LEAD_STATUSES), ...perValue('source', LEAD_SOURCES),
    ];
    // Leads, reservations and inquiries as the caller's record scope sees them; units, subscribers and campaigns are everyone's.
    const [leadScope, reservationScope, inquiryScope] = await Promise.all([leadResource, reservationResource, inquiryResource].map((resource) => recordScope(app, request, resource)));
    const [leadTotals, unitsByProject, reservationsByStatus, inquiriesByStatus, subscribersByStatus, recent] = await Promise.all([
      lists.totalsOf(leadResource, leadQueries, leadScope),
      // Units are few per project (thousands, not millions): one grouped count serves every project.
      db.select({ id: projects.id, name: projects.name, status: inventoryUnits.status, count: sql<number>`count(*)::int` })
        .from(inventoryUnits).innerJoin(projects, eq(projects.id, inventoryUnits.project_id))
        .groupBy(projects.id, projects.name, inventoryUnits.status).orderBy(asc(projects.name), asc(projects.id)),
      lists.totalsOf(reservationResource, perValue('status', RESERVATION_STATUSES), reservationScope).then((counts) => byValue(RESERVATION_STATUSES, counts)),
      lists.totalsOf(inquiryResource, perValue('status', INQUIRY_STATUSES), inquiryScope).then((counts) => byValue(INQUIRY_STATUSES, counts)),
      countsBy(lists, newsletterResource, 'status', SUBSCRIPTION_STATUSES),
      db.select({ id: campaigns.id, name: campaigns.name, status: campaigns.status, scheduled_at: campaigns.scheduled_at, sent_at: campaigns.sent_at })
        .from(campaigns).orderBy(desc(campaigns.created_at), desc(campaigns.id)).limit(RECENT_CAMPAIGNS),
    ]);
    const [total, newInRange, ...rest] = leadTotals;
    const perDay = rest.slice(0, days.length);
    const leadsByStatus = byValue(LEAD_STATUSES, rest.slice(days.length, days.length + LEAD_STATUSES.length));
    const leadsBySource = byValue(LEAD_SOURCES, rest.slice(days.length + LEAD_STATUSES.length));

    const byProject = new Map<string, { project: { id: string; name: string }; total: number; by_status: Record<string, number> }>();
    const unitsByStatus = Object.fromEntries(UNIT_STATUSES.map((status) => [status, 0])) as Record<string, number>;
    for (const row of unitsByProject) {
      let entry = byProject.get(row.id);
      if (!entry) byProject.set(row.id, (entry = { project: { id: row.id, name: row.name }, total: 0, by_status: Object.fromEntries(UNIT_STATUSES.map((status) => [status, 0])) }));
      entry.by_status[row.status] = row.count;
      entry.total += row.count;
      unitsByStatus[row.status] += row.count;
    }
    const deliveries = await deliveryCounts(db, recent.map((campaign) => campaign.id));

    return {
      range: { from, to },
      leads: { total, new_in_range: newInRange, by_status: leadsByStatus, by_source: leadsBySource, new_per_day: days.map((day, i) => ({ day, count: perDay[i] })) },
      inventory: { total: sum(unitsByStatus), by_status: unitsByStatus, by_project: [...byProject.values()] },
      reservations: { by_status: reservationsByStatus },
      inquiries: { open: OPEN_INQUIRIES.reduce((n, status) => n + inquiriesByStatus[status], 0), by_status: inquiriesByStatus },
      newsletter: { by_status: subscribersByStatus },
      recent_campaigns: recent.map((campaign) => ({ ...campaign, deliveries: deliveries.get(campaign.id)! })),
    };
  });
}
