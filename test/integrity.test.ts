import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { campaigns } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, login, none, type TestContext } from './helpers.js';
import { make } from './factories.js';
import { outboxReader, resetTokenOf } from './mail.js';

// CONTRACT §13, the integrity rules: inventory state and codes, audited cascades, deleted users, reset tokens,
// campaign content. Each through HTTP.

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
let outbox: ReturnType<typeof outboxReader>;

beforeAll(async () => {
  ctx = await createTestApp();
  staff = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' });
  outbox = outboxReader(ctx);
});
afterAll(() => ctx.close());

const unitOf = async (id: string) => (await as(ctx, staff).get(`/api/crm/inventory/${id}`)).json();
const reservationOf = async (id: string) => (await as(ctx, staff).get(`/api/crm/reservations/${id}`)).json();
/** The activity logs of one record, oldest first, through the API. */
const logsOf = async (resource: string, id: string) => {
  const res = await as(ctx, staff).get(`/api/iam/activity-logs?resource=${resource}&resource_id=${id}&sort=created_at&order=asc&limit=100`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { action: string; user: { id: string; name: string; email: string } | null; changes: { before: Record<string, unknown>; after: Record<string, unknown> } }[];
};

describe('inventory state has one owner', () => {
  test('a unit with a pending or confirmed reservation cannot be PATCHed to available, by either route (409)', async () => {
    const unit = await make.unit(ctx, {}, staff);
    const reservation = await make.reservation(ctx, { inventory_id: unit.id }, staff);
    for (const status of ['pending', 'confirmed']) {
      if (status === 'confirmed') expect((await as(ctx, staff).patch(`/api/crm/reservations/${reservation.id}`, { status })).statusCode).toBe(200);
      const direct = await as(ctx, staff).patch(`/api/crm/inventory/${unit.id}`, { status: 'available' });
      expect(direct.statusCode, direct.body).toBe(409);
      expect(direct.json()).toEqual({
        error: 'Conflict', message: expect.stringMatching(new RegExp(`held by a ${status} reservation`)),
        details: { status: `cannot be available while a ${status} reservation holds the unit` },
      });
      expect((await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: unit.id, status: 'available' })).statusCode).toBe(409);
      expect(await unitOf(unit.id)).toMatchObject({ status: 'reserved', sold_to: reservation.id });
      // So nobody can reserve it a second time.
      const second = await as(ctx, staff).post('/api/crm/reservations', { inventory_id: unit.id, client_name: 'Second', email: 'second@example.com' });
      expect(second.statusCode).toBe(409);
      expect(second.json()).toEqual({ error: 'Conflict', message: 'The unit is reserved', details: { inventory_id: 'the unit is reserved' } });
    }
    // Cancelling the reservation is the way back on sale.
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    expect(await unitOf(unit.id)).toMatchObject({ status: 'available', sold_to: null });
  });

  test('a unit without such a reservation goes back to available, and loses its buyer', async () => {
    const unit = await make.unit(ctx, {}, staff);
    const reservation = await make.reservation(ctx, { inventory_id: unit.id }, staff);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    expect((await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: unit.id, status: 'sold', sold_to: reservation.id })).statusCode).toBe(200);
    expect((await as(ctx, staff).patch(`/api/crm/inventory/${unit.id}`, { status: 'available' })).statusCode).toBe(200);
    expect(await unitOf(unit.id)).toMatchObject({ status: 'available', sold_to: null });
  });

  test("sold_to must be a reservation of that same unit (400 details.sold_to), not another unit's", async () => {
    const unit = await make.unit(ctx, {}, staff);
    const other = await make.reservation(ctx, {}, staff);
    const res = await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: unit.id, sold_to: other.id, status: 'sold' });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: { sold_to: 'must be a reservation of this unit' } });
    expect(await unitOf(unit.id)).toMatchObject({ status: 'available', sold_to: null });
    const own = await make.reservation(ctx, { inventory_id: unit.id }, staff);
    expect((await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: unit.id, sold_to: own.id, status: 'sold' })).statusCode).toBe(200);
    expect(await unitOf(unit.id)).toMatchObject({ status: 'sold', sold_to: own.id });
  });

  test('the reservation of a sold unit cannot be cancelled or deleted (409): the sale stands until the unit is PATCHed', async () => {
    const unit = await make.unit(ctx, {}, staff);
    const reservation = await make.reservation(ctx, { inventory_id: unit.id }, staff);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${reservation.id}`, { status: 'confirmed' })).statusCode).toBe(200);
    expect((await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: unit.id, sold_to: reservation.id, status: 'sold' })).statusCode).toBe(200);

    const cancel = await as(ctx, staff).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' });
    expect(cancel.statusCode, cancel.body).toBe(409);
    expect(cancel.json()).toEqual({ error: 'Conflict', message: expect.stringMatching(/is sold/), details: { status: expect.stringMatching(/^cannot be cancelled while the unit .+ is sold$/) } });
    // A delete sends no field: the message alone says why.
    const removal = await as(ctx, staff).delete(`/api/crm/reservations/${reservation.id}`);
    expect(removal.statusCode).toBe(409);
    expect(removal.json()).toEqual({ error: 'Conflict', message: expect.stringMatching(/is sold/) });
    expect(await reservationOf(reservation.id)).toMatchObject({ status: 'confirmed' });
    expect(await unitOf(unit.id)).toMatchObject({ status: 'sold', sold_to: reservation.id });

    // Staff undo the sale on the unit; then the reservation may be cancelled, which frees the unit.
    expect((await as(ctx, staff).patch(`/api/crm/inventory/${unit.id}`, { status: 'reserved' })).statusCode).toBe(200);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    expect(await unitOf(unit.id)).toMatchObject({ status: 'available', sold_to: null });
  });
});

describe('inventory codes are unique', () => {
  test('block "3-1" lot "2" and block "3" lot "1-2" derive the same code: the second gets -2, a third -3', async () => {
    const arcadia = await make.project(ctx, { name: 'Arcadia Residences' }, staff);
    const aurora = await make.project(ctx, { name: 'Aurora Ridge' }, staff);
    const codes = [];
    for (const [project, block, lot] of [[arcadia, '3-1', '2'], [arcadia, '3', '1-2'], [aurora, '3-1', '2']] as const) {
      const res = await as(ctx, staff).post('/api/crm/inventory', { project_id: project.id, block, lot, price: 1_000_000 });
      expect(res.statusCode, res.body).toBe(201);
      codes.push(res.json().inventory_code);
      expect((await unitOf(res.json().id)).inventory_code).toBe(res.json().inventory_code);
    }
    expect(codes).toEqual(['AR-3-1-2', 'AR-3-1-2-2', 'AR-3-1-2-3']);
  });

  test('a PATCH keeps the suffix while the code stays the same, and derives a free one when it changes', async () => {
    const project = await make.project(ctx, { name: 'Bay Court' }, staff);
    const first = await make.unit(ctx, { project_id: project.id, block: '7', lot: '1' }, staff);
    const second = await as(ctx, staff).post('/api/crm/inventory', { project_id: project.id, block: '7-1', lot: '', price: 1 });
    expect(second.statusCode).toBe(400); // lot is required: a blank one is not a lot
    const clash = await make.unit(ctx, { project_id: project.id, block: '7-1', lot: '9' }, staff);
    expect((await unitOf(clash.id)).inventory_code).toBe('BC-7-1-9');
    expect((await as(ctx, staff).patch(`/api/crm/inventory/${first.id}`, { lot: '1-9' })).statusCode).toBe(200);
    expect((await unitOf(first.id)).inventory_code).toBe('BC-7-1-9-2');
    expect((await as(ctx, staff).patch(`/api/crm/inventory/${first.id}`, { price: 5, block: '7' })).statusCode).toBe(200);
    expect((await unitOf(first.id)).inventory_code).toBe('BC-7-1-9-2');
    expect((await as(ctx, staff).patch(`/api/crm/inventory/${first.id}`, { lot: '2' })).statusCode).toBe(200);
    expect((await unitOf(first.id)).inventory_code).toBe('BC-7-2');
  });

  test('concurrent creates that derive one code each get their own', async () => {
    const names = ['Casa Del', 'Casa Dela', 'Cielo Dorado', 'Costa Dulce', 'Cove Dunes', 'Crest Dale'];
    const projects = await Promise.all(names.map((name) => make.project(ctx, { name }, staff)));
    const answers = await Promise.all(projects.map((p) => as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '1', lot: '1', price: 1 })));
    expect(answers.map((a) => a.statusCode)).toEqual(projects.map(() => 201));
    expect(answers.map((a) => a.json().inventory_code).sort()).toEqual(['CD-1-1', 'CD-1-1-2', 'CD-1-1-3', 'CD-1-1-4', 'CD-1-1-5', 'CD-1-1-6']);
  });
});

describe('cascades are audited, one log per changed record', () => {
  test("deleting a project logs the delete of each of its gallery images", async () => {
    const project = await make.project(ctx, {}, staff);
    const added = await as(ctx, staff).post(`/api/cms/projects/${project.id}/galleries`, { images: [{ image_url: 'https://cdn.example.com/a.jpg' }, { image_url: 'https://cdn.example.com/b.jpg' }] });
    expect(added.statusCode).toBe(201);
    expect((await as(ctx, staff).delete(`/api/cms/projects/${project.id}`)).statusCode).toBe(200);
    for (const [i, id] of (added.json().ids as string[]).entries()) {
      const logs = await logsOf('galleries', id);
      expect(logs.map((l) => l.action)).toEqual(['create', 'delete']);
      expect(logs[1].changes.before).toMatchObject({ image_url: `https://cdn.example.com/${'ab'[i]}.jpg`, project_id: project.id });
      expect(logs[1].user?.id).toBe(staff.id);
    }
  });

  test("deleting a user logs the delete of each of their module-access rows", async () => {
    const user = await createUser(ctx, { cms: 'r', crm: 'rw' });
    const rows = (await as(ctx, staff).get(`/api/iam/module-access/${user.id}`)).json().data as { id: string; module: string }[];
    expect(rows).toHaveLength(2);
    expect((await as(ctx, staff).delete(`/api/iam/users/${user.id}`)).statusCode).toBe(200);
    for (const row of rows) {
      const logs = await logsOf('module_access', row.id);
      expect(logs.at(-1)).toMatchObject({ action: 'delete', changes: { before: { module: row.module, user_id: user.id }, after: {} } });
    }
  });

  test("deleting a unit logs the update of each reservation whose inventory_id it cleared", async () => {
    const unit = await make.unit(ctx, {}, staff);
    const reservation = await make.reservation(ctx, { inventory_id: unit.id }, staff);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${reservation.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    expect((await as(ctx, staff).delete(`/api/crm/inventory/${unit.id}`)).statusCode).toBe(200);
    expect(await reservationOf(reservation.id)).toMatchObject({ inventory: null, status: 'cancelled' });
    const logs = await logsOf('reservations', reservation.id);
    expect(logs.at(-1)).toMatchObject({ action: 'update', changes: { before: { inventory_id: unit.id }, after: { inventory_id: null } } });
  });
});

describe('deleted users', () => {
  test('references keep the id, name and e-mail they had; the address may be used by a new user', async () => {
    const user = await createUser(ctx, { crm: 'rw' }, { name: 'Dana Departed' });
    const lead = await make.lead(ctx, {}, user);
    expect((await as(ctx, staff).delete(`/api/iam/users/${user.id}`)).statusCode).toBe(200);

    const [log] = await logsOf('leads', lead.id);
    expect(log.user).toEqual({ id: user.id, name: 'Dana Departed', email: user.email });
    expect((await as(ctx, staff).get(`/api/iam/users/${user.id}`)).statusCode).toBe(404);

    const again = await as(ctx, staff).post('/api/iam/users', { email: user.email.toUpperCase(), name: 'Dana Again', password: 'An0ther-pass!' });
    expect(again.statusCode, again.body).toBe(201);
    // Sign-in finds the living user, never the deleted one; a second live user with the address is still refused.
    expect((await as(ctx, none).post('/api/auth/login', { email: user.email, password: user.password })).statusCode).toBe(401);
    await login(ctx, user.email, 'An0ther-pass!');
    expect((await as(ctx, staff).post('/api/iam/users', { email: user.email, name: 'Third', password: 'An0ther-pass!' })).statusCode).toBe(409);
    expect((await logsOf('leads', lead.id))[0].user?.name).toBe('Dana Departed');
  });
});

describe('reset tokens die when the account changes', () => {
  const forgot = async (email: string) => {
    expect((await as(ctx, none).post('/api/auth/forgot-password', { email })).statusCode).toBe(200);
    await ctx.app.background.settled();
    const [mail, ...more] = outbox.unread(email);
    expect(more).toEqual([]);
    return resetTokenOf(mail);
  };
  const reset = (token: string) => as(ctx, none).post('/api/auth/reset-password', { token, password: 'Brand-new-Passw0rd' });
  const refused = async (token: string) => {
    const res = await reset(token);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'Validation error', details: { token: expect.any(String) } });
  };

  test("an administrator's new password, or the user's own change, kills earlier tokens", async () => {
    const user = await createUser(ctx);
    const token = await forgot(user.email);
    expect((await as(ctx, staff).patch(`/api/iam/users/${user.id}`, { password: 'Admin-set-Passw0rd' })).statusCode).toBe(200);
    await refused(token);

    const second = await forgot(user.email);
    const session = await login(ctx, user.email, 'Admin-set-Passw0rd');
    const changed = await as(ctx, { token: session }).post('/api/auth/change-password', { currentPassword: 'Admin-set-Passw0rd', newPassword: 'Self-chosen-Passw0rd' });
    expect(changed.statusCode, changed.body).toBe(200);
    await refused(second);
    await login(ctx, user.email, 'Self-chosen-Passw0rd');
  });

  test('a reset kills the other tokens issued before it', async () => {
    const user = await createUser(ctx);
    const first = await forgot(user.email);
    const second = await forgot(user.email);
    expect((await reset(second)).statusCode).toBe(200);
    await refused(first);
  });

  test('a new e-mail address kills earlier tokens', async () => {
    const user = await createUser(ctx);
    const token = await forgot(user.email);
    expect((await as(ctx, staff).patch(`/api/iam/users/${user.id}`, { email: `moved-${user.email}` })).statusCode).toBe(200);
    await refused(token);
    await login(ctx, `moved-${user.email}`, user.password);
  });

  test('a deleted user: earlier tokens are refused, no new one is sent, and no credential comes back', async () => {
    const user = await createUser(ctx);
    const token = await forgot(user.email);
    expect((await as(ctx, staff).delete(`/api/iam/users/${user.id}`)).statusCode).toBe(200);
    await refused(token);
    expect((await as(ctx, none).post('/api/auth/forgot-password', { email: user.email })).statusCode).toBe(200);
    await ctx.app.background.settled();
    expect(outbox.unread(user.email)).toEqual([]);
    for (const password of [user.password, 'Brand-new-Passw0rd']) {
      expect((await as(ctx, none).post('/api/auth/login', { email: user.email, password })).statusCode).toBe(401);
    }
  });
});

describe('campaign content that cannot be rendered', () => {
  const nested = `${'> '.repeat(3000)}deep`;

  test('is 400 details.content on create and PATCH', async () => {
    const created = await as(ctx, staff).post('/api/crm/campaigns', { name: 'Deep', subject: 'Deep', content: nested });
    expect(created.statusCode, created.body).toBe(400);
    expect(created.json()).toEqual({ error: 'Validation error', details: { content: expect.stringMatching(/nested/) } });
    const campaign = await make.campaign(ctx, {}, staff);
    expect((await as(ctx, staff).patch(`/api/crm/campaigns/${campaign.id}`, { content: nested })).json().details.content).toMatch(/nested/);
    // Ordinary nesting renders.
    expect((await as(ctx, staff).patch(`/api/crm/campaigns/${campaign.id}`, { content: `${'> '.repeat(10)}quoted\n\n- a\n  - b` })).statusCode).toBe(200);
  });

  test('stored before the rule, it is 400 details.content on send, and the campaign stays a draft', async () => {
    const campaign = await make.campaign(ctx, {}, staff);
    await ctx.database.db.update(campaigns).set({ content: nested }).where(eq(campaigns.id, campaign.id));
    const sent = await as(ctx, staff).post(`/api/crm/campaigns/${campaign.id}/send`);
    expect(sent.statusCode, sent.body).toBe(400);
    expect(sent.json().details.content).toMatch(/nested/);
    expect((await as(ctx, staff).get(`/api/crm/campaigns/${campaign.id}`)).json()).toMatchObject({ status: 'draft', sent_at: null });
  });
});
