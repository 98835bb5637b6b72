import { Type } from '@sinclair/typebox';
import { and, asc, count, eq, gte, inArray, isNull, lt, notInArray, or, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { currentPrincipal, recordScope } from '../../../auth/guard.js';
import { clock } from '../../../clock.js';
import { crmActivities, LEAD_GROUP_KINDS, LEAD_SOURCES, leadGroupMembers, leadGroups, leadRouting, leads } from '../../../db/schema/index.js';
import { named } from '../../../http/openapi.js';
import { errorResponses, Nullable, Strict, StringEnum, Timestamp, Uuid } from '../../../http/schemas.js';
import { leadResource } from '../lead-resource.js';
import { localDay, Task, taskResource } from '../tasks.js';

/**
 * My day: what the signed-in user has to do now, on one page: leads waiting in their groups to be claimed, their leads
 * nobody has contacted yet, their overdue and today's follow-ups, and today's site visits. Their own items only, each
 * read with their record scope; each list at most LIMIT items, most urgent first, with its full count beside it.
 */

const LIMIT = 50;

const LeadSummary = named('MyDayLead', Strict({
  id: Uuid(), first_name: Type.String(), last_name: Type.String(), source: StringEnum(LEAD_SOURCES), interest: Nullable(Type.String()),
}));
const Pool = Strict({ id: Uuid(), name: Type.String(), kind: StringEnum(LEAD_GROUP_KINDS) });

const MyDay = named('MyDay', Strict({
  to_claim: Type.Array(Strict({ lead: LeadSummary, pool: Pool, claim_deadline: Nullable(Timestamp({ description: 'A first-to-claim group\'s deadline; null in a pond' })) }), {
    description: 'Leads waiting in your groups (first to claim, ponds), the first deadline first',
  }),
  not_contacted: Type.Array(Strict({
    lead: LeadSummary, assigned_at: Nullable(Timestamp()), speed_due_at: Nullable(Timestamp({ description: 'When its speed-to-lead limit passes (null: no limit)' })),
    minutes_waiting: Type.Integer({ description: 'Minutes since it was assigned to you' }),
  }), { description: 'Your leads still open that nobody has called, e-mailed or met yet, the most urgent first' }),
  overdue: Type.Array(Task, { description: 'Your open follow-ups due before now, the oldest first' }),
  today: Type.Array(Task, { description: 'Your open follow-ups due from now to the end of the day (TASK_TIME_ZONE)' }),
  site_visits: Type.Array(Strict({ id: Uuid(), lead: LeadSummary, occurred_at: Timestamp(), place: Nullable(Type.String()) }), {
    description: 'Today\'s site visits on your leads or logged by you, in time order',
  }),
  counts: Strict({
    to_claim: Type.Integer(), not_contacted: Type.Integer(), overdue: Type.Integer(), today: Type.Integer(), site_visits: Type.Integer(),
  }, { description: 'Each list\'s full length (the lists show at most 50)' }),
}));

const leadFields = { id: leads.id, first_name: leads.first_name, last_name: leads.last_name, source: leads.source, interest: leads.interest };

export default async function myDayRoutes(app: App) {
  const { db } = app.database;
  app.get('/api/crm/my-day', {
    schema: { operationId: 'getMyDay', summary: 'What you have to do today: leads to claim, leads to contact, follow-ups, site visits', querystring: Strict({}), response: { 200: MyDay, ...errorResponses } },
  }, async (request) => {
    const me = (await currentPrincipal(app, request)).user.id;
    const now = clock.now();
    const day = localDay(now, app.config.taskTimeZone);
    const leadScope = (await recordScope(app, request, leadResource)).scope?.sql;

    const myPools = db.select({ id: leadGroupMembers.group_id }).from(leadGroupMembers).where(eq(leadGroupMembers.user_id, me));
    const claimable = and(isNull(leads.assigned_to), inArray(leads.pool_id, myPools), leadScope);
    const toClaim = db.select({ lead: leadFields, pool: { id: leadGroups.id, name: leadGroups.name, kind: leadGroups.kind }, claim_deadline: leadRouting.claim_deadline })
      .from(leads).innerJoin(leadGroups, eq(leadGroups.id, leads.pool_id)).leftJoin(leadRouting, eq(leadRouting.lead_id, leads.id))
      .where(claimable).orderBy(sql`${leadRouting.claim_deadline} asc nulls last`, asc(leads.created_at), asc(leads.id)).limit(LIMIT);
    const toClaimCount = db.select({ n: count() }).from(leads).where(claimable);

    const waiting = and(eq(leads.assigned_to, me), isNull(leadRouting.first_contact_at), notInArray(leads.status, ['converted', 'lost']), leadScope);
    const notContacted = db.select({ lead: leadFields, assigned_at: leadRouting.assigned_at, speed_due_at: leadRouting.speed_due_at, created_at: leads.created_at })
      .from(leads).innerJoin(leadRouting, eq(leadRouting.lead_id, leads.id)).where(waiting)
      .orderBy(sql`${leadRouting.speed_due_at} asc nulls last`, sql`${leadRouting.assigned_at} asc nulls last`, asc(leads.id)).limit(LIMIT);
    const notContactedCount = db.select({ n: count() }).from(leads).innerJoin(leadRouting, eq(leadRouting.lead_id, leads.id)).where(waiting);

    const taskScope = await recordScope(app, request, taskResource);
    const tasks = (bounds: Record<string, string>) => app.lists.page<typeof Task.static>(taskResource, { mine_of: me, open: false, ...bounds, sort: 'due_at', order: 'asc', limit: LIMIT }, taskScope);

    const visits = and(eq(crmActivities.kind, 'site_visit'), gte(crmActivities.occurred_at, day.start), lt(crmActivities.occurred_at, day.end),
      or(eq(leads.assigned_to, me), eq(crmActivities.author_id, me)), leadScope);
    const siteVisits = db.select({ id: crmActivities.id, lead: leadFields, occurred_at: crmActivities.occurred_at, place: crmActivities.place })
      .from(crmActivities).innerJoin(leads, eq(leads.id, crmActivities.lead_id)).where(visits).orderBy(asc(crmActivities.occurred_at), asc(crmActivities.id)).limit(LIMIT);
    const siteVisitCount = db.select({ n: count() }).from(crmActivities).innerJoin(leads, eq(leads.id, crmActivities.lead_id)).where(visits);

    const [claim, [claimN], contact, [contactN], overdue, today, visit, [visitN]] = await Promise.all([
      toClaim, toClaimCount, notContacted, notContactedCount,
      tasks({ due_before: now.toISOString() }), tasks({ due_after: now.toISOString(), due_before: day.end.toISOString() }),
      siteVisits, siteVisitCount,
    ]);
    return {
      to_claim: claim,
      not_contacted: contact.map(({ created_at, ...row }) => ({
        ...row, minutes_waiting: Math.max(0, Math.floor((now.getTime() - (row.assigned_at ?? created_at).getTime()) / 60_000)),
      })),
      overdue: overdue.data,
      today: today.data,
      site_visits: visit,
      counts: {
        to_claim: Number(claimN.n), not_contacted: Number(contactN.n), overdue: overdue.pagination.total, today: today.pagination.total, site_visits: Number(visitN.n),
      },
    };
  });
}
