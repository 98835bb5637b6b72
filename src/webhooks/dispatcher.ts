import { and, eq, sql } from 'drizzle-orm';
import { webhookDeliveries, webhookEndpoints } from '../db/schema/index.js';
import { defineJob, type Jobs, type Services } from '../jobs/registry.js';
import { TEST_EVENT } from './events.js';
import { onDeliveriesCommitted, rowsOf } from './record.js';
import { postJson } from './send.js';
import { sign } from './signature.js';

/** Deliveries POSTed at once by one instance. */
const CONCURRENCY = 10;
/** Beyond its timeout, how long a taken delivery stays leased before another dispatcher may take it again (a crash). */
const LEASE_MARGIN_S = 20;
/** The schedule runs the dispatcher every minute anyway: a wake-up further away than this is left to it. */
const MAX_SLEEP_MS = 60_000;

type Taken = { id: string; payload: { type: string; timestamp: string; data: unknown }; attempts: number; url: string; secret: string };

/** Due deliveries whose endpoint takes them: enabled, or the test event (which may be sent to a disabled one). */
const CLAIMABLE = sql`d.status = 'pending' and (e.enabled or d.event_type = ${TEST_EVENT})`;

/**
 * Delivers pending webhook deliveries: takes due ones (`for update skip locked`, so several instances never take the
 * same), leases them for the timeout and a margin (a crash mid-POST leaves them to be taken again once the lease ends),
 * POSTs them signed, and records the outcome: delivered on a 2xx; otherwise the next attempt per the retry schedule,
 * or failed once the schedule is spent. Runs when told deliveries were committed, when a retry falls due (a timer),
 * every minute (the scheduled job), and once at start (what a crash left).
 */
export class Dispatcher {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** Ends the POSTs in flight when the service stops. */
  private readonly interrupt = new AbortController();
  private readonly unsubscribe: () => void;

  constructor(private readonly services: Services) {
    this.unsubscribe = onDeliveriesCommitted(services.database.db, () => this.nudge());
  }

  /** Runs soon (now, or again right after the run in progress). */
  nudge() {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.again = false;
    this.running = this.loop().finally(() => {
      this.running = null;
      // Told again while it was finishing (after its last look for due deliveries): look once more.
      if (this.again) this.nudge();
    });
  }

  /** Takes nothing more; POSTs in flight are cut short and their deliveries handed back, due at once (no attempt spent). */
  async stop() {
    this.stopped = true;
    this.unsubscribe();
    clearTimeout(this.timer);
    this.interrupt.abort();
    await this.running;
  }

  private async loop() {
    clearTimeout(this.timer);
    try {
      do {
        this.again = false;
        while (!this.stopped && (await this.batch()) > 0);
      } while (this.again && !this.stopped);
      if (!this.stopped) await this.sleepUntilDue();
    } catch (err) {
      this.services.log.error({ err }, 'webhook dispatch failed');
    }
  }

  /** Takes up to CONCURRENCY due deliveries and POSTs them at once; how many it took. */
  private async batch(): Promise<number> {
    const { config } = this.services;
    const lease = Math.ceil(config.webhookTimeoutMs / 1000) + LEASE_MARGIN_S;
    const taken = rowsOf<Taken>(await this.services.database.db.execute(sql`
      update ${webhookDeliveries} d set attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ${lease})
      from (
        select d.id from ${webhookDeliveries} d join ${webhookEndpoints} e on e.id = d.endpoint_id
        where ${CLAIMABLE} and d.next_attempt_at <= now()
        order by d.next_attempt_at, d.id limit ${CONCURRENCY}
        for update of d skip locked
      ) due, ${webhookEndpoints} e
      where d.id = due.id and e.id = d.endpoint_id
      returning d.id, d.payload, d.attempts, e.url, e.secret`));
    await Promise.all(taken.map((delivery) => this.deliver(delivery)));
    return taken.length;
  }

  private async deliver(delivery: Taken) {
    const { config, database } = this.services;
    // The body as the payload was recorded, `type` first; signed afresh at each attempt, with the same id.
    const { type, timestamp, data } = delivery.payload;
    const body = JSON.stringify({ type, timestamp, data });
    const now = Math.floor(Date.now() / 1000);
    const outcome = await postJson(delivery.url, body, {
      'webhook-id': delivery.id,
      'webhook-timestamp': String(now),
      'webhook-signature': sign(delivery.secret, delivery.id, now, body),
    }, { timeoutMs: config.webhookTimeoutMs, allowPrivate: !config.production || config.webhookAllowPrivate, signal: this.interrupt.signal });
    if (outcome.interrupted) {
      await database.db.update(webhookDeliveries).set({ attempts: sql`${webhookDeliveries.attempts} - 1`, next_attempt_at: sql`now()` })
        .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, 'pending')));
      return;
    }
    const schedule = config.webhookRetrySchedule;
    const final = !outcome.ok && delivery.attempts > schedule.length;
    const delay = schedule[delivery.attempts - 1] ?? 0;
    await database.db.update(webhookDeliveries).set(outcome.ok
      ? { status: 'delivered', delivered_at: sql`now()`, last_status_code: outcome.statusCode, last_error: null, next_attempt_at: null }
      : {
        status: final ? 'failed' : 'pending',
        next_attempt_at: final ? null : sql`now() + make_interval(secs => ${delay})`,
        last_status_code: outcome.statusCode,
        last_error: (outcome.error ?? 'failed').slice(0, 1000),
      })
      .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, 'pending')));
    if (!outcome.ok) this.services.log.warn({ delivery: delivery.id, attempts: delivery.attempts, final, error: outcome.error }, 'webhook delivery failed');
  }

  /** Wakes up when the next pending delivery falls due (at most a minute ahead: the schedule covers the rest). */
  private async sleepUntilDue() {
    const [next] = rowsOf<{ ms: number | string | null }>(await this.services.database.db.execute(sql`
      select extract(epoch from min(d.next_attempt_at) - now()) * 1000 as ms
      from ${webhookDeliveries} d join ${webhookEndpoints} e on e.id = d.endpoint_id where ${CLAIMABLE}`));
    if (next?.ms === null || next?.ms === undefined || this.stopped) return;
    const ms = Math.max(0, Math.ceil(Number(next.ms))) + 5;
    if (ms > MAX_SLEEP_MS) return;
    this.timer = setTimeout(() => this.nudge(), ms);
    this.timer.unref();
  }
}

/** The dispatcher of each running queue (an instance may run several apps in tests). */
const dispatchers = new WeakMap<Jobs, Dispatcher>();

/** The dispatcher of the queue `services` belong to, while it runs. */
export const dispatcherOf = (services: Pick<Services, 'jobs'>) => dispatchers.get(services.jobs);

/** Delivers webhooks: started with the queue, run every minute by the schedule, nudged after commits. */
export const webhookDispatch = defineJob('webhook-dispatch', async (_data, services) => dispatcherOf(services)?.nudge(), {
  schedule: '* * * * *',
  sendOptions: () => ({ singletonKey: 'webhook-dispatch', expireInSeconds: 60 }),
  onStart: async (services) => {
    const dispatcher = new Dispatcher(services);
    dispatchers.set(services.jobs, dispatcher);
    dispatcher.nudge();
  },
  onStop: async (services) => {
    await dispatchers.get(services.jobs)?.stop();
    dispatchers.delete(services.jobs);
  },
});

const PURGE_BATCH = 5000;

/**
 * Deletes finished (delivered or failed) deliveries older than `days`, endpoint by endpoint through the delivery
 * log's index, a batch per statement; pending ones stay whatever their age. Returns how many were deleted.
 */
export async function purgeDeliveries(services: Pick<Services, 'database'>, days: number): Promise<number> {
  const { db } = services.database;
  const cutoff = new Date(Date.now() - days * 24 * 3600 * 1000);
  let deleted = 0;
  for (const { id } of await db.select({ id: webhookEndpoints.id }).from(webhookEndpoints)) {
    for (;;) {
      const [{ n }] = rowsOf<{ n: number }>(await db.execute(sql`with gone as (
        delete from ${webhookDeliveries} where id in (
          select id from ${webhookDeliveries} where endpoint_id = ${id} and created_at < ${cutoff.toISOString()}::timestamptz and status <> 'pending' limit ${PURGE_BATCH}
        ) returning 1) select count(*)::int as n from gone`));
      deleted += Number(n);
      if (Number(n) < PURGE_BATCH) break;
    }
  }
  return deleted;
}

/** The delivery log keeps WEBHOOK_DELIVERY_RETENTION_DAYS of finished deliveries. */
export const webhookDeliveryRetention = defineJob('webhook-deliveries-retention', async (_data, services) => {
  const deleted = await purgeDeliveries(services, services.config.webhookDeliveryRetentionDays);
  services.log.info({ deleted }, 'scheduled webhook delivery retention');
}, { schedule: '37 3 * * *' });
