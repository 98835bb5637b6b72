import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { buildApp, loggerOptions } from '../app.js';
import { generatePassword } from '../auth/accounts.js';
import { type Config, loadConfig, loadDotEnv } from '../config.js';
import type { Actor } from '../data/actor.js';
import { type Database, openDatabase } from '../db/client.js';
import { amenities, articles, campaigns, careers, inquiries, inventoryUnits, leads, MODULES, newsletterSubscriptions, projects, reservations } from '../db/schema/index.js';
import { signUnsubscribeToken, unsubscribeSecretOf } from '../modules/crm/unsubscribe-token.js';
import { administration } from '../modules/iam/users.js';
import { apiClient } from './demo/api.js';
import { browserOf, seedDemo, type Seeded, visitorAddress } from './demo/seed.js';
import { Random } from './demo/random.js';
import { assertServiceStopped } from './pglite-owner.js';

export const DEMO_ADMIN = { email: 'demo.admin@example.com', name: 'Demo Administrator' };

const USAGE = `Usage: npm run seed:demo

Fills an empty database with demo content to click through in the console: projects with generated photos, articles,
job postings, amenities, staff (sales agents with each crm record scope), leads with their calls, e-mails, site visits
and follow-ups (some overdue), lead flow (action plans, groups, rules; leads to claim, late ones, plans running), inventory units, reservations, inquiries, newsletter subscribers and a sent campaign. Every record is made through the service's own API (validated, audited, with image variants and mail),
signed in as a new administrator, ${DEMO_ADMIN.email}, whose password is printed once at the end.

The database is the service's (DATABASE_URL, or the PGlite files in DATA_DIR: stop the service first then). A database
that already holds content (any project, lead, article…) is refused: demo data never mixes with real data.
Mail goes where the service sends it: SMTP_URL, or .eml files in DATA_DIR/outbox.`;

/** The same demo on every run. */
const SEED = 20_260_101;
/** The seed's own requests, as the activity log names them. */
const USER_AGENT = 'npm run seed:demo';
const ACTOR: Actor = { userId: null, ip: null, userAgent: USER_AGENT };
/** Leads and inquiries go this far back, inside the activity-log retention (their logs are kept). */
const HISTORY_DAYS = 75;

/** Refused: the message says why; the command exits 1 having changed nothing. */
export class SeedRefused extends Error {}

const CONTENT: Record<string, PgTable> = {
  projects, articles, careers, amenities, leads, 'inventory units': inventoryUnits, reservations, inquiries,
  'newsletter subscribers': newsletterSubscriptions, campaigns,
};

/** The kinds of content the database already holds (users alone are no content: every service has an administrator). */
async function contentIn(database: Database): Promise<string[]> {
  const found: string[] = [];
  for (const [label, table] of Object.entries(CONTENT)) {
    if ((await database.db.select({ one: sql`1` }).from(table).limit(1)).length) found.push(label);
  }
  return found;
}

/**
 * The app the seed talks to: the service's own, with every rate limit lifted (several hundred requests in half a
 * minute from one user would be refused otherwise: this is the operator's tool, not a client), counters in memory, and
 * only errors logged (its own requests would fill the screen).
 */
// The demo's visitors send the public forms directly (no form token, CAPTCHA or e-mailed confirmation to follow).
const seedConfig = (config: Config): Config => ({
  ...config, authRateLimit: 1_000_000, writeRateLimit: 1_000_000, readRateLimit: 1_000_000, redisUrl: undefined, logLevel: 'error',
  publicFormToken: false, captcha: undefined, newsletterDoubleOptIn: false,
});

const outboxOf = (config: Config) => join(config.dataDir, 'outbox');
const outboxCount = (config: Config) => (existsSync(outboxOf(config)) ? readdirSync(outboxOf(config)).length : 0);

function summary(seeded: Seeded, config: Config, password: string, mailed: number, seconds: number): string {
  const n = (key: string) => seeded[key] ?? 0;
  const mail = config.smtpUrl
    ? `sent through the SMTP server of SMTP_URL (${new URL(config.smtpUrl).host})`
    : `${mailed} messages written to ${outboxOf(config)} (SMTP_URL is not set: nothing left this machine)`;
  return [
    `Demo data created in ${seconds.toFixed(1)} s:`,
    `  cms: ${n('projects')} projects with ${n('galleries')} gallery photos, ${n('articles')} articles, ${n('careers')} job postings, ${n('amenities')} amenities`,
    `  crm: ${n('leads')} leads (${n('leads from inquiries')} from website inquiries), ${n('inventory')} inventory units, ${n('reservations')} reservations (${n('reservations sold')} sold, ${n('reservations confirmed')} confirmed, `
      + `${n('reservations cancelled')} cancelled, ${n('reservations pending')} pending), ${n('inquiries')} inquiries, ${n('subscribers')} newsletter subscribers `
      + `(${n('unsubscribed')} since unsubscribed), ${n('campaigns')} campaigns (one sent: ${n('campaign deliveries sent')} delivered, ${n('campaign deliveries failed')} failed), `
      + `${n('activities')} activities on leads, ${n('tasks')} follow-ups (${n('tasks overdue')} overdue)`,
    `  lead flow: ${n('action plans')} action plans (${n('action plans running')} running), ${n('lead groups')} groups, ${n('lead flow rules')} rules; `
      + `${n('leads waiting to be claimed')} leads waiting to be claimed, ${n('leads late for a first contact')} late for a first contact`,
    `  history: ${n('history leads')} earlier leads over six months, ${n('history reservations')} reservations (${n('history sales')} sold), ${n('history activities')} activities, for the sales reports`,
    `  iam: ${n('users')} users in ${n('departments')} departments (sales agents with the crm record scopes own and department, the others all)`,
    `Mail: ${mail}`,
    `Console: ${config.baseUrl}/ — sign in as ${DEMO_ADMIN.email} with the password ${password} (shown once)`,
  ].join('\n');
}

/** Runs the seed; returns the summary to print. Exported for the tests, which run it against a test database. */
export async function runSeedDemo(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { values } = parseArgs({ args: argv, strict: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) return USAGE;

  const started = Date.now();
  const config = loadConfig(env, { stdoutIsTTY: process.stdout.isTTY === true });
  if (!config.databaseUrl) assertServiceStopped(config.dataDir);
  const database = await openDatabase({ url: config.databaseUrl, dataDir: `${config.dataDir}/pglite` });
  try {
    await database.migrate();
    const found = await contentIn(database);
    if (found.length) throw new SeedRefused(`the database already holds ${found.join(', ')}: demo data goes only into an empty database, never beside real data`);

    const password = generatePassword();
    const admin = await administration.createUser(database, ACTOR, {
      ...DEMO_ADMIN, password, grants: Object.fromEntries(MODULES.map((module) => [module, { can_read: true, can_write: true, can_delete: true }])),
    }, config.bcryptCost);
    const outboxBefore = outboxCount(config);

    const appConfig = seedConfig(config);
    const app = await buildApp({ config: appConfig, database, logger: await loggerOptions(appConfig) });
    try {
      await app.ready();
      const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: DEMO_ADMIN.email, password }, headers: { 'user-agent': USER_AGENT } });
      if (login.statusCode !== 200) throw new Error(`signing in as ${DEMO_ADMIN.email} failed: ${login.statusCode} ${login.body}`);
      const secret = unsubscribeSecretOf(database);
      const seeded = await seedDemo({
        api: apiClient(app, { authorization: `Bearer ${login.json().session.token}`, 'user-agent': USER_AGENT }),
        visitor: (n) => apiClient(app, { 'user-agent': browserOf(n) }, visitorAddress(n)),
        random: new Random(SEED),
        adminId: admin.id,
        historyDays: Math.min(HISTORY_DAYS, config.activityLogRetentionDays - 1),
        unsubscribePath: (email) => `/api/public/newsletter/unsubscribe?token=${signUnsubscribeToken(secret, email)}`,
        database,
      });
      return summary(seeded, config, password, outboxCount(config) - outboxBefore, (Date.now() - started) / 1000);
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  loadDotEnv();
  runSeedDemo(process.argv.slice(2)).then(
    (text) => console.log(text),
    (err: unknown) => {
      console.error(`seed:demo: ${err instanceof Error ? err.message : String(err)}`);
      if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) console.error(`\n${USAGE}`);
      process.exit(1);
    },
  );
}
