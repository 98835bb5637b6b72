import { createHash } from 'node:crypto';
import { clock } from '../../clock.js';
import { and, eq, sql } from 'drizzle-orm';
import { SYSTEM } from '../../data/actor.js';
import { audited } from '../../data/mutations.js';
import { campaignDeliveries, campaigns, webhookDeliveries } from '../../db/schema/index.js';
import { defineJob, type Services } from '../../jobs/registry.js';
import type { Mail } from '../../mail/mailer.js';
import { markdownProblem, renderMarkdown } from '../../mail/markdown.js';
import { campaignMail } from '../../mail/templates.js';
import { campaignResource } from './campaign-resource.js';
import { unsubscribeSecretOf, unsubscribeUrl } from './unsubscribe-token.js';

/** A delivery job works this long, then hands over to a fresh job (well inside its expiration and the shutdown grace). */
const JOB_BUDGET_MS = 5_000;
const BATCH = 100;
const ATTEMPTS = 3;

type Campaign = typeof campaigns.$inferSelect;

/** One recipient's message: a Message-ID stable per (campaign, address), so a receiver recognises a resent one. */
export function recipientMail(services: Pick<Services, 'config' | 'database'>, campaign: Pick<Campaign, 'id' | 'subject' | 'content'>, html: string, email: string): Mail {
  const { baseUrl } = services.config;
  const url = unsubscribeUrl(baseUrl, unsubscribeSecretOf(services.database), email);
  const host = new URL(baseUrl).hostname || 'localhost';
  const digest = createHash('sha256').update(email).digest('hex').slice(0, 24);
  return {
    to: email,
    ...campaignMail(campaign.subject, campaign.content, html, url),
    // RFC 8058: mailbox providers unsubscribe with one POST to the same link, without opening it.
    headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    messageId: `<campaign-${campaign.id}-${digest}@${host}>`,
  };
}

/**
 * Recipients are resolved once, when the campaign is sent: one pending row per (campaign, address), written by
 * the database itself (`insert … select`), so no recipient list is ever held in memory. "all" is every subscribed
 * address; an explicit address that unsubscribed is skipped, and so is an erased one (`…@invalid`: a privacy erase keeps
 * the subscription, so counts stay, but the reserved `.invalid` domain never receives mail). Runs only while the campaign
 * has no rows yet.
 */
async function resolveRecipients(services: Services, campaign: Campaign) {
  const db = services.database.db;
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(campaignDeliveries).where(eq(campaignDeliveries.campaign_id, campaign.id));
  if (Number(count) > 0) return;
  const explicit = [...new Set(campaign.recipients.filter((r) => r !== 'all').map((r) => r.trim().toLowerCase()))];
  await db.transaction(async (tx) => {
    if (campaign.recipients.includes('all')) {
      await tx.execute(sql`insert into campaign_deliveries (id, campaign_id, email, status, created_at)
        select gen_random_uuid(), ${campaign.id}, lower(email), 'pending', now() from newsletter_subscriptions where status = 'subscribed' and email not like '%@invalid'
        on conflict (campaign_id, email) do nothing`);
    }
    if (explicit.length) {
      const list = sql.join(explicit.map((e) => sql`(${e}::text)`), sql`, `);
      await tx.execute(sql`insert into campaign_deliveries (id, campaign_id, email, status, created_at)
        select gen_random_uuid(), ${campaign.id}, r.email, 'pending', now() from (values ${list}) as r(email)
        where r.email not like '%@invalid' and not exists (select 1 from newsletter_subscriptions s where s.email = r.email and s.status = 'unsubscribed')
        on conflict (campaign_id, email) do nothing`);
    }
  });
}

async function sendWithRetries(services: Services, mail: Mail): Promise<string | null> {
  let error = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      await services.mailer.send(mail);
      return null;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, 250 * 4 ** (attempt - 1)));
    }
  }
  return error.slice(0, 1000);
}

const pending = (campaignId: string) => and(eq(campaignDeliveries.campaign_id, campaignId), eq(campaignDeliveries.status, 'pending'));
const outcome = (error: string | null) => (error === null ? { status: 'sent' as const, sent_at: clock.now(), error: null } : { status: 'failed' as const, error });

/**
 * Sends pending deliveries until none is left or the budget is spent; true when done. Each row is marked sent right
 * after its SMTP call succeeded, so a crash re-sends at most the message in flight (with the same Message-ID).
 * PostgreSQL: each row is claimed with `for update skip locked` in its own short transaction, so several
 * instances share the work without sending anything twice. PGlite is one process: rows are read in batches.
 */
async function sendPending(services: Services, campaign: Campaign, deadline: number): Promise<boolean> {
  const db = services.database.db;
  const html = await renderMarkdown(campaign.content);
  if (services.database.kind === 'postgres') {
    while (Date.now() < deadline) {
      const sent = await db.transaction(async (tx) => {
        const [row] = await tx.select({ id: campaignDeliveries.id, email: campaignDeliveries.email }).from(campaignDeliveries)
          .where(pending(campaign.id)).orderBy(campaignDeliveries.id).limit(1).for('update', { skipLocked: true });
        if (!row) return false;
        const error = await sendWithRetries(services, recipientMail(services, campaign, html, row.email));
        await tx.update(campaignDeliveries).set(outcome(error)).where(eq(campaignDeliveries.id, row.id));
        return true;
      });
      if (!sent) return true;
    }
    return false;
  }
  while (Date.now() < deadline) {
    const rows = await db.select({ id: campaignDeliveries.id, email: campaignDeliveries.email }).from(campaignDeliveries)
      .where(pending(campaign.id)).orderBy(campaignDeliveries.id).limit(BATCH);
    if (!rows.length) return true;
    for (const row of rows) {
      const error = await sendWithRetries(services, recipientMail(services, campaign, html, row.email));
      await db.update(campaignDeliveries).set(outcome(error)).where(eq(campaignDeliveries.id, row.id));
      if (Date.now() >= deadline) break;
    }
  }
  return false;
}

/** Every delivery still pending fails with `error` (CONTRACT §13: a failed campaign never shows pending forever). */
async function failPending(services: Services, campaignId: string, error: string) {
  const failed = await services.database.db.update(campaignDeliveries).set({ status: 'failed', error: error.slice(0, 1000) })
    .where(pending(campaignId)).returning({ id: campaignDeliveries.id });
  services.log.error({ campaignId, failed: failed.length, error }, 'campaign delivery failed');
  await announceSent(services, campaignId);
}

/**
 * The `campaign.sent` webhook event, once a campaign's delivery finished (every recipient sent or failed), with its
 * counts. Recorded once per campaign: the campaign row is locked, and an event already recorded is not recorded again.
 */
export async function announceSent(services: Services, campaignId: string) {
  await audited(services.database.db, SYSTEM, async (work) => {
    const [campaign] = await work.tx.select({ id: campaigns.id, name: campaigns.name, subject: campaigns.subject, sent_at: campaigns.sent_at })
      .from(campaigns).where(and(eq(campaigns.id, campaignId), eq(campaigns.status, 'sent'))).for('update');
    if (!campaign) return;
    const [already] = await work.tx.select({ id: webhookDeliveries.id }).from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.event_type, 'campaign.sent'), sql`${webhookDeliveries.payload} -> 'data' ->> 'id' = ${campaignId}`)).limit(1);
    if (already) return;
    const counts = await work.tx.select({ status: campaignDeliveries.status, count: sql<number>`count(*)::int` }).from(campaignDeliveries)
      .where(eq(campaignDeliveries.campaign_id, campaignId)).groupBy(campaignDeliveries.status);
    const count = (status: string) => Number(counts.find((c) => c.status === status)?.count ?? 0);
    work.emit('campaign.sent', {
      id: campaign.id, resource: campaignResource.name, name: campaign.name, subject: campaign.subject, sent_at: campaign.sent_at,
      deliveries: { total: counts.reduce((sum, c) => sum + Number(c.count), 0), sent: count('sent'), failed: count('failed') },
    });
  });
}

/** Campaigns being delivered by this process (PGlite: the only process). */
const active = new Set<string>();

export async function deliverCampaign(services: Services, campaignId: string) {
  if (active.has(campaignId)) return;
  active.add(campaignId);
  try {
    const [campaign] = await services.database.db.select().from(campaigns).where(eq(campaigns.id, campaignId));
    if (!campaign || campaign.status !== 'sent') return;
    await resolveRecipients(services, campaign);
    // Content stored before it was checked: no recipient can get it, and a retry would not change that.
    const problem = await markdownProblem(campaign.content);
    if (problem) return await failPending(services, campaignId, `content ${problem}`);
    const done = await sendPending(services, campaign, Date.now() + JOB_BUDGET_MS);
    if (!done) await services.jobs.send(campaignDelivery, { campaignId });
    else {
      services.log.info({ campaignId }, 'campaign delivered');
      await announceSent(services, campaignId);
    }
  } finally {
    active.delete(campaignId);
  }
}

/** The scheduled time came: sent now (audited, by no user) and delivered — unless it was rescheduled or sent since. */
export async function fireScheduled(services: Services, campaignId: string, scheduledAt: string) {
  const fired = await audited(services.database.db, SYSTEM, async (work) => {
    const [current] = await work.tx.select().from(campaigns).where(eq(campaigns.id, campaignId)).for('update');
    if (!current || current.status !== 'scheduled' || current.scheduled_at?.toISOString() !== scheduledAt) return false;
    await work.update(campaignResource, campaignId, { status: 'sent', sent_at: clock.now() });
    return true;
  });
  if (fired) await deliverCampaign(services, campaignId);
}

/**
 * On start: deliveries a crash interrupted resume now (rather than when their job expires), sent campaigns whose
 * recipients were never resolved get them, and scheduled campaigns get their job again (a duplicate is harmless).
 */
export async function resumeCampaigns(services: Services) {
  const db = services.database.db;
  const unfinished = await db.select({ id: campaigns.id }).from(campaigns).where(and(
    eq(campaigns.status, 'sent'),
    sql`(exists (select 1 from campaign_deliveries d where d.campaign_id = ${campaigns.id} and d.status = 'pending')
      or (not exists (select 1 from campaign_deliveries d where d.campaign_id = ${campaigns.id}) and ${campaigns.sent_at} > now() - interval '1 day'))`,
  ));
  for (const { id } of unfinished) await services.jobs.send(campaignDelivery, { campaignId: id });
  const scheduled = await db.select({ id: campaigns.id, scheduled_at: campaigns.scheduled_at }).from(campaigns).where(eq(campaigns.status, 'scheduled'));
  for (const c of scheduled) if (c.scheduled_at) await services.jobs.send(campaignScheduled, { campaignId: c.id, scheduledAt: c.scheduled_at.toISOString() }, { startAfter: c.scheduled_at });
}

/** Sends a sent campaign's pending deliveries; jobs whose worker died are retried once their expiration passes. */
export const campaignDelivery = defineJob<{ campaignId: string }>('campaign-delivery', ({ campaignId }, services) => deliverCampaign(services, campaignId), {
  sendOptions: ({ campaignId }) => ({ expireInSeconds: 60, retryLimit: 10, retryDelay: 5, retryBackoff: true, singletonKey: campaignId }),
  exhausted: ({ campaignId }, services, err) => failPending(services, campaignId, err instanceof Error ? err.message : String(err)),
  onStart: resumeCampaigns,
});

/** Fires a scheduled campaign at its time (`startAfter`); stale when the campaign was rescheduled or sent since. */
export const campaignScheduled = defineJob<{ campaignId: string; scheduledAt: string }>('campaign-scheduled',
  ({ campaignId, scheduledAt }, services) => fireScheduled(services, campaignId, scheduledAt), {
    sendOptions: ({ campaignId }) => ({ singletonKey: campaignId, retryLimit: 10, retryDelay: 5, expireInSeconds: 60 }),
  });
