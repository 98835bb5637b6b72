import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';
import { make } from './factories.js';
import { expectLogs, UNKNOWN_ID } from './cms-helpers.js';

let ctx: TestContext;
let editor: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  editor = await createUser(ctx, { cms: 'rwd' });
});
afterAll(async () => {
  await ctx?.close();
});

const LIST_FIELDS = ['id', 'title', 'slug', 'department', 'location', 'employment_type', 'salary_range', 'published', 'publish_date', 'created_at'];
const DETAIL_FIELDS = [...LIST_FIELDS, 'description', 'updated_at'];
const base = { title: 'Site Engineer', department: 'Engineering', location: 'Cebu', employment_type: 'full-time' };

const create = async (body: Record<string, unknown>) => (await make.career(ctx, body, editor)).id;

describe('careers', () => {
  test('create → detail → list → PATCH → DELETE → 404, audited', async () => {
    const id = await create({ ...base, description: '## Duties\n\nBuild things.', salary_range: { min: 30000, max: 50000, currency: 'PHP' } });
    const d = (await as(ctx, editor).get(`/api/cms/careers/${id}`)).json();
    expect(Object.keys(d).sort()).toEqual([...DETAIL_FIELDS].sort());
    expect(d).toMatchObject({ ...base, slug: 'site-engineer', description: '## Duties\n\nBuild things.', salary_range: { min: 30000, max: 50000, currency: 'PHP' }, published: false, publish_date: null });
    await expectLogs(ctx, 'careers', id, ['create'], editor.id);

    const item = (await as(ctx, editor).get('/api/cms/careers')).json().data.find((c: any) => c.id === id);
    expect(Object.keys(item).sort()).toEqual([...LIST_FIELDS].sort());
    expect(item).not.toHaveProperty('description');

    expect((await as(ctx, editor).patch(`/api/cms/careers/${id}`, { location: 'Manila', salary_range: null })).statusCode).toBe(200);
    const after = (await as(ctx, editor).get(`/api/cms/careers/${id}`)).json();
    expect(after).toMatchObject({ location: 'Manila', salary_range: null, title: base.title, department: base.department, description: d.description, slug: d.slug });
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(d.updated_at));
    await expectLogs(ctx, 'careers', id, ['create', 'update'], editor.id);

    expect((await as(ctx, editor).delete(`/api/cms/careers/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, editor).get(`/api/cms/careers/${id}`)).statusCode).toBe(404);
    await expectLogs(ctx, 'careers', id, ['create', 'update', 'delete'], editor.id);
  });

  test('validation', async () => {
    for (const field of ['title', 'department', 'location', 'employment_type']) {
      const body: Record<string, unknown> = { ...base };
      delete body[field];
      const res = await as(ctx, editor).post('/api/cms/careers', body);
      expect(res.statusCode).toBe(400);
      expect(res.json().details).toHaveProperty(field);
    }
    expect((await as(ctx, editor).post('/api/cms/careers', { ...base, employment_type: 'gig' })).json().details).toHaveProperty('employment_type');
    const range = await as(ctx, editor).post('/api/cms/careers', { ...base, salary_range: { min: 9, max: 1, currency: 'PHP' } });
    expect(range.statusCode).toBe(400);
    expect(range.json().details).toHaveProperty(['salary_range.min']);
    expect((await as(ctx, editor).post('/api/cms/careers', { ...base, salary_range: { min: 1, max: 9 } })).json().details).toHaveProperty(['salary_range.currency']);
    expect((await as(ctx, editor).post('/api/cms/careers', { ...base, status: 'active' })).json().details).toHaveProperty('status');
    expect((await as(ctx, editor).patch('/api/cms/careers/xyz', { title: 'x' })).json().details).toHaveProperty('id');
    expect((await as(ctx, editor).patch(`/api/cms/careers/${UNKNOWN_ID}`, { title: 'x' })).statusCode).toBe(404);
    const first = await create({ ...base, title: 'Dup Title' });
    const second = await create({ ...base, title: 'Dup Title' });
    expect((await as(ctx, editor).get(`/api/cms/careers/${second}`)).json().slug).toBe('dup-title-2');
    expect((await as(ctx, editor).post('/api/cms/careers', { ...base, slug: 'dup-title' })).statusCode).toBe(409);
    await expectLogs(ctx, 'careers', first, ['create']);
  });

  test('list: department, employment_type, published filters; q over title and department; sorts; pagination', async () => {
    const a = await create({ title: 'Accountant', department: 'Finance', location: 'Makati', employment_type: 'contract', published: true });
    const b = await create({ title: 'Broker', department: 'Sales', location: 'Makati', employment_type: 'part-time' });
    const c = await create({ title: 'Cashier', department: 'Finance', location: 'Cebu', employment_type: 'part-time' });
    const ids = (url: string) => as(ctx, editor).get(url).then((r) => {
      expect(r.statusCode, r.body).toBe(200);
      return r.json().data.map((x: any) => x.id);
    });
    expect(await ids('/api/cms/careers?department=Finance')).toEqual([c, a]);
    expect(await ids('/api/cms/careers?employment_type=part-time')).toEqual([c, b]);
    expect(await ids('/api/cms/careers?published=true')).toEqual([a]);
    expect(await ids('/api/cms/careers?q=finance&sort=title&order=asc')).toEqual([a, c]);
    expect(await ids('/api/cms/careers?q=brok')).toEqual([b]);
    expect(await ids('/api/cms/careers?q=makati')).toEqual([]);
    expect((await as(ctx, editor).get('/api/cms/careers?sort=publish_date&order=asc')).statusCode).toBe(200);
    expect((await as(ctx, editor).get('/api/cms/careers?status=active')).statusCode).toBe(400);
    expect((await as(ctx, editor).get('/api/cms/careers?sort=location')).statusCode).toBe(400);
    const page = (await as(ctx, editor).get('/api/cms/careers?department=Finance&limit=1&page=2')).json();
    expect(page).toEqual({ data: [expect.objectContaining({ id: a })], pagination: { page: 2, limit: 1, total: 2, totalPages: 2 } });
  });
});
