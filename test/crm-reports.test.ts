import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { clock, tickingClock } from '../src/clock.js';
import { asc, eq } from 'drizzle-orm';
import { leadFlowRules, leadRouting, leadStatusChanges } from '../src/db/schema/index.js';
import { make } from './factories.js';
import { sendWeeklyReports } from '../src/jobs/weekly-report.js';
import { as, clockAt, createTestApp, createUser, CRON_SECRET, ok, type TestContext, eventually } from './helpers.js';
import { outboxReader } from './mail.js';

/**
 * The sales reports, checked figure by figure against what the lists and the audit trail (each record's history)
 * say, after leads are created, changed, deleted, restored and imported, and changed again after the period.
 */

type User = Awaited<ReturnType<typeof createUser>>;
let ctx: TestContext;
let admin: User;
let agentA: User;
let agentB: User;
let ownViewer: User;
let project: { id: string; name: string };
let otherProject: { id: string; name: string };
const MARCH = 'from=2026-03-01&to=2026-03-31';
/** Manila (TASK_TIME_ZONE's default): March 2026 in instants. */
const MARCH_START = Date.parse('2026-02-28T16:00:00Z');
const MARCH_END = Date.parse('2026-03-31T16:00:00Z');

beforeAll(async () => {
  // Jobs on: imports run.
  ctx = await createTestApp({}, { jobs: true });
  admin = await createUser(ctx, { crm: 'rwd', iam: 'rwd', cms: 'rwd' }, { name: 'Admin' });
  agentA = await createUser(ctx, { crm: 'rwd' }, { name: 'Ana Agent' });
  agentB = await createUser(ctx, { crm: 'rwd' }, { name: 'Ben Agent' });
  ownViewer = agentA;
  project = { name: 'Zephyr Heights', id: (await make.project(ctx, { name: 'Zephyr Heights' }, admin)).id };
  otherProject = { name: 'Quartz Bay', id: (await make.project(ctx, { name: 'Quartz Bay' }, admin)).id };
  const rows = (await as(ctx, admin).get(`/api/iam/module-access/${agentA.id}`)).json().data as { id: string; module: string }[];
  const crm = rows.find((row) => row.module === 'crm')!;
  expect((await as(ctx, admin).patch(`/api/iam/module-access/${crm.id}`, { scope: 'own' })).statusCode).toBe(200);
});
afterAll(async () => ctx?.close());
afterEach(() => {
  clock.now = tickingClock();
});

const report = (name: string, query: string, who: User = admin) => ok(as(ctx, who).get(`/api/crm/reports/${name}?${query}`));

/** Every page of a list. */
async function all(url: string, who: User = admin): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const body = await ok(as(ctx, who).get(`${url}${url.includes('?') ? '&' : '?'}limit=100&page=${page}`));
    rows.push(...body.data);
    if (rows.length >= body.pagination.total || !body.data.length) return rows;
  }
}

/**
 * The funnel of leads created between `start` and `end` (instants), computed from the lists and the audit trail
 * alone: the leads list, each lead's history (statuses it took, when), its reservations, their units' histories.
 */
async function funnelFromTrail(start: number, end: number, who: User = admin) {
  const leads = (await all('/api/crm/leads', who)).filter((lead) => Date.parse(lead.created_at) >= start && Date.parse(lead.created_at) < end);
  const figures = { leads: leads.length, contacted: 0, qualified: 0, reserved: 0, sold: 0 };
  for (const lead of leads) {
    const history = await all(`/api/crm/leads/${lead.id}/history`, who);
    const reached = new Set(history.filter((log) => Date.parse(log.created_at) < end).map((log) => log.changes.after.status).filter(Boolean));
    if (['contacted', 'qualified', 'converted'].some((status) => reached.has(status))) figures.contacted++;
    if (['qualified', 'converted'].some((status) => reached.has(status))) figures.qualified++;
    const reservations = (await all(`/api/crm/reservations?lead_id=${lead.id}`, who)).filter((r) => Date.parse(r.created_at) < end);
    if (reservations.length) figures.reserved++;
    let sold = false;
    for (const reservation of reservations) {
      if (!reservation.inventory) continue;
      const unitLogs = await all(`/api/crm/inventory/${reservation.inventory.id}/history`, who);
      if (unitLogs.some((log) => Date.parse(log.created_at) < end && log.changes.after.status === 'sold' && (log.changes.after.sold_to ?? log.changes.before.sold_to ?? reservation.id) === reservation.id)) sold = true;
    }
    if (sold) figures.sold++;
  }
  return figures;
}

const pick = (row: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((key) => [key, row[key]]));
const STAGES = ['leads', 'contacted', 'qualified', 'reserved', 'sold'];

describe('funnel', () => {
  const ids: Record<string, string> = {};
  let unit: string;
  let reservation: string;

  beforeAll(async () => {
    clockAt('2026-02-27T02:00:00Z');
    ids.before = (await make.lead(ctx, { source: 'website', interest: 'Zephyr Heights', assigned_to: agentA.id }, admin)).id;
    clockAt('2026-03-02T02:00:00Z');
    ids.sold = (await make.lead(ctx, { source: 'website', interest: 'a corner lot at zephyr heights', assigned_to: agentA.id, email: 'sold@example.com' }, admin)).id;
    clockAt('2026-03-03T02:00:00Z');
    ids.late = (await make.lead(ctx, { source: 'referral', interest: 'Quartz Bay', assigned_to: agentB.id }, admin)).id;
    clockAt('2026-03-04T02:00:00Z');
    ids.skipped = (await make.lead(ctx, { source: 'website', assigned_to: agentB.id }, admin)).id;
    clockAt('2026-03-06T02:00:00Z');
    ids.trashed = (await make.lead(ctx, { source: 'event', assigned_to: agentA.id }, admin)).id;
    ids.restored = (await make.lead(ctx, { source: 'event', status: 'contacted', assigned_to: agentA.id }, admin)).id;
    // The last hours of March 31 in Manila are still March.
    clockAt('2026-03-31T15:30:00Z');
    ids.lastDay = (await make.lead(ctx, { source: 'social', assigned_to: agentA.id }, admin)).id;
    clockAt('2026-03-31T16:00:00Z');
    ids.april = (await make.lead(ctx, { source: 'social', assigned_to: agentA.id }, admin)).id;

    clockAt('2026-03-05T02:00:00Z');
    await ok(as(ctx, agentA).patch(`/api/crm/leads/${ids.sold}`, { status: 'contacted' }));
    clockAt('2026-03-07T02:00:00Z');
    await ok(as(ctx, admin).patch(`/api/crm/leads/${ids.skipped}`, { status: 'qualified' }));
    clockAt('2026-03-10T02:00:00Z');
    await ok(as(ctx, agentA).patch(`/api/crm/leads/${ids.sold}`, { status: 'qualified' }));
    unit = (await make.unit(ctx, { project_id: project.id, price: 2_500_000 }, admin)).id;
    clockAt('2026-03-12T02:00:00Z');
    reservation = (await ok(as(ctx, agentA).post('/api/crm/reservations', { inventory_id: unit, client_name: 'Sol Buyer', email: 'sold@example.com', lead_id: ids.sold }), 201)).id;
    clockAt('2026-03-20T02:00:00Z');
    await ok(as(ctx, admin).patch('/api/projects/inventory', { inventory_id: unit, status: 'sold', sold_to: reservation }));
    // Deleted for good (in the trash) and deleted then restored.
    clockAt('2026-03-21T02:00:00Z');
    await ok(as(ctx, admin).delete(`/api/crm/leads/${ids.trashed}`));
    await ok(as(ctx, admin).delete(`/api/crm/leads/${ids.restored}`));
    const trash = await all('/api/crm/trash');
    const entry = trash.find((e) => e.record_id === ids.restored)!;
    await ok(as(ctx, admin).post(`/api/crm/trash/${entry.id}/restore`, {}));
    // After the period: a lead contacted in April, another one lost, the sold one converted.
    clockAt('2026-04-05T02:00:00Z');
    await ok(as(ctx, admin).patch(`/api/crm/leads/${ids.late}`, { status: 'contacted' }));
    await ok(as(ctx, admin).patch(`/api/crm/leads/${ids.skipped}`, { status: 'lost' }));
    await ok(as(ctx, admin).patch(`/api/crm/leads/${ids.sold}`, { status: 'converted' }));
  });

  test('each figure is what the lists and the audit trail say; later changes leave March alone', async () => {
    const body = await report('funnel', MARCH);
    expect(body.range).toEqual({ from: '2026-03-01', to: '2026-03-31' });
    expect(body.group_by).toBe('source');
    const expected = await funnelFromTrail(MARCH_START, MARCH_END);
    expect(pick(body.totals, STAGES)).toEqual(expected);
    // By hand: sold, late, skipped, restored, lastDay; contacted: sold, skipped, restored; qualified: sold, skipped.
    expect(pick(body.totals, STAGES)).toEqual({ leads: 5, contacted: 3, qualified: 2, reserved: 1, sold: 1 });
    expect(body.totals.contacted_rate).toBe(0.6);
    expect(body.rows.map((row: { key: string }) => row.key)).toEqual(['event', 'referral', 'social', 'website']);
    const website = body.rows.find((row: { key: string }) => row.key === 'website');
    expect(website).toMatchObject({ label: 'Website', leads: 2, contacted: 2, qualified: 2, reserved: 1, sold: 1, sold_rate: 0.5 });
    // Sums of the rows are the totals.
    for (const stage of STAGES) expect(body.rows.reduce((n: number, row: Record<string, number>) => n + row[stage], 0)).toBe(body.totals[stage]);

    // Up to April 30: the late lead is contacted by then.
    const april = await report('funnel', 'from=2026-03-01&to=2026-04-30');
    expect(pick(april.totals, STAGES)).toEqual(await funnelFromTrail(MARCH_START, Date.parse('2026-04-30T16:00:00Z')));
    expect(april.totals.leads).toBe(6);
    expect(april.totals.contacted).toBe(4);
  });

  test('the status history records each move, when and by whom; a restored lead keeps its history', async () => {
    const { db } = ctx.database;
    const moves = await db.select().from(leadStatusChanges).where(eq(leadStatusChanges.lead_id, ids.sold)).orderBy(asc(leadStatusChanges.changed_at));
    expect(moves.map((m) => [m.from_status, m.to_status, m.changed_at.toISOString(), m.changed_by])).toEqual([
      [null, 'new', expect.stringMatching(/^2026-03-02T02:00:00/), admin.id],
      ['new', 'contacted', expect.stringMatching(/^2026-03-05T02:00:00/), agentA.id],
      ['contacted', 'qualified', expect.stringMatching(/^2026-03-10T02:00:00/), agentA.id],
      ['qualified', 'converted', expect.stringMatching(/^2026-04-05T02:00:00/), admin.id],
    ]);
    const restored = await db.select().from(leadStatusChanges).where(eq(leadStatusChanges.lead_id, ids.restored));
    expect(restored.map((m) => [m.from_status, m.to_status])).toEqual([[null, 'contacted']]);
  });

  test('the migration\'s backfill from the audit trail gives the same figures as the triggers', async () => {
    const figures = async () => Promise.all(['funnel', 'projects'].map(async (name) => (await report(name, `from=2026-02-01&to=2026-04-30&group_by=month`)).rows));
    const before = await figures();
    const migration = readFileSync(new URL('../drizzle/0021_reports.sql', import.meta.url), 'utf8');
    const backfill = migration.slice(migration.indexOf('-- Backfill:')).split('--> statement-breakpoint').map((part) => part.trim()).filter(Boolean);
    expect(backfill).toHaveLength(4);
    await ctx.database.execute('delete from lead_status_changes; delete from unit_status_changes');
    for (const statement of backfill) await ctx.database.execute(statement);
    expect(await figures()).toEqual(before);
    const moves = await ctx.database.db.select().from(leadStatusChanges).where(eq(leadStatusChanges.lead_id, ids.sold)).orderBy(asc(leadStatusChanges.changed_at));
    expect(moves.map((m) => [m.from_status, m.to_status, m.changed_by])).toEqual([[null, 'new', admin.id], ['new', 'contacted', agentA.id], ['contacted', 'qualified', agentA.id], ['qualified', 'converted', admin.id]]);
  });

  test('grouped by agent, project and month; filters', async () => {
    const byAgent = await report('funnel', `${MARCH}&group_by=agent`);
    const agents = Object.fromEntries(byAgent.rows.map((row: { key: string }) => [row.key, row]));
    expect(agents[agentA.id]).toMatchObject({ label: 'Ana Agent', leads: 3, contacted: 2, qualified: 1, reserved: 1, sold: 1 });
    expect(agents[agentB.id]).toMatchObject({ label: 'Ben Agent', leads: 2, contacted: 1, qualified: 1 });
    expect(byAgent.rows).toHaveLength(2);
    const byProject = await report('funnel', `${MARCH}&group_by=project`);
    const keyed = Object.fromEntries(byProject.rows.map((row: { key: string }) => [row.key, row]));
    expect(keyed[project.id]).toMatchObject({ label: 'Zephyr Heights', leads: 1, sold: 1 });
    expect(keyed[otherProject.id]).toMatchObject({ label: 'Quartz Bay', leads: 1, contacted: 0 });
    expect(keyed.none).toMatchObject({ label: 'No project named', leads: 3 });
    const byMonth = await report('funnel', `from=2026-02-01&to=2026-04-30&group_by=month`);
    expect(byMonth.rows.map((row: { key: string; label: string; leads: number }) => [row.key, row.label, row.leads])).toEqual([
      ['2026-02', 'February 2026', 1], ['2026-03', 'March 2026', 5], ['2026-04', 'April 2026', 1],
    ]);
    expect((await report('funnel', `${MARCH}&project_id=${project.id}`)).totals).toMatchObject({ leads: 1, sold: 1 });
    expect((await report('funnel', `${MARCH}&source=referral`)).totals).toMatchObject({ leads: 1, contacted: 0 });
    expect((await report('funnel', `${MARCH}&agent_id=${agentB.id}`)).totals).toMatchObject({ leads: 2, qualified: 1 });
  });

  test('an own scope sees its own leads\' figures, as its lists do', async () => {
    const mine = await report('funnel', MARCH, ownViewer);
    expect(pick(mine.totals, STAGES)).toEqual(await funnelFromTrail(MARCH_START, MARCH_END, ownViewer));
    expect(mine.totals.leads).toBe(3);
    expect(mine.rows.every((row: { key: string }) => ['website', 'event', 'social'].includes(row.key))).toBe(true);
  });

  test('a department scope sees its department\'s figures, as its lists do', async () => {
    const department = (await make.department(ctx, {}, admin)).id;
    const viewer = await createUser(ctx, { crm: 'r' }, { name: 'Dee Department' });
    for (const who of [viewer, agentB]) await ok(as(ctx, admin).patch(`/api/iam/users/${who.id}`, { department_id: department }));
    const rows = (await as(ctx, admin).get(`/api/iam/module-access/${viewer.id}`)).json().data as { id: string; module: string }[];
    await ok(as(ctx, admin).patch(`/api/iam/module-access/${rows.find((row) => row.module === 'crm')!.id}`, { scope: 'department' }));
    const theirs = await report('funnel', `${MARCH}&group_by=agent`, viewer);
    expect(pick(theirs.totals, STAGES)).toEqual(await funnelFromTrail(MARCH_START, MARCH_END, viewer));
    expect(theirs.rows.map((row: { key: string }) => row.key)).toEqual([agentB.id]);
    expect(theirs.totals).toMatchObject({ leads: 2, contacted: 1, qualified: 1, reserved: 0 });
    // Agent activity and projects by the same rule: only the department's agents.
    const activity = await report('agent-activity', `${MARCH}&group_by=agent`, viewer);
    expect(activity.rows.every((row: { key: string }) => [agentB.id, viewer.id].includes(row.key))).toBe(true);
    expect((await report('projects', MARCH, viewer)).totals).toMatchObject({ reservations: 0, sales: 0 });
  });

  test('imported leads count from their import, with the status they came with', async () => {
    clockAt('2026-03-15T02:00:00Z');
    const boundary = '----reports-boundary';
    const csv = 'first_name,last_name,email,source,status\nImma,One,imma1@example.com,social,contacted\nImma,Two,imma2@example.com,social,new\n';
    const payload = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="leads.csv"\r\nContent-Type: text/csv\r\n\r\n${csv}\r\n--${boundary}--\r\n`);
    const started = await ok(as(ctx, admin, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }).post('/api/crm/leads/import', payload), 202);
    const done = await eventually(async () => {
      const body = (await as(ctx, admin).get(`/api/crm/imports/${started.id}`)).json();
      return body.status === 'completed' || body.status === 'failed' ? body : undefined;
    }, 'the import');
    expect(done.created, JSON.stringify(done)).toBe(2);
    const imported = (await all('/api/crm/leads?source=social')).filter((lead) => lead.first_name === 'Imma');
    expect(imported).toHaveLength(2);
    const firsts = await ctx.database.db.select().from(leadStatusChanges).where(eq(leadStatusChanges.lead_id, imported[0].id));
    expect(firsts.map((m) => [m.from_status, m.changed_by])).toEqual([[null, admin.id]]);
    const body = await report('funnel', `${MARCH}&source=social`);
    const expected = await funnelFromTrail(MARCH_START, MARCH_END);
    expect((await report('funnel', MARCH)).totals.leads).toBe(expected.leads);
    expect(pick(body.totals, STAGES)).toMatchObject({ leads: 3, contacted: 1 });
  });

  test('the CSV export holds the rows and a total record', async () => {
    const res = await as(ctx, admin).get(`/api/crm/reports/funnel/export?${MARCH}&group_by=agent`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = res.body.trim().split(/\r?\n/);
    expect(lines[0]).toBe('key,label,leads,contacted,qualified,reserved,sold,contacted_rate,qualified_rate,reserved_rate,sold_rate');
    expect(lines.at(-1)).toMatch(/^total,Total,/);
    const json = await report('funnel', `${MARCH}&group_by=agent`);
    expect(lines).toHaveLength(json.rows.length + 2);
    expect(lines.at(-1)!.split(',').slice(2, 7).map(Number)).toEqual(STAGES.map((stage) => json.totals[stage]));
  });
});

describe('the weekly e-mail', () => {
  test('opt-in; on Monday at the digest hour the week before\'s key figures, in the reader\'s scope, once per user and week', async () => {
    expect(await ok(as(ctx, agentB).get('/api/auth/preferences'))).toMatchObject({ weekly_report: false });
    for (const who of [admin, ownViewer]) expect(await ok(as(ctx, who).patch('/api/auth/preferences', { weekly_report: true }))).toMatchObject({ weekly_report: true });
    const services = { config: ctx.config, database: ctx.database, mailer: ctx.app.mailer, log: ctx.app.log };
    const outbox = outboxReader(ctx);
    // Monday 9 March 2026, 07:59 in Manila: not yet; 08:05: the week of 2 to 8 March.
    clockAt('2026-03-08T23:59:00Z');
    expect(await sendWeeklyReports(services)).toBe(0);
    clockAt('2026-03-09T00:05:00Z');
    const [one, two] = await Promise.all([sendWeeklyReports(services), sendWeeklyReports(services)]);
    expect(one + two).toBe(2);
    expect(await sendWeeklyReports(services)).toBe(0);
    expect((await as(ctx, admin).post('/api/cron/weekly-report')).statusCode).toBe(401);
    const cron = await ok(as(ctx, CRON_SECRET).post('/api/cron/weekly-report'));
    expect(cron).toEqual({ sent: 0, message: 'Sent 0 weekly reports' });
    // A Tuesday is not a Monday.
    clockAt('2026-03-10T00:05:00Z');
    expect(await sendWeeklyReports(services)).toBe(0);

    const week = await report('funnel', 'from=2026-03-02&to=2026-03-08');
    const mine = await report('funnel', 'from=2026-03-02&to=2026-03-08', ownViewer);
    expect([week.totals.leads, mine.totals.leads]).toEqual([4, 2]);
    const weekly = (email: string) => outbox.unread(email).filter((mail) => mail.subject.startsWith('Sales week'));
    const [toAdmin, again] = weekly(admin.email);
    expect(again).toBeUndefined();
    expect(toAdmin.subject).toBe('Sales week 2026-03-02 to 2026-03-08');
    expect(toAdmin.text).toContain(`- New leads: ${week.totals.leads}`);
    const [toAgent] = weekly(ownViewer.email);
    expect(toAgent.text).toContain(`- New leads: ${mine.totals.leads}`);
    expect(weekly(agentB.email)).toEqual([]);
  });
});

describe('every report', () => {
  const NAMES = ['funnel', 'speed-to-lead', 'agent-activity', 'projects'];

  test('range and filters are checked: 400 naming the field, never a 500', async () => {
    const bad: [string, string][] = [
      ['from=2026-03-10&to=2026-03-01', 'from'],
      ['from=2025-01-01&to=2026-03-01', 'from'],
      ['from=0000-01-01&to=0000-02-01', 'from'],
      ['to=2026-02-30', 'to'],
      ['from=2026-13-01', 'from'],
      ['from=yesterday', 'from'],
      [`project_id=${agentA.id}`, 'project_id'],
      [`department_id=${agentA.id}`, 'department_id'],
      [`agent_id=${project.id}`, 'agent_id'],
      ['agent_id=not-a-uuid', 'agent_id'],
      ['source=tv', 'source'],
      ['group_by=colour', 'group_by'],
      ['colour=red', 'colour'],
    ];
    for (const name of NAMES) {
      for (const [query, field] of bad) {
        const res = await as(ctx, admin).get(`/api/crm/reports/${name}?${query}`);
        expect(res.statusCode, `${name}?${query}: ${res.body}`).toBe(400);
        expect(Object.keys(res.json().details), `${name}?${query}`).toContain(field);
        expect((await as(ctx, admin).get(`/api/crm/reports/${name}/export?${query}`)).statusCode).toBe(400);
      }
      // The edges of what is allowed.
      for (const query of ['from=0001-01-01&to=0001-12-31', 'from=9999-01-01&to=9999-12-31', 'from=2025-03-01&to=2026-03-01', '']) {
        const res = await as(ctx, admin).get(`/api/crm/reports/${name}?${query}`);
        expect(res.statusCode, `${name}?${query}: ${res.body}`).toBe(200);
      }
      expect((await as(ctx, admin).get(`/api/crm/reports/${name}?to=0001-01-10`)).json().range).toEqual({ from: '0001-01-01', to: '0001-01-10' });
    }
  });

  test('the default range is the last 30 days up to today in TASK_TIME_ZONE', async () => {
    clockAt('2026-05-31T17:00:00Z');
    for (const name of NAMES) expect((await report(name, '')).range).toEqual({ from: '2026-05-03', to: '2026-06-01' });
  });

  test('crm read is needed', async () => {
    const outsider = await createUser(ctx, { cms: 'rwd' });
    for (const name of NAMES) {
      expect((await as(ctx, outsider).get(`/api/crm/reports/${name}`)).statusCode).toBe(403);
      expect((await as(ctx, outsider).get(`/api/crm/reports/${name}/export`)).statusCode).toBe(403);
    }
  });
});

describe('speed to lead', () => {
  test('median, 90th percentile and the share within the rule\'s limit, per agent, source and week', async () => {
    const { db } = ctx.database;
    clockAt('2026-06-01T00:00:00Z');
    const [rule] = await db.insert(leadFlowRules).values({ name: 'Speed rule', position: 900, assign_user_id: agentB.id, speed_limit_minutes: 30 }).returning();
    const made: { lead: string; minutes: number | null }[] = [];
    // Agent B: contacted after 10, 20, 40 minutes and one not yet; agent A (no rule): 5.
    for (const [who, minutes, source] of [[agentB, 10, 'website'], [agentB, 20, 'website'], [agentB, 40, 'referral'], [agentB, null, 'referral'], [agentA, 5, 'website']] as const) {
      const lead = (await make.lead(ctx, { source, assigned_to: who.id }, admin)).id;
      const assigned = new Date('2026-06-02T01:00:00Z');
      // Created with its assignee, the lead has its routing row already: set as the rule and the contact would have.
      const routing = { rule_id: who === agentB ? rule.id : null, channel: 'api' as const, assigned_at: assigned, first_contact_at: minutes === null ? null : new Date(assigned.getTime() + minutes * 60_000) };
      await db.insert(leadRouting).values({ lead_id: lead, ...routing }).onConflictDoUpdate({ target: leadRouting.lead_id, set: routing });
      made.push({ lead, minutes });
    }
    clockAt('2026-06-03T00:00:00Z');
    const body = await report('speed-to-lead', 'from=2026-06-01&to=2026-06-07');
    const b = body.rows.find((row: { key: string }) => row.key === agentB.id);
    expect(b).toEqual({ key: agentB.id, label: 'Ben Agent', assigned: 4, contacted: 3, median_minutes: 20, p90_minutes: 36, with_limit: 4, within_limit: 2, within_limit_rate: 0.5 });
    expect(body.totals).toMatchObject({ assigned: 5, contacted: 4, median_minutes: 15, with_limit: 4, within_limit: 2 });
    const bySource = await report('speed-to-lead', 'from=2026-06-01&to=2026-06-07&group_by=source');
    expect(bySource.rows.map((row: { key: string; assigned: number }) => [row.key, row.assigned])).toEqual([['referral', 2], ['website', 3]]);
    const byWeek = await report('speed-to-lead', 'from=2026-06-01&to=2026-06-07&group_by=week');
    expect(byWeek.rows).toEqual([expect.objectContaining({ key: '2026-06-01', label: 'Week of 2026-06-01', assigned: 5 })]);
    // Agent A's own scope: their lead only.
    expect((await report('speed-to-lead', 'from=2026-06-01&to=2026-06-07', ownViewer)).totals).toMatchObject({ assigned: 1, median_minutes: 5 });
  });
});

describe('agent activity', () => {
  test('calls by outcome, e-mails, meetings, site visits, follow-ups and reservations per agent and week', async () => {
    clockAt('2026-07-06T02:00:00Z');
    const lead = (await make.lead(ctx, { source: 'event', assigned_to: agentA.id }, admin)).id;
    const log = (body: Record<string, unknown>, who = agentA) => ok(as(ctx, who).post(`/api/crm/leads/${lead}/activities`, body), 201);
    await log({ kind: 'call', outcome: 'answered', occurred_at: '2026-07-06T03:00:00Z' });
    await log({ kind: 'call', outcome: 'busy', occurred_at: '2026-07-07T03:00:00Z' });
    await log({ kind: 'email', occurred_at: '2026-07-07T04:00:00Z' });
    await log({ kind: 'meeting', place: 'Office', occurred_at: '2026-07-14T04:00:00Z' });
    await log({ kind: 'site_visit', place: 'Site', occurred_at: '2026-07-15T04:00:00Z' });
    await log({ kind: 'note', body: 'not counted', occurred_at: '2026-07-15T05:00:00Z' });
    await log({ kind: 'call', outcome: 'no_answer', occurred_at: '2026-07-08T03:00:00Z' }, agentB);
    const done = (await ok(as(ctx, agentA).post('/api/crm/tasks', { title: 'Call back', due_at: '2026-07-08T03:00:00Z', lead_id: lead }), 201)).id;
    await ok(as(ctx, agentA).post('/api/crm/tasks', { title: 'Late one', due_at: '2026-07-09T03:00:00Z', lead_id: lead }), 201);
    await ok(as(ctx, agentA).post('/api/crm/tasks', { title: 'Not due yet', due_at: '2026-07-30T03:00:00Z', lead_id: lead }), 201);
    clockAt('2026-07-07T02:00:00Z');
    await ok(as(ctx, agentA).patch(`/api/crm/tasks/${done}`, { done: true }));
    const unit = (await make.unit(ctx, { project_id: otherProject.id, price: 1_000_000 }, admin)).id;
    clockAt('2026-07-16T02:00:00Z');
    await ok(as(ctx, agentA).post('/api/crm/reservations', { inventory_id: unit, client_name: 'Res One', contact_number: '+63 900 000 1111', lead_id: lead }), 201);
    clockAt('2026-07-20T02:00:00Z');

    const body = await report('agent-activity', 'from=2026-07-01&to=2026-07-31');
    const zero = { calls: 0, calls_answered: 0, calls_no_answer: 0, calls_busy: 0, calls_voicemail: 0, calls_wrong_number: 0, emails: 0, meetings: 0, site_visits: 0, followups_completed: 0, followups_overdue: 0, reservations: 0 };
    expect(body.rows).toEqual([
      { key: `${agentA.id}|2026-07-06`, label: 'Ana Agent, Week of 2026-07-06', ...zero, calls: 2, calls_answered: 1, calls_busy: 1, emails: 1, followups_completed: 1, followups_overdue: 1 },
      { key: `${agentA.id}|2026-07-13`, label: 'Ana Agent, Week of 2026-07-13', ...zero, meetings: 1, site_visits: 1, reservations: 1 },
      { key: `${agentB.id}|2026-07-06`, label: 'Ben Agent, Week of 2026-07-06', ...zero, calls: 1, calls_no_answer: 1 },
    ].sort((x, y) => x.key.localeCompare(y.key)));
    expect(body.totals).toEqual({ ...zero, calls: 3, calls_answered: 1, calls_no_answer: 1, calls_busy: 1, emails: 1, meetings: 1, site_visits: 1, followups_completed: 1, followups_overdue: 1, reservations: 1 });
    // Each figure as the activities list says.
    const calls = (await all('/api/crm/activities?kind=call&occurred_from=2026-07-01&occurred_to=2026-07-31')).length;
    expect(body.totals.calls).toBe(calls);
    // Their own figures only, for the own scope.
    const mine = await report('agent-activity', 'from=2026-07-01&to=2026-07-31&group_by=agent', ownViewer);
    expect(mine.rows.map((row: { key: string }) => row.key)).toEqual([agentA.id]);
    expect(mine.totals.calls).toBe(2);
    expect((await report('agent-activity', 'from=2026-07-01&to=2026-07-31&source=website')).totals.calls).toBe(0);
    expect((await report('agent-activity', `from=2026-07-01&to=2026-07-31&project_id=${otherProject.id}`)).totals).toMatchObject({ reservations: 1, calls: 0 });
  });
});

describe('projects', () => {
  test('reservations, sales, cancellations and stock per project and month, from the units\' history', async () => {
    const p = (await make.project(ctx, { name: 'Lumen Park' }, admin)).id;
    clockAt('2026-08-01T02:00:00Z');
    const units = [];
    for (let i = 0; i < 4; i++) units.push((await make.unit(ctx, { project_id: p, price: 1_000_000 * (i + 1) }, admin)).id);
    clockAt('2026-08-05T02:00:00Z');
    const r1 = (await ok(as(ctx, agentA).post('/api/crm/reservations', { inventory_id: units[0], client_name: 'A', contact_number: '1' }), 201)).id;
    const r2 = (await ok(as(ctx, agentB).post('/api/crm/reservations', { inventory_id: units[1], client_name: 'B', contact_number: '2' }), 201)).id;
    clockAt('2026-08-20T02:00:00Z');
    await ok(as(ctx, admin).patch('/api/projects/inventory', { inventory_id: units[0], status: 'sold', sold_to: r1 }));
    clockAt('2026-09-03T02:00:00Z');
    await ok(as(ctx, admin).patch(`/api/crm/reservations/${r2}`, { status: 'cancelled' }));
    // Later changes do not move August.
    clockAt('2026-10-03T02:00:00Z');
    await ok(as(ctx, agentA).post('/api/crm/reservations', { inventory_id: units[2], client_name: 'C', contact_number: '3' }), 201);

    const august = await report('projects', `from=2026-08-01&to=2026-08-31&project_id=${p}`);
    expect(august.rows).toEqual([{
      key: p, label: 'Lumen Park', reservations: 2, reservations_value: 3_000_000, sales: 1, sales_value: 1_000_000, cancellations: 0,
      available: 2, reserved: 1, sold: 1, months_of_inventory: 3,
    }]);
    const byMonth = await report('projects', `from=2026-08-01&to=2026-10-31&project_id=${p}&group_by=month`);
    expect(byMonth.rows.map((row: Record<string, unknown>) => pick(row, ['key', 'label', 'reservations', 'sales', 'cancellations', 'available', 'reserved', 'sold']))).toEqual([
      { key: '2026-08', label: 'August 2026', reservations: 2, sales: 1, cancellations: 0, available: 2, reserved: 1, sold: 1 },
      { key: '2026-09', label: 'September 2026', reservations: 0, sales: 0, cancellations: 1, available: 3, reserved: 0, sold: 1 },
      { key: '2026-10', label: 'October 2026', reservations: 1, sales: 0, cancellations: 0, available: 2, reserved: 1, sold: 1 },
    ]);
    expect(byMonth.totals).toMatchObject({ reservations: 3, sales: 1, cancellations: 1, available: 2, reserved: 1, sold: 1 });
    // The stock as the inventory list says now.
    const listed = await all(`/api/crm/inventory?project_id=${p}`);
    expect(listed.filter((u) => u.status === 'available')).toHaveLength(byMonth.totals.available);
    // Agent A's own scope: deals through their reservations only; the stock is everyone's.
    const mine = await report('projects', `from=2026-08-01&to=2026-08-31&project_id=${p}`, ownViewer);
    expect(mine.totals).toMatchObject({ reservations: 1, reservations_value: 1_000_000, sales: 1, available: 2, reserved: 1, sold: 1 });
  });
});
