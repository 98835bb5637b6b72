import { type TSchema, Type } from '@sinclair/typebox';
import { type SQL, sql } from 'drizzle-orm';
import type { App } from '../../types.js';
import { recordScope } from '../../auth/guard.js';
import { several } from '../../data/filters.js';
import { findOne } from '../../data/list.js';
import { SharedReads } from '../../data/shared-reads.js';
import { ACTIVITY_KINDS, CALL_OUTCOMES, LEAD_SOURCES, LEAD_STATUSES } from '../../db/schema/index.js';
import { named } from '../../http/openapi.js';
import { errorResponses, IdParams, Nullable, Pagination, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { executePrepared } from '../../db/prepared.js';
import { rowsOf } from '../../webhooks/record.js';
import { inquiryResource } from './inquiries.js';
import { KeptTimelines } from './kept-timelines.js';
import { leadResource } from './lead-resource.js';
import { reservationResource } from './reservation-resource.js';
import { taskResource } from './tasks.js';
import { UserRef } from './shared.js';
import { ASSIGNED_HOW } from './lead-flow/routing.js';

/**
 * A lead's timeline: one paged list, newest first, of everything the service knows about the lead — its
 * activities, its creation (and restores from the trash), status changes and assignments (from the audit trail), its reservations, the inquiries and
 * newsletter subscription of its e-mail or phone, the campaign e-mails delivered to its address and its follow-ups done.
 * One statement: each source is read through its own index, newest first and cut at the page's end, then merged; the
 * total is the sum of each source's count.
 */

const Text = Type.String();
const payloads = {
  activity: Strict({ id: Uuid(), kind: StringEnum(ACTIVITY_KINDS), body: Nullable(Text), outcome: Nullable(StringEnum(CALL_OUTCOMES)), place: Nullable(Text) }),
  lead_created: Strict({ status: StringEnum(LEAD_STATUSES), source: StringEnum(LEAD_SOURCES) }),
  lead_restored: Strict({
    status: StringEnum(LEAD_STATUSES), source: StringEnum(LEAD_SOURCES),
    deleted_at: Nullable(Timestamp({ description: 'When the lead had been deleted (null once that log is past its retention)' })),
  }, { description: 'The lead came back from the trash, as it was when deleted' }),
  status_changed: Strict({ from: Nullable(StringEnum(LEAD_STATUSES)), to: StringEnum(LEAD_STATUSES) }),
  assigned: Strict({
    from: UserRef, to: UserRef,
    how: StringEnum(ASSIGNED_HOW, { description: 'By a lead-flow rule, a claim, a fallback (claim time passed, nobody eligible), by hand, or a speed-to-lead reassignment' }),
  }),
  reservation: Strict({ id: Uuid(), status: Text, client_name: Text, project_name: Nullable(Text), inventory_code: Nullable(Text) }),
  inquiry: Strict({ id: Uuid(), subject: Text, status: Text, converted: Type.Boolean({ description: 'This inquiry was turned into this lead' }) }),
  subscribed: Strict({ id: Uuid(), status: Text }),
  unsubscribed: Strict({ id: Uuid(), status: Text }),
  campaign_email: Strict({ campaign_id: Uuid(), name: Text, subject: Text }),
  task_completed: Strict({ id: Uuid(), title: Text, due_at: Timestamp() }),
} satisfies Record<string, TSchema>;
type EntryType = keyof typeof payloads;
export const TIMELINE_TYPES = Object.keys(payloads) as EntryType[];

const Entry = Type.Union(TIMELINE_TYPES.map((type) => named(`Timeline${type.replace(/(^|_)(.)/g, (_m, _s, c: string) => c.toUpperCase())}`, Strict({
  type: Type.Literal(type),
  at: Timestamp({ description: 'When it happened' }),
  actor: UserRef,
  payload: payloads[type],
}))));
const TimelinePage = named('LeadTimelinePage', Strict({ data: Type.Array(Entry), pagination: Pagination }));

const TimelineQuery = Strict({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  type: Type.Optional(several(StringEnum(TIMELINE_TYPES))),
});

/** An instant as the API writes it (UTC, milliseconds, `Z`). */
const iso = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** `{id, name}` of a user id, or null. */
const userRef = (id: SQL) => sql`(select jsonb_build_object('id', u.id, 'name', u.name) from users u where u.id = ${id})`;

type Lead = { id: string; email: string | null; phone: string | null };
/** One source of entries: rows (type, at, ref, actor_id, payload) newest first, and how many there are. */
type Source = { type: EntryType; rows: SQL; count: SQL };

/** The caller's record scope on the related records: each a condition on its table, or none (every record). */
type RelatedScopes = { reservations?: SQL; inquiries?: SQL; tasks?: SQL };
const within = (scope: SQL | undefined) => (scope ? sql` and (${scope})` : sql``);

function sources(lead: Lead, scoped: RelatedScopes = {}): Source[] {
  const id = lead.id;
  const email = lead.email?.toLowerCase() ?? null;
  const digits = lead.phone?.replace(/\D/g, '') || null;
  const logs = (condition: SQL) => sql`from activity_logs l where l.resource = 'leads' and l.resource_id = ${id} and ${condition}`;
  const logged = (type: EntryType, condition: SQL, payload: SQL): Source => ({
    type, rows: sql`select ${type}::text as type, l.created_at as at, l.id as ref, l.user_id as actor_id, ${payload} as payload ${logs(condition)}`,
    count: sql`select count(*) ${logs(condition)}`,
  });
  const inquiry = sql`from inquiries where (inquiries.lead_id = ${id} or inquiries.email = ${email} or regexp_replace(inquiries.phone, '[^0-9]', '', 'g') = ${digits})${within(scoped.inquiries)}`;
  const subscription = sql`from newsletter_subscriptions s where s.email = ${email}`;
  const delivered = sql`from campaign_deliveries d join campaigns c on c.id = d.campaign_id where d.email = ${email} and d.status = 'sent'`;
  return [
    {
      type: 'activity',
      rows: sql`select 'activity'::text as type, a.occurred_at as at, a.id as ref, a.author_id as actor_id,
        jsonb_build_object('id', a.id, 'kind', a.kind, 'body', a.body, 'outcome', a.outcome, 'place', a.place) as payload
        from crm_activities a where a.lead_id = ${id}`,
      count: sql`select count(*) from crm_activities a where a.lead_id = ${id}`,
    },
    // A trash restore writes a create naming the delete it undoes (`restored_from`): a restore, not a second creation.
    logged('lead_created', sql`l.action = 'create' and l.restored_from is null`,
      sql`jsonb_build_object('status', coalesce(l.changes->'after'->>'status', 'new'), 'source', coalesce(l.changes->'after'->>'source', 'website'))`),
    logged('lead_restored', sql`l.action = 'create' and l.restored_from is not null`,
      sql`jsonb_build_object('status', coalesce(l.changes->'after'->>'status', 'new'), 'source', coalesce(l.changes->'after'->>'source', 'website'),
        'deleted_at', (select ${iso(sql`d.created_at`)} from activity_logs d where d.id = l.restored_from))`),
    logged('status_changed', sql`l.action = 'update' and jsonb_exists(l.changes->'after', 'status')`,
      sql`jsonb_build_object('from', l.changes->'before'->>'status', 'to', l.changes->'after'->>'status')`),
    logged('assigned', sql`l.action = 'update' and jsonb_exists(l.changes->'after', 'assigned_to')`,
      sql`jsonb_build_object('from', ${userRef(sql`(l.changes->'before'->>'assigned_to')::uuid`)}, 'to', ${userRef(sql`(l.changes->'after'->>'assigned_to')::uuid`)},
        'how', coalesce(l.changes->'after'->>'assigned_how', 'manual'))`),
    {
      type: 'reservation',
      rows: sql`select 'reservation'::text as type, reservations.created_at as at, reservations.id as ref, reservations.created_by as actor_id,
        jsonb_build_object('id', reservations.id, 'status', reservations.status, 'client_name', reservations.client_name, 'project_name', reservations.project_name,
          'inventory_code', (select i.inventory_code from inventory_units i where i.id = reservations.inventory_id)) as payload
        from reservations where reservations.lead_id = ${id}${within(scoped.reservations)}`,
      count: sql`select count(*) from reservations where reservations.lead_id = ${id}${within(scoped.reservations)}`,
    },
    {
      type: 'inquiry',
      rows: sql`select 'inquiry'::text as type, inquiries.created_at as at, inquiries.id as ref, null::uuid as actor_id,
        jsonb_build_object('id', inquiries.id, 'subject', inquiries.subject, 'status', inquiries.status, 'converted', coalesce(inquiries.lead_id = ${id}, false)) as payload ${inquiry}`,
      count: sql`select count(*) ${inquiry}`,
    },
    {
      type: 'subscribed',
      rows: sql`select 'subscribed'::text as type, s.subscribed_at as at, s.id as ref, null::uuid as actor_id,
        jsonb_build_object('id', s.id, 'status', s.status) as payload ${subscription}`,
      count: sql`select count(*) ${subscription}`,
    },
    {
      type: 'unsubscribed',
      rows: sql`select 'unsubscribed'::text as type, s.unsubscribed_at as at, s.id as ref, null::uuid as actor_id,
        jsonb_build_object('id', s.id, 'status', s.status) as payload ${subscription} and s.unsubscribed_at is not null`,
      count: sql`select count(*) ${subscription} and s.unsubscribed_at is not null`,
    },
    {
      type: 'campaign_email',
      rows: sql`select 'campaign_email'::text as type, d.sent_at as at, d.id as ref, null::uuid as actor_id,
        jsonb_build_object('campaign_id', c.id, 'name', c.name, 'subject', c.subject) as payload ${delivered}`,
      count: sql`select count(*) ${delivered}`,
    },
    {
      type: 'task_completed',
      rows: sql`select 'task_completed'::text as type, crm_tasks.done_at as at, crm_tasks.id as ref, crm_tasks.done_by as actor_id,
        jsonb_build_object('id', crm_tasks.id, 'title', crm_tasks.title, 'due_at', ${iso(sql`crm_tasks.due_at`)}) as payload
        from crm_tasks where crm_tasks.lead_id = ${id} and crm_tasks.done_at is not null${within(scoped.tasks)}`,
      count: sql`select count(*) from crm_tasks where crm_tasks.lead_id = ${id} and crm_tasks.done_at is not null${within(scoped.tasks)}`,
    },
  ];
}

/**
 * One page of a lead's timeline and its exact total, in one statement. Each source gives at most the rows up to the
 * page's end (its newest, by its index), so a deep page costs what it skips and never the whole history.
 */
async function timelinePage(app: App, lead: Lead, query: { page?: number; limit?: number; type?: EntryType[] }, scoped: RelatedScopes = {}) {
  const page = query.page ?? 1;
  const limit = query.limit ?? 20;
  const wanted = sources(lead, scoped).filter((source) => !query.type || query.type.includes(source.type));
  const end = page * limit;
  const branches = sql.join(wanted.map((source) => sql`(${source.rows} order by at desc, ref desc limit ${end})`), sql` union all `);
  const total = sql.join(wanted.map((source) => sql`(${source.count})`), sql` + `);
  const statement = sql`with entries as (${branches}),
    page as (select * from entries order by at desc, ref desc, type desc limit ${limit} offset ${end - limit})
    select pg_current_snapshot()::text as snapshot, (${total})::int as total, coalesce((
      select jsonb_agg(jsonb_build_object('type', p.type, 'at', ${iso(sql`p.at`)}, 'actor', ${userRef(sql`p.actor_id`)}, 'payload', p.payload)
        order by p.at desc, p.ref desc, p.type desc)
      from page p), '[]'::jsonb) as data`;
  // Prepared: its text is one of a few (the caller's scope and the types asked for), and planning eleven branches
  // cost several times what running them does (5 ms against 1–2 on a lead with 300 notes).
  const [row] = rowsOf<{ snapshot: string; total: number; data: unknown }>(await executePrepared(app.database.db, statement));
  const data = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
  const count = Number(row.total);
  return { snapshot: row.snapshot, body: { data: data as (typeof TimelinePage.static)['data'], pagination: { page, limit, total: count, totalPages: Math.ceil(count / limit) } } };
}

export default async function timelineRoutes(app: App) {
  const { db } = app.database;
  const keptTimelines = new KeptTimelines<typeof TimelinePage.static>(db);
  const pageReads = new SharedReads<typeof TimelinePage.static>();
  app.get('/api/crm/leads/:id/timeline', {
    schema: {
      operationId: 'getLeadTimeline',
      summary: 'Everything known about a lead, newest first, paged',
      description: 'Merges the lead\'s activities; its creation, restores from the trash, status changes and assignments (audit trail); reservations made for it; '
        + 'inquiries and the newsletter subscription of its e-mail (or, for inquiries, its phone, compared by digits); campaign e-mails '
        + 'delivered to its address; and its follow-ups marked done. `type` narrows it to some kinds of entries. Each entry: `type`, `at`, '
        + '`actor` (who did it, where known) and a `payload` whose shape its type gives.',
      params: IdParams, querystring: TimelineQuery, response: { 200: TimelinePage, ...errorResponses },
    },
  }, async (request) => {
    const query = request.query as { page?: number; limit?: number; type?: EntryType[] };
    const leadSeen = await recordScope(app, request, leadResource);
    // Reservations, inquiries and follow-ups of this person that the caller's scope does not show stay off it too.
    const [reservationsSeen, inquiriesSeen, tasksSeen] = await Promise.all([reservationResource, inquiryResource, taskResource].map((resource) => recordScope(app, request, resource)));
    // Callers whose scopes are alike read the same page: the scopes are part of the key.
    const key = JSON.stringify([request.params.id, ...[leadSeen, reservationsSeen, inquiriesSeen, tasksSeen].map((seen) => seen.scopeKey ?? ''),
      query.page ?? 1, query.limit ?? 20, query.type ?? null]);
    const kept = await keptTimelines.get(key, request.params.id);
    if (kept) return kept;
    // Requests for a page not kept share its reading: a burst of callers opening one lead (fifty at once after a
    // start, each with the page's eleven sources) read it once, not once each; those who came while it was read
    // take it kept, if nothing changed meanwhile.
    return pageReads.read(key, async () => {
      const keptSince = await keptTimelines.get(key, request.params.id);
      if (keptSince) return keptSince;
      const lead = await findOne<Lead>(db, leadResource, request.params.id, leadSeen);
      const { snapshot, body } = await timelinePage(app, lead, query,
        { reservations: reservationsSeen.scope?.sql, inquiries: inquiriesSeen.scope?.sql, tasks: tasksSeen.scope?.sql });
      keptTimelines.keep(key, snapshot, body);
      return body;
    });
  });
}
