import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ConfigError } from '../src/config.js';
import { markdownRendering, markdownThread } from '../src/mail/markdown.js';
import { as, createTestApp, createUser, none, PATIENCE_MS, resolvedOpenapi, serverUrl, type TestContext, testConfig, waitFor } from './helpers.js';
import { make } from './factories.js';

// CONTRACT §13, "Hard edges": each rule here through HTTP (or start-up, for configuration).

const ORIGIN = 'https://console.example.com';
let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp({ ALLOWED_ORIGINS: ORIGIN });
  staff = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' });
});
afterAll(() => ctx.close());

const validationError = (field: string) => ({ error: 'Validation error', details: expect.objectContaining({ [field]: expect.any(String) }) });

describe('unknown query parameters are 400 on every route', () => {
  test('detail, update, delete, export and routes that read no query at all', async () => {
    const lead = await make.lead(ctx, { notes: 'kept' }, staff);
    const who = as(ctx, staff);
    for (const res of [
      await who.get(`/api/crm/leads/${lead.id}?colour=blue`),
      await who.patch(`/api/crm/leads/${lead.id}?colour=blue`, { notes: 'x' }),
      await who.delete(`/api/crm/leads/${lead.id}?colour=blue`),
      await who.get('/api/crm/leads/export?colour=blue'),
      await who.get('/api/auth/session?colour=blue'),
      await who.get('/api/iam/departments?colour=blue'),
    ]) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual(validationError('colour'));
    }
    // Nothing was changed or deleted by the refused requests.
    expect((await who.get(`/api/crm/leads/${lead.id}`)).json().notes).toBe('kept');
  });
});

describe('paging', () => {
  test('page is an integer from 1 to 1,000,000', async () => {
    for (const page of ['0', '1000001', '99999999999999999999', '1.5', 'abc']) {
      const res = await as(ctx, staff).get(`/api/crm/leads?page=${page}`);
      expect(res.statusCode, page).toBe(400);
      expect(res.json()).toEqual(validationError('page'));
    }
    expect((await as(ctx, staff).get('/api/crm/leads?page=1000000')).statusCode).toBe(200);
  });
});

describe('CORS', () => {
  test('the preflight of an allowed origin allows GET, HEAD, POST, PATCH and DELETE with credentials', async () => {
    for (const method of ['PATCH', 'DELETE', 'POST']) {
      const res = await ctx.app.inject({
        method: 'OPTIONS', url: '/api/crm/leads/00000000-0000-0000-0000-000000000000',
        headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
      });
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE']));
    }
    const other = await ctx.app.inject({ method: 'OPTIONS', url: '/api/crm/leads', headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('request ids', () => {
  test('a client id of 1–64 characters of [A-Za-z0-9._-] is kept; anything else is replaced by a generated one', async () => {
    const kept = await as(ctx, none).get('/api/health', { 'x-request-id': 'abc-123_X.y' });
    expect(kept.headers['x-request-id']).toBe('abc-123_X.y');
    for (const bad of ['a'.repeat(65), 'has space', 'line\u2028break', 'semi;colon', '{"level":60}']) {
      const res = await as(ctx, none).get('/api/health', { 'x-request-id': bad });
      expect(res.headers['x-request-id'], bad).not.toBe(bad);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});

describe('configuration', () => {
  test('a CRON_SECRET shorter than 32 characters stops start-up, naming the variable', () => {
    expect(() => testConfig({ CRON_SECRET: 'abc' })).toThrow(ConfigError);
    expect(() => testConfig({ CRON_SECRET: 'x'.repeat(31) })).toThrow(/CRON_SECRET/);
    expect(testConfig({ CRON_SECRET: 'x'.repeat(32) }).cronSecret).toBe('x'.repeat(32));
  });
});

describe('text PostgreSQL cannot store', () => {
  test('U+0000 in a body field, a query value or a path id is 400 naming the field, on lists and exports alike', async () => {
    const who = as(ctx, staff);
    const cases: [Awaited<ReturnType<typeof who.get>>, string][] = [
      [await who.post('/api/crm/leads', { first_name: 'Nul\u0000l', last_name: 'Byte', phone: '1' }), 'first_name'],
      [await who.post('/api/cms/projects', { name: 'P', status: 'upcoming', type: 'house_and_lot', nearby_landmarks: [{ name: 'a\u0000', distance: '1 km' }] }), 'nearby_landmarks.0.name'],
      [await who.get('/api/crm/leads?q=%00'), 'q'],
      [await who.get('/api/crm/leads/export?q=a%00b'), 'q'],
      [await who.get('/api/crm/leads/%00'), 'id'],
    ];
    for (const [res, field] of cases) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: 'Validation error', details: { [field]: 'must not contain the NUL character (U+0000)' } });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  test('an unpaired surrogate (JSON "\\ud800" alone) in a body field is 400 naming the field; a pair (an emoji) is stored as sent', async () => {
    const who = as(ctx, staff);
    const raw = (payload: string) => ctx.app.inject({ method: 'POST', url: '/api/crm/leads', headers: { ...staff.headers, 'content-type': 'application/json' }, payload });
    const cases: [Awaited<ReturnType<typeof raw>>, string][] = [
      [await raw('{"first_name":"Lone\\ud800","last_name":"High","phone":"1"}'), 'first_name'],
      [await raw('{"first_name":"Lone","last_name":"\\udc00Low","phone":"1"}'), 'last_name'],
      [await who.post('/api/cms/projects', { name: 'P', status: 'upcoming', type: 'house_and_lot', nearby_landmarks: [{ name: 'a\ud83d', distance: '1 km' }] }), 'nearby_landmarks.0.name'],
    ];
    for (const [res, field] of cases) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: 'Validation error', details: { [field]: 'must be valid Unicode text: it holds an unpaired surrogate (\\uD800-\\uDFFF)' } });
    }
    const paired = await raw('{"first_name":"Pair \\ud83d\\ude00","last_name":"Emoji","phone":"1"}');
    expect(paired.statusCode, paired.body).toBe(201);
    expect((await who.get(`/api/crm/leads/${paired.json().id}`)).json().first_name).toBe('Pair \u{1F600}');
  });
});

describe('nesting', () => {
  test('a JSON body nested deeper than 32 levels is 400 before anything walks it, signed out too', async () => {
    const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    for (const levels of [33, 3000, 100_000]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/api/public/inquiries', headers: { 'content-type': 'application/json' }, payload: deep(levels) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'Validation error', details: { body: 'must not be nested deeper than 32 levels' } });
    }
    // 32 levels is still read (and refused for its content, not its depth).
    const ok = await ctx.app.inject({ method: 'POST', url: '/api/public/inquiries', headers: { 'content-type': 'application/json' }, payload: deep(32) });
    expect(ok.json().details?.body).toBeUndefined();
  });

  test('a list longer than 10,000 items is 400 on its field before the schema reads an item, wherever it is', async () => {
    const who = as(ctx, staff);
    const campaign = { name: 'Long list', subject: 'S', content: 'C' };
    const long = await who.post('/api/crm/campaigns', { ...campaign, recipients: Array(250_000).fill(1) });
    expect(long.statusCode).toBe(400);
    expect(long.json()).toEqual({ error: 'Validation error', details: { recipients: 'must not have more than 10000 items' } });
    const nested = await who.post('/api/crm/campaigns', { ...campaign, extra: { deeper: Array(10_001).fill('x') } });
    expect(nested.json()).toEqual({ error: 'Validation error', details: { 'extra.deeper': 'must not have more than 10000 items' } });
    // 10,000 is read, and each item judged by the schema.
    const full = await who.post('/api/crm/campaigns', { ...campaign, recipients: Array.from({ length: 10_000 }, (_, i) => `r${i}@example.com`) });
    expect(full.statusCode, full.body).toBe(201);
  });

  test('a body with thousands of bad items: 400 with the first complaints, each the specific one', async () => {
    const res = await as(ctx, staff).post('/api/crm/campaigns', { name: 'Bad list', subject: 'S', content: 'C', recipients: Array(10_000).fill(1) });
    expect(res.statusCode).toBe(400);
    const { details } = res.json();
    // Each item is "all" or an e-mail address (a union): its own complaint is named, not the union's.
    expect(details['recipients.0']).toBe('must be string');
    expect(Object.values(details)).not.toContain('must match a schema in anyOf');
    // The schema's first 1,000 complaints (four an item), not 40,000: an answer of kilobytes, not megabytes.
    expect(Object.keys(details).length).toBeGreaterThan(100);
    expect(Object.keys(details).length).toBeLessThanOrEqual(1_000);
    expect(res.body.length).toBeLessThan(100_000);
    // A nullable field's union says what is wrong with the value, not that it is not null.
    const lead = await as(ctx, staff).post('/api/crm/leads', { first_name: 'A', last_name: 'B', email: 5 });
    expect(lead.json()).toEqual({ error: 'Validation error', details: { email: 'must be string' } });
  });
});

describe('instants and numbers', () => {
  test('a date-time that is not a real instant, or outside years 1–9999, is 400 on the field; date filters alike', async () => {
    const who = as(ctx, staff);
    for (const publish_date of ['2030-06-30T23:59:60Z', '2030-13-01T00:00:00Z', '2030-04-31T10:00:00Z', '0000-01-01T00:00:00Z', '2030-06-30T24:00:00Z', '2030-06-30T10:00:00+25:00']) {
      const res = await who.post('/api/cms/articles', { title: 'T', content: 'C', type: 'news', publish_date });
      expect(res.statusCode, publish_date).toBe(400);
      expect(res.json().details).toHaveProperty('publish_date');
    }
    expect((await who.post('/api/cms/articles', { title: 'Leap day', content: 'C', type: 'news', publish_date: '2028-02-29T12:00:00+08:00' })).statusCode).toBe(201);
    for (const day of ['0000-01-01', '2030-02-30', '10000-01-01']) {
      const res = await as(ctx, staff).get(`/api/iam/activity-logs?date_from=${day}`);
      expect(res.statusCode, day).toBe(400);
      expect(res.json().details).toHaveProperty('date_from');
    }
  });

  test('the last day there is, 9999-12-31, is a date_to like any other, on lists and exports', async () => {
    const lead = await make.lead(ctx, { notes: 'far future filter' }, staff);
    const list = await as(ctx, staff).get('/api/iam/activity-logs?date_from=2000-01-01&date_to=9999-12-31&limit=100');
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().data.some((log: { resource_id: string }) => log.resource_id === lead.id)).toBe(true);
    const csv = await as(ctx, staff).get('/api/iam/activity-logs/export?date_to=9999-12-31');
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.body).toContain(lead.id);
  });

  test('a number the column cannot hold is 400 on the field, and the document states the bounds', async () => {
    const who = as(ctx, staff);
    const project = await make.project(ctx, {}, staff);
    const unit = { project_id: project.id, block: '1', lot: '1', price: 100 };
    for (const [field, body] of [['price', { ...unit, price: 1e13 }], ['floor_area', { ...unit, floor_area: 1e11 }], ['lot_area', { ...unit, lot_area: 1e11 }]] as const) {
      const res = await who.post('/api/crm/inventory', body);
      expect(res.statusCode, field).toBe(400);
      expect(res.json().details).toHaveProperty(field);
    }
    const price = (await resolvedOpenapi(ctx)).paths['/api/crm/inventory'].post.requestBody.content['application/json'].schema.properties.price;
    expect(price).toMatchObject({ minimum: 0, maximum: 999_999_999_999.99 });
  });
});

describe('cost', () => {
  // Quadratic patterns took 2.8 s for 40,000 `<`: 200,000 would take over a minute each, past the test's time limit.
  test('an article of 200,000 characters of `<`, `[` or `![` is created with its excerpt derived', async () => {
    for (const unit of ['<', '[', '![']) {
      const res = await as(ctx, staff).post('/api/cms/articles', { title: `Flood ${unit}`, type: 'news', content: unit.repeat(200_000 / unit.length) });
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  test('such an article is read by the public and revalidated, and such content makes a campaign', async () => {
    for (const [i, content] of ['!['.repeat(100_000), '['.repeat(200_000), '<'.repeat(200_000)].entries()) {
      const slug = `pathological-${i}`;
      const made = await as(ctx, staff).post('/api/cms/articles', { title: `Pathological ${i}`, slug, type: 'news', content, published: true, publish_date: '2020-01-01T00:00:00.000Z' });
      expect(made.statusCode, made.body).toBe(201);
      const read = await as(ctx, none).get(`/api/public/articles/${slug}`);
      expect(read.statusCode).toBe(200);
      expect(read.json().content).toBe(content);
      expect(read.json().content_html).not.toMatch(/<a |<img /);
      const again = await as(ctx, none).get(`/api/public/articles/${slug}`, { 'if-none-match': read.headers.etag as string });
      expect(again.statusCode).toBe(304);
      const campaign = await as(ctx, staff).post('/api/crm/campaigns', { name: `Pathological ${i}`, subject: 'News', content });
      expect(campaign.statusCode, campaign.body).toBe(201);
    }
  });

  const publish = async (slug: string, content: string) => {
    const made = await as(ctx, staff).post('/api/cms/articles', { title: slug, slug, type: 'news', content, published: true, publish_date: '2020-01-01T00:00:00.000Z' });
    expect(made.statusCode, made.body).toBe(201);
  };

  test('large content is rendered on another thread, small content on this one', async () => {
    await publish('large-rendering', '*a* '.repeat(50_000));
    await publish('small-rendering', `Small *${Date.now()}*`);
    const inline = vi.spyOn(markdownRendering, 'render');
    const away = vi.spyOn(markdownRendering, 'renderAway');
    try {
      const large = await as(ctx, none).get('/api/public/articles/large-rendering');
      expect(large.statusCode, large.body).toBe(200);
      expect(large.json().content_html).toContain('<em>a</em>');
      expect(inline).not.toHaveBeenCalled();
      expect(away).toHaveBeenCalledTimes(1);
      expect((await away.mock.results[0]!.value).thread).not.toBe(threadId);

      const small = await as(ctx, none).get('/api/public/articles/small-rendering');
      expect(small.json().content_html).toMatch(/<em>\d+<\/em>/);
      expect(inline).toHaveBeenCalledTimes(1);
      expect(away).toHaveBeenCalledTimes(1);
    } finally {
      inline.mockRestore();
      away.mockRestore();
    }
  });

  test('a rendering thread that dies answers 503 to the reading it had, and the next reading is rendered by a new one', async () => {
    await publish('rendering-thread-dies', '![a]'.repeat(50_000));
    const renderAway = markdownRendering.renderAway.bind(markdownRendering);
    const away = vi.spyOn(markdownRendering, 'renderAway').mockImplementationOnce((content) => {
      const answer = renderAway(content);
      void markdownThread.running!.worker.terminate();
      return answer;
    });
    try {
      const failed = await as(ctx, none).get('/api/public/articles/rendering-thread-dies');
      expect(failed.statusCode).toBe(503);
      expect(failed.json()).toEqual({ error: 'Service unavailable', message: expect.stringContaining('try again') });
      const read = await as(ctx, none).get('/api/public/articles/rendering-thread-dies');
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json().content_html).toContain('![a]');
      expect(away).toHaveBeenCalledTimes(2);
    } finally {
      away.mockRestore();
    }
  });

  test("while a pathological article's first reading renders, a request started meanwhile is answered", async () => {
    await publish('pathological-first-reading', '*a'.repeat(100_000));
    const happened: string[] = [];
    let health: Promise<void> | undefined;
    // The health check starts once the rendering has begun, wherever it runs; it is answered before the rendering ends.
    const startHealth = () => void (health ??= as(ctx, none).get('/api/health').then((res) => void happened.push(`health ${res.statusCode}`)));
    const [inlineRender, renderAway] = [markdownRendering.render.bind(markdownRendering), markdownRendering.renderAway.bind(markdownRendering)];
    const inline = vi.spyOn(markdownRendering, 'render').mockImplementation((content) => {
      startHealth();
      const html = inlineRender(content);
      happened.push('rendered');
      return html;
    });
    const away = vi.spyOn(markdownRendering, 'renderAway').mockImplementation((content) => {
      startHealth();
      return renderAway(content).then((answer) => (happened.push('rendered'), answer));
    });
    try {
      const article = await as(ctx, none).get('/api/public/articles/pathological-first-reading');
      happened.push(`article ${article.statusCode}`);
      await health;
      expect(happened).toEqual(['health 200', 'rendered', 'article 200']);
    } finally {
      inline.mockRestore();
      away.mockRestore();
    }
  });
});

describe('passwords', () => {
  test('every character counts, past the 72 bytes bcrypt reads', async () => {
    const password = `Aa1!${'x'.repeat(76)}`; // 80 characters
    const differentAfter72 = `${password.slice(0, 75)}y${password.slice(76)}`;
    const email = `long-password-${Date.now()}@example.com`;
    expect((await as(ctx, staff).post('/api/iam/users', { email, name: 'Long Password', password })).statusCode).toBe(201);
    expect((await as(ctx, none).post('/api/auth/login', { email, password: differentAfter72 })).statusCode).toBe(401);
    expect((await as(ctx, none).post('/api/auth/login', { email, password: password.slice(0, 72) })).statusCode).toBe(401);
    expect((await as(ctx, none).post('/api/auth/login', { email, password })).statusCode).toBe(200);
  });
});

describe('found by the fuzz test', () => {
  test('a query parameter named __proto__ is refused by name', async () => {
    const res = await as(ctx, staff).get('/api/crm/leads?__proto__=x');
    expect(res.statusCode).toBe(400);
    const { error, details } = JSON.parse(res.body);
    expect(error).toBe('Validation error');
    // An own key (JSON.parse makes one), not the prototype: the answer named the field.
    expect(Object.keys(details)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(details, '__proto__')?.value).toEqual(expect.any(String));
  });

  test('a path that is not valid percent-encoded UTF-8 is 400 with the error body', async () => {
    for (const url of ['/api/cms/projects/%ED%A0%80', '/api/crm/leads/%zz', '/api/cms/projects/%C0%80']) {
      const res = await as(ctx, staff).get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toEqual({ error: 'Validation error', details: { url: expect.any(String) } });
    }
  });

  test('a multipart body cut short is 400 details.file, not a 500', async () => {
    const res = await as(ctx, staff).post('/api/uploads', Buffer.from('--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc'), {
      'content-type': 'multipart/form-data; boundary=x',
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: { file: expect.stringMatching(/malformed/) } });
  });

  test('an address a user could never sign in with is refused when the user is created', async () => {
    for (const email of ['a!b@example.com', 'a@b.c', 'x@localhost']) {
      const res = await as(ctx, staff).post('/api/iam/users', { email, name: 'Unusable', password: 'Passw0rd!x' });
      expect(res.statusCode, email).toBe(400);
      expect(res.json()).toEqual({ error: 'Validation error', details: { email: 'must be a valid e-mail address' } });
    }
    const email = `o'brien+${Date.now()}@example.com`;
    expect((await as(ctx, staff).post('/api/iam/users', { email, name: "O'Brien", password: 'Passw0rd!x' })).statusCode).toBe(201);
    expect((await as(ctx, none).post('/api/auth/login', { email, password: 'Passw0rd!x' })).statusCode).toBe(200);
  });

  test('a range whose default bound is computed from the other stays within years 1–9999', async () => {
    const who = as(ctx, staff);
    // `from` defaults to 29 days before `to`: before year 1 it would be, so it is the first day there is.
    for (const [query, range, days] of [
      ['to=0001-01-01', { from: '0001-01-01', to: '0001-01-01' }, 1],
      ['to=0001-01-02', { from: '0001-01-01', to: '0001-01-02' }, 2],
      ['to=0001-01-30', { from: '0001-01-01', to: '0001-01-30' }, 30],
      ['to=0001-01-31', { from: '0001-01-02', to: '0001-01-31' }, 30],
      ['to=9999-12-31', { from: '9999-12-02', to: '9999-12-31' }, 30],
      ['from=0001-01-01&to=0001-01-01', { from: '0001-01-01', to: '0001-01-01' }, 1],
      ['from=9999-12-31&to=9999-12-31', { from: '9999-12-31', to: '9999-12-31' }, 1],
    ] as const) {
      const res = await who.get(`/api/crm/stats?${query}`);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
      expect(res.json().range, query).toEqual(range);
      expect(res.json().leads.new_per_day, query).toHaveLength(days);
    }
    // `to` defaults to today: a `from` after it is the request's own mistake, named.
    const future = await who.get('/api/crm/stats?from=9999-12-31');
    expect(future.statusCode, future.body).toBe(400);
    expect(future.json()).toEqual({ error: 'Validation error', details: { from: expect.stringMatching(/^must not be after to \(default: today, \d{4}-\d{2}-\d{2}\)$/) } });
    const early = await who.get('/api/crm/stats?from=0001-01-01');
    expect(early.statusCode, early.body).toBe(400);
    expect(early.json()).toEqual(validationError('from'));
  });
});

describe.skipIf(!serverUrl)('a database with no room (PostgreSQL)', () => {
  test('no pooled connection free within its wait: 503 with Retry-After, a message to try again, and the next request served', async () => {
    const max = ctx.database.pool!().max;
    // Every pooled connection busy for longer than a request waits for one (5 s).
    const busy = Array.from({ length: max }, () => ctx.database.execute('select pg_sleep(7)'));
    await waitFor(() => ctx.database.pool!().idle === 0 && ctx.database.pool!().total === max, PATIENCE_MS, 'the pool to be taken');
    const res = await as(ctx, staff).get('/api/crm/leads?q=no-room');
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toEqual({ error: 'Service unavailable', message: 'The database is busy or cannot be reached right now; try again in a few seconds' });
    await Promise.all(busy);
    expect((await as(ctx, staff).get('/api/crm/leads?q=no-room')).statusCode).toBe(200);
  }, 60_000);
});
