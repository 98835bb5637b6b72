import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import type { App } from '../../app.js';
import { type Actor, recordChange } from '../../audit/record.js';
import { campaignDeliveries, campaigns } from '../../db/schema/index.js';
import type { Worker } from '../../jobs/queue.js';
import { escapeHtml, layout } from '../../mail/templates.js';
import { unsubscribeUrl } from './unsubscribe-token.js';

/** Fires a scheduled campaign at its time: data `{campaignId, scheduledAt}`; stale when the campaign changed since. */
export const SCHEDULED_QUEUE = 'campaign-scheduled';
/** Sends a sent campaign's pending deliveries: data `{campaignId}`. */
export const DELIVERY_QUEUE = 'campaign-delivery';

/** A delivery job works this long, then hands over to a fresh job (well inside its expiration and the shutdown grace). */
const JOB_BUDGET_MS = 5_000;
const BATCH = 100;
const ATTEMPTS = 3;
/** Delivery jobs whose worker died are retried once their expiration passes. */
const DELIVERY_JOB = { expireInSeconds: 60, retryLimit: 10, retryDelay: 5, retryBackoff: true };

const SYSTEM: Actor = { userId: null, ip: null, userAgent: null };

type Campaign = typeof campaigns.$inferSelect;

export async function enqueueDelivery(app: App, campaignId: string) {
  if (!app.queue) return app.log.warn({ campaignId }, 'job queue is off: campaign delivery not queued');
  await app.queue.send(DELIVERY_QUEUE, { campaignId }, { ...DELIVERY_JOB, singletonKey: campaignId });
}

export async function enqueueScheduled(app: App, campaignId: string, scheduledAt: Date) {
  if (!app.queue) return app.log.warn({ campaignId }, 'job queue is off: scheduled campaign not queued');
  await app.queue.send(SCHEDULED_QUEUE, { campaignId, scheduledAt: scheduledAt.toISOString() }, {
    startAfter: scheduledAt, singletonKey: campaignId, retryLimit: 10, retryDelay: 5, expireInSeconds: 60,
  });
}

/** Markdown → sanitised HTML, once per campaign. */
export function renderContent(markdown: string): string {
  const html = marked.parse(markdown, { async: false }) as string;
  return sanitizeHtml(html, { allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2'], allowedSchemes: ['http', 'https', 'mailto'] });
}

/** One recipient's message: content, unsubscribe link and header, and a Message-ID stable per (campaign, address). */
export function campaignMail(app: App, campaign: Pick<Campaign, 'id' | 'subject' | 'content'>, html: string, email: string) {
  const url = unsubscribeUrl(app.config.baseUrl, app.config.authSecret, email);
  const host = new URL(app.config.baseUrl).hostname || 'localhost';
  const digest = createHash('sha256').update(email).digest('hex').slice(0, 24);
  return {
    to: email,
    subject: campaign.subject,
    html: layout(campaign.subject, `${html}<hr><p style="font-size:12px;color:#666">You receive this e-mail because you subscribed to our newsletter. <a href="${escapeHtml(url)}">Unsubscribe</a></p>`),
    text: `${campaign.content}\n\n--\nYou receive this e-mail because you subscribed to our newsletter. Unsubscribe: ${url}\n`,
    headers: { 'List-Unsubscribe': `<${url}>` },
    messageId: `<campaign-${campaign.id}-${digest}@${host}>`,
  };
}

/**
 * Recipients are resolved once, when the campaign is sent: one pending row per (campaign, address), written by
 * the database itself (`insert … select`), so no recipient list is ever held in memory. "all" is every subscribed
 * address; an explicit address that unsubscribed is skipped. Runs only while the campaign has no rows yet.
 */
async function resolveRecipients(app: App, campaign: Campaign) {
  const db = app.database.db;
  const [{ count }] = await db.select({ count: sql<number>`count(*)::int` }).from(campaignDeliveries).where(eq(campaignDeliveries.campaign_id, campaign.id));
  if (Number(count) > 0) return;
  const explicit = [...new Set(campaign.recipients.filter((r) => r !== 'all').map((r) => r.trim().toLowerCase()))];
  await db.transaction(async (tx) => {
    if (campaign.recipients.includes('all')) {
      await tx.execute(sql`insert into campaign_deliveries (id, campaign_id, email, status, created_at)
        select gen_random_uuid(), ${campaign.id}, lower(email), 'pending', now() from newsletter_subscriptions where status = 'subscribed'
        on conflict (campaign_id, email) do nothing`);
    }
    if (explicit.length) {
      const list = sql.join(explicit.map((e) => sql`(${e}::text)`), sql`, `);
      await tx.execute(sql`insert into campaign_deliveries (id, campaign_id, email, status, created_at)
        select gen_random_uuid(), ${campaign.id}, r.email, 'pending', now() from (values ${list}) as r(email)
        where not exists (select 1 from newsletter_subscriptions s where s.email = r.email and s.status = 'unsubscribed')
        on conflict (campaign_id, email) do nothing`);
    }
  });
}

async function sendWithRetries(app: App, mail: Parameters<App['mailer']['send']>[0]): Promise<string | null> {
  let error = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      await app.mailer.send(mail);
      return null;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, 250 * 4 ** (attempt - 1)));
    }
  }
  return error.slice(0, 1000);
}

const pending = (campaignId: string) => and(eq(campaignDeliveries.campaign_id, campaignId), eq(campaignDeliveries.status, 'pending'));
const outcome = (error: string | null) => (error === null ? { status: 'sent' as const, sent_at: new Date(), error: null } : { status: 'failed' as const, error });

/**
 * Sends pending deliveries until none is left or the budget is spent; true when done. Each row is marked sent right
 * after its SMTP call succeeded, so a crash re-sends at most the message in flight (with the same Message-ID).
 * PostgreSQL: each row is claimed with `for update skip locked` in its own short transaction, so several
 * instances share the work without sending anything twice. PGlite is one process: rows are read in batches.
 */
async function sendPending(app: App, campaign: Campaign, deadline: number): Promise<boolean> {
  const db = app.database.db;
  const html = renderContent(campaign.content);
  if (app.database.kind === 'postgres') {
    while (Date.now() < deadline) {
      const sent = await db.transaction(async (tx) => {
        const [row] = await tx.select({ id: campaignDeliveries.id, email: campaignDeliveries.email }).from(campaignDeliveries)
          .where(pending(campaign.id)).orderBy(campaignDeliveries.id).limit(1).for('update', { skipLocked: true });
        if (!row) return false;
        const error = await sendWithRetries(app, campaignMail(app, campaign, html, row.email));
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
      const error = await sendWithRetries(app, campaignMail(app, campaign, html, row.email));
      await db.update(campaignDeliveries).set(outcome(error)).where(eq(campaignDeliveries.id, row.id));
      if (Date.now() >= deadline) break;
    }
  }
  return false;
}

/** Campaigns being delivered by this process (PGlite: the only process). */
const active = new Set<string>();

export async function deliverCampaign(app: App, campaignId: string) {
  if (active.has(campaignId)) return;
  active.add(campaignId);
  try {
    const [campaign] = await app.database.db.select().from(campaigns).where(eq(campaigns.id, campaignId));
    if (!campaign || campaign.status !== 'sent') return;
    await resolveRecipients(app, campaign);
    const done = await sendPending(app, campaign, Date.now() + JOB_BUDGET_MS);
    if (!done) await enqueueDelivery(app, campaignId);
    else app.log.info({ campaignId }, 'campaign delivered');
  } finally {
    active.delete(campaignId);
  }
}

/** The scheduled time came: sent now (audited, by no user) and delivered — unless it was rescheduled or sent since. */
export async function fireScheduled(app: App, campaignId: string, scheduledAt: string) {
  const fired = await app.database.db.transaction(async (tx) => {
    const [current] = await tx.select().from(campaigns).where(eq(campaigns.id, campaignId)).for('update');
    if (!current || current.status !== 'scheduled' || current.scheduled_at?.toISOString() !== scheduledAt) return false;
    const [row] = await tx.update(campaigns).set({ status: 'sent', sent_at: new Date() }).where(eq(campaigns.id, campaignId)).returning();
    await recordChange(tx, SYSTEM, { action: 'update', module: 'crm', resource: 'campaigns', resourceId: campaignId, before: current, after: row });
    return true;
  });
  if (fired) await deliverCampaign(app, campaignId);
}

/**
 * On start: deliveries a crash interrupted resume now (rather than when their job expires), sent campaigns whose
 * recipients were never resolved get them, and scheduled campaigns get their job again (a duplicate is harmless).
 */
export async function resumeCampaigns(app: App) {
  const db = app.database.db;
  const unfinished = await db.select({ id: campaigns.id }).from(campaigns).where(and(
    eq(campaigns.status, 'sent'),
    sql`(exists (select 1 from campaign_deliveries d where d.campaign_id = ${campaigns.id} and d.status = 'pending')
      or (not exists (select 1 from campaign_deliveries d where d.campaign_id = ${campaigns.id}) and ${campaigns.sent_at} > now() - interval '1 day'))`,
  ));
  for (const { id } of unfinished) await enqueueDelivery(app, id);
  const scheduled = await db.select({ id: campaigns.id, scheduled_at: campaigns.scheduled_at }).from(campaigns).where(eq(campaigns.status, 'scheduled'));
  for (const c of scheduled) if (c.scheduled_at) await enqueueScheduled(app, c.id, c.scheduled_at);
}

export function campaignWorkers(app: App): Worker[] {
  return [
    { name: SCHEDULED_QUEUE, handler: async (jobs) => { for (const job of jobs) await fireScheduled(app, job.data.campaignId, job.data.scheduledAt); } },
    { name: DELIVERY_QUEUE, handler: async (jobs) => { for (const job of jobs) await deliverCampaign(app, job.data.campaignId); } },
  ];
}
