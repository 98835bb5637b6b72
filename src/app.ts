import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyReply } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { createAuth } from './auth/auth.js';
import { TokenUse } from './auth/api-tokens.js';
import { enforceModuleGuards, forgetChangedPrincipals, type Principal } from './auth/guard.js';
import { PrincipalCache } from './auth/principals.js';
import { BackgroundWork } from './background.js';
import authRoutes from './auth/routes.js';
import ssoRoutes from './auth/sso-routes.js';
import { registerOriginCheck } from './http/origin-check.js';
import { CONSOLE_DIR, registerConsole } from './http/console.js';
import { registerDocs } from './http/docs.js';
import { registerErrorHandling } from './http/errors.js';
import { registerValidation } from './http/validation.js';
import { registerRateLimits } from './http/rate-limit.js';
import { registerResponseHeaders } from './http/security-headers.js';
import { Metrics, registerMetrics } from './http/metrics.js';
import { JOBS } from './jobs/index.js';
import { Jobs } from './jobs/registry.js';
import { ListRunner } from './data/list.js';
import { primeRecordWriter } from './data/binary-csv.js';
import { countingMailer, createMailer, type Mailer } from './mail/mailer.js';
import { stopMarkdownWorker } from './mail/markdown.js';
import cmsModule from './modules/cms/index.js';
import uploadRoutes from './modules/cms/uploads.js';
import crmModule from './modules/crm/index.js';
import iamModule from './modules/iam/index.js';
import { loadUnsubscribeSecret } from './modules/crm/unsubscribe-token.js';
import { useWorkSchedule } from './modules/crm/lead-flow/schedule.js';
import { accountTokenRoutes } from './modules/iam/api-tokens.js';
import { preferenceRoutes } from './modules/iam/preferences.js';
import notificationRoutes from './modules/account/notifications.js';
import liveRoutes from './modules/account/live.js';
import publicRoutes from './modules/public/index.js';
import cronRoutes from './modules/system/cron.js';
import healthRoutes from './modules/system/health.js';
import type { App } from './types.js';
import './types.js';

/** The service's Fastify instance; declared in types.ts, beside its decorations, so that routes need not import this file. */
export type { App } from './types.js';

export type AppDeps = {
  config: Config;
  database: Database;
  /** A pino logger or logger options; tests pass a capture stream. */
  logger?: boolean | object;
  /** Mail transport; by default SMTP_URL or the outbox. */
  mailer?: Mailer;
  /** Run the job queue (pg-boss) with the app: on in the service, opt-in for tests. */
  jobs?: boolean;
  /** Rate-limit key namespace; instances sharing Redis and a namespace share their counters. */
  rateLimitNamespace?: string;
  /** The built staff console served at `/` (default: console/dist beside the service). */
  consoleDir?: string;
};

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Paths of secrets pino must never write. */
export const LOG_REDACTIONS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.token',
  '*.secret',
];

/** A URL as logged: query values redacted (an unsubscribe or reset link carries its token there; CONTRACT §13). */
export const loggedUrl = (url: string) => url.replace(/([?&][^=&#]*=)[^&#]*/g, '$1[redacted]');

/**
 * The service's own logger options: LOG_LEVEL, the redactions, and LOG_FORMAT: one JSON object a line, or pino-pretty's
 * readable lines. Pretty lines are formatted and written synchronously in this thread (pino-pretty's formatter, not its
 * piped stream), so the last lines before `process.exit` (the shutdown message) are not lost. `destination` is stdout
 * unless a test gives another stream.
 */
export async function loggerOptions(config: Config, destination?: NodeJS.WritableStream): Promise<object> {
  const options = { level: config.logLevel, redact: { paths: LOG_REDACTIONS, censor: '[redacted]' } };
  if (config.logFormat !== 'pretty') return destination ? { ...options, stream: destination } : options;
  const { prettyFactory } = await import('pino-pretty');
  const out = destination ?? process.stdout;
  const prettify = prettyFactory({ colorize: !destination && process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return { ...options, stream: { write: (line: string) => void out.write(prettify(line)) } };
}

/** Request lines in logs never hold a query value, whatever logger options the caller gave. */
function withLogSerializers(logger: boolean | object): boolean | object {
  if (logger === false) return false;
  const options = logger === true ? {} : logger;
  return {
    ...options,
    serializers: {
      req: (req: { method: string; url: string; ip?: string; socket?: { remotePort?: number } }) => ({
        method: req.method, url: loggedUrl(req.url), remoteAddress: req.ip, remotePort: req.socket?.remotePort,
      }),
    },
  };
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  useWorkSchedule(config);
  const app = Fastify({
    logger: withLogSerializers(deps.logger ?? (await loggerOptions(config))),
    // A client's request id is kept only when it cannot forge log lines or bloat them (CONTRACT §13).
    genReqId: (req) => (typeof req.headers['x-request-id'] === 'string' && REQUEST_ID.test(req.headers['x-request-id']) ? req.headers['x-request-id'] : uuidv7()),
    trustProxy: config.trustProxy,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Errors Fastify raises before routing (a path that is not valid percent-encoded UTF-8) get the contract's body too.
    frameworkErrors: (error, request, reply) => {
      const details = error.code === 'FST_ERR_BAD_URL' ? { url: 'is not a valid URL: a percent-encoded part is not UTF-8' } : { url: error.message };
      // Before routing: no hook has run, so the request id is set here.
      void (reply as FastifyReply).code(400).header('x-request-id', request.id).send({ error: 'Validation error', details });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  app.decorate('database', database);
  await loadUnsubscribeSecret(database);
  app.decorate('lists', new ListRunner(database.db, { slowPageMs: config.slowPageMs }));
  const jobs = new Jobs(JOBS, app.log);
  // Metrics exist only when their endpoint does (METRICS_TOKEN): otherwise nothing is measured.
  const metrics = config.metricsToken ? new Metrics({ database, jobs, log: app.log }) : null;
  app.decorate('metrics', metrics);
  const baseMailer = deps.mailer ?? createMailer(config, app.log);
  const mailer = metrics ? countingMailer(baseMailer, { sent: () => metrics.mailSent.inc(), failed: () => metrics.mailFailed.inc() }) : baseMailer;
  app.decorate('mailer', mailer);
  const background = new BackgroundWork();
  app.decorate('background', background);
  app.decorate('auth', createAuth(config, database, mailer, app.log, background));
  const principals = new PrincipalCache<Principal>();
  await principals.start(database);
  app.decorate('principals', principals);
  app.decorate('tokenUse', new TokenUse(database.db, app.log));
  app.addHook('onClose', async () => principals.close());
  // The Markdown worker thread, if large content started it: its work under way finishes first.
  app.addHook('onClose', async () => stopMarkdownWorker());
  forgetChangedPrincipals(app);
  // Notices and reset mail under way are sent before the mailer closes (each send has the transport's own timeouts).
  app.addHook('onClose', async () => {
    await background.settled();
    await mailer.close();
  });
  // The API answers JSON; the docs reference, the one page with scripts, sets its own policy (http/docs.ts).
  registerResponseHeaders(app, { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } });
  registerValidation(app);
  registerErrorHandling(app);
  await app.register(cors, { origin: config.allowedOrigins.length ? config.allowedOrigins : false, credentials: true, methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'] });
  // Before any guard or rate limit: a forged cross-site request with the session cookie goes no further.
  registerOriginCheck(app, config);
  await app.register(cookie);
  await registerDocs(app);

  app.decorate('redis', (await registerRateLimits(app, { namespace: deps.rateLimitNamespace })) ?? null);
  enforceModuleGuards(app);
  // Shutdown begins (main.ts sets it on SIGTERM before closing; any close sets it too): readiness answers 503.
  app.decorate('lifecycle', { stopping: false });
  app.addHook('preClose', async () => void (app.lifecycle.stopping = true));
  if (metrics) registerMetrics(app, metrics);

  // Background work (jobs/index.ts lists every job): the queue starts when the app is ready and stops with it.
  app.decorate('jobs', jobs);
  if (deps.jobs !== false) {
    app.addHook('onReady', async () => app.jobs.start({ config, database, mailer, log: app.log }));
    app.addHook('preClose', async () => app.jobs.stop());
  }

  // Exports on PostgreSQL write their records from binary COPY: the writer sees a sample of every path first.
  if (database.copyBinary) app.addHook('onReady', async () => primeRecordWriter());

  await app.register(healthRoutes);
  await app.register(cronRoutes);
  await app.register(authRoutes);
  await app.register(ssoRoutes);
  await app.register(accountTokenRoutes);
  await app.register(preferenceRoutes);
  await app.register(notificationRoutes);
  await app.register(liveRoutes);
  await app.register(cmsModule);
  await app.register(uploadRoutes);
  await app.register(crmModule);
  await app.register(iamModule);
  await app.register(publicRoutes);
  await registerConsole(app, deps.consoleDir ?? CONSOLE_DIR);
  return app;
}
