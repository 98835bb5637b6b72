import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import { recordScope } from '../../auth/guard.js';
import { anyOf, equals } from '../../data/filters.js';
import { findOne } from '../../data/list.js';
import { audited, createAudited } from '../../data/mutations.js';
import { clock } from '../../clock.js';
import { defineResource } from '../../data/resource.js';
import { ACTIVITY_KINDS, CALL_OUTCOMES, crmActivities, users } from '../../db/schema/index.js';
import { forbidden, validationError } from '../../errors.js';
import { listQuerySchema } from '../../http/list-query.js';
import { named } from '../../http/openapi.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Created, errorResponses, IdParams, Nullable, Paginated, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, TimestampInput, Uuid } from '../../http/schemas.js';
import { actorOf } from '../../http/actor.js';
import { leadResource } from './lead-resource.js';
import { CONTACT_KINDS, recordFirstContact } from './lead-flow/first-contact.js';
import { noticeMentions } from './notices.js';
import { UserRef, userRefFields } from './shared.js';

/**
 * Activities: what happened with a lead, written by staff: a note, a call and its outcome, an e-mail, a
 * meeting or a site visit with its time and place. Each keeps its author; only the author may change or delete it
 * (administrators included: what someone wrote stays theirs). Audited, and emitted as `lead_activity.*` webhook events.
 */
export const activityResource = defineResource({
  name: 'activities',
  module: 'crm',
  label: 'Lead activity',
  table: crmActivities,
  id: crmActivities.id,
  view: {
    fields: {
      id: crmActivities.id, lead_id: crmActivities.lead_id, kind: crmActivities.kind, body: crmActivities.body, outcome: crmActivities.outcome,
      place: crmActivities.place, occurred_at: crmActivities.occurred_at, author: userRefFields, created_at: crmActivities.created_at,
      updated_at: crmActivities.updated_at,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, crmActivities.author_id)),
  },
  list: {
    sortable: { created_at: crmActivities.created_at, occurred_at: crmActivities.occurred_at },
    defaultSort: 'created_at',
    filters: {
      lead_id: equals(crmActivities.lead_id, Uuid()),
      kind: anyOf(crmActivities.kind, StringEnum(ACTIVITY_KINDS)),
      author_id: equals(crmActivities.author_id, Uuid()),
    },
    ranges: { created: crmActivities.created_at, occurred: crmActivities.occurred_at },
    search: [crmActivities.body, crmActivities.place],
  },
  export: {},
  // Record scopes: an activity is seen with its lead, and by its author's scope (a note written on a lead
  // since handed to someone else stays its author's).
  ownership: [crmActivities.author_id],
  ownershipThrough: { column: crmActivities.lead_id, parent: leadResource },
  references: () => ({ lead_id: leadResource }),
});

type ActivityRow = typeof crmActivities.$inferSelect;

export const Activity = Strict({
  id: Uuid(),
  lead_id: Nullable(Uuid({ description: 'Its lead; null to a reader whose record scope does not reach the lead (a note they wrote on a lead since handed to someone else)' })),
  kind: StringEnum(ACTIVITY_KINDS),
  body: Nullable(Type.String()),
  outcome: Nullable(StringEnum(CALL_OUTCOMES)),
  place: Nullable(Type.String()),
  occurred_at: Timestamp({ description: 'When it happened; for a meeting or site visit, when it takes place' }),
  author: UserRef,
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

const Fields = {
  body: Type.Optional(Nullable(Text({ minLength: 1, description: 'What was said or done; required for a note' }))),
  outcome: Type.Optional(Nullable(StringEnum(CALL_OUTCOMES, { description: 'A call\'s outcome (calls only, required for them)' }))),
  place: Type.Optional(Nullable(RequiredText({ description: 'Where a meeting or site visit takes place (those only, required for them)' }))),
  occurred_at: Type.Optional(TimestampInput({ description: 'When it happened (default: now); required for a meeting or site visit' })),
};
export const ActivityInput = Strict({ kind: StringEnum(ACTIVITY_KINDS), ...Fields });
const ActivityPatch = PartialStrict(Strict(Fields));
type Fields = { kind: ActivityRow['kind']; body?: string | null; outcome?: ActivityRow['outcome']; place?: string | null; occurred_at?: string | Date };

/** What each kind needs and allows (400 naming the field): a note's body, a call's outcome, a meeting's time and place. */
function assertKind(activity: Fields, sent: { occurred_at?: unknown }) {
  const details: Record<string, string> = {};
  const timed = activity.kind === 'meeting' || activity.kind === 'site_visit';
  if (activity.kind === 'note' && !activity.body) details.body = 'a note needs a body';
  if (activity.kind === 'call' && !activity.outcome) details.outcome = `a call needs an outcome: ${CALL_OUTCOMES.join(', ')}`;
  if (activity.kind !== 'call' && activity.outcome) details.outcome = 'only a call has an outcome';
  if (timed && !activity.place) details.place = `a ${activity.kind.replace('_', ' ')} needs a place`;
  if (timed && sent.occurred_at === undefined) details.occurred_at = `a ${activity.kind.replace('_', ' ')} needs its time`;
  if (!timed && activity.place) details.place = 'only a meeting or a site visit has a place';
  if (Object.keys(details).length) throw validationError(details);
}

const withTime = <T extends { occurred_at?: string }>(body: T) =>
  (body.occurred_at === undefined ? body : { ...body, occurred_at: new Date(body.occurred_at) }) as Omit<T, 'occurred_at'> & { occurred_at?: Date };

/** Only the author changes or deletes an activity (403 for anyone else, administrators too). */
function assertAuthor(current: ActivityRow, userId: string | null) {
  if (!userId || current.author_id !== userId) throw forbidden('Only the author of an activity can change or delete it');
}

const ActivityPage = named('LeadActivityPage', Paginated(Activity));

export default async function activityRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, activityResource, {
    path: '/api/crm/activities',
    Item: Activity,
    update: {
      body: ActivityPatch,
      summary: 'Update an activity (its author only)',
      values: (body, current, work) => {
        assertAuthor(current, work.actor.userId);
        const patch = withTime(body);
        assertKind({ ...current, ...patch }, { occurred_at: patch.occurred_at ?? current.occurred_at });
        return patch;
      },
    },
    remove: { summary: 'Delete an activity (its author only)', before: (current, work) => assertAuthor(current, work.actor.userId) },
  });

  /** The lead of a nested route, or 404 (outside the caller's record scope too). */
  const leadOf = async (request: Parameters<typeof actorOf>[1], id: string) => findOne(db, leadResource, id, await recordScope(app, request, leadResource));

  app.get('/api/crm/leads/:id/activities', {
    schema: {
      operationId: 'listLeadActivitiesOfLead', summary: 'The activities of a lead (paged, filters as the activities list)', params: IdParams,
      querystring: listQuerySchema(activityResource, { hiddenFilters: ['lead_id'] }), response: { 200: ActivityPage, ...errorResponses },
    },
  }, async (request) => {
    await leadOf(request, request.params.id);
    return app.lists.page(activityResource, { ...(request.query as Record<string, unknown>), lead_id: request.params.id });
  });

  app.post('/api/crm/leads/:id/activities', {
    schema: {
      operationId: 'createLeadActivity', summary: 'Write an activity on a lead: a note, a call, an e-mail, a meeting or a site visit', params: IdParams,
      body: named('LeadActivityCreate', ActivityInput), response: { 201: Created, ...errorResponses }, 'x-answer-message': 'Lead activity created',
    },
  }, async (request, reply) => {
    const body = request.body as typeof ActivityInput.static;
    assertKind(body, body);
    await leadOf(request, request.params.id);
    const actor = await actorOf(app, request);
    const values = { ...withTime(body), lead_id: request.params.id, author_id: actor.userId };
    // A call, e-mail, meeting or site visit may be the lead's first contact: recorded in the same transaction.
    const row = CONTACT_KINDS.includes(body.kind)
      ? await audited(db, actor, async (work) => {
        const created = await work.create(activityResource, values);
        await recordFirstContact(work, created.lead_id, created, clock.now());
        return created;
      })
      : await createAudited(db, actor, activityResource, values);
    if (row.kind === 'note') noticeMentions(app, { body: row.body, leadId: request.params.id, authorId: actor.userId });
    return reply.code(201).send({ id: row.id, message: 'Lead activity created' });
  });
}
