import { and, eq } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, inventoryUnits, projects } from '../src/db/schema/index.js';
import { inventoryCode } from '../src/modules/crm/inventory.js';
import { signUnsubscribeToken, verifyUnsubscribeToken } from '../src/modules/crm/unsubscribe-token.js';
import { as, createTestApp, createUser, none, PATIENCE_MS, type TestContext, waitFor } from './helpers.js';

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
let reader: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp();
  staff = await createUser(ctx, { crm: 'rwd' }, { name: 'Sam Staff' });
  reader = await createUser(ctx, { crm: 'r' });
});
afterAll(async () => ctx?.close());

async function logs(resource: string, id: string) {
  return ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, resource), eq(activityLogs.resource_id, id)));
}

async function project(name: string) {
  const [row] = await ctx.database.db.insert(projects).values({ name, slug: `p-${uuidv7()}`, status: 'active', type: 'residential' }).returning();
  return row;
}

describe('unit helpers', () => {
  test('inventory code: initials of each word, block, lot', () => {
    expect(inventoryCode('Arcadia Residences', '3', '12')).toBe('AR-3-12');
    expect(inventoryCode('  the  grand  oak park ', 'B', '7')).toBe('TGOP-B-7');
  });
  test('unsubscribe token round-trips and refuses tampering', () => {
    const token = signUnsubscribeToken('secret', 'Ann@Example.com');
    expect(verifyUnsubscribeToken('secret', token)).toBe('ann@example.com');
    expect(verifyUnsubscribeToken('other', token)).toBeNull();
    const forged = `${Buffer.from('bob@example.com').toString('base64url')}.${token.split('.')[1]}`;
    expect(verifyUnsubscribeToken('secret', forged)).toBeNull();
    expect(verifyUnsubscribeToken('secret', 'garbage')).toBeNull();
  });
});

describe('leads', () => {
  test('life cycle with audit records', async () => {
    const created = await as(ctx, staff).post('/api/crm/leads', { first_name: ' Ann ', last_name: 'Lee', email: 'ANN@Example.com', assigned_to: staff.id });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    const detail = (await as(ctx, staff).get(`/api/crm/leads/${id}`)).json();
    expect(detail).toMatchObject({ first_name: 'Ann', email: 'ann@example.com', status: 'new', source: 'website', assigned_to: { id: staff.id, name: 'Sam Staff' }, phone: null });

    expect((await as(ctx, staff).patch(`/api/crm/leads/${id}`, { status: 'contacted', assigned_to: null })).statusCode).toBe(200);
    const patched = (await as(ctx, staff).get(`/api/crm/leads/${id}`)).json();
    expect(patched).toMatchObject({ status: 'contacted', assigned_to: null });

    expect((await as(ctx, staff).delete(`/api/crm/leads/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, staff).get(`/api/crm/leads/${id}`)).statusCode).toBe(404);
    const rows = await logs('leads', id);
    expect(rows.map((r) => r.action).sort()).toEqual(['create', 'delete', 'update']);
    const update = rows.find((r) => r.action === 'update')!;
    expect(update.module).toBe('crm');
    expect(update.user_id).toBe(staff.id);
    expect((update.changes as any).after).toEqual({ status: 'contacted', assigned_to: null });
  });

  test('validation', async () => {
    const noContact = await as(ctx, staff).post('/api/crm/leads', { first_name: 'A', last_name: 'B' });
    expect(noContact.statusCode).toBe(400);
    expect(noContact.json().details.email).toBeDefined();
    const unknownUser = await as(ctx, staff).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '1', assigned_to: uuidv7() });
    expect(unknownUser.statusCode).toBe(400);
    expect(unknownUser.json().details.assigned_to).toBeDefined();
    expect((await as(ctx, staff).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '1', id: uuidv7() })).json().details.id).toBeDefined();
    expect((await as(ctx, staff).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '1', status: 'hot' })).json().details.status).toBeDefined();
    expect((await as(ctx, staff).post('/api/crm/leads', { first_name: '  ', last_name: 'B', phone: '1' })).json().details.first_name).toBeDefined();
    expect((await as(ctx, staff).get('/api/crm/leads/not-a-uuid')).json().details.id).toBeDefined();
    expect((await as(ctx, staff).patch(`/api/crm/leads/${uuidv7()}`, { status: 'lost' })).statusCode).toBe(404);
    expect((await as(ctx, staff).get('/api/crm/leads?colour=red')).statusCode).toBe(400);
    expect((await as(ctx, staff).get('/api/crm/leads?sort=email')).json().details.sort).toBeDefined();
    expect((await as(ctx, reader).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '1' })).statusCode).toBe(403);
    expect((await as(ctx, none).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '1' })).statusCode).toBe(401);
    // A lead must keep a way to reach them.
    const id = (await as(ctx, staff).post('/api/crm/leads', { first_name: 'A', last_name: 'B', phone: '1' })).json().id;
    expect((await as(ctx, staff).patch(`/api/crm/leads/${id}`, { phone: null })).statusCode).toBe(400);
  });

  test('filters, search, sorts, pagination', async () => {
    const tag = uuidv7().slice(-8);
    for (const [i, status] of (['new', 'qualified', 'qualified', 'lost', 'qualified'] as const).entries()) {
      const res = await as(ctx, staff).post('/api/crm/leads', {
        first_name: `F${i}${tag}`, last_name: `L${tag}`, phone: `555-${tag}-${i}`, status, source: i % 2 ? 'referral' : 'event',
        assigned_to: i === 4 ? reader.id : undefined,
      });
      expect(res.statusCode).toBe(201);
    }
    const page1 = (await as(ctx, staff).get(`/api/crm/leads?q=${tag}&status=qualified&limit=2&sort=first_name&order=asc`)).json();
    expect(page1.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect(page1.data.map((l: any) => l.first_name)).toEqual([`F1${tag}`, `F2${tag}`]);
    const page2 = (await as(ctx, staff).get(`/api/crm/leads?q=${tag}&status=qualified&limit=2&page=2&sort=first_name&order=asc`)).json();
    expect(page2.data.map((l: any) => l.first_name)).toEqual([`F4${tag}`]);
    expect(page2.data[0].assigned_to).toEqual({ id: reader.id, name: reader.name });
    expect((await as(ctx, staff).get(`/api/crm/leads?q=${tag}&source=referral`)).json().pagination.total).toBe(2);
    expect((await as(ctx, staff).get(`/api/crm/leads?assigned_to=${reader.id}`)).json().pagination.total).toBe(1);
    const byCreated = (await as(ctx, staff).get(`/api/crm/leads?q=${tag}`)).json().data.map((l: any) => l.first_name);
    expect(byCreated[0]).toBe(`F4${tag}`);
    expect((await as(ctx, staff).get(`/api/crm/leads?q=${tag}&page=9`)).json()).toMatchObject({ data: [], pagination: { page: 9, total: 5 } });
  });
});

describe('inventory', () => {
  test('code, duplicate, filters, delete rules, PATCH /api/projects/inventory', async () => {
    const p = await project('Arcadia Residences');
    const created = await as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '3', lot: '12', price: 2500000, house_model: 'Aria', floor_area: 80.5 });
    expect(created.statusCode).toBe(201);
    expect(created.json().inventory_code).toBe('AR-3-12');
    const id = created.json().id;
    expect((await as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '3', lot: '12', price: 1 })).statusCode).toBe(409);
    const missing = await as(ctx, staff).post('/api/crm/inventory', { project_id: uuidv7(), block: '3', lot: '12', price: 1 });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details.project_id).toBeDefined();
    expect((await as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '1', lot: '1', price: 1, inventory_code: 'X' })).json().details.inventory_code).toBeDefined();
    expect((await as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '1', lot: '1', price: '1' })).json().details.price).toBeDefined();

    const detail = (await as(ctx, staff).get(`/api/crm/inventory/${id}`)).json();
    expect(detail).toMatchObject({ project: { id: p.id, name: 'Arcadia Residences', slug: p.slug }, price: 2500000, floor_area: 80.5, lot_area: null, status: 'available', sold_to: null });

    await as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '3', lot: '2', price: 100, house_model: 'Bella' });
    await as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '4', lot: '1', price: 300 });
    const list = (await as(ctx, staff).get(`/api/crm/inventory?project_id=${p.id}&block=3&sort=price&order=asc`)).json();
    expect(list.data.map((u: any) => u.inventory_code)).toEqual(['AR-3-2', 'AR-3-12']);
    expect((await as(ctx, staff).get(`/api/crm/inventory?project_id=${p.id}&house_model=Bella`)).json().pagination.total).toBe(1);
    expect((await as(ctx, staff).get(`/api/crm/inventory?status=gone`)).statusCode).toBe(400);

    // Changing block or lot recomputes the code.
    expect((await as(ctx, staff).patch(`/api/crm/inventory/${id}`, { lot: '14' })).statusCode).toBe(200);
    expect((await as(ctx, staff).get(`/api/crm/inventory/${id}`)).json().inventory_code).toBe('AR-3-14');

    const unknownReservation = await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: id, sold_to: uuidv7(), status: 'sold' });
    expect(unknownReservation.statusCode).toBe(400);
    expect(unknownReservation.json().details.sold_to).toBeDefined();
    expect((await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: uuidv7(), sold_to: null, status: 'sold' })).statusCode).toBe(404);
    expect((await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: id, sold_to: null, status: 'sold' })).statusCode).toBe(200);
    expect((await as(ctx, staff).delete(`/api/crm/inventory/${id}`)).statusCode).toBe(409);
    expect((await as(ctx, reader).patch('/api/projects/inventory', { inventory_id: id, sold_to: null, status: 'available' })).statusCode).toBe(403);
    await as(ctx, staff).patch('/api/projects/inventory', { inventory_id: id, sold_to: null, status: 'available' });
    expect((await as(ctx, staff).delete(`/api/crm/inventory/${id}`)).statusCode).toBe(200);
    const rows = await logs('inventory', id);
    expect(rows.map((r) => r.action)).toEqual(expect.arrayContaining(['create', 'update', 'delete']));
    expect(rows.filter((r) => r.action === 'update')).toHaveLength(3);
  });
});

describe('reservations', () => {
  async function unit(name = 'Bamboo Grove') {
    const p = await project(name);
    const res = await as(ctx, staff).post('/api/crm/inventory', { project_id: p.id, block: '1', lot: String(Math.random()).slice(2, 8), price: 1000, house_model: 'Casa' });
    return { project: p, id: res.json().id as string };
  }

  test('create reserves the unit; cancelling frees it; moves', async () => {
    const u = await unit();
    const created = await as(ctx, staff).post('/api/crm/reservations', { inventory_id: u.id, client_name: 'Carla Cruz', email: 'CARLA@example.com' });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    const detail = (await as(ctx, staff).get(`/api/crm/reservations/${id}`)).json();
    expect(detail).toMatchObject({
      project_name: 'Bamboo Grove', status: 'pending', payment_status: 'unpaid', email: 'carla@example.com',
      inventory: { id: u.id, block: '1', house_model: 'Casa', price: 1000 }, created_by: { id: staff.id, name: 'Sam Staff' },
    });
    const unitRow = (await as(ctx, staff).get(`/api/crm/inventory/${u.id}`)).json();
    expect(unitRow).toMatchObject({ status: 'reserved', sold_to: id });
    expect((await logs('reservations', id)).map((r) => r.action)).toEqual(['create']);
    expect((await logs('inventory', u.id)).map((r) => r.action).sort()).toEqual(['create', 'update']);

    expect((await as(ctx, staff).post('/api/crm/reservations', { inventory_id: u.id, client_name: 'Late', contact_number: '1' })).statusCode).toBe(409);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${id}`, { payment_status: 'partial' })).statusCode).toBe(200);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${id}`, { status: 'confirmed' })).statusCode).toBe(200);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${id}`, { status: 'pending' })).statusCode).toBe(409);
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${id}`, { status: 'cancelled' })).statusCode).toBe(200);
    expect((await as(ctx, staff).get(`/api/crm/inventory/${u.id}`)).json()).toMatchObject({ status: 'available', sold_to: null });
    expect((await as(ctx, staff).patch(`/api/crm/reservations/${id}`, { status: 'confirmed' })).statusCode).toBe(409);
    expect((await logs('inventory', u.id)).filter((r) => r.action === 'update')).toHaveLength(2);

    // Delete frees the unit it holds.
    const second = (await as(ctx, staff).post('/api/crm/reservations', { inventory_id: u.id, client_name: 'Dan', contact_number: '0917' })).json().id;
    expect((await as(ctx, staff).delete(`/api/crm/reservations/${second}`)).statusCode).toBe(200);
    expect((await as(ctx, staff).get(`/api/crm/inventory/${u.id}`)).json()).toMatchObject({ status: 'available', sold_to: null });
    expect((await logs('reservations', second)).map((r) => r.action).sort()).toEqual(['create', 'delete']);
  });

  test('validation, filters, search, sort', async () => {
    const u = await unit('Cedar Heights');
    const missing = await as(ctx, staff).post('/api/crm/reservations', { inventory_id: uuidv7(), client_name: 'X', email: 'x@example.com' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details.inventory_id).toBeDefined();
    expect((await as(ctx, staff).post('/api/crm/reservations', { inventory_id: u.id, client_name: 'X' })).statusCode).toBe(400);
    expect((await as(ctx, staff).post('/api/crm/reservations', { inventory_id: u.id, client_name: 'X', email: 'x@example.com', payment_status: 'free' })).json().details.payment_status).toBeDefined();
    expect((await as(ctx, staff).post('/api/crm/reservations', { inventory_id: 'nope', client_name: 'X', email: 'x@example.com' })).json().details.inventory_id).toBeDefined();
    const id = (await as(ctx, staff).post('/api/crm/reservations', { inventory_id: u.id, client_name: 'Zed Zulu', email: 'zed@example.com', payment_status: 'paid', reservation_date: '2026-01-05T08:00:00+08:00' })).json().id;
    const list = (await as(ctx, staff).get('/api/crm/reservations?project_name=Cedar%20Heights&payment_status=paid&q=zulu')).json();
    expect(list.pagination.total).toBe(1);
    expect(list.data[0]).toMatchObject({ id, reservation_date: '2026-01-05T00:00:00.000Z' });
    expect((await as(ctx, staff).get('/api/crm/reservations?sort=client_name&order=asc')).statusCode).toBe(200);
    expect((await as(ctx, staff).get('/api/crm/reservations?sort=price')).statusCode).toBe(400);
  });

  test('20 concurrent reservations of one unit: exactly one wins', async () => {
    const u = await unit('Dahlia Fields');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      as(ctx, staff).post('/api/crm/reservations', { inventory_id: u.id, client_name: `Racer ${i}`, contact_number: `${i}` })));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(1);
    expect(codes.filter((c) => c === 409)).toHaveLength(19);
    const winner = results.find((r) => r.statusCode === 201)!.json().id;
    const [row] = await ctx.database.db.select().from(inventoryUnits).where(eq(inventoryUnits.id, u.id));
    expect(row).toMatchObject({ status: 'reserved', sold_to: winner });
    expect((await logs('inventory', u.id)).filter((r) => r.action === 'update')).toHaveLength(1);
  });
});

describe('inquiries', () => {
  test('life cycle, response mailed, filters', async () => {
    const sent: any[] = [];
    const original = ctx.app.mailer.send;
    ctx.app.mailer.send = async (mail) => { sent.push(mail); };
    try {
      const created = await as(ctx, staff).post('/api/crm/inquiries', { name: 'Ivy', email: 'Ivy@Example.com', subject: 'Site visit', message: 'Can I visit?' });
      expect(created.statusCode).toBe(201);
      const id = created.json().id;
      expect((await as(ctx, staff).get(`/api/crm/inquiries/${id}`)).json()).toMatchObject({ status: 'unread', email: 'ivy@example.com', responded_by: null, response: null, phone: null });
      expect((await as(ctx, staff).patch(`/api/crm/inquiries/${id}`, { status: 'read' })).statusCode).toBe(200);
      expect((await as(ctx, staff).patch(`/api/crm/inquiries/${id}`, { response: 'Yes, Saturday <b>works</b>.' })).statusCode).toBe(200);
      expect((await as(ctx, staff).get(`/api/crm/inquiries/${id}`)).json()).toMatchObject({ status: 'responded', response: 'Yes, Saturday <b>works</b>.', responded_by: { id: staff.id, name: 'Sam Staff' } });
      await waitFor(() => sent.length > 0, PATIENCE_MS, 'the response mail');
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ to: 'ivy@example.com', subject: 'Re: Site visit' });
      expect(sent[0].html).toContain('&lt;b&gt;works');
      expect((await as(ctx, staff).patch(`/api/crm/inquiries/${id}`, { response: 'Closing.', status: 'closed' })).statusCode).toBe(200);
      expect((await as(ctx, staff).get(`/api/crm/inquiries/${id}`)).json().status).toBe('closed');
      expect((await as(ctx, staff).get('/api/crm/inquiries?status=closed&q=site%20visit')).json().pagination.total).toBe(1);
      expect((await as(ctx, staff).get('/api/crm/inquiries?sort=updated_at&order=asc')).statusCode).toBe(200);
      expect((await as(ctx, staff).patch(`/api/crm/inquiries/${id}`, { status: 'archived' })).statusCode).toBe(400);
      expect((await as(ctx, staff).patch(`/api/crm/inquiries/${id}`, { message: 'x' })).statusCode).toBe(400);
      expect((await as(ctx, staff).post('/api/crm/inquiries', { name: 'X', email: 'not-mail', subject: 's', message: 'm' })).json().details.email).toBeDefined();
      expect((await as(ctx, staff).delete(`/api/crm/inquiries/${id}`)).statusCode).toBe(200);
      expect((await logs('inquiries', id)).map((r) => r.action)).toEqual(['create', 'update', 'update', 'update', 'delete']);
    } finally {
      ctx.app.mailer.send = original;
    }
  });
});

describe('newsletters', () => {
  test('subscribe, conflict, resubscribe, patch, list params, unsubscribe link', async () => {
    const created = await as(ctx, staff).post('/api/crm/newsletters', { email: 'News@Example.com', name: 'Nia' });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    expect((await as(ctx, staff).post('/api/crm/newsletters', { email: 'news@example.com' })).statusCode).toBe(409);
    expect((await as(ctx, staff).patch(`/api/crm/newsletters/${id}`, { status: 'unsubscribed' })).statusCode).toBe(200);
    const off = (await as(ctx, staff).get(`/api/crm/newsletters/${id}`)).json();
    expect(off.status).toBe('unsubscribed');
    expect(off.unsubscribed_at).not.toBeNull();
    const again = await as(ctx, staff).post('/api/crm/newsletters', { email: 'news@example.com' });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(id);
    expect((await as(ctx, staff).get(`/api/crm/newsletters/${id}`)).json()).toMatchObject({ status: 'subscribed', unsubscribed_at: null, name: 'Nia' });

    await as(ctx, staff).post('/api/crm/newsletters', { email: 'later@example.com' });
    const list = (await as(ctx, staff).get('/api/crm/newsletters?status=subscribed&limit=1')).json();
    expect(list.data[0].email).toBe('later@example.com'); // newest subscription first
    expect(list.pagination.total).toBe(2);
    expect((await as(ctx, staff).get('/api/crm/newsletters?status=subscribed&limit=1&page=2')).json().data[0].email).toBe('news@example.com');
    for (const bad of ['sort=created_at', 'order=asc', 'q=news', 'status=maybe']) {
      expect((await as(ctx, staff).get(`/api/crm/newsletters?${bad}`)).statusCode).toBe(400);
    }

    // The public unsubscribe link.
    const bad = await as(ctx, none).get('/api/public/newsletter/unsubscribe?token=forged.token');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.token).toBeDefined();
    const token = signUnsubscribeToken(ctx.config.authSecret, 'news@example.com');
    const res = await as(ctx, none).get(`/api/public/newsletter/unsubscribe?token=${token}`);
    expect(res.statusCode).toBe(200);
    expect((await as(ctx, staff).get(`/api/crm/newsletters/${id}`)).json().status).toBe('unsubscribed');
    const audit = await logs('newsletters', id);
    expect(audit.map((r) => r.action)).toEqual(['create', 'update', 'update', 'update']);
    expect(audit.at(-1)!.user_id).toBeNull();

    expect((await as(ctx, staff).delete(`/api/crm/newsletters/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, staff).get(`/api/crm/newsletters/${id}`)).statusCode).toBe(404);
  });
});
