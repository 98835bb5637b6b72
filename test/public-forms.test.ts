import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { clock, tickingClock } from '../src/clock.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { publicFormsCleanup } from '../src/jobs/public-forms-cleanup.js';
import { activityLogs, newsletterSignups, newsletterSubscriptions, usedFormTokens } from '../src/db/schema/index.js';
import { as, createTestApp, createTestDatabase, createUser, none, type Reply, type TestContext } from './helpers.js';
import { confirmPathOf, outboxReader } from './mail.js';

// Public forms: confirmed newsletter sign-ups with their consent, and bots kept out (honeypot, form token, CAPTCHA).

const METRICS_TOKEN = 'metrics-token-0123456789abcdef-0123456789';
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'user-agent': 'Mozilla/5.0 (Test) Chromium/131' };
const REFUSED = 'This confirmation link is not valid: it may have expired or been used already. Sign up again to receive a new one.';
const MIN_SECONDS = 3;

/** Every line the app's logger writes. */
const lines: string[] = [];
const capture = new Writable({ write(chunk, _encoding, callback) { lines.push(...String(chunk).split('\n').filter(Boolean)); callback(); } });

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
let outbox: ReturnType<typeof outboxReader>;
let n = 0;
const address = (what: string) => `${what}-${++n}-${Date.now()}@example.com`;

beforeAll(async () => {
  ctx = await createTestApp({ FORM_TOKEN_MIN_SECONDS: String(MIN_SECONDS), METRICS_TOKEN, LOG_LEVEL: 'info' }, { logger: { level: 'info', stream: capture } });
  staff = await createUser(ctx, { crm: 'rwd', iam: 'r' });
  outbox = outboxReader(ctx);
});
afterAll(async () => ctx?.close());
afterEach(() => {
  clock.now = tickingClock();
});

/** Moves the service's clock `ms` forward from where it is (until the test ends). */
function ahead(ms: number) {
  const current = clock.now;
  clock.now = () => new Date(current().getTime() + ms);
}

/** A form token as the website fetches it. */
async function formToken(app: TestContext = ctx): Promise<string> {
  const res = await as(app, none).get('/api/public/form-token');
  expect(res.statusCode, res.body).toBe(200);
  return res.json().token;
}

/** A token fetched now and sent once it is old enough: the clock moves past its `not_before`. */
async function ripeToken(app: TestContext = ctx): Promise<string> {
  const token = await formToken(app);
  ahead((MIN_SECONDS + 1) * 1000);
  return token;
}

const signUp = (body: Record<string, unknown>, headers: Record<string, string> = {}, app: TestContext = ctx) =>
  as(app, none, { remoteAddress: '203.0.113.9' }).post('/api/public/newsletter', body, { 'user-agent': 'Mozilla/5.0 (Visitor)', ...headers });
const inquire = (body: Record<string, unknown>, app: TestContext = ctx) =>
  as(app, none).post('/api/public/inquiries', { name: 'Vera Visitor', subject: 'Price list', message: 'Please send it', ...body });

async function subscriptionOf(email: string) {
  const list = (await as(ctx, staff).get('/api/crm/newsletters?limit=100')).json().data as { id: string; email: string }[];
  const found = list.find((s) => s.email === email);
  return found && (await as(ctx, staff).get(`/api/crm/newsletters/${found.id}`)).json();
}
const pendingOf = async (email: string, app: TestContext = ctx) => app.database.db.select().from(newsletterSignups).where(eq(newsletterSignups.email, email));
const inquiriesFrom = async (email: string) =>
  ((await as(ctx, staff).get(`/api/crm/inquiries?q=${encodeURIComponent(email)}&limit=100`)).json().data as unknown[]).length;

/** The value of `public_form_dropped_total` for a form and reason (0 when never counted). */
async function dropped(form: string, reason: string, app: TestContext = ctx): Promise<number> {
  const text = (await app.app.inject({ method: 'GET', url: '/api/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
  const line = text.split('\n').find((l) => l.startsWith(`public_form_dropped_total{form="${form}",reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The answer as a client sees it: status, type and body (an inquiry's id is new each time, so it is compared by shape). */
const answerOf = (res: Reply) => {
  const body = res.json();
  return { status: res.statusCode, type: res.headers['content-type'], body: 'id' in body ? { ...body, id: expect.stringMatching(/^[0-9a-f-]{36}$/) } : body };
};

describe('form token', () => {
  test('GET /api/public/form-token issues a signed token with its window, never cached', async () => {
    const before = Date.now();
    const res = await as(ctx, none).get('/api/public/form-token');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { token, not_before, expires_at } = res.json();
    expect(token).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const issued = parseInt(token.split('.')[0], 36);
    expect(issued).toBeGreaterThanOrEqual(before);
    expect(Date.parse(not_before) - issued).toBe(MIN_SECONDS * 1000);
    expect(Date.parse(expires_at) - issued).toBe(2 * 3600 * 1000);
    expect(await formToken()).not.toBe(token);
  });

  test('a missing, forged, young, reused or expired token is dropped: the same answer, nothing stored or mailed', async () => {
    const person = address('person');
    const good = await ripeToken();
    const accepted = await inquire({ email: person, form_token: good });
    expect(accepted.statusCode).toBe(201);
    expect(await inquiriesFrom(person)).toBe(1);
    const before = Object.fromEntries(await Promise.all(['token_missing', 'token_invalid', 'token_young', 'token_reused', 'token_expired'].map(async (r) => [r, await dropped('inquiry', r)])));

    const bot = address('bot');
    const [signature] = good.split('.').slice(-1);
    const forged = good.replace(`.${signature}`, `.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`);
    const attempts = [
      { reason: 'token_reused', res: await inquire({ email: bot, form_token: good }) },
      { reason: 'token_missing', res: await inquire({ email: bot, form_token: undefined }) },
      { reason: 'token_invalid', res: await inquire({ email: bot, form_token: forged }) },
      { reason: 'token_invalid', res: await inquire({ email: bot, form_token: 'not-a-token' }) },
    ];
    clock.now = tickingClock();
    const young = await formToken();
    attempts.push({ reason: 'token_young', res: await inquire({ email: bot, form_token: young }) });
    const old = await formToken();
    ahead(2 * 3600 * 1000 + 1000);
    attempts.push({ reason: 'token_expired', res: await inquire({ email: bot, form_token: old }) });

    for (const { res } of attempts) expect(answerOf(res)).toEqual(answerOf(accepted));
    expect(await inquiriesFrom(bot)).toBe(0);
    const counted = (reason: string) => attempts.filter((a) => a.reason === reason).length;
    for (const reason of Object.keys(before)) expect(await dropped('inquiry', reason), reason).toBe(before[reason] + counted(reason));
    expect(lines.some((l) => l.includes('public form submission dropped') && l.includes('"reason":"token_young"') && l.includes('"form":"inquiry"'))).toBe(true);

    // The young token, once old enough, is a person's.
    clock.now = tickingClock();
    ahead((MIN_SECONDS + 1) * 1000);
    expect((await inquire({ email: bot, form_token: young })).statusCode).toBe(201);
    expect(await inquiriesFrom(bot)).toBe(1);
  });

  test('the newsletter form checks the token too: a bot\'s sign-up mails nothing and stores nothing', async () => {
    const person = address('reader');
    const answer = await signUp({ email: person, form_token: await ripeToken() });
    await outbox.next(person);
    const bot = address('bot-reader');
    const before = await dropped('newsletter', 'token_missing');
    const res = await signUp({ email: bot, form_token: undefined });
    expect(answerOf(res)).toEqual(answerOf(answer));
    expect(await dropped('newsletter', 'token_missing')).toBe(before + 1);
    expect(await pendingOf(bot)).toEqual([]);
    await ctx.app.background.settled();
    expect(outbox.unread(bot)).toEqual([]);
  });

  test('PUBLIC_FORM_TOKEN=off: a form without a token is accepted; one that is sent is still checked', async () => {
    const off = await createTestApp({ PUBLIC_FORM_TOKEN: 'off', FORM_TOKEN_MIN_SECONDS: '3' });
    try {
      const email = address('no-token');
      expect((await as(off, none).post('/api/public/inquiries', { name: 'No Token', email, subject: 'S', message: 'M', form_token: undefined })).statusCode).toBe(201);
      const young = await formToken(off);
      expect((await as(off, none).post('/api/public/inquiries', { name: 'Young Token', email: 'young@example.com', subject: 'S', message: 'M', form_token: young })).statusCode).toBe(201);
      const staffOff = await createUser(off, { crm: 'r' });
      const emails = (await as(off, staffOff).get('/api/crm/inquiries?limit=100')).json().data.map((i: { email: string }) => i.email);
      expect(emails).toContain(email);
      expect(emails).not.toContain('young@example.com');
    } finally {
      await off.close();
    }
  });

  for (const store of ['the configured store (Redis when REDIS_URL is set)', 'the database']) {
    test(`two instances share the used tokens: ${store}`, async () => {
      const database = await createTestDatabase();
      const env = { FORM_TOKEN_MIN_SECONDS: '0', METRICS_TOKEN, ...(store === 'the database' ? { REDIS_URL: undefined } : {}) };
      const one = await createTestApp(env, { database });
      const two = await createTestApp(env, { database });
      try {
        const token = await formToken(one);
        const send = (app: TestContext, email: string) => as(app, none).post('/api/public/inquiries', { name: 'Twin', email, subject: 'S', message: 'M', form_token: token });
        expect((await send(one, 'first@example.com')).statusCode).toBe(201);
        expect((await send(two, 'second@example.com')).statusCode).toBe(201);
        expect(await dropped('inquiry', 'token_reused', two)).toBe(1);
        const staffTwo = await createUser(two, { crm: 'r' });
        expect((await as(two, staffTwo).get('/api/crm/inquiries?limit=100')).json().data.map((i: { email: string }) => i.email)).toEqual(['first@example.com']);
        if (store === 'the database') expect(await database.db.select().from(usedFormTokens)).toHaveLength(1);
      } finally {
        await one.close();
        await two.close();
        await database.close();
      }
    });
  }
});

describe('honeypot', () => {
  test('anything in `website` marks a bot on both forms: the same answers, nothing stored or mailed, counted', async () => {
    const person = address('honest');
    const inquiry = await inquire({ email: person, form_token: await ripeToken(), website: '' });
    const subscription = await signUp({ email: person, website: '', form_token: await ripeToken() });
    expect(inquiry.statusCode).toBe(201);
    await outbox.next(person);

    const bot = address('honeypot');
    const before = { inquiry: await dropped('inquiry', 'honeypot'), newsletter: await dropped('newsletter', 'honeypot') };
    const botInquiry = await inquire({ email: bot, form_token: await ripeToken(), website: 'https://spam.example' });
    const botSignUp = await signUp({ email: bot, form_token: await ripeToken(), website: 'x' });
    expect(answerOf(botInquiry)).toEqual(answerOf(inquiry));
    expect(answerOf(botSignUp)).toEqual(answerOf(subscription));
    expect(await dropped('inquiry', 'honeypot')).toBe(before.inquiry + 1);
    expect(await dropped('newsletter', 'honeypot')).toBe(before.newsletter + 1);
    expect(await inquiriesFrom(bot)).toBe(0);
    expect(await pendingOf(bot)).toEqual([]);
    await ctx.app.background.settled();
    expect(outbox.unread(bot)).toEqual([]);
  });
});

describe('confirmed sign-ups', () => {
  test('a sign-up is kept apart and mailed; following the link subscribes the address with its consent, audited', async () => {
    const email = address('confirm');
    const res = await signUp({ email: email.toUpperCase(), name: 'Nora Reader', form: 'footer', consent_text: 'Yes, e-mail me the newsletter.', form_token: await ripeToken() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Thank you for subscribing' });
    expect(await subscriptionOf(email)).toBeUndefined();
    const [pending] = await pendingOf(email);
    expect(pending).toMatchObject({ name: 'Nora Reader', consent_form: 'footer', consent_text: 'Yes, e-mail me the newsletter.', consent_ip: '203.0.113.9' });
    expect(pending.expires_at.getTime() - pending.mailed_at.getTime()).toBe(48 * 3600 * 1000);

    const mail = await outbox.next(email);
    expect(mail.subject).toBe('Confirm your newsletter subscription');
    const link = confirmPathOf(mail);
    expect(pending.token_hash).not.toContain(link.split('token=')[1]);
    const page = await as(ctx, none, { remoteAddress: '198.51.100.4' }).get(link, BROWSER);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('Your subscription is confirmed');
    expect(page.body).toContain(email);

    const subscription = await subscriptionOf(email);
    expect(subscription).toMatchObject({
      email, name: 'Nora Reader', status: 'subscribed', unsubscribed_at: null,
      consent: { ip: '203.0.113.9', user_agent: 'Mozilla/5.0 (Visitor)', form: 'footer', text: 'Yes, e-mail me the newsletter.', method: 'public-confirmed' },
    });
    expect(Date.parse(subscription.consent.at)).toBe(pending.consent_at.getTime());
    expect(await pendingOf(email)).toEqual([]);
    const [row] = await ctx.database.db.select().from(newsletterSubscriptions).where(eq(newsletterSubscriptions.email, email));
    expect(row).toMatchObject({ consent_method: 'public-confirmed', consent_form: 'footer', consent_ip: '203.0.113.9' });
    const logs = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'newsletters'), eq(activityLogs.resource_id, subscription.id)));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ action: 'create', user_id: null, ip_address: '198.51.100.4', user_agent: BROWSER['user-agent'] });
    expect(logs[0].changes).toMatchObject({ after: { email, consent_method: 'public-confirmed' } });

    // The link is used up.
    const again = await as(ctx, none).get(link, BROWSER);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain(REFUSED);
    expect((await as(ctx, none).get(link)).json()).toEqual({ error: 'Validation error', details: { token: REFUSED } });
  });

  test('an expired, reused or forged link is refused with one message that does not say which', async () => {
    const expired = address('expired');
    await signUp({ email: expired, form_token: await ripeToken() });
    const expiredLink = confirmPathOf(await outbox.next(expired));
    const used = address('used');
    await signUp({ email: used, form_token: await ripeToken() });
    const usedLink = confirmPathOf(await outbox.next(used));
    expect((await as(ctx, none).get(usedLink)).statusCode).toBe(200);

    clock.now = tickingClock();
    ahead(49 * 3600 * 1000);
    const answers = await Promise.all([expiredLink, usedLink, '/api/public/newsletter/confirm?token=forged-token-0123456789abcdef'].map(async (link) => {
      const json = await as(ctx, none).get(link);
      const html = await as(ctx, none).get(link, BROWSER);
      const posted = await as(ctx, none).post('/api/public/newsletter/confirm', { token: new URLSearchParams(link.split('?')[1]).get('token') });
      return { json: [json.statusCode, json.body], html: [html.statusCode, html.body], posted: [posted.statusCode, posted.body] };
    }));
    expect(answers[0].json).toEqual([400, JSON.stringify({ error: 'Validation error', details: { token: REFUSED } })]);
    expect(answers[0].html[0]).toBe(400);
    expect(answers[0].posted).toEqual(answers[0].json);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(await subscriptionOf(expired)).toBeUndefined();
  });

  test('repeated sign-ups of one address send one mail an hour; the newest link is the one that works', async () => {
    const email = address('repeat');
    for (let i = 0; i < 3; i++) expect((await signUp({ email, form_token: await ripeToken() })).statusCode).toBe(200);
    const first = await outbox.next(email);
    await ctx.app.background.settled();
    expect(outbox.unread(email)).toEqual([]);

    clock.now = tickingClock();
    ahead(61 * 60 * 1000);
    const token = await formToken();
    ahead((MIN_SECONDS + 1) * 1000);
    expect((await signUp({ email, form_token: token })).statusCode).toBe(200);
    const second = await outbox.next(email);
    expect(confirmPathOf(second)).not.toBe(confirmPathOf(first));
    expect((await as(ctx, none).get(confirmPathOf(first))).statusCode).toBe(400);
    expect((await as(ctx, none).get(confirmPathOf(second))).statusCode).toBe(200);
    expect((await subscriptionOf(email)).status).toBe('subscribed');
  });

  test('the answer is the same for a new, pending (throttled), subscribed and unsubscribed address, and for a bot', async () => {
    const fresh = address('fresh');
    const answers: Reply[] = [await signUp({ email: fresh, form_token: await ripeToken() })];
    answers.push(await signUp({ email: fresh, form_token: await ripeToken() })); // pending, no second mail
    await outbox.next(fresh);
    const subscribed = address('subscribed');
    expect((await as(ctx, staff).post('/api/crm/newsletters', { email: subscribed })).statusCode).toBe(201);
    answers.push(await signUp({ email: subscribed, form_token: await ripeToken() }));
    const left = address('left');
    const created = (await as(ctx, staff).post('/api/crm/newsletters', { email: left })).json();
    expect((await as(ctx, staff).patch(`/api/crm/newsletters/${created.id}`, { status: 'unsubscribed' })).statusCode).toBe(200);
    answers.push(await signUp({ email: left, form_token: await ripeToken() }));
    answers.push(await signUp({ email: address('bot'), website: 'filled' }));
    for (const res of answers) expect([res.statusCode, res.headers['content-type'], res.body]).toEqual([answers[0].statusCode, answers[0].headers['content-type'], answers[0].body]);

    await ctx.app.background.settled();
    expect(outbox.unread(fresh)).toEqual([]);
    expect(outbox.unread(subscribed)).toEqual([]); // nothing to confirm
    // An unsubscribed address is subscribed again once it confirms (CONTRACT: the public form resubscribes).
    expect((await subscriptionOf(left)).status).toBe('unsubscribed');
    expect((await as(ctx, none).get(confirmPathOf(await outbox.next(left)))).statusCode).toBe(200);
    expect(await subscriptionOf(left)).toMatchObject({ status: 'subscribed', unsubscribed_at: null, consent: { method: 'public-confirmed' } });
  });

  test('a sign-up without consent wording keeps NEWSLETTER_CONSENT_TEXT', async () => {
    const email = address('default-text');
    await signUp({ email, form_token: await ripeToken() });
    expect((await pendingOf(email))[0]).toMatchObject({ consent_text: ctx.config.newsletterConsentText, consent_form: null });
  });

  test('staff create subscriptions without confirmation; their consent says staff', async () => {
    const email = address('staff-made');
    const created = await as(ctx, staff).post('/api/crm/newsletters', { email, name: 'Walk-in' });
    expect(created.statusCode).toBe(201);
    const subscription = await subscriptionOf(email);
    expect(subscription).toMatchObject({ status: 'subscribed', consent: { method: 'staff', ip: null, user_agent: null, form: null, text: null } });
    expect(Date.parse(subscription.consent.at)).not.toBeNaN();
    await ctx.app.background.settled();
    expect(outbox.unread(email)).toEqual([]);
    expect(await pendingOf(email)).toEqual([]);
    // Subscribed again by staff: the consent is theirs, given now.
    expect((await as(ctx, staff).patch(`/api/crm/newsletters/${subscription.id}`, { status: 'unsubscribed' })).statusCode).toBe(200);
    expect((await as(ctx, staff).patch(`/api/crm/newsletters/${subscription.id}`, { status: 'subscribed' })).statusCode).toBe(200);
    expect((await subscriptionOf(email)).consent.method).toBe('staff');
  });

  test('the confirmation may open the website\'s own page (NEWSLETTER_CONFIRM_URL), which POSTs the token', async () => {
    const site = await createTestApp({ NEWSLETTER_CONFIRM_URL: 'https://www.example.com/newsletter/confirmed?lang=en' });
    try {
      const email = address('site-page');
      expect((await as(site, none).post('/api/public/newsletter', { email })).statusCode).toBe(200);
      const mail = await outboxReader(site).next(email);
      const url = new URL(/https:\/\/www\.example\.com\/newsletter\/confirmed\?[^\s"<>]+/.exec(mail.text)![0].replace(/&amp;/g, '&'));
      expect(url.searchParams.get('lang')).toBe('en');
      const token = url.searchParams.get('token')!;
      const confirmed = await as(site, none).post('/api/public/newsletter/confirm', { token });
      expect([confirmed.statusCode, confirmed.json()]).toEqual([200, { message: 'Your subscription is confirmed' }]);
      expect((await as(site, none).post('/api/public/newsletter/confirm', { token })).statusCode).toBe(400);
      expect((await as(site, none).post('/api/public/newsletter/confirm', {})).json().details.token).toBeTruthy();
    } finally {
      await site.close();
    }
  });

  test('NEWSLETTER_DOUBLE_OPT_IN=false: a public sign-up is subscribed at once, its consent unconfirmed', async () => {
    const direct = await createTestApp({ NEWSLETTER_DOUBLE_OPT_IN: 'false', NEWSLETTER_CONSENT_TEXT: 'Send me news.' });
    try {
      const email = address('direct');
      expect((await as(direct, none, { remoteAddress: '192.0.2.8' }).post('/api/public/newsletter', { email, form: 'popup' })).statusCode).toBe(200);
      const reader = await createUser(direct, { crm: 'r' });
      const [listed] = (await as(direct, reader).get('/api/crm/newsletters')).json().data;
      expect(listed).toMatchObject({ email, status: 'subscribed', consent: { method: 'public-unconfirmed', form: 'popup', text: 'Send me news.', ip: '192.0.2.8' } });
      await direct.app.background.settled();
      expect(outboxReader(direct).unread(email)).toEqual([]);
    } finally {
      await direct.close();
    }
  });
});

describe('cleanup', () => {
  test('the hourly job forgets expired sign-ups (with their personal data) and used tokens past their expiry', async () => {
    const app = await createTestApp({ REDIS_URL: undefined });
    try {
      const email = address('forgotten');
      expect((await as(app, none).post('/api/public/newsletter', { email })).statusCode).toBe(200);
      const link = confirmPathOf(await outboxReader(app).next(email));
      const run = () => publicFormsCleanup.handler({}, { config: app.config, database: app.database, log: app.app.log, mailer: app.app.mailer, jobs: app.app.jobs });
      await run();
      expect(await pendingOf(email, app)).toHaveLength(1);
      expect(await app.database.db.select().from(usedFormTokens)).toHaveLength(1);
      ahead(49 * 3600 * 1000);
      await run();
      expect(await pendingOf(email, app)).toEqual([]);
      expect(await app.database.db.select().from(usedFormTokens)).toEqual([]);
      expect((await as(app, none).get(link)).json().details.token).toBe(REFUSED);
    } finally {
      await app.close();
    }
  });
});

describe('CAPTCHA', () => {
  let server: Server;
  let verifyUrl: string;
  const received: URLSearchParams[] = [];
  let down = false;

  beforeAll(async () => {
    // The siteverify protocol: a form-encoded POST of secret, response and remoteip; `success` says whether it passed.
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => { body += chunk; });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        received.push(form);
        if (down || !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
          res.writeHead(500).end('unavailable');
          return;
        }
        const success = form.get('secret') === 'captcha-secret' && form.get('response') === 'pass';
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(success ? { success: true } : { success: false, 'error-codes': ['invalid-input-response'] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    verifyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
  });
  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const provider of ['turnstile', 'hcaptcha'] as const) {
    test(`${provider}: the widget's response is verified; a failed or missing one is dropped, an unreachable provider is 503`, async () => {
      const app = await createTestApp({ CAPTCHA_PROVIDER: provider, CAPTCHA_SECRET: 'captcha-secret', CAPTCHA_VERIFY_URL: verifyUrl, METRICS_TOKEN });
      const field = provider === 'turnstile' ? 'cf-turnstile-response' : 'h-captcha-response';
      try {
        const reader = await createUser(app, { crm: 'r' });
        const emails = async () => (await as(app, reader).get('/api/crm/inquiries?limit=100')).json().data.map((i: { email: string }) => i.email);
        const send = (body: Record<string, unknown>) => as(app, none, { remoteAddress: '198.51.100.23' }).post('/api/public/inquiries', { name: 'Cap Tcha', subject: 'S', message: 'M', ...body });

        const person = await send({ email: 'person@example.com', captcha_token: 'pass' });
        expect(person.statusCode).toBe(201);
        const asked = received.at(-1)!;
        expect(Object.fromEntries(asked)).toEqual({ secret: 'captcha-secret', response: 'pass', remoteip: '198.51.100.23' });
        expect((await send({ email: 'widget@example.com', [field]: 'pass' })).statusCode).toBe(201);

        const failed = await send({ email: 'failed@example.com', captcha_token: 'fail' });
        const missing = await send({ email: 'missing@example.com' });
        expect(answerOf(failed)).toEqual(answerOf(person));
        expect(answerOf(missing)).toEqual(answerOf(person));
        expect(await dropped('inquiry', 'captcha_failed', app)).toBe(1);
        expect(await dropped('inquiry', 'captcha_missing', app)).toBe(1);

        down = true;
        const token = await formToken(app);
        const unavailable = await send({ email: 'later@example.com', captcha_token: 'pass', form_token: token });
        expect(unavailable.statusCode).toBe(503);
        expect(unavailable.json()).toEqual({ error: 'Service unavailable', message: 'The form cannot be checked right now. Please send it again in a few minutes.' });
        down = false;
        // Nothing was used up: the same form sent again goes through.
        expect((await send({ email: 'later@example.com', captcha_token: 'pass', form_token: token })).statusCode).toBe(201);
        expect((await emails()).sort()).toEqual(['later@example.com', 'person@example.com', 'widget@example.com']);

        const newsletter = await as(app, none).post('/api/public/newsletter', { email: 'captcha-reader@example.com', captcha_token: 'fail' });
        expect(newsletter.statusCode).toBe(200);
        expect(await dropped('newsletter', 'captcha_failed', app)).toBe(1);
        expect(await pendingOf('captcha-reader@example.com', app)).toEqual([]);
      } finally {
        down = false;
        await app.close();
      }
    });
  }

  test('configuration: the provider is one of two, needs its secret, and defaults to its own siteverify URL', () => {
    const base = { AUTH_SECRET: 'x'.repeat(32), DATA_DIR: ctx.config.dataDir };
    expect(loadConfig(base).captcha).toBeUndefined();
    expect(loadConfig({ ...base, CAPTCHA_PROVIDER: 'turnstile', CAPTCHA_SECRET: 's' }).captcha)
      .toEqual({ provider: 'turnstile', secret: 's', verifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify' });
    expect(loadConfig({ ...base, CAPTCHA_PROVIDER: 'hcaptcha', CAPTCHA_SECRET: 's' }).captcha?.verifyUrl).toBe('https://api.hcaptcha.com/siteverify');
    expect(() => loadConfig({ ...base, CAPTCHA_PROVIDER: 'recaptcha', CAPTCHA_SECRET: 's' })).toThrow(/CAPTCHA_PROVIDER must be turnstile or hcaptcha/);
    expect(() => loadConfig({ ...base, CAPTCHA_PROVIDER: 'turnstile' })).toThrow(/CAPTCHA_SECRET/);
    expect(() => loadConfig({ ...base, CAPTCHA_SECRET: 's' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, FORM_TOKEN_MIN_SECONDS: '-1' })).toThrow(/FORM_TOKEN_MIN_SECONDS/);
    expect(() => loadConfig({ ...base, NEWSLETTER_DOUBLE_OPT_IN: 'maybe' })).toThrow(/NEWSLETTER_DOUBLE_OPT_IN/);
    expect(loadConfig({ ...base, PUBLIC_FORM_TOKEN: 'off' }).publicFormToken).toBe(false);
  });
});
