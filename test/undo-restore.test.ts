import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, moduleAccess } from '../src/db/schema/index.js';
import { adminOf, make } from './factories.js';
import { as, createTestApp, createUser, login, none, resolvedOpenapi, type TestContext } from './helpers.js';

// A record set back to its state before (or after) one change of its history, through its own PATCH rules.

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await adminOf(ctx);
});
afterAll(() => ctx?.close());

type Json = Record<string, any>;
const UNKNOWN = '01890000-0000-7000-8000-000000000000';

/** Per collection: a record to change, and a change of several fields its PATCH takes. */
const CASES: Record<string, { make: () => Promise<{ id: string }>; change: Json }> = {
  '/api/cms/projects': { make: () => make.project(ctx), change: { name: 'Renamed project', status: 'upcoming', price_range: { min: 1, max: 2 }, amenities: ['Pool'], published: true } },
  '/api/cms/articles': { make: () => make.article(ctx), change: { title: 'Renamed article', content: 'New body', tags: ['a', 'b'], published: true } },
  '/api/cms/careers': { make: () => make.career(ctx), change: { title: 'Renamed career', salary_range: { min: 1, max: 5, currency: 'PHP' }, employment_type: 'contract' } },
  '/api/cms/amenities': { make: () => make.amenity(ctx), change: { name: 'Renamed amenity', category: 'Leisure', description: 'Now described' } },
  '/api/crm/leads': { make: () => make.lead(ctx), change: { status: 'contacted', notes: 'Called twice', interest: 'Condo' } },
  '/api/crm/inventory': { make: () => make.unit(ctx), change: { price: 2_500_000, house_model: 'Aria', floor_area: 54.5 } },
  '/api/crm/reservations': { make: () => make.reservation(ctx), change: { payment_status: 'partial', notes: 'Paid half', client_name: 'Renamed client' } },
  '/api/crm/inquiries': { make: () => make.inquiry(ctx), change: { status: 'read' } },
  '/api/crm/newsletters': { make: () => make.newsletter(ctx), change: { name: 'Reader' } },
  '/api/crm/campaigns': { make: () => make.campaign(ctx), change: { name: 'Renamed campaign', subject: 'Other news', recipients: ['a@example.com'] } },
  '/api/crm/activities': {
    make: async () => {
      const lead = await make.lead(ctx);
      const res = await as(ctx, admin).post(`/api/crm/leads/${lead.id}/activities`, { kind: 'note', body: 'First note' });
      expect(res.statusCode, res.body).toBe(201);
      return { id: res.json().id };
    },
    change: { body: 'Second thoughts' },
  },
  '/api/crm/tasks': {
    make: async () => {
      const res = await as(ctx, admin).post('/api/crm/tasks', { title: 'Call back', due_at: '2030-01-01T09:00:00Z' });
      expect(res.statusCode, res.body).toBe(201);
      return { id: res.json().id };
    },
    change: { title: 'Call back later', due_at: '2030-02-01T09:00:00Z' },
  },
};

const detail = async (path: string, id: string) => {
  const res = await as(ctx, admin).get(`${path}/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Json;
};
const newestEntry = async (path: string, id: string) => {
  const res = await as(ctx, admin).get(`${path}/${id}/history?limit=1`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data[0] as Json;
};
/** A detail without what any write moves (updated_at) and what is computed at read (a campaign's delivery counts stay). */
const stable = ({ updated_at: _updated, ...rest }: Json) => rest;

describe('every cms and crm resource: change → restore → as before', () => {
  test('the OpenAPI document has a restore route for exactly the resources with a case here', async () => {
    const doc = await resolvedOpenapi(ctx);
    const restorable = Object.keys(doc.paths).filter((p) => /^\/api\/(cms|crm)\/.+\/\{id\}\/history\/\{log_id\}\/restore$/.test(p))
      .map((p) => p.replace(/\/\{id\}\/history\/\{log_id\}\/restore$/, '')).sort();
    expect(restorable).toEqual(Object.keys(CASES).sort());
    // iam records are not restored through this (no trash, no history restore).
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/api/iam/') && p.endsWith('/restore'))).toBe(false);
  });

  for (const [path, { make: create, change }] of Object.entries(CASES)) {
    test(`${path}: restored to its state before the change, audited as a restore of that entry`, async () => {
      const { id } = await create();
      const before = await detail(path, id);
      const patched = await as(ctx, admin).patch(`${path}/${id}`, change);
      expect(patched.statusCode, patched.body).toBe(200);
      const changed = await detail(path, id);
      expect(stable(changed)).not.toEqual(stable(before));
      const entry = await newestEntry(path, id);
      expect(entry.action).toBe('update');

      const res = await as(ctx, admin).post(`${path}/${id}/history/${entry.id}/restore`, { to: 'before' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().message).toMatch(/restored$/);
      expect(res.json().changes.after).toEqual(entry.changes.before);
      expect(stable(await detail(path, id))).toEqual(stable(before));

      const restore = await newestEntry(path, id);
      expect(restore).toMatchObject({ action: 'update', restored_from: entry.id, resource: entry.resource, resource_id: id });
      expect(restore.changes).toEqual({ before: entry.changes.after, after: entry.changes.before });
      expect(restore.user.id).toBe(admin.id);
    });
  }
});

describe('what a restore does', () => {
  test('to: "after" sets the fields to what the change set; a bare POST means before', async () => {
    const lead = await make.lead(ctx, { notes: 'one' });
    await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { notes: 'two', status: 'qualified' });
    const entry = await newestEntry('/api/crm/leads', lead.id);
    await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { notes: 'three', status: 'lost' });
    expect((await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${entry.id}/restore`, { to: 'after' })).statusCode).toBe(200);
    expect(await detail('/api/crm/leads', lead.id)).toMatchObject({ notes: 'two', status: 'qualified' });
    const bare = await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${entry.id}/restore`);
    expect(bare.statusCode, bare.body).toBe(200);
    expect(await detail('/api/crm/leads', lead.id)).toMatchObject({ notes: 'one', status: 'new' });
  });

  test('?dry_run=true answers the fields it would change and changes nothing (no log)', async () => {
    const lead = await make.lead(ctx, { notes: 'kept' });
    await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { notes: 'overwritten' });
    const entry = await newestEntry('/api/crm/leads', lead.id);
    const res = await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${entry.id}/restore?dry_run=true`, {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message: 'Lead not changed (dry run)', changes: { before: { notes: 'overwritten' }, after: { notes: 'kept' } }, skipped: [] });
    expect((await detail('/api/crm/leads', lead.id)).notes).toBe('overwritten');
    expect((await newestEntry('/api/crm/leads', lead.id)).id).toBe(entry.id);
  });

  test('fields the service derives are skipped and derived again (a unit\'s code follows its block)', async () => {
    const unit = await make.unit(ctx, { block: '7' });
    const code = (await detail('/api/crm/inventory', unit.id)).inventory_code;
    await as(ctx, admin).patch(`/api/crm/inventory/${unit.id}`, { block: '8' });
    const entry = await newestEntry('/api/crm/inventory', unit.id);
    expect(Object.keys(entry.changes.before).sort()).toEqual(['block', 'inventory_code']);
    const res = await as(ctx, admin).post(`/api/crm/inventory/${unit.id}/history/${entry.id}/restore`, {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().skipped).toEqual(['inventory_code']);
    expect(await detail('/api/crm/inventory', unit.id)).toMatchObject({ block: '7', inventory_code: code });
  });

  test('restoring the same entry again changes nothing and writes no log', async () => {
    const lead = await make.lead(ctx);
    await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { status: 'lost' });
    const entry = await newestEntry('/api/crm/leads', lead.id);
    expect((await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${entry.id}/restore`, {})).statusCode).toBe(200);
    const logs = () => ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, lead.id));
    const count = (await logs()).length;
    const again = await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${entry.id}/restore`, {});
    expect(again.statusCode).toBe(200);
    expect(again.json().changes).toEqual({ before: {}, after: {} });
    expect((await logs()).length).toBe(count);
  });
});

describe('the resource\'s own rules decide', () => {
  test('a state move the resource refuses is a 409 (a cancelled reservation stays cancelled)', async () => {
    const reservation = await make.reservation(ctx);
    expect((await as(ctx, admin).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    const entry = await newestEntry('/api/crm/reservations', reservation.id);
    const res = await as(ctx, admin).post(`/api/crm/reservations/${reservation.id}/history/${entry.id}/restore`, {});
    expect(res.statusCode).toBe(409);
    // Named like a 400 names its field: the field whose value the move refuses.
    expect(res.json()).toEqual({ error: 'Conflict', message: 'A cancelled reservation cannot become pending', details: { status: 'cannot move from cancelled to pending: cancelled is final' } });
    expect((await detail('/api/crm/reservations', reservation.id)).status).toBe('cancelled');
    // The OpenAPI document's 409 of the restore (and of PATCH) allows those details.
    const doc = await resolvedOpenapi(ctx);
    for (const operation of [doc.paths['/api/crm/reservations/{id}/history/{log_id}/restore'].post, doc.paths['/api/crm/reservations/{id}'].patch]) {
      const schema = operation.responses['409'].content['application/json'].schema;
      expect(schema.properties.details).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
      expect(schema.additionalProperties).not.toBe(false);
    }
    // A PATCH making the same move is refused alike.
    const patch = await as(ctx, admin).patch(`/api/crm/reservations/${reservation.id}`, { status: 'confirmed' });
    expect(patch.statusCode).toBe(409);
    expect(patch.json().details).toEqual({ status: 'cannot move from cancelled to confirmed: cancelled is final' });
  });

  test('a unique value now taken is a 409 naming it (a project\'s slug)', async () => {
    const project = await make.project(ctx, { slug: 'undo-slug-taken' });
    await as(ctx, admin).patch(`/api/cms/projects/${project.id}`, { slug: 'undo-slug-moved' });
    const entry = await newestEntry('/api/cms/projects', project.id);
    await make.project(ctx, { slug: 'undo-slug-taken' });
    const res = await as(ctx, admin).post(`/api/cms/projects/${project.id}/history/${entry.id}/restore`, {});
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'Conflict', message: 'The slug "undo-slug-taken" is already in use', details: { slug: 'is already in use by another record' } });
  });

  test('a reference that no longer exists is a 400 naming the field (a lead\'s assignee deleted since)', async () => {
    // Agents: a lead is assigned only to users who may read the crm.
    const agent = await createUser(ctx, { crm: 'rw' });
    const other = await createUser(ctx, { crm: 'rw' });
    const lead = await make.lead(ctx, { assigned_to: agent.id });
    await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: other.id });
    const entry = await newestEntry('/api/crm/leads', lead.id);
    expect((await as(ctx, admin).delete(`/api/iam/users/${agent.id}`)).statusCode).toBe(200);
    const res = await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${entry.id}/restore`, {});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: { assigned_to: 'must be an existing user' } });
  });

  test('a value the update body refuses is a 400 naming the field (an inquiry\'s response cannot be emptied)', async () => {
    const inquiry = await make.inquiry(ctx);
    await as(ctx, admin).patch(`/api/crm/inquiries/${inquiry.id}`, { response: 'We will call you' });
    const entry = await newestEntry('/api/crm/inquiries', inquiry.id);
    const res = await as(ctx, admin).post(`/api/crm/inquiries/${inquiry.id}/history/${entry.id}/restore`, {});
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json().details)).toEqual(['response']);
  });

  test('a create has no earlier state (409); a delete entry of a record gone is 404', async () => {
    const lead = await make.lead(ctx);
    const created = await newestEntry('/api/crm/leads', lead.id);
    const res = await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${created.id}/restore`, {});
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'Conflict', message: 'A create has no earlier state: delete the lead instead', details: { to: 'the create\'s "before" holds no fields' } });
    expect((await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`)).statusCode).toBe(200);
    const deleted = await newestEntry('/api/crm/leads', lead.id);
    expect((await as(ctx, admin).post(`/api/crm/leads/${lead.id}/history/${deleted.id}/restore`, {})).statusCode).toBe(404);
  });
});

describe('404, 400 and permissions', () => {
  test('an entry of another record, or none, is 404; so is an unknown record', async () => {
    const a = await make.lead(ctx);
    const b = await make.lead(ctx);
    await as(ctx, admin).patch(`/api/crm/leads/${b.id}`, { status: 'lost' });
    const entryOfB = await newestEntry('/api/crm/leads', b.id);
    for (const url of [`/api/crm/leads/${a.id}/history/${entryOfB.id}/restore`, `/api/crm/leads/${a.id}/history/${UNKNOWN}/restore`, `/api/crm/leads/${UNKNOWN}/history/${entryOfB.id}/restore`]) {
      const res = await as(ctx, admin).post(url, {});
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error).toBe('Resource not found');
    }
    // The same entry through another resource's path is not that resource's either.
    expect((await as(ctx, admin).post(`/api/crm/inquiries/${b.id}/history/${entryOfB.id}/restore`, {})).statusCode).toBe(404);
  });

  test('bad ids, a bad side, unknown fields and parameters are 400', async () => {
    const lead = await make.lead(ctx);
    const cases: [string, unknown, string][] = [
      [`/api/crm/leads/nope/history/${UNKNOWN}/restore`, {}, 'id'],
      [`/api/crm/leads/${lead.id}/history/nope/restore`, {}, 'log_id'],
      [`/api/crm/leads/${lead.id}/history/${UNKNOWN}/restore`, { to: 'sideways' }, 'to'],
      [`/api/crm/leads/${lead.id}/history/${UNKNOWN}/restore`, { status: 'new' }, 'status'],
      [`/api/crm/leads/${lead.id}/history/${UNKNOWN}/restore?force=1`, {}, 'force'],
    ];
    for (const [url, body, field] of cases) {
      const res = await as(ctx, admin).post(url, body);
      expect(res.statusCode, url).toBe(400);
      expect(Object.keys(res.json().details), url).toContain(field);
    }
  });

  test('needs write on the record\'s module: 401 signed out, 403 with read only or another module\'s write', async () => {
    const lead = await make.lead(ctx);
    await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { status: 'lost' });
    const entry = await newestEntry('/api/crm/leads', lead.id);
    const url = `/api/crm/leads/${lead.id}/history/${entry.id}/restore`;
    expect((await as(ctx, none).post(url, {})).statusCode).toBe(401);
    for (const grants of [{ crm: 'r' }, { crm: 'rd' }, { cms: 'rwd' }]) {
      const user = await createUser(ctx, grants);
      expect((await as(ctx, user).post(url, {})).statusCode, JSON.stringify(grants)).toBe(403);
    }
    const writer = await createUser(ctx, { crm: 'rw' });
    expect((await as(ctx, writer).post(url, {})).statusCode).toBe(200);
    expect((await detail('/api/crm/leads', lead.id)).status).toBe('new');
  });

  test('a caller with an own-records scope gets 404 for a record outside it, and restores their own', async () => {
    const agent = await createUser(ctx, { crm: 'rw' });
    await ctx.database.db.update(moduleAccess).set({ scope: 'own' }).where(and(eq(moduleAccess.user_id, agent.id), eq(moduleAccess.module, 'crm')));
    // Signed in again after the change, so no cached principal predates it.
    const signedIn = await login(ctx, agent.email, agent.password);
    const theirs = await make.lead(ctx, { assigned_to: agent.id });
    const others = await make.lead(ctx);
    for (const lead of [theirs, others]) await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { notes: 'changed' });
    const entryOfOthers = await newestEntry('/api/crm/leads', others.id);
    const entryOfTheirs = await newestEntry('/api/crm/leads', theirs.id);
    expect((await as(ctx, signedIn).post(`/api/crm/leads/${others.id}/history/${entryOfOthers.id}/restore`, {})).statusCode).toBe(404);
    expect((await as(ctx, signedIn).post(`/api/crm/leads/${theirs.id}/history/${entryOfTheirs.id}/restore`, {})).statusCode).toBe(200);
  });
});
