import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { excerptOf, plainText } from '../src/modules/cms/articles.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';
import { make } from './factories.js';
import { expectLogs, UNKNOWN_ID } from './cms-helpers.js';

let ctx: TestContext;
let editor: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  editor = await createUser(ctx, { cms: 'rwd' }, { name: 'Ada Editor' });
});
afterAll(async () => {
  await ctx?.close();
});

const LIST_FIELDS = ['id', 'title', 'slug', 'excerpt', 'type', 'cover_image', 'cover_image_variants', 'author', 'tags', 'published', 'publish_date', 'created_at'];
const DETAIL_FIELDS = [...LIST_FIELDS, 'content', 'seo_title', 'seo_description', 'updated_at'];

const create = async (body: Record<string, unknown>) => (await make.article(ctx, body, editor)).id;

describe('articles', () => {
  test('create → detail → list → PATCH → DELETE → 404, audited; author is the creator', async () => {
    const content = '# Big news\n\nWe are **launching** [Arcadia](https://example.com) today.\n\n- fast\n- `cheap`\n';
    const id = await create({ title: 'Big News Ünïcode', content, type: 'news', tags: ['launch', 'arcadia'] });
    const d = (await as(ctx, editor).get(`/api/cms/articles/${id}`)).json();
    expect(Object.keys(d).sort()).toEqual([...DETAIL_FIELDS].sort());
    expect(d).toMatchObject({
      id, title: 'Big News Ünïcode', slug: 'big-news-unicode', content: content.trim(), type: 'news', tags: ['launch', 'arcadia'],
      published: false, publish_date: null, cover_image: null, seo_title: null, seo_description: null,
      author: { id: editor.id, name: 'Ada Editor', email: editor.email },
    });
    expect(d.excerpt).toBe('Big news We are launching Arcadia today. fast cheap');
    await expectLogs(ctx, 'articles', id, ['create'], editor.id);

    const item = (await as(ctx, editor).get('/api/cms/articles')).json().data.find((a: any) => a.id === id);
    expect(Object.keys(item).sort()).toEqual([...LIST_FIELDS].sort());
    expect(item.author).toEqual({ id: editor.id, name: 'Ada Editor' });
    expect(item).not.toHaveProperty('content');
    expect(item).not.toHaveProperty('updated_at');

    expect((await as(ctx, editor).patch(`/api/cms/articles/${id}`, { seo_title: 'SEO', published: true })).statusCode).toBe(200);
    const after = (await as(ctx, editor).get(`/api/cms/articles/${id}`)).json();
    expect(after).toMatchObject({ seo_title: 'SEO', published: true, title: d.title, slug: d.slug, excerpt: d.excerpt, content: d.content });
    expect(after.publish_date).not.toBeNull();
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(d.updated_at));
    await expectLogs(ctx, 'articles', id, ['create', 'update'], editor.id);

    expect((await as(ctx, editor).delete(`/api/cms/articles/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, editor).get(`/api/cms/articles/${id}`)).statusCode).toBe(404);
    await expectLogs(ctx, 'articles', id, ['create', 'update', 'delete'], editor.id);
  });

  test('excerpt: explicit one kept, derived one at most 200 characters of plain text', async () => {
    const long = `## Heading\n\n${'word '.repeat(100)}`;
    const id = await create({ title: 'Long one', content: long, type: 'blog' });
    const d = (await as(ctx, editor).get(`/api/cms/articles/${id}`)).json();
    expect(d.excerpt.length).toBeLessThanOrEqual(200);
    expect(d.excerpt.startsWith('Heading word word')).toBe(true);
    const own = await create({ title: 'Own excerpt', content: 'Body', type: 'blog', excerpt: 'Mine' });
    expect((await as(ctx, editor).get(`/api/cms/articles/${own}`)).json().excerpt).toBe('Mine');
    expect(plainText('![alt text](/x.png)\n> quoted _em_')).toBe('alt text quoted em');
    expect(excerptOf('a'.repeat(300))).toHaveLength(200);
  });

  test('validation and slugs', async () => {
    const missing = await as(ctx, editor).post('/api/cms/articles', { title: 'No content', type: 'news' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details).toHaveProperty('content');
    const badType = await as(ctx, editor).post('/api/cms/articles', { title: 'T', content: 'C', type: 'rumour' });
    expect(badType.json().details).toHaveProperty('type');
    const author = await as(ctx, editor).post('/api/cms/articles', { title: 'T', content: 'C', type: 'news', author_id: editor.id });
    expect(author.json().details).toHaveProperty('author_id');
    const first = await create({ title: 'Same Title', content: 'C', type: 'news' });
    const second = await create({ title: 'Same title', content: 'C', type: 'news' });
    expect((await as(ctx, editor).get(`/api/cms/articles/${second}`)).json().slug).toBe('same-title-2');
    expect((await as(ctx, editor).post('/api/cms/articles', { title: 'X', slug: 'same-title', content: 'C', type: 'news' })).statusCode).toBe(409);
    expect((await as(ctx, editor).patch(`/api/cms/articles/${second}`, { slug: 'same-title' })).statusCode).toBe(409);
    expect((await as(ctx, editor).get('/api/cms/articles/nope')).json().details).toHaveProperty('id');
    expect((await as(ctx, editor).delete(`/api/cms/articles/${UNKNOWN_ID}`)).statusCode).toBe(404);
    await expectLogs(ctx, 'articles', first, ['create']);
  });

  test('list: type, published, tag filters; q over title and excerpt; sorts; pagination', async () => {
    const a = await create({ title: 'Alpha announcement', content: 'Body', type: 'announcement', tags: ['x', 'shared'], published: true });
    const b = await create({ title: 'Beta blog', content: 'Body', type: 'blog', tags: ['shared'], excerpt: 'mentions zeppelins' });
    const c = await create({ title: 'Gamma blog', content: 'Body with zeppelins only in content', type: 'blog', excerpt: 'plain' });

    const ids = (url: string) => as(ctx, editor).get(url).then((r) => {
      expect(r.statusCode, r.body).toBe(200);
      return r.json().data.map((x: any) => x.id);
    });
    expect(await ids('/api/cms/articles?type=announcement&limit=100')).toEqual([a]);
    const published = await ids('/api/cms/articles?published=true&limit=100');
    expect(published).toContain(a);
    expect(published).not.toContain(b);
    const drafts = await ids('/api/cms/articles?published=false&limit=100');
    expect(drafts).toContain(b);
    expect(drafts).not.toContain(a);
    expect(await ids('/api/cms/articles?tag=shared')).toEqual([b, a]);
    expect(await ids('/api/cms/articles?tag=x')).toEqual([a]);
    expect(await ids('/api/cms/articles?q=ZEPPELIN')).toEqual([b]);
    expect(await ids('/api/cms/articles?q=gamma')).toEqual([c]);
    expect((await ids('/api/cms/articles?type=blog&sort=title&order=asc')).slice(0, 2)).toEqual([b, c]);
    expect((await ids('/api/cms/articles?limit=100'))[0]).toBe(c);
    expect((await as(ctx, editor).get('/api/cms/articles?sort=publish_date')).statusCode).toBe(200);
    expect((await as(ctx, editor).get('/api/cms/articles?published=maybe')).statusCode).toBe(400);
    expect((await as(ctx, editor).get('/api/cms/articles?sort=content')).json().details).toHaveProperty('sort');
    const page = (await as(ctx, editor).get('/api/cms/articles?type=blog&limit=1&page=2')).json();
    expect(page.data.map((x: any) => x.id)).toEqual([b]);
    expect(page.pagination.total).toBeGreaterThanOrEqual(2);
  });
});
