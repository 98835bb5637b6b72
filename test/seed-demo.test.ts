import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO_ADMIN, runSeedDemo, SeedRefused } from '../src/cli/seed-demo.js';
import { openDatabase } from '../src/db/client.js';
import { as, createTestApp, createTestDatabase, pgliteDataDir, login, none, serverUrl, type TestContext } from './helpers.js';

// `npm run seed:demo`: every kind of record, made through the API (audited, image variants, mail), on an empty database only.

const dataDir = mkdtempSync(join(tmpdir(), 'pms-seed-'));
let server: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let env: Record<string, string>;
let summary: string;
let service: TestContext | undefined;
let admin: ReturnType<typeof as>;
let adminId: string;

/** The service on the seeded database (PGlite: closed before the command line opens the files again). */
async function openService() {
  const database = server ?? (await openDatabase({ dataDir: join(dataDir, 'pglite') }));
  // Its own DATA_DIR (a test app removes its own when it closes); the database and the uploads are those the command line filled.
  const { DATA_DIR: _dataDir, ...appEnv } = env;
  service = await createTestApp({ ...appEnv, UPLOAD_DIR: join(dataDir, 'uploads') }, { database });
  const password = /with the password (\S+) \(shown once\)/.exec(summary)![1];
  admin = as(service, await login(service, DEMO_ADMIN.email, password));
  adminId = (await admin.get('/api/auth/session')).json().user.id;
}
async function closeService() {
  const database = service?.database;
  await service?.close();
  if (!server) await database?.close();
  service = undefined;
}

beforeAll(async () => {
  if (serverUrl) server = await createTestDatabase();
  else await pgliteDataDir(join(dataDir, 'pglite'));
  env = {
    DATA_DIR: dataDir, AUTH_SECRET: 'seed-demo-secret-0123456789-0123456789', BCRYPT_COST: '4', BASE_URL: 'https://demo.example.com',
    ...(server ? { DATABASE_URL: server.url! } : {}),
  };
  summary = await runSeedDemo([], env);
  await openService();
  // A hang guard only: the seed (about 15 s on a quiet machine) was seen to take over 180 s with both cores busy elsewhere.
}, 900_000);
afterAll(async () => {
  await closeService();
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A list's total (one row fetched). */
const total = async (url: string) => {
  const res = await admin.get(`${url}${url.includes('?') ? '&' : '?'}limit=1`);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json().pagination.total as number;
};
/** Create entries in the activity log for one resource. */
const created = (resource: string, extra = '') => total(`/api/iam/activity-logs?resource=${resource}&action=create${extra}`);

/** The leads the seed made: its own 120 and those the website's inquiries made (lead flow routes them). */
const demoLeads = () => Number(/(\d+) leads \(/.exec(summary)![1]);

describe('npm run seed:demo', () => {
  test('prints the counts, where mail went, the console and the administrator\'s password; --help prints the usage', async () => {
    expect(summary).toContain('6 projects with 22 gallery photos, 8 articles, 5 job postings, 10 amenities');
    expect(summary).toMatch(/(\d+) leads \((\d+) from website inquiries\), 40 inventory units, 12 reservations/);
    const [, leadCount, fromInquiries] = /(\d+) leads \((\d+) from website inquiries\)/.exec(summary)!;
    expect(Number(leadCount)).toBe(120 + Number(fromInquiries));
    expect(Number(fromInquiries)).toBeGreaterThan(0);
    expect(summary).toContain('history: 90 earlier leads over six months, 26 reservations (18 sold)');
    expect(summary).toContain(`written to ${join(dataDir, 'outbox')}`);
    expect(summary).toMatch(/Console: https:\/\/demo\.example\.com\/ — sign in as demo\.admin@example\.com with the password \S+ \(shown once\)/);
    expect(await runSeedDemo(['--help'], env)).toMatch(/^Usage: npm run seed:demo/);
  });

  test('every kind of record, in the expected numbers and states', async () => {
    const expected: Record<string, number> = {
      '/api/cms/projects': 6, '/api/cms/projects?published=false': 1, '/api/cms/articles': 8, '/api/cms/articles?published=false': 2,
      '/api/cms/careers': 5, '/api/cms/careers?published=false': 1, '/api/uploads': 30,
      // The recent weeks' records and the history of the months before (src/cli/demo/history.ts).
      '/api/crm/leads': demoLeads() + 90, '/api/crm/inventory': 40, '/api/crm/inventory?status=sold': 3 + 18, '/api/crm/inventory?status=reserved': 10,
      '/api/crm/reservations': 12 + 26, '/api/crm/reservations?status=confirmed': 7 + 21, '/api/crm/reservations?status=cancelled': 2 + 5,
      '/api/crm/reservations?payment_status=paid': 3 + 18, '/api/crm/inquiries': 25, '/api/crm/newsletters': 40,
      '/api/crm/newsletters?status=unsubscribed': 3, '/api/iam/users': 5,
    };
    for (const [url, count] of Object.entries(expected)) expect(await total(url), url).toBe(count);
    expect((await admin.get('/api/cms/amenities')).json().data).toHaveLength(10);
    expect((await admin.get('/api/iam/departments')).json().data).toHaveLength(5);
    // Every state and source is there to filter by; many leads are the administrator's.
    const spread = [
      ...['new', 'contacted', 'qualified', 'converted', 'lost'].map((status) => `/api/crm/leads?status=${status}`),
      ...['website', 'referral', 'event', 'social'].map((source) => `/api/crm/leads?source=${source}`),
      ...['unread', 'read', 'responded', 'closed'].map((status) => `/api/crm/inquiries?status=${status}`),
    ];
    for (const url of spread) expect(await total(url), url).toBeGreaterThan(0);
    expect(await total(`/api/crm/leads?assigned_to=${adminId}`)).toBeGreaterThan(10);
    // Leads arrived over weeks: the oldest long before today.
    const [oldest] = (await admin.get('/api/crm/leads?limit=1&sort=created_at&order=asc')).json().data;
    expect(Date.now() - Date.parse(oldest.created_at)).toBeGreaterThan(30 * 24 * 3600 * 1000);
  });

  test('project and article images are uploads with WebP variants and a srcset', async () => {
    for (const { id } of (await admin.get('/api/cms/projects?limit=100')).json().data) {
      const project = (await admin.get(`/api/cms/projects/${id}`)).json();
      expect(project.galleries.length, project.name).toBeGreaterThanOrEqual(3);
      for (const image of [project.cover_photo_variants, ...project.galleries.map((g: { image: unknown }) => g.image)]) {
        expect(image).toMatchObject({ width: 1600, height: 1067, srcset: expect.stringContaining('.webp 1280w') });
        expect(image.variants.map((v: { width: number }) => v.width)).toEqual([320, 640, 1280]);
      }
    }
    const variant = (await admin.get('/api/cms/articles?limit=1')).json().data[0].cover_image_variants.variants[0];
    const served = await as(service!, none).get(variant.path);
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/webp');
  });

  test('the campaign is sent, every delivery done; the mail is in the outbox', async () => {
    const [sent] = (await admin.get('/api/crm/campaigns?status=sent')).json().data;
    const campaign = (await admin.get(`/api/crm/campaigns/${sent.id}`)).json();
    expect(campaign).toMatchObject({ status: 'sent', recipients: ['all'], deliveries: { total: 40, sent: 40, failed: 0, pending: 0 } });
    expect(await total('/api/crm/campaigns?status=draft')).toBe(1);
    const outbox = join(dataDir, 'outbox');
    const campaignMail = readdirSync(outbox).filter((file) => readFileSync(join(outbox, file), 'utf8').includes(`<campaign-${sent.id}-`));
    expect(campaignMail).toHaveLength(40);
  });

  test('every seeded record has its create entry in the activity log, naming who made it', async () => {
    const projects = (await admin.get('/api/cms/projects?limit=100')).json().data as { id: string }[];
    let galleries = 0;
    for (const { id } of projects) galleries += (await admin.get(`/api/cms/projects/${id}`)).json().galleries.length;
    let grants = 0;
    for (const { id } of (await admin.get('/api/iam/users?limit=100')).json().data) grants += (await admin.get(`/api/iam/module-access/${id}`)).json().data.length;
    expect(grants).toBe(9); // the administrator's three modules and the staff's six grants
    const counts: Record<string, number> = {
      projects: 6, galleries, articles: 8, careers: 5, amenities: 10, uploads: 30, leads: demoLeads() + 90, inventory: 40, reservations: 12 + 26,
      inquiries: 25, newsletters: 40, campaigns: 2, departments: 5, users: 5, module_access: grants,
    };
    for (const [resource, count] of Object.entries(counts)) expect(await created(resource), resource).toBe(count);
    // The administrator made the staff's records; the website's visitors (no user, their own address) the public ones.
    expect(await created('leads', `&user_id=${adminId}`)).toBe(120 + 90);
    const [inquiry] = (await admin.get('/api/crm/inquiries?limit=1')).json().data;
    const [received] = (await admin.get(`/api/crm/inquiries/${inquiry.id}/history?limit=100`)).json().data.filter((log: { action: string }) => log.action === 'create');
    expect(received).toMatchObject({ user: null, ip_address: expect.stringMatching(/^(203\.0\.113|198\.51\.100)\./), created_at: inquiry.created_at });
    // Worked leads have their history: created, then moved on.
    const [converted] = (await admin.get('/api/crm/leads?limit=1&status=converted')).json().data;
    const history = (await admin.get(`/api/crm/leads/${converted.id}/history`)).json().data;
    expect(history.map((log: { action: string }) => log.action)).toEqual(['update', 'create']);
    expect(history[0].changes.after).toMatchObject({ status: 'converted' });
  });

  test('lead flow: plans (some running), groups, rules, a manager for Sales; leads waiting to be claimed and leads late for a first contact', async () => {
    expect(summary).toMatch(/lead flow: 3 action plans \(4 running\), 3 groups, 3 rules; [1-9]\d* leads waiting to be claimed, [1-9]\d* late for a first contact/);
    const plans = (await admin.get('/api/crm/lead-flow/plans')).json().data as { name: string; running: number; steps: { kind: string }[] }[];
    expect(plans.map((plan) => plan.name).sort()).toEqual(['New website lead', 'Open house follow-up', 'Re-engage a quiet lead']);
    expect(plans.find((plan) => plan.name === 'New website lead')!.steps.map((step) => step.kind)).toEqual(['call', 'email', 'call', 'site_visit']);
    // Four started by the seed; the service's speed-to-lead sweep may meanwhile reassign the late website leads (their
    // rule says so), which starts the website plan on each: the sweep doing its work, at a moment the test cannot fix.
    expect(plans.reduce((sum, plan) => sum + plan.running, 0)).toBeGreaterThanOrEqual(4);
    const { db } = service!.database;
    const { departments, leadFlowRules, leadRouting, leads } = await import('../src/db/schema/index.js');
    const { and, isNotNull, isNull, lt, eq } = await import('drizzle-orm');
    expect((await db.select().from(leadFlowRules)).map((rule) => rule.channel).sort()).toEqual(['import', 'website', null].sort());
    const [sales] = await db.select().from(departments).where(eq(departments.name, 'Sales'));
    expect(sales.manager_id).not.toBeNull();
    expect((await db.select().from(leads).where(and(isNotNull(leads.pool_id), isNull(leads.assigned_to)))).length).toBeGreaterThan(0);
    expect((await db.select().from(leadRouting).where(and(isNull(leadRouting.first_contact_at), lt(leadRouting.speed_due_at, new Date())))).length).toBeGreaterThan(0);
    // The calls and e-mails the seed logged are the first contacts of their leads.
    expect((await db.select().from(leadRouting).where(isNotNull(leadRouting.first_contact_at))).length).toBeGreaterThan(10);
  });

  test('a second run is refused and changes nothing', async () => {
    const counts = async () => ({
      logs: await total('/api/iam/activity-logs'), users: await total('/api/iam/users'), leads: await total('/api/crm/leads'),
    });
    const before = await counts();
    await closeService();
    const refusal = await runSeedDemo([], env).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(SeedRefused);
    expect((refusal as Error).message).toMatch(/^the database already holds projects, articles, .*: demo data goes only into an empty database/);
    await openService();
    expect(await counts()).toEqual(before);
  });
});
