import { Type } from '@sinclair/typebox';
import { eq, sql } from 'drizzle-orm';
import type { App } from '../../app.js';
import { currentPrincipal } from '../../auth/guard.js';
import { CAMPAIGN_STATUSES, campaignDeliveries, campaigns, users } from '../../db/schema/index.js';
import { type Collection, createRecord, deleteRecord, findOne, updateRecord } from '../../http/crud.js';
import { conflict, validationError } from '../../http/errors.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { Created, Email, errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, TimestampInput, Uuid } from '../../http/schemas.js';
import { enqueueDelivery, enqueueScheduled } from './delivery.js';
import { UserRef, userRefFields } from './shared.js';

const collection: Collection = { table: campaigns, id: campaigns.id, module: 'crm', resource: 'campaigns', label: 'Campaign' };

const campaignFields = {
  id: Uuid(),
  name: Type.String(),
  subject: Type.String(),
  content: Type.String(),
  recipients: Type.Array(Type.String()),
  status: StringEnum(CAMPAIGN_STATUSES),
  scheduled_at: Nullable(Timestamp()),
  sent_at: Nullable(Timestamp()),
  created_by: UserRef,
  created_at: Timestamp(),
};
export const Campaign = Strict(campaignFields);
const Count = () => Type.Integer({ minimum: 0 });
export const CampaignDetail = Strict({ ...campaignFields, deliveries: Strict({ total: Count(), sent: Count(), failed: Count(), pending: Count() }) });

/** "all" (every subscribed address) or an e-mail address. */
const Recipient = Type.Union([Type.Literal('all'), Email()]);
const CampaignFields = {
  name: RequiredText(),
  subject: RequiredText({ maxLength: 998 }),
  content: Text({ minLength: 1, maxLength: 500_000 }),
  recipients: Type.Optional(Type.Array(Recipient, { minItems: 1, maxItems: 10_000 })),
};
const CampaignInput = Strict({ ...CampaignFields, status: Type.Optional(StringEnum(['draft'] as const)) });
/** `status: draft` takes a scheduled campaign back to draft; sending goes through `/send`. */
const CampaignPatch = PartialStrict(Strict({ ...CampaignFields, recipients: Type.Array(Recipient, { minItems: 1, maxItems: 10_000 }), status: StringEnum(['draft'] as const) }));
const SendInput = Strict({ scheduled_at: Type.Optional(TimestampInput()) });

export const campaignList: ListSpec = {
  collection: 'campaigns',
  table: campaigns,
  id: campaigns.id,
  sortable: { created_at: campaigns.created_at, name: campaigns.name, scheduled_at: campaigns.scheduled_at, sent_at: campaigns.sent_at },
  defaultSort: 'created_at',
  filters: { status: { schema: StringEnum(CAMPAIGN_STATUSES), where: (v) => eq(campaigns.status, v) } },
};

export const campaignView: View = {
  fields: {
    id: campaigns.id, name: campaigns.name, subject: campaigns.subject, content: campaigns.content, recipients: campaigns.recipients,
    status: campaigns.status, scheduled_at: campaigns.scheduled_at, sent_at: campaigns.sent_at, created_by: userRefFields, created_at: campaigns.created_at,
  },
  joins: (query) => query.leftJoin(users, eq(users.id, campaigns.created_by)),
};

/** Entries as stored: "all" or a lower-case address, each once. */
const normalise = (recipients: string[]) => [...new Set(recipients.map((r) => (r === 'all' ? r : r.toLowerCase())))];

const refuseSent = (current: Record<string, any>) => {
  if (current.status === 'sent') throw conflict('A sent campaign cannot be changed');
};

/** E-mail campaigns to newsletter subscribers, sent now or at a scheduled time through the job queue. */
export default async function campaignRoutes(app: App) {
  app.get('/api/crm/campaigns', {
    schema: { summary: 'List campaigns', querystring: listQuerySchema(campaignList), response: { 200: Paginated(Campaign), ...errorResponses } },
  }, async (request) => app.lists.page(campaignList, campaignView, request.query as ListQuery));

  app.get('/api/crm/campaigns/:id', {
    schema: { summary: 'One campaign with its delivery counts', params: IdParams, response: { 200: CampaignDetail, ...errorResponses } },
  }, async (request) => {
    const campaign = await findOne<any>(app.database.db, collection, campaignView, request.params.id);
    const [deliveries] = await app.database.db.select({
      total: sql<number>`count(*)::int`,
      sent: sql<number>`(count(*) filter (where ${campaignDeliveries.status} = 'sent'))::int`,
      failed: sql<number>`(count(*) filter (where ${campaignDeliveries.status} = 'failed'))::int`,
      pending: sql<number>`(count(*) filter (where ${campaignDeliveries.status} = 'pending'))::int`,
    }).from(campaignDeliveries).where(eq(campaignDeliveries.campaign_id, request.params.id));
    return { ...campaign, deliveries };
  });

  app.post('/api/crm/campaigns', {
    schema: { summary: 'Create a campaign (a draft)', body: CampaignInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const body = request.body as typeof CampaignInput.static;
    const principal = await currentPrincipal(app, request);
    const row = await createRecord(app, request, collection, {
      ...body, recipients: normalise(body.recipients ?? ['all']), status: 'draft', created_by: principal.user.id,
    });
    return reply.code(201).send({ id: row.id, message: 'Campaign created' });
  });

  app.patch('/api/crm/campaigns/:id', {
    schema: { summary: 'Update a campaign that is not sent (status draft unschedules it)', params: IdParams, body: CampaignPatch, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const body = request.body as Partial<typeof CampaignInput.static>;
    const patch: Record<string, unknown> = { ...body };
    if (body.recipients) patch.recipients = normalise(body.recipients);
    if (body.status === 'draft') patch.scheduled_at = null;
    await updateRecord(app, request, collection, request.params.id, patch, { check: refuseSent });
    return { message: 'Campaign updated' };
  });

  app.delete('/api/crm/campaigns/:id', {
    schema: { summary: 'Delete a campaign that is not sent', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, collection, request.params.id, { check: refuseSent });
    return { message: 'Campaign deleted' };
  });

  app.post('/api/crm/campaigns/:id/send', {
    // A bare POST (no body) means "send now".
    preValidation: async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    },
    schema: {
      summary: 'Send a campaign now, or schedule it (scheduled_at in the future)',
      params: IdParams,
      body: SendInput,
      response: { 200: Message, ...errorResponses },
    },
  }, async (request) => {
    const body = (request.body ?? {}) as typeof SendInput.static;
    const scheduledAt = body.scheduled_at ? new Date(body.scheduled_at) : null;
    if (scheduledAt && scheduledAt.getTime() <= Date.now()) throw validationError({ scheduled_at: 'must be in the future' });
    const row = await updateRecord(app, request, collection, request.params.id,
      scheduledAt ? { status: 'scheduled', scheduled_at: scheduledAt } : { status: 'sent', sent_at: new Date() },
      { check: (current) => { if (current.status === 'sent') throw conflict('The campaign has already been sent'); } });
    // After the commit. Should the process die in between, start-up resumes sent and scheduled campaigns.
    if (scheduledAt) {
      await enqueueScheduled(app, row.id, scheduledAt);
      return { message: `Campaign scheduled for ${scheduledAt.toISOString()}` };
    }
    await enqueueDelivery(app, row.id);
    return { message: 'Campaign is being sent' };
  });
}
