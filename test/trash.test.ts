import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clock } from '../src/clock.js';
import { purgeTrash } from '../src/data/trash.js';
import { trashPurge } from '../src/jobs/trash-purge.js';
import { activityLogs, moduleAccess, trash } from '../src/db/schema/index.js';
import { usageOf } from '../src/media/library.js';
import { adminOf, make } from './factories.js';
import { as, CRON_SECRET, createTestApp, createUser, login, none, resolvedOpenapi, type TestContext } from './helpers.js';

// Deleted cms and crm records stay restorable for TRASH_RETENTION_DAYS, with their ids and dependants.

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  // Every list page is kept (SLOW_PAGE_MS=0): kept pages must follow deletes and restores too.
  ctx = await createTestApp({ SLOW_PAGE_MS: '0', TRASH_RETENTION_DAYS: '30' });
  admin = await adminOf(ctx);
});
afterAll(() => ctx?.close());

type Json = Record<string, any>;
const UNKNOWN = '01890000-0000-7000-8000-000000000000';
let imageCounter = 0;
/** An image path as the uploads route gives them (32 hex characters): unique per call. */
const imagePath = () => `/uploads/${(++imageCounter).toString(16).padStart(8, '0')}${'ab'.repeat(12)}.jpg`;

async function galleryImage() {
  const project = await make.project(ctx);
  const res = await as(ctx, admin).post(`/api/cms/projects/${project.id}/galleries`, { images: [{ image_url: imagePath(), caption: 'Lobby' }, { image_url: imagePath() }] });
  expect(res.statusCode, res.body).toBe(201);
  return { project, ids: res.json().ids as string[] };
}

/** Per trash resource: a record, where it is deleted, and how it is read (the gallery image through its project). */
type Case = { make: () => Promise<{ id: string; read: string }>; remove: (id: string) => string };
const at = (path: string) => async (made: Promise<{ id: string }>) => {
  const { id } = await made;
  return { id, read: `${path}/${id}` };
};
const CASES: Record<string, Record<string, Case>> = {
  cms: {
    projects: { make: () => at('/api/cms/projects')(galleryImage().then(({ project }) => project)), remove: (id) => `/api/cms/projects/${id}` },
    galleries: {
      make: async () => {
        const { project, ids } = await galleryImage();
        return { id: ids[0], read: `/api/cms/projects/${project.id}` };
      },
      remove: (id) => `/api/cms/projects/galleries/${id}`,
    },
    articles: { make: () => at('/api/cms/articles')(make.article(ctx, { tags: ['x'], published: true })), remove: (id) => `/api/cms/articles/${id}` },
    careers: { make: () => at('/api/cms/careers')(make.career(ctx, { salary_range: { min: 1, max: 2, currency: 'PHP' } })), remove: (id) => `/api/cms/careers/${id}` },
    amenities: { make: () => at('/api/cms/amenities')(make.amenity(ctx, { category: 'Leisure' })), remove: (id) => `/api/cms/amenities/${id}` },
  },
  crm: {
    leads: { make: () => at('/api/crm/leads')(make.lead(ctx, { notes: 'Prefers mornings', status: 'qualified' })), remove: (id) => `/api/crm/leads/${id}` },
    inventory: { make: () => at('/api/crm/inventory')(make.unit(ctx, { house_model: 'Aria', floor_area: 54.5 })), remove: (id) => `/api/crm/inventory/${id}` },
    reservations: { make: () => at('/api/crm/reservations')(make.reservation(ctx, { notes: 'Corner unit' })), remove: (id) => `/api/crm/reservations/${id}` },
    inquiries: { make: () => at('/api/crm/inquiries')(make.inquiry(ctx)), remove: (id) => `/api/crm/inquiries/${id}` },
    newsletters: { make: () => at('/api/crm/newsletters')(make.newsletter(ctx, { name: 'Reader' })), remove: (id) => `/api/crm/newsletters/${id}` },
    campaigns: { make: () => at('/api/crm/campaigns')(make.campaign(ctx)), remove: (id) => `/api/crm/campaigns/${id}` },
    activities: {
      make: async () => {
        const lead = await make.lead(ctx);
        const res = await as(ctx, admin).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body: 'A note' });
        expect(res.statusCode, res.body).toBe(201);
        return { id: res.json().id, read: `/api/crm/activities/${res.json().id}` };
      },
      remove: (id) => `/api/crm/activities/${id}`,
    },
    tasks: {
      make: async () => {
        const res = await as(ctx, admin).post('/api/crm/tasks', { title: 'Call back', due_at: '2030-01-01T09:00:00Z' });
        expect(res.statusCode, res.body).toBe(201);
        return { id: res.json().id, read: `/api/crm/tasks/${res.json().id}` };
      },
      remove: (id) => `/api/crm/tasks/${id}`,
    },
  },
};

const get = async (url: string, who: Parameters<typeof as>[1] = admin) => {
  const res = await as(ctx, who).get(url);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json() as Json;
};
const trashOf = (module: string, query = '', who: Parameters<typeof as>[1] = admin) => get(`/api/${module}/trash${query ? `?${query}` : ''}`, who);
/** The trash entry of a deleted record (newest first). */
const entryOf = async (module: string, recordId: string) => {
  const { data } = await trashOf(module, 'limit=100');
  return (data as Json[]).find((entry) => entry.record_id === recordId);
};
const logsOf = (id: string) => ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, id)).orderBy(activityLogs.created_at);

describe('every cms and crm resource: delete → restore → as before', () => {
  test('each module\'s trash takes exactly the resources with a case here (from the OpenAPI document)', async () => {
    const doc = await resolvedOpenapi(ctx);
    for (const module of ['cms', 'crm']) {
      const parameter = doc.paths[`/api/${module}/trash`].get.parameters.find((p: Json) => p.name === 'resource');
      expect([...parameter.schema.items.enum].sort(), module).toEqual(Object.keys(CASES[module]).sort());
      expect(doc.paths[`/api/${module}/trash/{log_id}/restore`].post.description).toMatch(/409/);
    }
    expect(doc.paths['/api/iam/trash']).toBeUndefined();
    expect((await as(ctx, admin).get('/api/iam/trash')).statusCode).toBe(404);
  });

  for (const [module, cases] of Object.entries(CASES)) {
    for (const [resource, { make: create, remove }] of Object.entries(cases)) {
      test(`${module} ${resource}: gone from its list, in the trash, restored with its id, audited`, async () => {
        const { id, read } = await create();
        const before = await get(read);
        const deleted = await as(ctx, admin).delete(remove(id));
        expect(deleted.statusCode, deleted.body).toBe(200);
        if (resource === 'galleries') expect((await get(read)).galleries.map((g: Json) => g.id)).not.toContain(id);
        else expect((await as(ctx, admin).get(read)).statusCode).toBe(404);

        const entry = await entryOf(module, id);
        expect(entry).toMatchObject({ resource, record_id: id, deleted_by: { id: admin.id, name: admin.name, email: admin.email } });
        const deleteLog = (await logsOf(id)).at(-1)!;
        expect(deleteLog).toMatchObject({ action: 'delete', resource, id: entry!.id });

        const res = await as(ctx, admin).post(`/api/${module}/trash/${entry!.id}/restore`);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ id, resource, message: expect.stringMatching(/restored$/) });
        expect(await get(read)).toEqual(before);
        expect(await entryOf(module, id)).toBeUndefined();
        const restoreLog = (await logsOf(id)).at(-1)!;
        expect(restoreLog).toMatchObject({ action: 'create', resource, restored_from: entry!.id, user_id: admin.id });

        const again = await as(ctx, admin).post(`/api/${module}/trash/${entry!.id}/restore`);
        expect(again.statusCode).toBe(409);
        expect(again.json().message).toMatch(/restored already/);
      });
    }
  }
});

describe('what is deleted and changed with a record comes back with it', () => {
  test('a project\'s gallery: one trash entry, its images restored with their ids, each audited', async () => {
    const { project, ids } = await galleryImage();
    const before = await get(`/api/cms/projects/${project.id}`);
    expect((await as(ctx, admin).delete(`/api/cms/projects/${project.id}`)).statusCode).toBe(200);
    const entry = await entryOf('cms', project.id);
    expect(entry!.deleted_with).toBe(2);
    for (const id of ids) expect(await entryOf('cms', id)).toBeUndefined();
    const res = await as(ctx, admin).post(`/api/cms/trash/${entry!.id}/restore`);
    expect(res.json()).toMatchObject({ restored: 3 });
    expect(await get(`/api/cms/projects/${project.id}`)).toEqual(before);
    for (const id of ids) {
      expect((await logsOf(id)).map((l) => [l.action, l.restored_from])).toEqual([['create', null], ['delete', null], ['create', entry!.id]]);
    }
  });

  test('a deleted reservation frees its unit; restored, it holds the unit again (the unit\'s change audited)', async () => {
    const reservation = await make.reservation(ctx);
    const unitId = (await get(`/api/crm/reservations/${reservation.id}`)).inventory.id;
    const held = await get(`/api/crm/inventory/${unitId}`);
    expect(held).toMatchObject({ status: 'reserved', sold_to: reservation.id });
    await as(ctx, admin).delete(`/api/crm/reservations/${reservation.id}`);
    expect(await get(`/api/crm/inventory/${unitId}`)).toMatchObject({ status: 'available', sold_to: null });
    const entry = await entryOf('crm', reservation.id);
    expect((await as(ctx, admin).post(`/api/crm/trash/${entry!.id}/restore`)).statusCode).toBe(200);
    expect(await get(`/api/crm/inventory/${unitId}`)).toMatchObject({ status: 'reserved', sold_to: reservation.id });
    expect((await logsOf(unitId)).at(-1)).toMatchObject({ action: 'update', restored_from: entry!.id, changes: { before: { status: 'available', sold_to: null }, after: { status: 'reserved', sold_to: reservation.id } } });
  });

  test('a unit reserved by someone else since: 409 naming inventory_id, nothing restored', async () => {
    const reservation = await make.reservation(ctx);
    const unitId = (await get(`/api/crm/reservations/${reservation.id}`)).inventory.id;
    await as(ctx, admin).delete(`/api/crm/reservations/${reservation.id}`);
    await make.reservation(ctx, { inventory_id: unitId });
    const entry = await entryOf('crm', reservation.id);
    const res = await as(ctx, admin).post(`/api/crm/trash/${entry!.id}/restore`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'Conflict', details: { inventory_id: expect.stringContaining('status is now "reserved"') } });
    expect((await as(ctx, admin).get(`/api/crm/reservations/${reservation.id}`)).statusCode).toBe(404);
    expect(await entryOf('crm', reservation.id)).toBeDefined();
  });

  test('a deleted unit lets go of its cancelled reservations; restored, they point at it again', async () => {
    const reservation = await make.reservation(ctx);
    const unitId = (await get(`/api/crm/reservations/${reservation.id}`)).inventory.id;
    await as(ctx, admin).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' });
    expect((await as(ctx, admin).delete(`/api/crm/inventory/${unitId}`)).statusCode).toBe(200);
    expect((await get(`/api/crm/reservations/${reservation.id}`)).inventory).toBeNull();
    const entry = await entryOf('crm', unitId);
    expect((await as(ctx, admin).post(`/api/crm/trash/${entry!.id}/restore`)).statusCode).toBe(200);
    expect((await get(`/api/crm/reservations/${reservation.id}`)).inventory.id).toBe(unitId);
  });

  test('a lead\'s activities (deleted with it by the database) come back with it', async () => {
    const lead = await make.lead(ctx);
    for (const body of ['First', 'Second']) expect((await as(ctx, admin).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body })).statusCode).toBe(201);
    const before = await get(`/api/crm/leads/${lead.id}/activities`);
    expect(before.pagination.total).toBe(2);
    await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`);
    const entry = await entryOf('crm', lead.id);
    expect(entry!.deleted_with).toBe(2);
    expect((await as(ctx, admin).post(`/api/crm/trash/${entry!.id}/restore`)).json()).toMatchObject({ restored: 3 });
    expect(await get(`/api/crm/leads/${lead.id}/activities`)).toEqual(before);
  });
});

describe('409 when something stands in the way', () => {
  test('a unique value taken since: the field named (a subscriber\'s e-mail, an article\'s slug)', async () => {
    const subscriber = await make.newsletter(ctx, { email: 'trash-taken@example.com' });
    await as(ctx, admin).delete(`/api/crm/newsletters/${subscriber.id}`);
    await make.newsletter(ctx, { email: 'trash-taken@example.com' });
    let res = await as(ctx, admin).post(`/api/crm/trash/${(await entryOf('crm', subscriber.id))!.id}/restore`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'Conflict', message: expect.stringContaining('"trash-taken@example.com"'), details: { email: expect.stringContaining('another newsletter subscription') } });

    const article = await make.article(ctx, { slug: 'trash-slug' });
    await as(ctx, admin).delete(`/api/cms/articles/${article.id}`);
    await make.article(ctx, { slug: 'trash-slug' });
    res = await as(ctx, admin).post(`/api/cms/trash/${(await entryOf('cms', article.id))!.id}/restore`);
    expect(res.statusCode).toBe(409);
    expect(Object.keys(res.json().details)).toEqual(['slug']);
  });

  test('a record it names is gone: the field named (a gallery image whose project was deleted)', async () => {
    const { project, ids } = await galleryImage();
    await as(ctx, admin).delete(`/api/cms/projects/galleries/${ids[0]}`);
    await as(ctx, admin).delete(`/api/cms/projects/${project.id}`);
    const res = await as(ctx, admin).post(`/api/cms/trash/${(await entryOf('cms', ids[0]))!.id}/restore`);
    expect(res.statusCode).toBe(409);
    expect(res.json().details).toEqual({ project_id: expect.stringContaining('names a project') });
  });

  test('an entry of another module, an unknown one, a bad id: 404, 404, 400', async () => {
    const amenity = await make.amenity(ctx);
    await as(ctx, admin).delete(`/api/cms/amenities/${amenity.id}`);
    const entry = await entryOf('cms', amenity.id);
    expect((await as(ctx, admin).post(`/api/crm/trash/${entry!.id}/restore`)).statusCode).toBe(404);
    expect((await as(ctx, admin).post(`/api/cms/trash/${UNKNOWN}/restore`)).statusCode).toBe(404);
    const bad = await as(ctx, admin).post('/api/cms/trash/nope/restore');
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json().details)).toEqual(['log_id']);
  });
});

describe('the trash list', () => {
  test('needs delete on the module: 401, 403 without it (read and write are not enough), 200 with it', async () => {
    expect((await as(ctx, none).get('/api/crm/trash')).statusCode).toBe(401);
    const lead = await make.lead(ctx);
    await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`);
    const entry = await entryOf('crm', lead.id);
    for (const grants of [{ crm: 'rw' }, { cms: 'rwd' }]) {
      const user = await createUser(ctx, grants);
      expect((await as(ctx, user).get('/api/crm/trash')).statusCode).toBe(403);
      expect((await as(ctx, user).post(`/api/crm/trash/${entry!.id}/restore`)).statusCode).toBe(403);
    }
    const deleter = await createUser(ctx, { crm: 'd' });
    expect((await as(ctx, deleter).get('/api/crm/trash')).statusCode).toBe(200);
    expect((await as(ctx, deleter).post(`/api/crm/trash/${entry!.id}/restore`)).statusCode).toBe(200);
  });

  test('filters by resource, who deleted and when; pages with exact totals', async () => {
    const deleter = await createUser(ctx, { cms: 'rwd' });
    const careers = [await make.career(ctx), await make.career(ctx), await make.career(ctx)];
    for (const career of careers) expect((await as(ctx, deleter).delete(`/api/cms/careers/${career.id}`)).statusCode).toBe(200);
    const mine = await trashOf('cms', `user_id=${deleter.id}&limit=2`);
    expect(mine.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect(mine.data.map((e: Json) => e.record_id)).toEqual([careers[2].id, careers[1].id]);
    expect((await trashOf('cms', `user_id=${deleter.id}&page=2&limit=2`)).data.map((e: Json) => e.record_id)).toEqual([careers[0].id]);
    expect((await trashOf('cms', `user_id=${deleter.id}&resource=articles,amenities`)).pagination.total).toBe(0);
    expect((await trashOf('cms', `user_id=${deleter.id}&resource=careers`)).pagination.total).toBe(3);
    const today = clock.now().toISOString().slice(0, 10);
    expect((await trashOf('cms', `user_id=${deleter.id}&deleted_from=${today}&deleted_to=${today}`)).pagination.total).toBe(3);
    expect((await trashOf('cms', `user_id=${deleter.id}&deleted_to=2020-01-01`)).pagination.total).toBe(0);
    expect((await trashOf('cms', `q=${encodeURIComponent(String(careers[1].title))}`)).data.map((e: Json) => e.record_id)).toEqual([careers[1].id]);
    // Restored: out of the trash, the total follows.
    await as(ctx, admin).post(`/api/cms/trash/${mine.data[0].id}/restore`);
    expect((await trashOf('cms', `user_id=${deleter.id}&limit=2`)).pagination.total).toBe(2);
    for (const [query, field] of [['resource=users', 'resource'], ['deleted_from=yesterday', 'deleted_from'], ['sort=title', 'sort'], ['status=x', 'status']]) {
      const res = await as(ctx, admin).get(`/api/cms/trash?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(Object.keys(res.json().details), query).toEqual([field]);
    }
  });

  test('totals and kept pages of the record\'s own list are exact across delete and restore', async () => {
    const tag = `Trashy${Date.now()}`;
    const leads = [];
    for (let i = 0; i < 3; i++) leads.push(await make.lead(ctx, { last_name: tag }));
    const page = () => get(`/api/crm/leads?q=${tag}&limit=2`);
    const first = await page();
    expect(first.pagination.total).toBe(3);
    expect(first.data.map((l: Json) => l.id)).toEqual([leads[2].id, leads[1].id]);
    expect(await page()).toEqual(first); // kept (SLOW_PAGE_MS=0) and served again
    await as(ctx, admin).delete(`/api/crm/leads/${leads[1].id}`);
    const without = await page();
    expect(without.pagination.total).toBe(2);
    expect(without.data.map((l: Json) => l.id)).toEqual([leads[2].id, leads[0].id]);
    const csv = async () => (await as(ctx, admin).get(`/api/crm/leads/export?q=${tag}`)).body.trim().split(/\r?\n/).length - 1;
    expect(await csv()).toBe(2);
    await as(ctx, admin).post(`/api/crm/trash/${(await entryOf('crm', leads[1].id))!.id}/restore`);
    expect(await page()).toEqual(first);
    expect(await csv()).toBe(3);
  });

  test('a caller with an own-records scope sees and restores only entries of their records', async () => {
    const agent = await createUser(ctx, { crm: 'rwd' });
    await ctx.database.db.update(moduleAccess).set({ scope: 'own' }).where(and(eq(moduleAccess.user_id, agent.id), eq(moduleAccess.module, 'crm')));
    const signedIn = await login(ctx, agent.email, agent.password);
    const theirs = await make.lead(ctx, { assigned_to: agent.id });
    const others = await make.lead(ctx);
    for (const lead of [theirs, others]) await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`);
    const seen = (await trashOf('crm', 'resource=leads&limit=100', signedIn)).data.map((e: Json) => e.record_id);
    expect(seen).toContain(theirs.id);
    expect(seen).not.toContain(others.id);
    expect((await as(ctx, signedIn).post(`/api/crm/trash/${(await entryOf('crm', others.id))!.id}/restore`)).statusCode).toBe(404);
    expect((await as(ctx, signedIn).post(`/api/crm/trash/${(await entryOf('crm', theirs.id))!.id}/restore`)).statusCode).toBe(200);
  });
});

describe('retention', () => {
  test('entries older than TRASH_RETENTION_DAYS are purged (by the service clock); younger ones stay', async () => {
    const amenity = await make.amenity(ctx);
    await as(ctx, admin).delete(`/api/cms/amenities/${amenity.id}`);
    const entry = await entryOf('cms', amenity.id);
    const real = clock.now;
    const DAY = 24 * 3600 * 1000;
    try {
      clock.now = () => new Date(Date.now() + 29 * DAY);
      await purgeTrash(ctx.database.db, ctx.config.trashRetentionDays);
      expect(await entryOf('cms', amenity.id)).toBeDefined();
      clock.now = () => new Date(Date.now() + 31 * DAY);
      // The scheduled job's own handler, as pg-boss runs it.
      await trashPurge.handler({}, { database: ctx.database, config: ctx.config, log: ctx.app.log } as never);
      expect(await entryOf('cms', amenity.id)).toBeUndefined();
    } finally {
      clock.now = real;
    }
    const res = await as(ctx, admin).post(`/api/cms/trash/${entry!.id}/restore`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Resource not found', message: 'Trash entry not found' });
    // The delete's activity log outlives the trash entry (kept ACTIVITY_LOG_RETENTION_DAYS).
    expect((await logsOf(amenity.id)).at(-1)).toMatchObject({ action: 'delete', id: entry!.id });
  });

  test('POST /api/cron/trash-purge runs the purge now: bearer CRON_SECRET, {deleted, message}', async () => {
    const purge = (authorization?: string) => as(ctx, none, { headers: authorization ? { authorization } : {} }).post('/api/cron/trash-purge');
    for (const header of [undefined, 'Bearer wrong', CRON_SECRET, admin.headers.authorization]) {
      const res = await purge(header);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication required' });
    }
    const lead = await make.lead(ctx);
    await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`);
    const entry = await entryOf('crm', lead.id);
    expect(entry).toBeDefined();
    const real = clock.now;
    const DAY = 24 * 3600 * 1000;
    try {
      // Every entry of this app was deleted today: none is 30 days old yet.
      clock.now = () => new Date(Date.now() + 29 * DAY);
      const early = await purge(`Bearer ${CRON_SECRET}`);
      expect(early.statusCode, early.body).toBe(200);
      expect(early.json()).toEqual({ deleted: 0, message: 'Purged 0 trash entries deleted more than 30 days ago' });
      expect(await entryOf('crm', lead.id)).toBeDefined();
      const waiting = (await ctx.database.db.select({ id: trash.id }).from(trash)).length;
      clock.now = () => new Date(Date.now() + 31 * DAY);
      const late = await purge(`Bearer ${CRON_SECRET}`);
      expect(late.statusCode, late.body).toBe(200);
      expect(late.json()).toEqual({ deleted: waiting, message: `Purged ${waiting} trash ${waiting === 1 ? 'entry' : 'entries'} deleted more than 30 days ago` });
    } finally {
      clock.now = real;
    }
    expect(await ctx.database.db.select().from(trash)).toEqual([]);
    expect((await as(ctx, admin).post(`/api/crm/trash/${entry!.id}/restore`)).statusCode).toBe(404);
  });

  test('the files of a trashed gallery image count as used until the entry goes', async () => {
    const project = await make.project(ctx);
    const path = imagePath();
    const res = await as(ctx, admin).post(`/api/cms/projects/${project.id}/galleries`, { images: [{ image_url: path }] });
    const key = path.slice('/uploads/'.length, '/uploads/'.length + 32);
    await as(ctx, admin).delete(`/api/cms/projects/galleries/${res.json().ids[0]}`);
    const uses = (await usageOf(ctx.database.db, [key])).get(key)!;
    expect(uses).toEqual([expect.objectContaining({ resource: 'trash', field: 'record' })]);
    await as(ctx, admin).delete(`/api/cms/projects/${project.id}`);
    await purgeTrash(ctx.database.db, 0);
    expect((await usageOf(ctx.database.db, [key])).get(key)).toEqual([]);
  });
});
