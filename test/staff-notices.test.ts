import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { outboxReader } from './mail.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

// A new public inquiry or a lead assigned to someone e-mails the people concerned, configurably.

const inquiry = { name: 'Vera Visitor', email: 'vera@example.com', phone: '+63 917 000 1111', subject: 'Two-bedroom units', message: 'Are any <b>left</b>?' };
/** Every notice the service started has been sent, or has failed (src/background.ts): no sleeping on it. */
const settle = (ctx: TestContext) => ctx.app.background.settled();

describe('default settings', () => {
  let ctx: TestContext;
  let outbox: ReturnType<typeof outboxReader>;
  let agent: Awaited<ReturnType<typeof createUser>>;
  let manager: Awaited<ReturnType<typeof createUser>>;
  let reader: Awaited<ReturnType<typeof createUser>>;

  beforeAll(async () => {
    ctx = await createTestApp();
    outbox = outboxReader(ctx);
    agent = await createUser(ctx, { crm: 'rw' }, { name: 'Agent Ann' });
    manager = await createUser(ctx, { crm: 'rwd', iam: 'r' }, { name: 'Manager Max' });
    reader = await createUser(ctx, { crm: 'r' });
  });
  afterAll(() => ctx.close());

  test('a public inquiry e-mails every user who may answer it (crm write), with a link to it', async () => {
    const res = await as(ctx, none).post('/api/public/inquiries', inquiry);
    expect(res.statusCode).toBe(201);
    await settle(ctx);
    for (const who of [agent, manager]) {
      const [mail, ...more] = outbox.unread(who.email);
      expect(more).toEqual([]);
      expect(mail.subject).toBe('New inquiry: Two-bedroom units');
      expect(mail.text).toContain('Vera Visitor <vera@example.com>, +63 917 000 1111');
      expect(mail.text).toContain(`http://localhost:3000/inquiries/${res.json().id}`);
      expect(mail.html).toContain('Are any &lt;b&gt;left&lt;/b&gt;?');
    }
    expect(outbox.unread(reader.email)).toEqual([]);
  });

  test('an inquiry staff record themselves sends no notice', async () => {
    expect((await as(ctx, agent).post('/api/crm/inquiries', inquiry)).statusCode).toBe(201);
    await settle(ctx);
    expect(outbox.unread(manager.email)).toEqual([]);
  });

  test('a lead assigned to someone else e-mails the assignee, on create and when PATCH changes the assignee', async () => {
    const created = await as(ctx, manager).post('/api/crm/leads', { first_name: 'Lara', last_name: 'Lead', email: 'lara@example.com', interest: 'Condo', assigned_to: agent.id });
    expect(created.statusCode).toBe(201);
    const mail = await outbox.next(agent.email);
    expect(mail.subject).toBe('Lead assigned to you: Lara Lead');
    expect(mail.text).toContain('Manager Max assigned a lead to you.');
    expect(mail.text).toContain('lara@example.com');
    expect(mail.text).toContain(`http://localhost:3000/leads/${created.json().id}`);

    // The same assignee again, or another field: no new mail.
    expect((await as(ctx, manager).patch(`/api/crm/leads/${created.json().id}`, { assigned_to: agent.id, notes: 'Called' })).statusCode).toBe(200);
    await settle(ctx);
    expect(outbox.unread(agent.email)).toEqual([]);

    expect((await as(ctx, agent).patch(`/api/crm/leads/${created.json().id}`, { assigned_to: manager.id })).statusCode).toBe(200);
    expect((await outbox.next(manager.email)).subject).toBe('Lead assigned to you: Lara Lead');
  });

  test('assigning a lead to yourself, or unassigning it, sends nothing', async () => {
    const created = await as(ctx, agent).post('/api/crm/leads', { first_name: 'Self', last_name: 'Made', phone: '+63 900 555 0000', assigned_to: agent.id });
    expect((await as(ctx, agent).patch(`/api/crm/leads/${created.json().id}`, { assigned_to: null })).statusCode).toBe(200);
    await settle(ctx);
    expect(outbox.unread(agent.email)).toEqual([]);
  });
});

describe('configured', () => {
  test('INQUIRY_NOTICE_TO lists the addresses; ASSIGNMENT_NOTICES=false turns assignment mail off', async () => {
    const ctx = await createTestApp({ INQUIRY_NOTICE_TO: 'Sales@Example.com, desk@example.com', ASSIGNMENT_NOTICES: 'false' });
    try {
      const outbox = outboxReader(ctx);
      const agent = await createUser(ctx, { crm: 'rw' });
      expect((await as(ctx, none).post('/api/public/inquiries', inquiry)).statusCode).toBe(201);
      expect((await outbox.next('sales@example.com')).subject).toBe('New inquiry: Two-bedroom units');
      expect((await outbox.next('desk@example.com')).subject).toBe('New inquiry: Two-bedroom units');
      const other = await createUser(ctx, { crm: 'rw' });
      expect((await as(ctx, other).post('/api/crm/leads', { first_name: 'No', last_name: 'Mail', phone: '+63 900 555 0001', assigned_to: agent.id })).statusCode).toBe(201);
      await settle(ctx);
      expect(outbox.unread(agent.email)).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  test('INQUIRY_NOTICE_TO=none sends nothing; a bad value stops start-up with its name', async () => {
    const ctx = await createTestApp({ INQUIRY_NOTICE_TO: 'none' });
    try {
      const outbox = outboxReader(ctx);
      const agent = await createUser(ctx, { crm: 'rw' });
      expect((await as(ctx, none).post('/api/public/inquiries', inquiry)).statusCode).toBe(201);
      await settle(ctx);
      expect(outbox.unread(agent.email)).toEqual([]);
    } finally {
      await ctx.close();
    }
    expect(() => loadConfig({ INQUIRY_NOTICE_TO: 'sales@, x', AUTH_SECRET: 'x'.repeat(32) })).toThrow(/INQUIRY_NOTICE_TO/);
    expect(() => loadConfig({ ASSIGNMENT_NOTICES: 'maybe', AUTH_SECRET: 'x'.repeat(32) })).toThrow(/ASSIGNMENT_NOTICES must be true or false/);
  });
});
