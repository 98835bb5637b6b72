import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { galleryImages, inventoryUnits } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';
import { make } from './factories.js';
import { expectLogs, logsOf, UNKNOWN_ID } from './cms-helpers.js';

let ctx: TestContext;
let editor: Awaited<ReturnType<typeof createUser>>;
let reader: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  editor = await createUser(ctx, { cms: 'rwd' });
  reader = await createUser(ctx, { cms: 'r' });
});
afterAll(async () => {
  await ctx?.close();
});

const LIST_FIELDS = ['id', 'name', 'slug', 'status', 'type', 'stage', 'location', 'price_range', 'cover_photo', 'cover_photo_variants', 'published', 'publish_date', 'created_at', 'updated_at'];
const DETAIL_FIELDS = [...LIST_FIELDS, 'description', 'coordinates', 'nearby_landmarks', 'amenities', 'seo_title', 'seo_description', 'seo_keywords', 'galleries'];

const create = async (body: Record<string, unknown>) => (await make.project(ctx, body, editor)).id;

describe('projects: lifecycle', () => {
  test('create → detail → list → PATCH → DELETE → 404, each step audited', async () => {
    const res = await as(ctx, editor).post('/api/cms/projects', {
      name: '  Arcadia Résidences  ', status: 'active', type: 'residential', stage: 'pre-selling', location: 'Cebu City',
      coordinates: { lat: 10.3, lng: 123.9 }, nearby_landmarks: [{ name: 'SM Seaside', distance: '2 km' }], amenities: ['Pool', 'Gym'],
      price_range: { min: 1_000_000, max: 5_000_000 }, cover_photo: '/uploads/abc.png', description: 'A *fine* place',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ id: expect.any(String), message: expect.any(String) });
    const id = res.json().id;

    const detail = await as(ctx, editor).get(`/api/cms/projects/${id}`);
    expect(detail.statusCode).toBe(200);
    const d = detail.json();
    expect(Object.keys(d).sort()).toEqual([...DETAIL_FIELDS].sort());
    expect(d).toMatchObject({
      id, name: 'Arcadia Résidences', slug: 'arcadia-residences', status: 'active', type: 'residential', stage: 'pre-selling',
      coordinates: { lat: 10.3, lng: 123.9 }, nearby_landmarks: [{ name: 'SM Seaside', distance: '2 km' }], amenities: ['Pool', 'Gym'],
      price_range: { min: 1_000_000, max: 5_000_000 }, published: false, publish_date: null, seo_title: null, seo_description: null,
      seo_keywords: null, galleries: [],
    });
    expect(d.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await expectLogs(ctx, 'projects', id, ['create'], editor.id);

    const list = await as(ctx, editor).get('/api/cms/projects');
    expect(list.statusCode).toBe(200);
    const item = list.json().data.find((p: any) => p.id === id);
    expect(Object.keys(item).sort()).toEqual([...LIST_FIELDS].sort());

    const patch = await as(ctx, editor).patch(`/api/cms/projects/${id}`, { stage: 'ready for occupancy', published: true });
    expect(patch.statusCode).toBe(200);
    expect(patch.json()).toEqual({ message: expect.any(String) });
    const after = (await as(ctx, editor).get(`/api/cms/projects/${id}`)).json();
    expect(after.stage).toBe('ready for occupancy');
    expect(after.name).toBe('Arcadia Résidences');
    expect(after.slug).toBe('arcadia-residences');
    expect(after.location).toBe('Cebu City');
    expect(after.amenities).toEqual(['Pool', 'Gym']);
    expect(after.published).toBe(true);
    expect(after.publish_date).not.toBeNull();
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(d.updated_at));
    const logs = await expectLogs(ctx, 'projects', id, ['create', 'update'], editor.id);
    expect(Object.keys((logs[1].changes as any).after).sort()).toEqual(['publish_date', 'published', 'stage']);

    // Unpublishing keeps the publish date.
    await as(ctx, editor).patch(`/api/cms/projects/${id}`, { published: false });
    const unpublished = (await as(ctx, editor).get(`/api/cms/projects/${id}`)).json();
    expect(unpublished.published).toBe(false);
    expect(unpublished.publish_date).toBe(after.publish_date);

    const del = await as(ctx, editor).delete(`/api/cms/projects/${id}`);
    expect(del.statusCode).toBe(200);
    expect((await as(ctx, editor).get(`/api/cms/projects/${id}`)).statusCode).toBe(404);
    expect((await as(ctx, editor).delete(`/api/cms/projects/${id}`)).statusCode).toBe(404);
    await expectLogs(ctx, 'projects', id, ['create', 'update', 'update', 'delete'], editor.id);
  });

  test('defaults: published false, arrays empty, objects null; publish_date set when created published', async () => {
    const id = await create({ name: 'Bare', status: 'upcoming', type: 'commercial' });
    const d = (await as(ctx, editor).get(`/api/cms/projects/${id}`)).json();
    expect(d).toMatchObject({
      published: false, publish_date: null, nearby_landmarks: [], amenities: [], coordinates: null, price_range: null,
      description: null, stage: null, location: null, cover_photo: null,
    });
    const before = Date.now();
    const pub = await create({ name: 'Live now', status: 'active', type: 'residential', published: true });
    const p = (await as(ctx, editor).get(`/api/cms/projects/${pub}`)).json();
    expect(Date.parse(p.publish_date)).toBeGreaterThanOrEqual(before - 1000);
    const explicit = await create({ name: 'Dated', status: 'active', type: 'residential', published: true, publish_date: '2026-01-02T03:04:05+02:00' });
    expect((await as(ctx, editor).get(`/api/cms/projects/${explicit}`)).json().publish_date).toBe('2026-01-02T01:04:05.000Z');
  });

  test('slugs: derived collision gets -2, -3; explicit duplicate is 409; PATCH keeps slug unless sent', async () => {
    const a = await create({ name: 'Sunset Hills', status: 'active', type: 'residential' });
    const b = await create({ name: 'Sunset  Hills!', status: 'active', type: 'residential' });
    const c = await create({ name: 'sunset hills', status: 'active', type: 'residential' });
    const slugs = await Promise.all([a, b, c].map(async (id) => (await as(ctx, editor).get(`/api/cms/projects/${id}`)).json().slug));
    expect(slugs).toEqual(['sunset-hills', 'sunset-hills-2', 'sunset-hills-3']);

    const dup = await as(ctx, editor).post('/api/cms/projects', { name: 'Other', slug: 'sunset-hills', status: 'active', type: 'residential' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error).toBe('Conflict');
    expect((await logsOf(ctx, 'projects', a)).length).toBe(1);

    await as(ctx, editor).patch(`/api/cms/projects/${a}`, { name: 'Renamed' });
    expect((await as(ctx, editor).get(`/api/cms/projects/${a}`)).json().slug).toBe('sunset-hills');
    const taken = await as(ctx, editor).patch(`/api/cms/projects/${a}`, { slug: 'sunset-hills-2' });
    expect(taken.statusCode).toBe(409);
    const own = await as(ctx, editor).patch(`/api/cms/projects/${a}`, { slug: 'sunset-hills' });
    expect(own.statusCode).toBe(200);
    const changed = await as(ctx, editor).patch(`/api/cms/projects/${a}`, { slug: 'renamed' });
    expect(changed.statusCode).toBe(200);
    expect((await as(ctx, editor).get(`/api/cms/projects/${a}`)).json().slug).toBe('renamed');
    const bad = await as(ctx, editor).patch(`/api/cms/projects/${a}`, { slug: 'Not A Slug' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.slug).toBeDefined();
  });
});

describe('projects: validation', () => {
  test.each([
    ['unknown field', { name: 'X', status: 'active', type: 'residential', id: UNKNOWN_ID }, 'id'],
    ['read-only created_at', { name: 'X', status: 'active', type: 'residential', created_at: '2026-01-01T00:00:00Z' }, 'created_at'],
    ['bad status', { name: 'X', status: 'sold-out', type: 'residential' }, 'status'],
    ['bad type', { name: 'X', status: 'active', type: 'castle' }, 'type'],
    ['missing name', { status: 'active', type: 'residential' }, 'name'],
    ['blank name', { name: '   ', status: 'active', type: 'residential' }, 'name'],
    ['lat out of range', { name: 'X', status: 'active', type: 'residential', coordinates: { lat: 91, lng: 0 } }, 'coordinates.lat'],
    ['lng out of range', { name: 'X', status: 'active', type: 'residential', coordinates: { lat: 0, lng: -180.5 } }, 'coordinates.lng'],
    ['min above max', { name: 'X', status: 'active', type: 'residential', price_range: { min: 10, max: 5 } }, 'price_range.min'],
    ['landmark without distance', { name: 'X', status: 'active', type: 'residential', nearby_landmarks: [{ name: 'Mall' }] }, 'nearby_landmarks.0.distance'],
  ])('%s → 400', async (_label, body, field) => {
    const res = await as(ctx, editor).post('/api/cms/projects', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Validation error');
    expect(res.json().details).toHaveProperty([field]);
  });

  test('PATCH: empty body, bad range, non-UUID id, unknown id', async () => {
    const id = await create({ name: 'Validate me', status: 'active', type: 'residential' });
    expect((await as(ctx, editor).patch(`/api/cms/projects/${id}`, {})).statusCode).toBe(400);
    const range = await as(ctx, editor).patch(`/api/cms/projects/${id}`, { price_range: { min: 3, max: 2 } });
    expect(range.statusCode).toBe(400);
    expect(range.json().details).toHaveProperty(['price_range.min']);
    const nonUuid = await as(ctx, editor).get('/api/cms/projects/not-a-uuid');
    expect(nonUuid.statusCode).toBe(400);
    expect(nonUuid.json().details).toHaveProperty('id');
    expect((await as(ctx, editor).patch('/api/cms/projects/123', { name: 'x' })).json().details).toHaveProperty('id');
    const unknown = await as(ctx, editor).patch(`/api/cms/projects/${UNKNOWN_ID}`, { name: 'x' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('Resource not found');
    expect((await as(ctx, editor).get(`/api/cms/projects/${UNKNOWN_ID}`)).statusCode).toBe(404);
    // Nullable fields clear with null; required ones refuse it.
    await as(ctx, editor).patch(`/api/cms/projects/${id}`, { location: 'Somewhere' });
    expect((await as(ctx, editor).patch(`/api/cms/projects/${id}`, { location: null })).statusCode).toBe(200);
    expect((await as(ctx, editor).get(`/api/cms/projects/${id}`)).json().location).toBeNull();
    expect((await as(ctx, editor).patch(`/api/cms/projects/${id}`, { name: null })).statusCode).toBe(400);
  });

  test('permissions: read-only user cannot write; no session → 401', async () => {
    expect((await as(ctx, reader).post('/api/cms/projects', { name: 'X', status: 'active', type: 'residential' })).statusCode).toBe(403);
    expect((await as(ctx, reader).get('/api/cms/projects')).statusCode).toBe(200);
    expect((await as(ctx, none).get('/api/cms/projects')).statusCode).toBe(401);
    // 403 before validation.
    expect((await as(ctx, reader).post('/api/cms/projects', { bogus: true })).statusCode).toBe(403);
  });
});

describe('projects: lists', () => {
  let ids: Record<string, string>;
  beforeAll(async () => {
    ids = {};
    for (const [name, status, type, location] of [
      ['Zeta Towers', 'completed', 'commercial', 'Makati'],
      ['Alpha Homes', 'active', 'residential', 'Quezon City'],
      ['Mid Plaza', 'on-hold', 'mixed-use', 'Pasig Lakeside'],
    ] as const) {
      ids[name] = await create({ name, status, type, location, description: 'secret-detail-text' });
    }
  });

  test('filters, q over name and location, sorts, pagination', async () => {
    const byStatus = (await as(ctx, editor).get('/api/cms/projects?status=completed&limit=100')).json();
    expect(byStatus.data.length).toBeGreaterThan(0);
    expect(byStatus.data.every((p: any) => p.status === 'completed')).toBe(true);
    expect(byStatus.data.map((p: any) => p.id)).toContain(ids['Zeta Towers']);

    const byType = (await as(ctx, editor).get('/api/cms/projects?type=mixed-use&limit=100')).json();
    expect(byType.data.map((p: any) => p.id)).toEqual([ids['Mid Plaza']]);

    const byName = (await as(ctx, editor).get('/api/cms/projects?q=alpha')).json();
    expect(byName.data.map((p: any) => p.id)).toEqual([ids['Alpha Homes']]);
    const byLocation = (await as(ctx, editor).get('/api/cms/projects?q=LAKESIDE')).json();
    expect(byLocation.data.map((p: any) => p.id)).toEqual([ids['Mid Plaza']]);
    expect((await as(ctx, editor).get('/api/cms/projects?q=secret-detail')).json().pagination.total).toBe(0);

    const all = (await as(ctx, editor).get('/api/cms/projects?limit=100')).json();
    const names = (await as(ctx, editor).get('/api/cms/projects?sort=name&order=asc&limit=100')).json().data.map((p: any) => p.name);
    expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
    const newest = all.data.map((p: any) => p.created_at);
    expect(newest).toEqual([...newest].sort().reverse());
    expect(all.data[0].id).toBe(ids['Mid Plaza']);
    expect((await as(ctx, editor).get('/api/cms/projects?sort=updated_at&order=asc')).statusCode).toBe(200);
    expect((await as(ctx, editor).get('/api/cms/projects?sort=publish_date')).statusCode).toBe(200);
    const badSort = await as(ctx, editor).get('/api/cms/projects?sort=description');
    expect(badSort.statusCode).toBe(400);
    expect(badSort.json().details).toHaveProperty('sort');
    const badStatus = await as(ctx, editor).get('/api/cms/projects?status=sold');
    expect(badStatus.statusCode).toBe(400);
    expect((await as(ctx, editor).get('/api/cms/projects?foo=1')).statusCode).toBe(400);

    const total = all.pagination.total;
    const page1 = (await as(ctx, editor).get('/api/cms/projects?limit=2&page=1')).json();
    const page2 = (await as(ctx, editor).get('/api/cms/projects?limit=2&page=2')).json();
    expect(page1.pagination).toEqual({ page: 1, limit: 2, total, totalPages: Math.ceil(total / 2) });
    expect(page1.data.length).toBe(2);
    expect(page2.data.map((p: any) => p.id)).not.toContain(page1.data[0].id);
    const past = (await as(ctx, editor).get('/api/cms/projects?limit=2&page=999')).json();
    expect(past.data).toEqual([]);
    expect(past.pagination.page).toBe(999);

    for (const item of all.data) {
      for (const field of ['description', 'galleries', 'coordinates', 'amenities', 'nearby_landmarks', 'seo_title', 'seo_keywords']) {
        expect(item).not.toHaveProperty(field);
      }
    }
  });
});

describe('projects: galleries and delete rules', () => {
  test('add images (ordered by display_order, each audited), delete one, 404 on unknown project', async () => {
    const id = await create({ name: 'Gallery Project', status: 'active', type: 'residential' });
    const res = await as(ctx, editor).post(`/api/cms/projects/${id}/galleries`, {
      images: [
        { image_url: '/uploads/b.png', caption: 'Second', display_order: 2, house_model: 'Model B' },
        { image_url: '/uploads/a.png', display_order: 1 },
        { image_url: '/uploads/c.png', display_order: 3, caption: null },
      ],
    });
    expect(res.statusCode).toBe(201);
    const { ids, message } = res.json();
    expect(message).toEqual(expect.any(String));
    expect(ids).toHaveLength(3);
    const d = (await as(ctx, editor).get(`/api/cms/projects/${id}`)).json();
    expect(d.galleries.map((g: any) => g.image_url)).toEqual(['/uploads/a.png', '/uploads/b.png', '/uploads/c.png']);
    expect(d.galleries[0]).toEqual({ id: ids[1], image_url: '/uploads/a.png', image: null, caption: null, display_order: 1, house_model: null });
    expect(d.galleries[1]).toMatchObject({ caption: 'Second', house_model: 'Model B' });
    for (const gid of ids) await expectLogs(ctx, 'galleries', gid, ['create'], editor.id);

    const del = await as(ctx, editor).delete(`/api/cms/projects/galleries/${ids[0]}`);
    expect(del.statusCode).toBe(200);
    await expectLogs(ctx, 'galleries', ids[0], ['create', 'delete'], editor.id);
    expect((await as(ctx, editor).delete(`/api/cms/projects/galleries/${ids[0]}`)).statusCode).toBe(404);
    expect((await as(ctx, editor).get(`/api/cms/projects/${id}`)).json().galleries).toHaveLength(2);

    const unknown = await as(ctx, editor).post(`/api/cms/projects/${UNKNOWN_ID}/galleries`, { images: [{ image_url: '/uploads/x.png' }] });
    expect(unknown.statusCode).toBe(404);

    // Deleting the project deletes its gallery.
    expect((await as(ctx, editor).delete(`/api/cms/projects/${id}`)).statusCode).toBe(200);
    expect(await ctx.database.db.select().from(galleryImages).where(eq(galleryImages.project_id, id))).toEqual([]);
  });

  test('gallery validation: 1–50 images, image_url required, unknown fields', async () => {
    const id = await create({ name: 'Gallery Checks', status: 'active', type: 'residential' });
    const empty = await as(ctx, editor).post(`/api/cms/projects/${id}/galleries`, { images: [] });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().details).toHaveProperty('images');
    const tooMany = await as(ctx, editor).post(`/api/cms/projects/${id}/galleries`, { images: Array.from({ length: 51 }, () => ({ image_url: '/x.png' })) });
    expect(tooMany.statusCode).toBe(400);
    const missing = await as(ctx, editor).post(`/api/cms/projects/${id}/galleries`, { images: [{ caption: 'no url' }] });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details).toHaveProperty(['images.0.image_url']);
    const extra = await as(ctx, editor).post(`/api/cms/projects/${id}/galleries`, { images: [{ image_url: '/x.png', size: 3 }] });
    expect(extra.json().details).toHaveProperty(['images.0.size']);
    const fifty = await as(ctx, editor).post(`/api/cms/projects/${id}/galleries`, { images: Array.from({ length: 50 }, (_, i) => ({ image_url: `/x${i}.png`, display_order: i })) });
    expect(fifty.statusCode).toBe(201);
    expect(fifty.json().ids).toHaveLength(50);
    expect((await as(ctx, editor).post(`/api/cms/projects/not-uuid/galleries`, { images: [{ image_url: '/x.png' }] })).json().details).toHaveProperty('id');
  });

  test('delete is 409 while an inventory unit references the project, and nothing is logged', async () => {
    const id = await create({ name: 'Has Units', status: 'active', type: 'residential' });
    await ctx.database.db.insert(inventoryUnits).values({ project_id: id, inventory_code: 'HU-1-1', block: '1', lot: '1', price: 1_500_000 });
    const res = await as(ctx, editor).delete(`/api/cms/projects/${id}`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'Conflict', message: expect.any(String) });
    expect((await as(ctx, editor).get(`/api/cms/projects/${id}`)).statusCode).toBe(200);
    await expectLogs(ctx, 'projects', id, ['create']);
    await ctx.database.db.delete(inventoryUnits).where(eq(inventoryUnits.project_id, id));
    expect((await as(ctx, editor).delete(`/api/cms/projects/${id}`)).statusCode).toBe(200);
    await expectLogs(ctx, 'projects', id, ['create', 'delete']);
  });
});

describe('projects: concurrency', () => {
  test('concurrent creates with the same name all succeed with distinct derived slugs', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => as(ctx, editor).post('/api/cms/projects', { name: 'Race Court', status: 'active', type: 'residential' })));
    expect(results.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201]);
    const slugs = await Promise.all(results.map(async (r) => (await as(ctx, editor).get(`/api/cms/projects/${r.json().id}`)).json().slug));
    expect(new Set(slugs).size).toBe(5);
    expect(slugs).toContain('race-court');
  });
});
