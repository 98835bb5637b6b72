import { and, eq } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { clock, tickingClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { activityLogs, moduleAccess } from '../src/db/schema/index.js';
import { sendTaskDigests } from '../src/jobs/task-digest.js';
import { localDay } from '../src/modules/crm/tasks.js';
import { make } from './factories.js';
import { as, clockAt, createTestApp, createUser, none, ok, type TestContext } from './helpers.js';
import { outboxReader } from './mail.js';

// Follow-ups — defaults, references, done/undone, `mine` and `due` (in TASK_TIME_ZONE), the morning e-mail.

let ctx: TestContext;
let agent: Awaited<ReturnType<typeof createUser>>;
let colleague: Awaited<ReturnType<typeof createUser>>;
let reader: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  agent = await createUser(ctx, { crm: 'rwd' }, { name: 'Ana Agent' });
  colleague = await createUser(ctx, { crm: 'rwd' }, { name: 'Carl Colleague' });
  reader = await createUser(ctx, { crm: 'r' });
});
afterAll(async () => ctx?.close());
afterEach(() => {
  clock.now = tickingClock();
});

const task = (body: Record<string, unknown>, who = agent) => ok(as(ctx, who).post('/api/crm/tasks', body), 201).then((answer) => answer.id as string);
const list = (query: string, who = agent) => ok(as(ctx, who).get(`/api/crm/tasks${query}`));

describe('writing follow-ups', () => {
  test('assigned to the writer by default; references shown; done and undone by whom and when; audited', async () => {
    const lead = await make.lead(ctx);
    const id = await task({ title: ' Call back ', due_at: '2031-01-10T09:00:00+08:00', lead_id: lead.id, notes: 'About Tower B' });
    const detail = await ok(as(ctx, reader).get(`/api/crm/tasks/${id}`));
    expect(detail).toEqual({
      id, title: 'Call back', notes: 'About Tower B', due_at: '2031-01-10T01:00:00.000Z', assigned_to: { id: agent.id, name: 'Ana Agent' },
      lead_id: lead.id, reservation_id: null, inquiry_id: null, done_at: null, done_by: null, created_by: agent.id,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    expect((await ok(as(ctx, colleague).patch(`/api/crm/tasks/${id}`, { done: true }))).message).toBe('Task updated');
    const done = await ok(as(ctx, reader).get(`/api/crm/tasks/${id}`));
    expect(done.done_by).toEqual({ id: colleague.id, name: 'Carl Colleague' });
    expect(Date.parse(done.done_at)).not.toBeNaN();
    // Done again: it stays done when and by whom it was.
    await ok(as(ctx, agent).patch(`/api/crm/tasks/${id}`, { done: true }));
    expect(await ok(as(ctx, reader).get(`/api/crm/tasks/${id}`))).toMatchObject({ done_at: done.done_at, done_by: { id: colleague.id } });
    await ok(as(ctx, agent).patch(`/api/crm/tasks/${id}`, { done: false, assigned_to: colleague.id, due_at: '2031-01-11T09:00:00Z' }));
    expect(await ok(as(ctx, reader).get(`/api/crm/tasks/${id}`))).toMatchObject({ done_at: null, done_by: null, assigned_to: { id: colleague.id }, due_at: '2031-01-11T09:00:00.000Z' });
    const logs = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'tasks'), eq(activityLogs.resource_id, id)));
    expect(logs.map((log) => log.action).sort()).toEqual(['create', 'update', 'update']);
    const reopened = logs.filter((log) => log.action === 'update').map((log) => log.changes as { after: Record<string, unknown> }).find((c) => 'assigned_to' in c.after)!;
    expect(reopened.after).toMatchObject({ done_at: null, done_by: null, assigned_to: colleague.id });
  });

  test('links to a reservation or an inquiry, each reference checked (400 naming it); bad input 400', async () => {
    const reservation = await make.reservation(ctx);
    const inquiry = await make.inquiry(ctx);
    const id = await task({ title: 'Collect the down payment', due_at: '2031-02-01T09:00:00Z', reservation_id: reservation.id, inquiry_id: inquiry.id, assigned_to: colleague.id });
    expect(await ok(as(ctx, reader).get(`/api/crm/tasks/${id}`))).toMatchObject({ reservation_id: reservation.id, inquiry_id: inquiry.id, assigned_to: { id: colleague.id } });
    const missing = uuidv7();
    for (const [field, message] of [['lead_id', 'must be an existing lead'], ['reservation_id', 'must be an existing reservation'], ['inquiry_id', 'must be an existing inquiry'], ['assigned_to', 'must be an existing user']]) {
      const res = await as(ctx, agent).post('/api/crm/tasks', { title: 'x', due_at: '2031-02-01T09:00:00Z', [field]: missing });
      expect(res.statusCode).toBe(400);
      expect(res.json().details).toEqual({ [field]: message });
      expect((await as(ctx, agent).patch(`/api/crm/tasks/${id}`, { [field]: missing })).json().details).toEqual({ [field]: message });
    }
    for (const body of [{ title: 'x' }, { due_at: '2031-02-01T09:00:00Z' }, { title: '', due_at: '2031-02-01T09:00:00Z' }, { title: 'x', due_at: 'tomorrow' },
      { title: 'x', due_at: '2031-02-01T09:00:00Z', assigned_to: null }, { title: 'x', due_at: '2031-02-01T09:00:00Z', done_at: '2031-02-01T09:00:00Z' }]) {
      expect((await as(ctx, agent).post('/api/crm/tasks', body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await as(ctx, agent).patch(`/api/crm/tasks/${id}`, {})).statusCode).toBe(400);
  });

  test('permissions: 401 signed out; read lists; write to write; delete to delete, audited', async () => {
    expect((await as(ctx, none).get('/api/crm/tasks')).statusCode).toBe(401);
    expect((await as(ctx, reader).post('/api/crm/tasks', { title: 'x', due_at: '2031-02-01T09:00:00Z' })).statusCode).toBe(403);
    const id = await task({ title: 'Temporary', due_at: '2031-02-01T09:00:00Z' });
    expect((await as(ctx, reader).delete(`/api/crm/tasks/${id}`)).statusCode).toBe(403);
    expect((await as(ctx, agent).delete(`/api/crm/tasks/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, agent).get(`/api/crm/tasks/${id}`)).statusCode).toBe(404);
  });
});

describe('an agent\'s day: mine and due', () => {
  test('overdue, today and upcoming in TASK_TIME_ZONE (Asia/Manila), open only, exact totals, mine per caller', async () => {
    const lead = await make.lead(ctx);
    const me = await createUser(ctx, { crm: 'rwd' });
    const other = await createUser(ctx, { crm: 'rwd' });
    // 11:00 in Manila on 10 March 2031 (03:00 UTC).
    clockAt('2031-03-10T03:00:00Z');
    const ids = {
      overdue: await task({ title: 'Overdue', due_at: '2031-03-09T01:00:00Z', lead_id: lead.id }, me),
      earlierToday: await task({ title: 'Earlier today', due_at: '2031-03-10T01:00:00Z' }, me),
      today: await task({ title: 'Today 17:00', due_at: '2031-03-10T09:00:00Z' }, me),
      lastMinute: await task({ title: 'Today 23:59', due_at: '2031-03-10T15:59:59.999Z' }, me),
      tomorrow: await task({ title: 'Tomorrow 00:00', due_at: '2031-03-10T16:00:00Z' }, me),
      doneOverdue: await task({ title: 'Done', due_at: '2031-03-09T01:00:00Z', done: true }, me),
      othersToday: await task({ title: 'Someone else\'s', due_at: '2031-03-10T05:00:00Z' }, other),
      givenToOther: await task({ title: 'Given away', due_at: '2031-03-10T05:00:00Z', assigned_to: other.id }, me),
    };
    const titles = (page: { data: { id: string }[] }) => page.data.map((row) => row.id);
    const overdue = await list('?mine=true&due=overdue&sort=due_at&order=asc', me);
    expect(titles(overdue)).toEqual([ids.overdue, ids.earlierToday]);
    expect(overdue.pagination.total).toBe(2);
    const today = await list('?mine=true&due=today&sort=due_at&order=asc', me);
    expect(titles(today)).toEqual([ids.today, ids.lastMinute]);
    const upcoming = await list('?mine=true&due=upcoming', me);
    expect(upcoming.pagination.total).toBeGreaterThanOrEqual(1);
    expect(titles(upcoming)).toContain(ids.tomorrow);
    expect(titles(upcoming)).not.toContain(ids.today);
    // The same words for another caller are their tasks, not a cached answer of the first.
    const theirs = await list('?mine=true&due=today', other);
    expect(titles(theirs).sort()).toEqual([ids.othersToday, ids.givenToOther].sort());
    expect(theirs.pagination.total).toBe(2);
    expect((await list('?mine=true&due=today', me)).pagination.total).toBe(2);
    // Filters combine: mine and an assignee who is not me is nothing; done=true alone lists the done one.
    expect((await list(`?mine=true&assigned_to=${other.id}`, me)).pagination.total).toBe(0);
    expect(titles(await list(`?mine=true&done=true`, me))).toEqual([ids.doneOverdue]);
    expect((await list(`?lead_id=${lead.id}`, me)).pagination.total).toBe(1);
    // Time moves on: at 17:30 in Manila the 17:00 task is overdue, without any write in between.
    clockAt('2031-03-10T09:30:00Z');
    expect(titles(await list('?mine=true&due=overdue&sort=due_at&order=asc', me))).toEqual([ids.overdue, ids.earlierToday, ids.today]);
    expect((await list('?mine=true&due=today', me)).pagination.total).toBe(1);
    // The export takes the same words.
    const csv = await as(ctx, me).get('/api/crm/tasks/export?mine=true&due=overdue');
    expect(csv.statusCode).toBe(200);
    expect(csv.body.trim().split('\n').length).toBe(4);
    // Bad words are 400, as any parameter.
    for (const query of ['?due=yesterday', '?mine=maybe', '?mine_of=' + me.id, '?due_before=2031-01-01T00:00:00Z', '?open=true']) {
      expect((await as(ctx, me).get(`/api/crm/tasks${query}`)).statusCode, query).toBe(400);
    }
  });

  test('the local day: its date, its bounds, daylight saving time', () => {
    expect(localDay(new Date('2031-03-10T17:00:00Z'), 'Asia/Manila')).toEqual({
      date: '2031-03-11', hour: 1, start: new Date('2031-03-10T16:00:00Z'), end: new Date('2031-03-11T16:00:00Z'),
    });
    // New York moves its clocks forward on 9 March 2031: that day has 23 hours.
    const spring = localDay(new Date('2031-03-09T12:00:00Z'), 'America/New_York');
    expect(spring).toMatchObject({ date: '2031-03-09', start: new Date('2031-03-09T05:00:00Z'), end: new Date('2031-03-10T04:00:00Z') });
    expect(localDay(new Date('2031-03-09T12:00:00Z'), 'UTC')).toMatchObject({ date: '2031-03-09', hour: 12 });
    expect(() => loadConfig({ TASK_TIME_ZONE: 'Mars/Olympus', AUTH_SECRET: 'x'.repeat(40) })).toThrow(/TASK_TIME_ZONE must be an IANA time zone/);
    expect(() => loadConfig({ TASK_DIGEST_HOUR: '24', AUTH_SECRET: 'x'.repeat(40) })).toThrow(/TASK_DIGEST_HOUR/);
    expect(loadConfig({ AUTH_SECRET: 'x'.repeat(40) })).toMatchObject({ taskTimeZone: 'Asia/Manila', taskDigestHour: 8 });
  });

  test('completing a follow-up of a lead puts it on the lead\'s timeline', async () => {
    const lead = await make.lead(ctx);
    const id = await task({ title: 'Send the brochure', due_at: '2031-01-01T00:00:00Z', lead_id: lead.id });
    const entries = async () => (await ok(as(ctx, reader).get(`/api/crm/leads/${lead.id}/timeline?type=task_completed`))).data;
    expect(await entries()).toEqual([]);
    await ok(as(ctx, agent).patch(`/api/crm/tasks/${id}`, { done: true }));
    expect(await entries()).toMatchObject([{ type: 'task_completed', actor: { id: agent.id }, payload: { id, title: 'Send the brochure' } }]);
  });
});

describe('the morning e-mail', () => {
  test('preferences: the user\'s own, on by default', async () => {
    const user = await createUser(ctx, { crm: 'r' });
    expect((await as(ctx, none).get('/api/auth/preferences')).statusCode).toBe(401);
    expect(await ok(as(ctx, user).get('/api/auth/preferences'))).toMatchObject({ task_digest: true });
    expect(await ok(as(ctx, user).patch('/api/auth/preferences', { task_digest: false }))).toMatchObject({ task_digest: false });
    expect(await ok(as(ctx, user).get('/api/auth/preferences'))).toMatchObject({ task_digest: false });
    expect(await ok(as(ctx, agent).get('/api/auth/preferences'))).toMatchObject({ task_digest: true });
    // Audited as a change of the user; sending the same value again changes nothing and logs nothing.
    expect(await ok(as(ctx, user).patch('/api/auth/preferences', { task_digest: false }))).toMatchObject({ task_digest: false });
    const logged = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource_id, user.id), eq(activityLogs.action, 'update')));
    expect(logged.map((log) => [log.module, log.resource, log.user_id, log.changes])).toEqual([['iam', 'users', user.id, { before: { task_digest: true }, after: { task_digest: false } }]]);
    for (const body of [{}, { task_digest: 'no' }, { task_digest: true, other: 1 }]) {
      expect((await as(ctx, user).patch('/api/auth/preferences', body)).statusCode, JSON.stringify(body)).toBe(400);
    }
  });

  test('at the hour: overdue and today\'s open follow-ups, once per user per day even with two instances; nothing when nothing is due', async () => {
    const services = { config: ctx.config, database: ctx.database, mailer: ctx.app.mailer, log: ctx.app.log };
    const second = await createTestApp({}, { database: ctx.database });
    try {
      const busy = await createUser(ctx, { crm: 'rw' }, { name: 'Bea Busy' });
      const idle = await createUser(ctx, { crm: 'rw' });
      const optedOut = await createUser(ctx, { crm: 'rw' });
      const noCrm = await createUser(ctx, { crm: 'rw' });
      const lead = await make.lead(ctx, { first_name: 'Lena', last_name: 'Lead' });
      // The day before, 15:00 Manila.
      clockAt('2031-04-01T07:00:00Z');
      await task({ title: 'Overdue call', due_at: '2031-04-01T08:00:00Z', lead_id: lead.id }, busy);
      await task({ title: 'Site visit prep', due_at: '2031-04-02T06:00:00Z' }, busy);
      await task({ title: 'Next week', due_at: '2031-04-09T06:00:00Z' }, busy);
      await task({ title: 'Already done', due_at: '2031-04-01T08:00:00Z', done: true }, busy);
      await task({ title: 'Next week only', due_at: '2031-04-09T06:00:00Z' }, idle);
      await task({ title: 'Muted', due_at: '2031-04-01T08:00:00Z' }, optedOut);
      await task({ title: 'No crm', due_at: '2031-04-01T08:00:00Z' }, noCrm);
      await ok(as(ctx, optedOut).patch('/api/auth/preferences', { task_digest: false }));
      await ctx.database.db.delete(moduleAccess).where(eq(moduleAccess.user_id, noCrm.id));
      const outboxes = [outboxReader(ctx), outboxReader(second)];
      const mailsTo = (email: string) => outboxes.flatMap((outbox) => outbox.unread(email));

      // 07:59 in Manila: not yet.
      clockAt('2031-04-01T23:59:00Z');
      expect(await sendTaskDigests(services)).toBe(0);
      // 08:05: one e-mail for the busy user, whichever instance sends it.
      clockAt('2031-04-02T00:05:00Z');
      const secondServices = { config: second.config, database: second.database, mailer: second.app.mailer, log: second.app.log };
      const sent = await Promise.all([sendTaskDigests(services), sendTaskDigests(secondServices), sendTaskDigests(services)]);
      // Everyone with something due (earlier tests' users too) got exactly one, from one of the runs.
      const all = mailsTo('@');
      expect(all.length).toBe(sent.reduce((a, b) => a + b, 0));
      expect(new Set(all.map((m) => m.to)).size).toBe(all.length);
      const mine = all.filter((m) => m.to.includes(busy.email));
      expect(mine.length).toBe(1);
      const [mail] = mine;
      expect(mail.subject).toBe('Your follow-ups for 2031-04-02: 1 overdue, 1 due today');
      expect(mail.text).toContain('Overdue:\n- 1 Apr, 16:00  Overdue call (Lena Lead: http://localhost:3000/leads/');
      expect(mail.text).toContain('Today:\n- 14:00  Site visit prep');
      expect(mail.text).not.toMatch(/Next week|Already done/);
      expect(mail.html).toContain('Site visit prep');
      for (const user of [idle, optedOut, noCrm]) expect(all.filter((m) => m.to.includes(user.email))).toEqual([]);
      // Later in the hour: nothing again. The next morning: again.
      clockAt('2031-04-02T00:50:00Z');
      expect(await sendTaskDigests(services)).toBe(0);
      clockAt('2031-04-03T00:00:00Z');
      expect(await sendTaskDigests(secondServices)).toBeGreaterThanOrEqual(1);
      expect(mailsTo(busy.email).length).toBe(1);
      expect(mailsTo(idle.email).length).toBe(0);
    } finally {
      await second.close();
    }
  });

  test('a mail that could not be sent is tried again on the next run', async () => {
    const user = await createUser(ctx, { crm: 'rw' });
    clockAt('2031-05-01T00:00:00Z');
    await task({ title: 'Due', due_at: '2031-05-01T02:00:00Z' }, user);
    const broken = { send: async () => { throw new Error('SMTP down'); }, close: () => undefined };
    const services = { config: ctx.config, database: ctx.database, mailer: ctx.app.mailer, log: ctx.app.log };
    clockAt('2031-05-01T00:10:00Z');
    expect(await sendTaskDigests({ ...services, mailer: broken })).toBe(0);
    expect(outboxReader(ctx).unread(user.email)).toEqual([]);
    clockAt('2031-05-01T00:25:00Z');
    // Others were mailed on the first run; this user now.
    await sendTaskDigests(services);
    expect(outboxReader(ctx).unread(user.email).length).toBe(1);
  });
});
