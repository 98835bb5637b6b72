import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { markdownRendering } from '../src/mail/markdown.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';
import { make } from './factories.js';
import { confirmPathOf, outboxReader } from './mail.js';

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
beforeAll(async () => {
  ctx = await createTestApp();
  staff = await createUser(ctx, { cms: 'rwd', crm: 'rwd' });
});
afterAll(async () => { await ctx?.close(); });


test('only published records whose publish date has come appear, in list and by slug', async () => {
  const past = new Date(Date.now() - 86_400_000).toISOString();
  const future = new Date(Date.now() + 86_400_000).toISOString();
  await make.project(ctx, { name: 'Public Park', status: 'active', type: 'residential', published: true, publish_date: past, description: 'Detail only' }, staff);
  await make.project(ctx, { name: 'Draft Park', status: 'active', type: 'residential', published: false }, staff);
  await make.project(ctx, { name: 'Future Park', status: 'upcoming', type: 'residential', published: true, publish_date: future }, staff);

  const list = await as(ctx, none).get('/api/public/projects');
  expect(list.statusCode).toBe(200);
  expect(list.json().data.map((p: any) => p.name)).toEqual(['Public Park']);
  expect(list.json().pagination).toEqual({ page: 1, limit: 10, total: 1, totalPages: 1 });
  expect(list.json().data[0]).not.toHaveProperty('description');
  expect(list.json().data[0]).not.toHaveProperty('galleries');
  expect(list.headers['cache-control']).toMatch(/max-age=\d+/);
  expect(list.headers.etag).toBeTruthy();

  const detail = await as(ctx, none).get('/api/public/projects/public-park');
  expect(detail.statusCode).toBe(200);
  expect(detail.json()).toMatchObject({ name: 'Public Park', description: 'Detail only', galleries: [] });
  expect((await as(ctx, none).get('/api/public/projects/draft-park')).statusCode).toBe(404);
  expect((await as(ctx, none).get('/api/public/projects/future-park')).statusCode).toBe(404);

  const revalidated = await as(ctx, none).get('/api/public/projects', { 'if-none-match': list.headers.etag as string });
  expect(revalidated.statusCode).toBe(304);
});

test('articles: published only, no author e-mail, no internal filters', async () => {
  await make.article(ctx, { title: 'Hello World', content: '# Hi\n\nBody text', type: 'news', published: true }, staff);
  await make.article(ctx, { title: 'Secret Draft', content: 'x', type: 'news' }, staff);
  const list = await as(ctx, none).get('/api/public/articles');
  expect(list.json().data.map((a: any) => a.title)).toEqual(['Hello World']);
  expect(list.json().data[0]).not.toHaveProperty('content');
  const detail = await as(ctx, none).get('/api/public/articles/hello-world');
  expect(detail.statusCode).toBe(200);
  expect(detail.json().content).toContain('Body text');
  expect(detail.json().author).toEqual({ id: staff.id, name: staff.name });
  expect(JSON.stringify(detail.json())).not.toContain(staff.email);
  expect((await as(ctx, none).get('/api/public/articles/secret-draft')).statusCode).toBe(404);
  expect((await as(ctx, none).get('/api/public/articles?published=false')).statusCode).toBe(400);
});

test('article details carry their content as sanitised HTML as well', async () => {
  const content = '## Open house\n\nCome **Saturday**. <script>alert(1)</script><img src=x onerror="alert(2)"> [site](javascript:alert(3)) [map](https://example.com/map)';
  await make.article(ctx, { title: 'Open House', content, type: 'news', published: true }, staff);
  const detail = (await as(ctx, none).get('/api/public/articles/open-house')).json();
  expect(detail.content).toBe(content);
  expect(detail.content_html).toContain('<h2>Open house</h2>');
  expect(detail.content_html).toContain('<strong>Saturday</strong>');
  expect(detail.content_html).toContain('<a href="https://example.com/map">map</a>');
  // No script, no handler, no javascript: link (markdown-it leaves that one as plain text).
  expect(detail.content_html).not.toMatch(/<script|onerror|href="javascript:/i);
});

test('an article is rendered once per content: a second read and a revalidation (304) render nothing', async () => {
  const { id } = await make.article(ctx, { title: 'Rendered Once', content: `# Once\n\n${Date.now()} *only*`, type: 'news', published: true }, staff);
  const render = vi.spyOn(markdownRendering, 'render');
  try {
    const first = await as(ctx, none).get('/api/public/articles/rendered-once');
    expect(first.statusCode).toBe(200);
    expect(first.json().content_html).toContain('<em>only</em>');
    expect(render).toHaveBeenCalledTimes(1);

    const second = await as(ctx, none).get('/api/public/articles/rendered-once');
    expect(second.json().content_html).toBe(first.json().content_html);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(render).toHaveBeenCalledTimes(1);
    // Even with nothing cached, a revalidation is answered from the record alone.
    markdownRendering.forget();
    const revalidated = await as(ctx, none).get('/api/public/articles/rendered-once', { 'if-none-match': first.headers.etag as string });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.body).toBe('');
    expect(render).toHaveBeenCalledTimes(1);

    // An edit is a new answer: a new ETag (the old one no longer matches) and one new rendering.
    expect((await as(ctx, staff).patch(`/api/cms/articles/${id}`, { content: 'Now **bold**' })).statusCode).toBe(200);
    const edited = await as(ctx, none).get('/api/public/articles/rendered-once', { 'if-none-match': first.headers.etag as string });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().content_html).toContain('<strong>bold</strong>');
    expect(edited.headers.etag).not.toBe(first.headers.etag);
    expect(render).toHaveBeenCalledTimes(2);
    expect(render).toHaveBeenLastCalledWith('Now **bold**');
  } finally {
    render.mockRestore();
  }
});

test('careers and amenities', async () => {
  await make.career(ctx, { title: 'Site Engineer', department: 'Engineering', location: 'Manila', employment_type: 'full-time', published: true, description: 'Build things' }, staff);
  await make.career(ctx, { title: 'Hidden Role', department: 'Engineering', location: 'Manila', employment_type: 'contract' }, staff);
  await make.amenity(ctx, { name: 'Clubhouse' }, staff);
  const careers = await as(ctx, none).get('/api/public/careers?department=Engineering');
  expect(careers.json().data.map((c: any) => c.title)).toEqual(['Site Engineer']);
  expect((await as(ctx, none).get('/api/public/careers/site-engineer')).json().description).toBe('Build things');
  expect((await as(ctx, none).get('/api/public/careers/hidden-role')).statusCode).toBe(404);
  const amenities = await as(ctx, none).get('/api/public/amenities');
  expect(amenities.json().data.map((a: any) => a.name)).toContain('Clubhouse');
});

test('a public inquiry reaches staff as unread', async () => {
  const res = await as(ctx, none).post('/api/public/inquiries', { name: 'Ana', email: 'Ana@Example.com', subject: 'Price list', message: 'Please send it' });
  expect(res.statusCode).toBe(201);
  const staffList = await as(ctx, staff).get('/api/crm/inquiries?status=unread');
  expect(staffList.json().data.map((i: any) => i.id)).toContain(res.json().id);
  const bad = await as(ctx, none).post('/api/public/inquiries', { name: 'Ana', email: 'nope', subject: 'x', message: 'y' });
  expect(bad.statusCode).toBe(400);
  expect(bad.json().details.email).toBeTruthy();
});

test('public newsletter answers identically for new, subscribed and unsubscribed addresses; an address is subscribed once confirmed', async () => {
  const outbox = outboxReader(ctx);
  const send = (email: string) => as(ctx, none).post('/api/public/newsletter', { email });
  const subscribedEmails = async () => (await as(ctx, staff).get('/api/crm/newsletters?status=subscribed&limit=100')).json().data.map((s: any) => s.email);
  const first = await send('reader@example.com');
  expect(await subscribedEmails()).not.toContain('reader@example.com');
  expect((await as(ctx, none).get(confirmPathOf(await outbox.next('reader@example.com')))).statusCode).toBe(200);
  const again = await send('reader@example.com');
  const subs = await as(ctx, staff).get('/api/crm/newsletters');
  const sub = subs.json().data.find((s: any) => s.email === 'reader@example.com');
  await as(ctx, staff).patch(`/api/crm/newsletters/${sub.id}`, { status: 'unsubscribed' });
  const back = await send('reader@example.com');
  expect([first.statusCode, again.statusCode, back.statusCode]).toEqual([200, 200, 200]);
  expect(again.body).toBe(first.body);
  expect(back.body).toBe(first.body);
  // An unsubscribed address is subscribed again once it confirms.
  expect((await as(ctx, none).get(confirmPathOf(await outbox.next('reader@example.com')))).statusCode).toBe(200);
  expect(await subscribedEmails()).toContain('reader@example.com');
  expect((await send('not-an-address')).statusCode).toBe(400);
});
