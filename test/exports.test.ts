import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { projects } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';
import { make } from './factories.js';

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  ctx = await createTestApp();
  staff = await createUser(ctx, { crm: 'rwd', iam: 'rwd' }, { name: 'Export Staff' });
});
afterAll(async () => { await ctx?.close(); });

async function exportCsv(path: string) {
  const res = await as(ctx, staff).get(path);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
  const rows: string[][] = parse(res.body);
  return { res, header: rows[0], records: rows.slice(1).map((r) => Object.fromEntries(rows[0].map((h, i) => [h, r[i]]))) };
}

test('leads export: filters, q and sort apply; nested objects become columns; injection is neutralised', async () => {
  await make.lead(ctx, { first_name: '=SUM(A1)', last_name: 'Alpha', email: 'a@example.com', status: 'qualified', assigned_to: staff.id, notes: 'line one\nline, two "quoted"' }, staff);
  await make.lead(ctx, { first_name: 'Bea', last_name: 'Beta', phone: '+63 900', status: 'new' }, staff);
  await make.lead(ctx, { first_name: 'Cid', last_name: 'Gamma', email: 'c@example.com', status: 'qualified' }, staff);

  const all = await exportCsv('/api/crm/leads/export?sort=last_name&order=asc');
  expect(all.res.headers['content-disposition']).toBe(`attachment; filename="leads-${today()}.csv"`);
  expect(all.header).toEqual(['id', 'first_name', 'last_name', 'email', 'phone', 'source', 'status', 'interest', 'notes', 'assigned_to_id', 'assigned_to_name', 'created_at', 'updated_at']);
  expect(all.records.map((r) => r.last_name)).toEqual(['Alpha', 'Beta', 'Gamma']);
  const alpha = all.records[0];
  expect(alpha.first_name).toBe("'=SUM(A1)");
  expect(alpha.notes).toBe('line one\nline, two "quoted"');
  expect(alpha.assigned_to_id).toBe(staff.id);
  expect(alpha.assigned_to_name).toBe('Export Staff');
  expect(all.records[1].assigned_to_id).toBe('');
  expect(alpha.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // Every timestamp exactly as the API answers it.
  const detail = (await as(ctx, staff).get(`/api/crm/leads/${alpha.id}`)).json();
  expect([alpha.created_at, alpha.updated_at]).toEqual([detail.created_at, detail.updated_at]);

  const qualified = await exportCsv('/api/crm/leads/export?status=qualified');
  expect(qualified.records.map((r) => r.last_name).sort()).toEqual(['Alpha', 'Gamma']);
  const searched = await exportCsv('/api/crm/leads/export?q=gamm');
  expect(searched.records.map((r) => r.last_name)).toEqual(['Gamma']);
  const empty = await exportCsv('/api/crm/leads/export?status=lost');
  expect(empty.records).toEqual([]);
  expect(empty.header[0]).toBe('id');

  const paged = await as(ctx, staff).get('/api/crm/leads/export?page=2');
  expect(paged.statusCode).toBe(400);
});

test('export streams every row across batches', async () => {
  const { leads } = await import('../src/db/schema/index.js');
  await ctx.database.db.insert(leads).values(Array.from({ length: 2500 }, (_, i) => ({ first_name: `Bulk${i}`, last_name: 'Bulk', email: `bulk${i}@example.com`, source: 'event' as const })));
  const bulk = await exportCsv('/api/crm/leads/export?source=event');
  expect(bulk.records).toHaveLength(2500);
  expect(new Set(bulk.records.map((r) => r.id)).size).toBe(2500);
});

test('reservations, inventory, inquiries and newsletters export', async () => {
  const [project] = await ctx.database.db.insert(projects).values({ name: 'Arcadia Residences', slug: 'arcadia', status: 'active', type: 'residential' }).returning();
  const unit = await make.unit(ctx, { project_id: project.id, block: '3', lot: '12', price: 2500000 }, staff);
  await make.reservation(ctx, { inventory_id: unit.id, client_name: '+Client', email: 'client@example.com' }, staff);
  await make.inquiry(ctx, { name: 'Ina', email: 'ina@example.com', subject: '@home', message: 'Hi' }, staff);
  await make.newsletter(ctx, { email: 'news@example.com', name: 'News' }, staff);

  const reservations = await exportCsv('/api/crm/reservations/export?status=pending');
  expect(reservations.res.headers['content-disposition']).toContain(`reservations-${today()}.csv`);
  expect(reservations.header).toEqual(expect.arrayContaining(['inventory_id', 'inventory_inventory_code', 'created_by_id', 'created_by_name']));
  expect(reservations.records[0].client_name).toBe("'+Client");
  expect(reservations.records[0].inventory_inventory_code).toBe('AR-3-12');

  const inventory = await exportCsv('/api/crm/inventory/export?status=reserved');
  expect(inventory.header).toEqual(expect.arrayContaining(['project_id', 'project_name', 'project_slug', 'inventory_code', 'price']));
  expect(inventory.records.map((r) => r.inventory_code)).toEqual(['AR-3-12']);
  expect(inventory.records[0].price).toBe('2500000');

  const inquiries = await exportCsv('/api/crm/inquiries/export?status=unread');
  expect(inquiries.records[0].subject).toBe("'@home");
  const newsletters = await exportCsv('/api/crm/newsletters/export?status=subscribed');
  expect(newsletters.records.map((r) => r.email)).toEqual(['news@example.com']);
  expect(newsletters.records[0].unsubscribed_at).toBe('');
});

test('users and activity-logs export (iam); permission is can_read of the module', async () => {
  const users = await exportCsv('/api/iam/users/export?sort=email&order=asc');
  expect(users.res.headers['content-disposition']).toContain(`users-${today()}.csv`);
  expect(users.header).toEqual(expect.arrayContaining(['id', 'email', 'name', 'emailVerified', 'department_id', 'department_name', 'createdAt']));
  expect(users.header.join()).not.toMatch(/password/i);
  expect(users.records.find((r) => r.email === staff.email)?.emailVerified).toBe('true');

  const logs = await exportCsv(`/api/iam/activity-logs/export?module=crm&action=create&user_id=${staff.id}`);
  expect(logs.records.length).toBeGreaterThan(0);
  expect(logs.header).toEqual(expect.arrayContaining(['user_id', 'user_name', 'user_email', 'changes']));
  const changes = JSON.parse(logs.records[0].changes);
  expect(changes).toHaveProperty('before');
  expect(changes).toHaveProperty('after');

  const reader = await createUser(ctx, { crm: 'r' });
  expect((await as(ctx, reader).get('/api/crm/leads/export')).statusCode).toBe(200);
  expect((await as(ctx, reader).get('/api/iam/users/export')).statusCode).toBe(403);
  expect((await as(ctx, none).get('/api/crm/leads/export')).statusCode).toBe(401);
});
