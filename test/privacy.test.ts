import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clock } from '../src/clock.js';
import { as, clockAt, createTestApp, createUser, CRON_SECRET, none, ok, PATIENCE_MS, type TestContext, waitFor } from './helpers.js';
import { make } from './factories.js';

type User = Awaited<ReturnType<typeof createUser>>;

const PATH = '/api/crm/privacy-requests';
/** Tables holding personal data or copies of it: after an erase none of them names the person. */
const PLACES = ['leads', 'inquiries', 'newsletter_subscriptions', 'newsletter_signups', 'reservations', 'crm_activities', 'crm_tasks', 'campaign_deliveries', 'campaigns',
  'notifications', 'activity_logs', 'trash', 'webhook_deliveries', 'change_log', 'imports', 'privacy_requests'];

let ctx: TestContext;
let admin: User;
let agent: User;
const realNow = clock.now;

beforeAll(async () => {
  // Jobs on: campaign mail goes to the outbox (stored mail), webhook deliveries are recorded.
  ctx = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '' }, { jobs: true });
  admin = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' }, { name: 'Privacy Admin' });
  agent = await createUser(ctx, { crm: 'rw' }, { name: 'Agent Smith' });
  expect((await as(ctx, admin).post('/api/iam/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] })).statusCode).toBe(201);
});
afterAll(async () => {
  clock.now = realNow;
  await ctx?.close();
});

const count = async (sql: string, values: unknown[] = []) => Number((await ctx.database.execute(sql, values)).rows[0].n);
/** Rows of each place whose text holds `term` (case-insensitive). */
async function mentions(term: string) {
  const found: Record<string, number> = {};
  for (const table of PLACES) {
    const n = await count(`select count(*)::int as n from ${table} t where t::text ilike $1`, [`%${term}%`]);
    if (n) found[table] = n;
  }
  return found;
}
const outbox = () => join(ctx.config.dataDir, 'outbox');
const mailNaming = (term: string) => (existsSync(outbox()) ? readdirSync(outbox()).filter((f) => readFileSync(join(outbox(), f), 'utf8').toLowerCase().includes(term.toLowerCase())) : []);

let visits = 10;

/**
 * A person with something in every place: two leads (one deleted, in the trash), an inquiry, a subscription, a
 * reservation, an activity and a follow-up on the lead, a campaign delivered to them (a stored mail), notifications and
 * webhook deliveries of it all.
 */
async function seedPerson(first: string, last: string, email: string, phone: string) {
  const lead = await make.lead(ctx, { first_name: first, last_name: last, email, phone: phone.replace(/ /g, '-'), notes: `${first} prefers mornings`, assigned_to: agent.id, status: 'qualified' }, admin);
  // An older lead of theirs, by phone only and under a nickname, deleted: in the trash.
  const old = await make.lead(ctx, { first_name: `${first}ito`, last_name: last, phone, source: 'event', assigned_to: agent.id }, admin);
  await ok(as(ctx, admin).delete(`/api/crm/leads/${old.id}`));
  const inquiry = await make.inquiry(ctx, { name: `${first} ${last}`, email: email.toUpperCase(), phone, subject: `Visit for ${first}`, message: `Call me on ${phone}` }, admin);
  // Their own visits to the website, from their address and browser: a newsletter sign-up (pending its confirmation)
  // and the inquiry form.
  const ip = `203.0.113.${++visits}`;
  await ok(as(ctx, none, { remoteAddress: ip, headers: { 'user-agent': `${first}Browser/1.0` } })
    .post('/api/public/newsletter', { email, name: `${first} ${last}`, form: 'footer' }));
  const subscription = await make.newsletter(ctx, { email, name: `${first} ${last}` }, admin);
  await ok(as(ctx, none, { remoteAddress: ip, headers: { 'user-agent': `${first}Browser/1.0` } })
    .post('/api/public/inquiries', { name: `${first} ${last}`, email, subject: 'Price list', message: 'Please send it' }), 201);
  const unit = await make.unit(ctx, { price: 2_500_000 }, admin);
  const reservation = await make.reservation(ctx, { inventory_id: unit.id, client_name: `${first} ${last}`, email, contact_number: phone, notes: `${first} pays in May` }, admin);
  const activity = await ok(as(ctx, admin).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'call', outcome: 'answered', body: `${first} asked about parking` }), 201);
  const task = await ok(as(ctx, admin).post('/api/crm/tasks', { title: `Call ${first} ${last}`, notes: `at ${phone}`, due_at: new Date(Date.now() + 86_400_000).toISOString(), assigned_to: agent.id, lead_id: lead.id }), 201);
  const campaign = await make.campaign(ctx, { recipients: [email] }, admin);
  await ok(as(ctx, admin).post(`/api/crm/campaigns/${campaign.id}/send`));
  await waitFor(() => mailNaming(`To: ${email}`).length > 0, PATIENCE_MS, `the campaign mail to ${email} in the outbox`);
  // The campaign's job records the delivery as sent after the mail went (its row changes once more).
  await waitFor(async () => (await count('select count(*)::int as n from campaign_deliveries where campaign_id = $1 and status = \'sent\'', [campaign.id])) === 1, PATIENCE_MS, 'the delivery recorded as sent');
  // Staff notices of the website's inquiry (and their mail) are written after its answer: done before anything is counted.
  await ctx.app.background.settled();
  return { lead, old, inquiry, subscription, unit, reservation, activity, task, campaign, ip };
}

describe('export', () => {
  test('finds the person everywhere and downloads one JSON document; the request keeps no address or phone', async () => {
    const seeded = await seedPerson('Maria', 'Santos', 'maria.santos@example.com', '+63 917 123 4567');
    const other = await make.lead(ctx, { first_name: 'Other', last_name: 'Person', email: 'other.person@example.com' }, admin);

    const done = await ok(as(ctx, admin).post(PATH, { kind: 'export', email: 'Maria.Santos@Example.com' }), 201);
    expect(done.kind).toBe('export');
    for (const section of ['leads', 'inquiries', 'subscriptions', 'pending_signups', 'reservations', 'activities', 'follow_ups', 'campaign_deliveries', 'notifications', 'audit_entries', 'trash', 'webhook_deliveries', 'mail']) {
      expect(done.found[section], section).toBeGreaterThan(0);
    }
    expect(done.found.leads).toBe(1); // the deleted lead (phone only) is in the trash section
    expect(done.download).toBe(`${PATH}/${done.id}/download`);

    const file = await as(ctx, admin).get(done.download);
    expect(file.statusCode, file.body).toBe(200);
    expect(file.headers['content-disposition']).toContain(`privacy-export-${done.id}.json`);
    const document = file.json();
    expect(document.privacy_request).toMatchObject({ id: done.id, kind: 'export' });
    expect(document.leads.map((l: any) => l.id)).toEqual([seeded.lead.id]);
    expect(document.leads[0]).toMatchObject({ first_name: 'Maria', email: 'maria.santos@example.com', notes: 'Maria prefers mornings' });
    expect(document.inquiries.map((i: any) => i.id)).toContain(seeded.inquiry.id);
    expect(document.inquiries).toHaveLength(2); // the one recorded by staff, the one from the website's form
    expect(document.subscriptions[0]).toMatchObject({ id: seeded.subscription.id, status: 'subscribed' });
    expect(document.reservations[0]).toMatchObject({ id: seeded.reservation.id, client_name: 'Maria Santos' });
    expect(document.activities[0]).toMatchObject({ id: seeded.activity.id, body: 'Maria asked about parking' });
    expect(document.follow_ups[0]).toMatchObject({ id: seeded.task.id, title: 'Call Maria Santos' });
    expect(document.campaign_deliveries[0]).toMatchObject({ campaign_id: seeded.campaign.id, email: 'maria.santos@example.com' });
    expect(document.trash.map((t: any) => t.record_id)).toContain(seeded.old.id);
    expect(document.audit_entries.some((a: any) => a.resource === 'leads' && a.resource_id === seeded.lead.id && a.action === 'create')).toBe(true);
    expect(document.notifications.length).toBeGreaterThan(0);
    expect(document.mail).toContainEqual(expect.objectContaining({ stored: true, to: 'maria.santos@example.com', subject: 'News' }));
    expect(JSON.stringify(document)).not.toContain(other.id);

    // By phone, in another format: the same person (their leads, inquiry, reservation).
    const byPhone = await ok(as(ctx, admin).post(PATH, { kind: 'export', phone: '(63) 917-123-4567' }), 201);
    expect(byPhone.found.leads).toBe(1);
    expect(byPhone.found.inquiries).toBe(1);
    expect(byPhone.found.reservations).toBe(1);

    // The request is kept with what was found, never the address or phone in clear; audited as its own action.
    const kept = await ok(as(ctx, admin).get(`${PATH}/${done.id}`));
    expect(kept).toMatchObject({ id: done.id, kind: 'export', origin: 'request', requested_by: { id: admin.id }, found: done.found });
    expect(kept.records.leads).toEqual([seeded.lead.id]);
    for (const term of ['maria.santos', '9171234567', '917 123 4567', 'Santos']) expect(await count(`select count(*)::int as n from privacy_requests p where p::text ilike $1`, [`%${term}%`])).toBe(0);
    expect(await count(`select count(*)::int as n from activity_logs where action = 'privacy_export' and resource = 'privacy_requests' and resource_id = $1 and user_id = $2`, [done.id, admin.id])).toBe(1);
  });
});

describe('erase', () => {
  test('anonymises every record and every copy; counts, stats and reports stay exact', async () => {
    const email = 'juan.reyes@example.com';
    const phone = '+63 918 765 4321';
    const seeded = await seedPerson('Juan', 'Reyes', email, phone);
    const control = await make.lead(ctx, { first_name: 'Carla', last_name: 'Control', email: 'carla.control@example.com', notes: 'keep me' }, admin);
    expect(Object.keys(await mentions(email)).length).toBeGreaterThan(8);

    const stats = () => ok(as(ctx, admin).get('/api/crm/stats'));
    const funnel = () => ok(as(ctx, admin).get('/api/crm/reports/funnel'));
    const [statsBefore, funnelBefore] = [await stats(), await funnel()];
    const leadsBefore = (await ok(as(ctx, admin).get('/api/crm/leads?limit=1'))).pagination.total;

    const done = await ok(as(ctx, admin).post(PATH, { kind: 'erase', email, phone }), 201);
    expect(done).toMatchObject({ kind: 'erase', download: null });
    expect(done.found.leads).toBe(1);
    expect(done.found.trash).toBeGreaterThan(0);

    // The records stay, anonymised; statuses, dates, units and prices kept.
    const lead = await ok(as(ctx, admin).get(`/api/crm/leads/${seeded.lead.id}`));
    expect(lead).toMatchObject({ first_name: 'Erased', last_name: 'person', email: `erased-${seeded.lead.id}@invalid`, phone: null, notes: null, status: 'qualified', source: 'website' });
    const reservation = await ok(as(ctx, admin).get(`/api/crm/reservations/${seeded.reservation.id}`));
    expect(reservation).toMatchObject({ client_name: 'Erased person', contact_number: null, notes: null, status: 'pending', inventory: { id: seeded.unit.id, price: 2_500_000 } });
    const inquiry = await ok(as(ctx, admin).get(`/api/crm/inquiries/${seeded.inquiry.id}`));
    expect(inquiry).toMatchObject({ name: 'Erased person', email: `erased-${seeded.inquiry.id}@invalid`, phone: null, message: '[erased]' });
    const task = await ok(as(ctx, admin).get(`/api/crm/tasks/${seeded.task.id}`));
    expect(task).toMatchObject({ title: 'Call [erased]', notes: null });

    // Nothing anywhere names them: records, audit before/after, trash, webhook payloads, change log, notifications, mail.
    expect(await mentions(email)).toEqual({});
    expect(await mentions('918 765 4321')).toEqual({});
    expect(await mentions('Reyes')).toEqual({});
    expect(await mentions('Juanito')).toEqual({});
    expect(await mentions(seeded.ip)).toEqual({});
    expect(await mentions('JuanBrowser')).toEqual({});
    expect(mailNaming(email)).toEqual([]);
    expect(readdirSync(outbox()).filter((f) => f.endsWith('.erasing'))).toEqual([]);
    // The lead's timeline (read from all of those) still shows its own events (creation, the call, the reservation), without them.
    const timeline = await as(ctx, admin).get(`/api/crm/leads/${seeded.lead.id}/timeline?limit=100`);
    expect(timeline.statusCode).toBe(200);
    expect(timeline.json().pagination.total).toBeGreaterThanOrEqual(3);
    for (const term of [email, 'Reyes', 'Juan', '765 4321']) expect(timeline.body).not.toContain(term);

    // Counts, stats and reports are exactly as before.
    expect(await stats()).toEqual(statsBefore);
    expect(await funnel()).toEqual(funnelBefore);
    expect((await ok(as(ctx, admin).get('/api/crm/leads?limit=1'))).pagination.total).toBe(leadsBefore);

    // Someone else is untouched; the lead's history says it was erased, naming only what it became.
    expect(await ok(as(ctx, admin).get(`/api/crm/leads/${control.id}`))).toMatchObject({ first_name: 'Carla', email: 'carla.control@example.com', notes: 'keep me' });
    const history = await ok(as(ctx, admin).get(`/api/crm/leads/${seeded.lead.id}/history`));
    expect(history.data[0]).toMatchObject({ action: 'privacy_erase', user: { id: admin.id }, changes: { before: {}, after: { first_name: 'Erased', last_name: 'person' } } });
    expect(await count(`select count(*)::int as n from activity_logs where action = 'privacy_erase' and resource = 'privacy_requests' and resource_id = $1`, [done.id])).toBe(1);

    // The deleted lead, restored from the trash, comes back anonymised.
    const entry = (await ok(as(ctx, admin).get(`/api/crm/trash?resource=leads&limit=100`))).data.find((t: any) => t.record_id === seeded.old.id);
    expect(entry.title).toBe('Erased person');
    await ok(as(ctx, admin).post(`/api/crm/trash/${entry.id}/restore`));
    expect(await ok(as(ctx, admin).get(`/api/crm/leads/${seeded.old.id}`))).toMatchObject({ first_name: 'Erased', phone: null, source: 'event' });

    // A campaign to every subscriber leaves their erased address out (the subscription stays, for the counts).
    await make.newsletter(ctx, {}, admin);
    const news = await make.campaign(ctx, {}, admin);
    await ok(as(ctx, admin).post(`/api/crm/campaigns/${news.id}/send`));
    await waitFor(async () => (await count('select count(*)::int as n from campaign_deliveries where campaign_id = $1', [news.id])) > 0, PATIENCE_MS, 'the campaign\'s recipients');
    expect(await count(`select count(*)::int as n from campaign_deliveries where campaign_id = $1 and email like '%@invalid'`, [news.id])).toBe(0);

    // A second erase finds nothing more of them.
    const again = await ok(as(ctx, admin).post(PATH, { kind: 'erase', email }), 201);
    expect(again.found.leads).toBe(0);
  });

  test('a failure half-way leaves nothing changed', async () => {
    const email = 'pedro.fail@example.com';
    const seeded = await seedPerson('Pedro', 'Fail', email, '+63 919 000 1111');
    const before = await mentions(email);
    const requests = await count('select count(*)::int as n from privacy_requests');
    const mail = mailNaming(email);
    // The database fails when the erase reaches the trash, after the records and the audit trail were rewritten.
    await ctx.database.execute(`create function pms_test_crash() returns trigger language plpgsql as $$
      begin raise exception 'simulated crash while erasing'; end $$`);
    await ctx.database.execute('create trigger pms_test_crash before update on trash for each row execute function pms_test_crash()');
    try {
      const failed = await as(ctx, admin).post(PATH, { kind: 'erase', email, phone: '+63 919 000 1111' });
      expect(failed.statusCode).toBeGreaterThanOrEqual(500);
      expect(failed.body).not.toContain('simulated');
    } finally {
      await ctx.database.execute('drop trigger pms_test_crash on trash');
      await ctx.database.execute('drop function pms_test_crash()');
    }
    expect(await mentions(email)).toEqual(before);
    expect(await ok(as(ctx, admin).get(`/api/crm/leads/${seeded.lead.id}`))).toMatchObject({ first_name: 'Pedro', email });
    expect(await count('select count(*)::int as n from privacy_requests')).toBe(requests);
    expect(mailNaming(email)).toEqual(mail);
    expect(readdirSync(outbox()).filter((f) => f.endsWith('.erasing'))).toEqual([]);

    // Once the fault is gone the same request erases it all.
    await ok(as(ctx, admin).post(PATH, { kind: 'erase', email, phone: '+63 919 000 1111' }), 201);
    expect(await mentions(email)).toEqual({});
  });
});

describe('who may ask, and what', () => {
  test('without crm delete: 403; a scoped user: 403 with a reason; signed out: 401', async () => {
    const writer = await createUser(ctx, { crm: 'rw' });
    expect((await as(ctx, writer).post(PATH, { kind: 'export', email: 'x@example.com' })).json()).toEqual({ error: 'Insufficient permissions' });
    expect((await as(ctx, writer).get(PATH)).statusCode).toBe(403);
    const scoped = await createUser(ctx, { crm: 'rwd' });
    await ctx.database.execute(`update module_access set scope = 'own' where user_id = $1 and module = 'crm'`, [scoped.id]);
    for (const res of [await as(ctx, scoped).post(PATH, { kind: 'erase', email: 'x@example.com' }), await as(ctx, scoped).get(PATH)]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toMatch(/record scope of "all"/);
    }
    expect((await as(ctx, none).get(PATH)).statusCode).toBe(401);
  });

  test('bad input: 400 naming the field', async () => {
    const bad = async (body: unknown) => (await ok(as(ctx, admin).post(PATH, body), 400)).details;
    expect(Object.keys(await bad({ kind: 'export' })).sort()).toEqual(['email', 'phone']);
    expect(Object.keys(await bad({ kind: 'erase', email: '   ', phone: '' }))).toContain('email');
    expect(await bad({ kind: 'export', email: 'not-an-address' })).toHaveProperty('email');
    expect(await bad({ kind: 'export', phone: 'call me' })).toHaveProperty('phone');
    expect(await bad({ kind: 'delete', email: 'x@example.com' })).toHaveProperty('kind');
    expect(await bad({ email: 'x@example.com' })).toHaveProperty('kind');
    expect(await bad({ kind: 'export', email: 'x@example.com', name: 'X' })).toHaveProperty('name');
    expect((await ok(as(ctx, admin).get(`${PATH}?sort=kind`), 400)).details).toHaveProperty('sort');
    expect((await as(ctx, admin).get(`${PATH}/${uuidv7()}`)).statusCode).toBe(404);
    expect((await as(ctx, admin).get(`${PATH}/not-a-uuid/download`)).statusCode).toBe(400);
  });

  test('the list pages and filters requests; an erase has no download', async () => {
    const erase = await ok(as(ctx, admin).post(PATH, { kind: 'erase', email: 'nobody@example.com' }), 201);
    expect(Object.values(erase.found).every((n) => n === 0)).toBe(true);
    const page = await ok(as(ctx, admin).get(`${PATH}?limit=2&kind=erase&sort=created_at&order=desc`));
    expect(page.pagination.total).toBe(await count(`select count(*)::int as n from privacy_requests where kind = 'erase'`));
    expect(page.data[0]).toMatchObject({ id: erase.id, kind: 'erase', download: null, requested_by: { id: admin.id } });
    expect(page.data[0]).not.toHaveProperty('records');
    expect((await as(ctx, admin).get(`${PATH}/${erase.id}/download`)).statusCode).toBe(409);
  });
});

describe('retention', () => {
  test('off by default: nothing erased', async () => {
    const res = await ok(as(ctx, none).post('/api/cron/privacy-retention', undefined, { authorization: `Bearer ${CRON_SECRET}` }));
    expect(res).toMatchObject({ erased: 0, requests: 0 });
    expect((await as(ctx, none).post('/api/cron/privacy-retention')).statusCode).toBe(401);
  });

  test('anonymises exactly the leads lost or untouched for PERSONAL_DATA_RETENTION_MONTHS, recorded as a request of the system', async () => {
    const kept = await createTestApp({ PERSONAL_DATA_RETENTION_MONTHS: '6' });
    try {
      const boss = await createUser(kept, { crm: 'rwd', iam: 'rwd' });
      const lead = async (status: string, name: string) => (await ok(as(kept, boss).post('/api/crm/leads', { first_name: name, last_name: 'Old', email: `${name.toLowerCase()}@example.com`, status }), 201)).id as string;
      clockAt('2026-01-05T10:00:00.000Z');
      const lost = await lead('lost', 'Lost');
      const stale = await lead('new', 'Stale');
      const active = await lead('contacted', 'Active');
      const changed = await lead('qualified', 'Changed');
      const lostLately = await lead('new', 'Lately');
      clockAt('2026-05-20T10:00:00.000Z');
      await ok(as(kept, boss).post(`/api/crm/leads/${active}/activities`, { kind: 'note', body: 'Still interested' }), 201);
      await ok(as(kept, boss).patch(`/api/crm/leads/${changed}`, { interest: 'Garden unit' }));
      await ok(as(kept, boss).patch(`/api/crm/leads/${lostLately}`, { status: 'lost' }));
      clockAt('2026-07-10T10:00:00.000Z');
      const run = await ok(as(kept, none).post('/api/cron/privacy-retention', undefined, { authorization: `Bearer ${CRON_SECRET}` }));
      expect(run).toMatchObject({ erased: 2, requests: 1 });
      const name = async (id: string) => (await ok(as(kept, boss).get(`/api/crm/leads/${id}`))).first_name;
      expect(await name(lost)).toBe('Erased');
      expect(await name(stale)).toBe('Erased');
      expect(await name(active)).toBe('Active');
      expect(await name(changed)).toBe('Changed');
      expect(await name(lostLately)).toBe('Lately');
      const list = await ok(as(kept, boss).get(`${PATH}?origin=retention`));
      expect(list.data).toHaveLength(1);
      expect(list.data[0]).toMatchObject({ kind: 'erase', origin: 'retention', requested_by: null, found: { leads: 2 } });
      // Already erased leads are not taken again.
      expect(await ok(as(kept, none).post('/api/cron/privacy-retention', undefined, { authorization: `Bearer ${CRON_SECRET}` }))).toMatchObject({ erased: 0 });
    } finally {
      clock.now = realNow;
      await kept.close();
    }
  });
});
