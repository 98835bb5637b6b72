import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { webhookDeliveries as deliveries } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

// Cross-site request forgery: a state-changing request that carries the session cookie must come from the service's
// own origin or an allowed one.

const WEBSITE = 'https://website.example';
const FOREIGN = 'https://evil.example';

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;
/** The admin's session as a browser holds it: the cookie, and nothing else. */
let cookie: string;

beforeAll(async () => {
  ctx = await createTestApp({ ALLOWED_ORIGINS: WEBSITE });
  admin = await createUser(ctx, { crm: 'rwd', iam: 'rwd' });
  cookie = await signIn(admin);
});
afterAll(() => ctx.close());

async function signIn(user: { email: string; password: string }) {
  const res = await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password });
  const session = res.cookies.find((c) => c.name.endsWith('session_token'))!;
  return `${session.name}=${session.value}`;
}

/** The cookie client with these extra headers (a browser's Origin, Referer, Sec-Fetch-Site). */
const browser = (headers: Record<string, string>, session = cookie) => as(ctx, none, { headers: { cookie: session, ...headers } });

/** A deleted lead and its trash entry. */
async function deletedLead() {
  const lead = await as(ctx, admin).post('/api/crm/leads', { first_name: 'Trash', last_name: 'Case', phone: '+63 900 555 0101' });
  expect(lead.statusCode, lead.body).toBe(201);
  const { id } = lead.json();
  expect((await as(ctx, admin).delete(`/api/crm/leads/${id}`)).statusCode).toBe(200);
  const trash = await as(ctx, admin).get('/api/crm/trash?limit=100');
  const entry = (trash.json().data as { id: string; record_id: string }[]).find((e) => e.record_id === id)!;
  return { id, restore: `/api/crm/trash/${entry.id}/restore` };
}

const refused = (res: { statusCode: number; json: () => any }) => {
  expect(res.statusCode).toBe(403);
  expect(res.json()).toEqual({ error: 'Insufficient permissions', message: expect.stringMatching(/session cookie.*ALLOWED_ORIGINS/) });
};

describe('a cookie request from a foreign origin is refused, and changes nothing', () => {
  test('trash restore (a body-less POST)', async () => {
    const { id, restore } = await deletedLead();
    refused(await browser({ origin: FOREIGN }).post(restore));
    // Also as a simple form would send it.
    refused(await browser({ origin: FOREIGN, 'content-type': 'text/plain' }).post(restore, ''));
    expect((await as(ctx, admin).get(`/api/crm/leads/${id}`)).statusCode).toBe(404);
    // From the service's own origin it works.
    expect((await browser({ origin: 'http://localhost:3000' }).post(restore)).statusCode).toBe(200);
    expect((await as(ctx, admin).get(`/api/crm/leads/${id}`)).statusCode).toBe(200);
  });

  test('webhook test event', async () => {
    const hook = await as(ctx, admin).post('/api/iam/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['lead.created'] });
    expect(hook.statusCode, hook.body).toBe(201);
    const url = `/api/iam/webhooks/${hook.json().id}/test`;
    refused(await browser({ origin: FOREIGN }).post(url));
    expect(await ctx.database.db.select().from(deliveries).where(eq(deliveries.endpoint_id, hook.json().id))).toEqual([]);
    expect((await browser({ origin: WEBSITE }).post(url)).statusCode).toBe(202);
  });

  test('logout: the session survives a forged one', async () => {
    const session = await signIn(admin);
    refused(await browser({ origin: FOREIGN }, session).post('/api/auth/logout'));
    expect((await browser({}, session).get('/api/auth/session')).statusCode).toBe(200);
    expect((await browser({ origin: 'http://localhost:3000' }, session).post('/api/auth/logout')).statusCode).toBe(200);
    expect((await browser({}, session).get('/api/auth/session')).statusCode).toBe(401);
  });

  test('PATCH, PUT and DELETE too; an opaque origin, a foreign Referer or Sec-Fetch-Site without Origin', async () => {
    const lead = (await as(ctx, admin).post('/api/crm/leads', { first_name: 'Kept', last_name: 'As is', phone: '+63 900 555 0102' })).json();
    const url = `/api/crm/leads/${lead.id}`;
    for (const headers of [
      { origin: FOREIGN }, { origin: 'null' }, { origin: 'not a url' }, { origin: 'http://localhost:3001' },
      { referer: `${FOREIGN}/page` }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' },
    ] as Record<string, string>[]) {
      refused(await browser(headers).patch(url, { first_name: 'Forged' }));
      refused(await browser(headers).delete(url));
    }
    refused(await browser({ origin: FOREIGN }).put(url, { first_name: 'Forged' }));
    expect((await as(ctx, admin).get(url)).json().first_name).toBe('Kept');
  });
});

describe('what passes', () => {
  test('the service\'s own origin, an allowed origin, the origin of the Host it was sent to, same-origin fetch metadata', async () => {
    const lead = (await as(ctx, admin).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '+63 900 555 0103' })).json();
    const url = `/api/crm/leads/${lead.id}`;
    for (const headers of [
      { origin: 'http://localhost:3000' }, { origin: WEBSITE }, { referer: 'http://localhost:3000/crm/leads' },
      // The console behind a proxy that keeps the Host (Vite's dev server).
      { origin: 'http://localhost:5173', host: 'localhost:5173' },
      { 'sec-fetch-site': 'same-origin' },
      // No Origin, Referer or fetch metadata: not a browser (scripts, tests).
      {},
    ] as Record<string, string>[]) {
      const res = await browser(headers).patch(url, { first_name: 'Changed' });
      expect(res.statusCode, JSON.stringify(headers)).toBe(200);
    }
  });

  test('reads from anywhere (CORS decides what a page may see)', async () => {
    expect((await browser({ origin: FOREIGN }).get('/api/auth/session')).statusCode).toBe(200);
  });

  test('a bearer token, from any origin', async () => {
    const { restore, id } = await deletedLead();
    expect((await as(ctx, admin, { headers: { origin: FOREIGN } }).post(restore)).statusCode).toBe(200);
    expect((await as(ctx, admin).get(`/api/crm/leads/${id}`)).statusCode).toBe(200);
  });

  test('without the session cookie: sign-in and the public website API', async () => {
    const login = await as(ctx, none, { headers: { origin: FOREIGN } }).post('/api/auth/login', { email: admin.email, password: admin.password });
    expect(login.statusCode).toBe(200);
    const subscribe = await as(ctx, none, { headers: { origin: FOREIGN } }).post('/api/public/newsletter', { email: 'visitor@example.com' });
    expect(subscribe.statusCode, subscribe.body).toBeLessThan(300);
    // The public API never acts with the session: a staff member's cookie changes nothing there.
    const withCookie = await browser({ origin: FOREIGN }).post('/api/public/newsletter', { email: 'staff-visitor@example.com' });
    expect(withCookie.statusCode, withCookie.body).toBeLessThan(300);
  });
});
