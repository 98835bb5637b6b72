import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recipientMail } from '../src/modules/crm/delivery.js';
import { signUnsubscribeToken } from '../src/modules/crm/unsubscribe-token.js';
import { as, createTestApp, createTestDatabase, createUser, none, type TestContext } from './helpers.js';
import { confirmPathOf, outboxReader } from './mail.js';

// The unsubscribe link opens a page, one-click POST (RFC 8058) works, links survive AUTH_SECRET changes.

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

beforeAll(async () => {
  ctx = await createTestApp();
  staff = await createUser(ctx, { crm: 'rwd' });
});
afterAll(() => ctx.close());

async function subscribed(email: string) {
  expect((await as(ctx, staff).post('/api/crm/newsletters', { email })).statusCode).toBe(201);
  const mail = recipientMail({ config: ctx.config, database: ctx.database }, { id: '019a0000-0000-7000-8000-000000000000', subject: 'News', content: 'Hello' }, '<p>Hello</p>', email);
  const link = /^<(.+)>$/.exec(String(mail.headers!['List-Unsubscribe']))![1];
  return { mail, path: link.replace(ctx.config.baseUrl, '') };
}
/** The unsubscribe link a campaign mail to `email` carries (subscribed or not: campaigns may name any address). */
const linkFor = (email: string) => {
  const mail = recipientMail({ config: ctx.config, database: ctx.database }, { id: '019a0000-0000-7000-8000-000000000002', subject: 'News', content: 'Hello' }, '<p>Hello</p>', email);
  return /^<(.+)>$/.exec(String(mail.headers!['List-Unsubscribe']))![1].replace(ctx.config.baseUrl, '');
};
const statusOf = async (email: string) =>
  (await as(ctx, staff).get('/api/crm/newsletters?limit=100')).json().data.find((s: { email: string }) => s.email === email)?.status;

describe('the link in a browser', () => {
  test('opens a small HTML page saying the address is unsubscribed', async () => {
    const { path } = await subscribed('page@example.com');
    const res = await as(ctx, none).get(path, BROWSER);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<h1 style="font-size:1.5rem">You have been unsubscribed</h1>');
    expect(res.body).toContain('page@example.com will receive no more newsletters');
    expect(await statusOf('page@example.com')).toBe('unsubscribed');
  });

  test('a broken link shows a page saying so (400), and changes nothing', async () => {
    const { path } = await subscribed('broken@example.com');
    const res = await as(ctx, none).get(`${path.slice(0, -3)}xyz`, BROWSER);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('This unsubscribe link is invalid or incomplete.');
    expect(await statusOf('broken@example.com')).toBe('subscribed');
  });

  test('API clients still get the contract\'s JSON', async () => {
    const { path } = await subscribed('json@example.com');
    const res = await as(ctx, none).get(path);
    expect(res.json()).toEqual({ message: 'You have been unsubscribed' });
    const bad = await as(ctx, none).get('/api/public/newsletter/unsubscribe?token=nope');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'Validation error', details: { token: 'is invalid' } });
  });
});

describe('one-click (RFC 8058)', () => {
  test('campaign mail carries List-Unsubscribe-Post, and a POST of its body to the link unsubscribes', async () => {
    const { mail, path } = await subscribed('oneclick@example.com');
    expect(mail.headers!['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    const res = await as(ctx, none).request('POST', path, 'List-Unsubscribe=One-Click', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message: 'You have been unsubscribed' });
    expect(await statusOf('oneclick@example.com')).toBe('unsubscribed');
  });

  test('a POST with another value, or a bad token, is a 400', async () => {
    const { path } = await subscribed('oneclick2@example.com');
    const wrong = await as(ctx, none).request('POST', path, 'List-Unsubscribe=Maybe', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().details).toEqual({ 'List-Unsubscribe': 'must be One-Click' });
    const bad = await as(ctx, none).request('POST', '/api/public/newsletter/unsubscribe?token=x.y', 'List-Unsubscribe=One-Click', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(bad.statusCode).toBe(400);
    expect(await statusOf('oneclick2@example.com')).toBe('subscribed');
  });
});

describe('links outlive AUTH_SECRET', () => {
  test('a link sent before AUTH_SECRET changed still unsubscribes afterwards', async () => {
    const database = await createTestDatabase();
    const first = await createTestApp({ AUTH_SECRET: 'first-secret-0123456789-0123456789-abcd' }, { database });
    const admin = await createUser(first, { crm: 'rwd' });
    expect((await as(first, admin).post('/api/crm/newsletters', { email: 'loyal@example.com' })).statusCode).toBe(201);
    const mail = recipientMail({ config: first.config, database }, { id: '019a0000-0000-7000-8000-000000000001', subject: 'News', content: 'Hi' }, '<p>Hi</p>', 'loyal@example.com');
    const path = /^<(.+)>$/.exec(String(mail.headers!['List-Unsubscribe']))![1].replace(first.config.baseUrl, '');
    await first.close();
    const second = await createTestApp({ AUTH_SECRET: 'second-secret-9876543210-9876543210-wxyz' }, { database });
    try {
      const res = await as(second, none).get(path);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ message: 'You have been unsubscribed' });
    } finally {
      await second.close();
      await database.close();
    }
  });

  test('a link signed the old way (with AUTH_SECRET) is still honoured', async () => {
    await subscribed('legacy@example.com');
    const res = await as(ctx, none).get(`/api/public/newsletter/unsubscribe?token=${signUnsubscribeToken(ctx.config.authSecret, 'legacy@example.com')}`);
    expect(res.statusCode).toBe(200);
    expect(await statusOf('legacy@example.com')).toBe('unsubscribed');
  });
});

describe('an address that never subscribed (an explicit campaign recipient)', () => {
  test('its unsubscription is kept as an unsubscribed subscription, audited, and a second click changes nothing', async () => {
    const email = 'never-subscribed@example.com';
    // crm read too: the activity log shows crm entries only to those who may read every crm record.
    const auditor = await createUser(ctx, { iam: 'r', crm: 'r' });
    const res = await as(ctx, none).get(linkFor(email), BROWSER);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(`${email} will receive no more newsletters`);
    const row = (await as(ctx, staff).get('/api/crm/newsletters?status=unsubscribed&limit=100')).json().data.find((s: { email: string }) => s.email === email);
    expect(row).toMatchObject({ email, status: 'unsubscribed' });
    expect(row.unsubscribed_at).toBeTruthy();
    const logs = (await as(ctx, auditor).get(`/api/iam/activity-logs?resource=newsletters&limit=100`)).json().data.filter((l: { resource_id: string }) => l.resource_id === row.id);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ action: 'create', changes: { before: {}, after: { email, status: 'unsubscribed' } } });

    expect((await as(ctx, none).get(linkFor(email))).statusCode).toBe(200);
    expect((await as(ctx, auditor).get(`/api/iam/activity-logs?resource=newsletters&limit=100`)).json().data.filter((l: { resource_id: string }) => l.resource_id === row.id)).toHaveLength(1);
    // Subscribing later (the public form, confirmed) still works: the address is subscribed again.
    expect((await as(ctx, none).post('/api/public/newsletter', { email })).statusCode).toBe(200);
    expect((await as(ctx, none).get(confirmPathOf(await outboxReader(ctx).next(email)))).statusCode).toBe(200);
    expect(await statusOf(email)).toBe('subscribed');
  });
});
