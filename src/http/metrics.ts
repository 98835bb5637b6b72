import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { App } from '../types.js';
import { bearerMatches } from '../auth/bearer-secret.js';
import type { Database } from '../db/client.js';
import { unauthorized } from '../errors.js';
import type { Jobs } from '../jobs/registry.js';
import { ErrorBody } from './schemas.js';

/**
 * Node's process metrics (CPU, memory, heap, event-loop lag, GC, handles) describe the process, not an app: they are
 * collected once per process into a registry of their own and appended to every app's scrape. Collecting them per
 * app would leave an event-loop monitor and a GC observer behind for every app a test run builds.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Methods as labels: anything else (WebDAV verbs and the like) is `other`, so a client cannot add label values. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Queue sizes are counted at most this often, however often Prometheus (or several of them) scrape. */
const QUEUE_CACHE_MS = 5_000;

type QueueSizes = Awaited<ReturnType<Jobs['queueSizes']>>;
type Labels = 'method' | 'route' | 'status_code';

/**
 * One app's metrics, in a registry of its own (tests build many apps in one process). Collected only when
 * METRICS_TOKEN is set: with the endpoint off, nothing is measured.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<Labels>;
  readonly duration: Histogram<Labels>;
  readonly mailSent: Counter;
  readonly mailFailed: Counter;
  readonly liveStreams: Gauge;
  readonly formDropped: Counter<'form' | 'reason'>;
  private queueSizes: { at: number; sizes: Promise<QueueSizes> } | undefined;

  constructor(private readonly sources: { database: Database; jobs: Jobs; log: FastifyBaseLogger }) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'],
      registers,
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer, by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.mailSent = new Counter({ name: 'mail_sent_total', help: 'E-mails handed to the SMTP server (or written to the outbox)', registers });
    this.mailFailed = new Counter({ name: 'mail_failed_total', help: 'E-mails whose sending failed (each attempt that failed)', registers });
    this.liveStreams = new Gauge({ name: 'live_streams', help: 'Live streams (GET /api/live) open on this instance', registers });
    this.formDropped = new Counter({
      name: 'public_form_dropped_total',
      help: 'Public form submissions answered as usual but dropped (nothing stored or mailed), by form and reason',
      labelNames: ['form', 'reason'],
      registers,
    });

    // PostgreSQL's connection pool. PGlite has none (one in-process connection, queries queue inside PGlite), so these
    // gauges are not registered for it at all.
    const pool = sources.database.pool;
    if (pool) {
      const poolGauge = (name: string, help: string, read: (stats: ReturnType<NonNullable<Database['pool']>>) => number) =>
        new Gauge({ name, help, registers, collect() { this.set(read(pool())); } });
      poolGauge('db_pool_connections', 'Open connections in the database pool (busy and idle)', (s) => s.total);
      poolGauge('db_pool_idle_connections', 'Idle connections in the database pool', (s) => s.idle);
      poolGauge('db_pool_waiting_requests', 'Queries waiting for a connection from the database pool', (s) => s.waiting);
      poolGauge('db_pool_max_connections', 'Most connections the database pool opens', (s) => s.max);
    }

    const metrics = this;
    const queueGauge = (name: string, help: string, read: (size: NonNullable<QueueSizes>[number]) => number) =>
      new Gauge({
        name, help, labelNames: ['queue'], registers,
        collect: async function (this: Gauge<'queue'>) {
          this.reset(); // a queue that is off (or did not answer) has no samples rather than stale ones
          for (const size of (await metrics.currentQueueSizes()) ?? []) this.set({ queue: size.queue }, read(size));
        },
      });
    queueGauge('job_queue_depth', 'Jobs waiting to run (created or due for a retry), per queue', (s) => s.waiting);
    queueGauge('job_queue_active', 'Jobs running now, per queue', (s) => s.active);
  }

  /** Queue sizes, counted at most every QUEUE_CACHE_MS; concurrent scrapes share one count. Null when unknown. */
  private currentQueueSizes(): Promise<QueueSizes> {
    const now = Date.now();
    if (!this.queueSizes || now - this.queueSizes.at > QUEUE_CACHE_MS) {
      const sizes = this.sources.jobs.queueSizes().catch((err: unknown) => {
        this.sources.log.warn({ err }, 'metrics: job queue sizes not counted');
        return null;
      });
      this.queueSizes = { at: now, sizes };
    }
    return this.queueSizes.sizes;
  }

  /** The text Prometheus scrapes: this app's metrics, then the process's. */
  async text(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processMetrics().metrics()}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * `GET /api/metrics` (bearer METRICS_TOKEN) and the request measurements behind it. Registered only when the token
 * is configured: otherwise the path is unknown (404) and no request is measured.
 */
export function registerMetrics(app: App, metrics: Metrics) {
  const token = app.config.metricsToken;
  app.addHook('onResponse', async (request, reply) => {
    // The route *pattern* (`/api/crm/leads/:id`), never the URL: label values stay few whatever clients send.
    const labels = {
      method: METHODS.has(request.method) ? request.method : 'other',
      route: request.routeOptions.url ?? 'unmatched',
      status_code: String(reply.statusCode),
    };
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, reply.elapsedTime / 1000);
  });

  app.get('/api/metrics', {
    config: { rateLimit: false },
    schema: {
      tags: ['system'],
      summary: 'Prometheus metrics (bearer METRICS_TOKEN)',
      description:
        'Request counts and latencies by route pattern, database pool usage, job queue depth, mail sent and failed, and ' +
        'Node process metrics, in the Prometheus text exposition format. Exists only when METRICS_TOKEN is set.',
      security: [{ metricsToken: [] }],
      response: {
        200: {
          description: 'Prometheus text exposition format (version 0.0.4)',
          content: { 'text/plain': { schema: Type.String() } },
        },
        401: ErrorBody,
      },
    },
  }, async (request, reply) => {
    if (!bearerMatches(token, request.headers.authorization)) throw unauthorized();
    const text = await metrics.text();
    return reply.header('cache-control', 'no-store').type(metrics.contentType).send(text);
  });
}
