import { Type } from '@sinclair/typebox';
import { clock } from '../../clock.js';
import { inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import type { App } from '../../types.js';
import { audited } from '../../data/mutations.js';
import { CAMPAIGN_STATUSES, campaignDeliveries } from '../../db/schema/index.js';
import { conflict, validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Email, errorResponses, IdParams, Message, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Text, Timestamp, TimestampInput, Uuid } from '../../http/schemas.js';
import { markdownProblem } from '../../mail/markdown.js';
import { campaignDelivery, campaignScheduled } from './delivery.js';
import { UserRef } from './shared.js';
import { campaignResource } from './campaign-resource.js';

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
export const Deliveries = Strict({ total: Count(), sent: Count(), failed: Count(), pending: Count() });
export const CampaignDetail = Strict({ ...campaignFields, deliveries: Deliveries });

type DeliveryCounts = { total: number; sent: number; failed: number; pending: number };

/** Each campaign's deliveries by status (every id gets an entry, zeros when it has none). */
export async function deliveryCounts(db: Executor, campaignIds: string[]): Promise<Map<string, DeliveryCounts>> {
  const counts = new Map<string, DeliveryCounts>(campaignIds.map((id) => [id, { total: 0, sent: 0, failed: 0, pending: 0 }]));
  if (!campaignIds.length) return counts;
  const rows = await db.select({ id: campaignDeliveries.campaign_id, status: campaignDeliveries.status, n: sql<number>`count(*)::int` })
    .from(campaignDeliveries).where(inArray(campaignDeliveries.campaign_id, campaignIds)).groupBy(campaignDeliveries.campaign_id, campaignDeliveries.status);
  for (const row of rows) {
    const entry = counts.get(row.id)!;
    entry[row.status] = row.n;
    entry.total += row.n;
  }
  return counts;
}

/** "all" (every subscribed address) or an e-mail address. */
const Recipient = Type.Union([Type.Literal('all'), Email()]);
const Recipients = () => Type.Array(Recipient, { minItems: 1, maxItems: 10_000 });
const CampaignFields = {
  name: RequiredText(),
  subject: RequiredText({ maxLength: 998 }),
  content: Text({ minLength: 1, maxLength: 500_000 }),
  recipients: Type.Optional(Recipients()),
};
const CampaignInput = Strict({ ...CampaignFields, status: Type.Optional(StringEnum(['draft'] as const)) });
/** `status: draft` takes a scheduled campaign back to draft; sending goes through `/send`. */
const CampaignPatch = PartialStrict(Strict({ ...CampaignFields, recipients: Recipients(), status: StringEnum(['draft'] as const) }));
const SendInput = Strict({ scheduled_at: Type.Optional(TimestampInput()) });

/** Entries as stored: "all" or a lower-case address, each once. */
const normalise = (recipients: string[]) => [...new Set(recipients.map((r) => (r === 'all' ? r : r.toLowerCase())))];

/** 400 unless the content can be rendered into the e-mail (CONTRACT §13: checked before anything is sent). */
const assertRenderable = async (content: string | undefined) => {
  const problem = content === undefined ? null : await markdownProblem(content);
  if (problem) throw validationError({ content: problem });
};

const refuseSent = (current: { status: string }) => {
  if (current.status === 'sent') throw conflict('A sent campaign cannot be changed', { status: 'is sent: the campaign can no longer be changed' });
};

export default async function campaignRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, campaignResource, {
    path: '/api/crm/campaigns',
    Item: CampaignDetail,
    ListItem: Campaign,
    complete: async (campaign) => ({ ...campaign, deliveries: (await deliveryCounts(db, [String(campaign.id)])).get(String(campaign.id)) }),
    create: {
      body: CampaignInput,
      summary: 'Create a campaign (a draft)',
      values: async (body, { actor }) => (await assertRenderable(body.content), { ...body, recipients: normalise(body.recipients ?? ['all']), status: 'draft' as const, created_by: actor.userId }),
    },
    update: {
      body: CampaignPatch,
      summary: 'Update a campaign that is not sent (status draft unschedules it)',
      validate: (body) => assertRenderable(body.content),
      values: (body, current) => {
        refuseSent(current);
        return { ...body, ...(body.recipients ? { recipients: normalise(body.recipients) } : {}), ...(body.status === 'draft' ? { scheduled_at: null } : {}) };
      },
    },
    remove: { summary: 'Delete a campaign that is not sent', before: refuseSent },
  });

  app.post('/api/crm/campaigns/:id/send', {
    // A bare POST (no body) means "send now".
    preValidation: async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    },
    schema: { 'x-answer-message': 'Campaign is being sent', summary: 'Send a campaign now, or schedule it (scheduled_at in the future)', params: IdParams, body: SendInput, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const scheduledAt = request.body.scheduled_at ? new Date(request.body.scheduled_at) : null;
    if (scheduledAt && scheduledAt.getTime() <= Date.now()) throw validationError({ scheduled_at: 'must be in the future' });
    const row = await audited(db, await actorOf(app, request), (work) => work.update(campaignResource, request.params.id, async (current) => {
      if (current.status === 'sent') throw conflict('The campaign has already been sent');
      await assertRenderable(current.content);
      return scheduledAt ? { status: 'scheduled' as const, scheduled_at: scheduledAt } : { status: 'sent' as const, sent_at: clock.now() };
    }));
    // After the commit. Should the process die in between, start-up resumes sent and scheduled campaigns.
    if (scheduledAt) {
      await app.jobs.send(campaignScheduled, { campaignId: row.id, scheduledAt: scheduledAt.toISOString() }, { startAfter: scheduledAt });
      return { message: `Campaign scheduled for ${scheduledAt.toISOString()}` };
    }
    await app.jobs.send(campaignDelivery, { campaignId: row.id });
    return { message: 'Campaign is being sent' };
  });
}
