import { eq } from 'drizzle-orm';
import { anyOf } from '../../data/filters.js';
import { defineResource } from '../../data/resource.js';
import { CAMPAIGN_STATUSES, campaigns, users } from '../../db/schema/index.js';
import { StringEnum } from '../../http/schemas.js';
import { userRefFields } from './shared.js';

// The declaration alone (its routes are in campaigns.ts): the delivery jobs, which campaigns.ts sends, import it from here.

/** E-mail campaigns to newsletter subscribers, sent now or at a scheduled time through the job queue. */
export const campaignResource = defineResource({
  name: 'campaigns',
  module: 'crm',
  label: 'Campaign',
  table: campaigns,
  id: campaigns.id,
  view: {
    fields: {
      id: campaigns.id, name: campaigns.name, subject: campaigns.subject, content: campaigns.content, recipients: campaigns.recipients,
      status: campaigns.status, scheduled_at: campaigns.scheduled_at, sent_at: campaigns.sent_at, created_by: userRefFields, created_at: campaigns.created_at,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, campaigns.created_by)),
  },
  list: {
    sortable: { created_at: campaigns.created_at, name: campaigns.name, scheduled_at: campaigns.scheduled_at, sent_at: campaigns.sent_at },
    defaultSort: 'created_at',
    filters: { status: anyOf(campaigns.status, StringEnum(CAMPAIGN_STATUSES)) },
    ranges: { created: campaigns.created_at, scheduled: campaigns.scheduled_at },
  },
});
