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
  // Both orders, by the default sort and by another one, on the range path and the row-by-row one (a nullable sort).
  const ids = [...bulk.records.map((r) => r.id)];
  expect((await exportCsv('/api/crm/leads/export?source=event&order=asc')).records.map((r) => r.id)).toEqual(ids.reverse());
  const byName = await exportCsv('/api/crm/leads/export?source=event&sort=first_name&order=asc');
  expect(byName.records.map((r) => r.first_name)).toEqual(bulk.records.map((r) => r.first_name).sort());
});

test('an export while leads are written and deleted holds every row that was there throughout, once', async () => {
  const { leads } = await import('../src/db/schema/index.js');
  const stayed = await ctx.database.db.insert(leads).values(Array.from({ length: 4500 }, (_, i) => ({ first_name: `Stay${i}`, last_name: 'Busy', email: `stay${i}@example.com`, source: 'social' as const })))
    .returning({ id: leads.id });
  const doomed = await ctx.database.db.insert(leads).values(Array.from({ length: 300 }, (_, i) => ({ first_name: `Doomed${i}`, last_name: 'Busy', source: 'social' as const })))
    .returning({ id: leads.id });
  const writes = (async () => {
    for (let i = 0; i < 40; i++) {
      await ctx.database.db.insert(leads).values(Array.from({ length: 50 }, (_, j) => ({ first_name: `New${i}-${j}`, last_name: 'Busy', source: 'social' as const })));
      await ctx.database.execute('delete from leads where id = $1', [doomed[i].id]);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const [csv] = await Promise.all([exportCsv('/api/crm/leads/export?source=social'), writes]);
  const seen = csv.records.map((r) => r.id);
  expect(new Set(seen).size).toBe(seen.length);
  const exported = new Set(seen);
  expect(stayed.filter((row) => !exported.has(row.id))).toEqual([]);
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

test('records formatted by PostgreSQL are byte for byte those of the JavaScript formatter (every text hazard, numbers, nulls)', async () => {
  const { record } = await import('../src/data/export.js');
  const hazards = ['=1+2', '+63 917', '-5', '@home', '\tTabbed', '\rReturn', 'comma, inside', 'quote " inside', 'line\nbreak', 'crlf\r\nend',
    '=danger, "and" quoted', 'plain', 'ünïcödé ✓', "'already quoted", ' leading space'];
  const ids: string[] = [];
  for (const [i, text] of hazards.entries()) {
    ids.push((await make.lead(ctx, { first_name: text, last_name: `Hazard${String(i).padStart(2, '0')}`, notes: i % 2 ? text : null, email: `hazard${i}@example.com` }, staff)).id);
  }
  const res = await as(ctx, staff).get('/api/crm/leads/export?q=Hazard&sort=last_name&order=asc');
  expect(res.statusCode).toBe(200);
  const expected = [];
  for (const id of ids) {
    const lead = (await as(ctx, staff).get(`/api/crm/leads/${id}`)).json();
    expected.push(record([lead.id, lead.first_name, lead.last_name, lead.email, lead.phone, lead.source, lead.status, lead.interest, lead.notes,
      lead.assigned_to?.id ?? null, lead.assigned_to?.name ?? null, lead.created_at, lead.updated_at]));
  }
  expect(res.body.split('\n')[0]).toBe('id,first_name,last_name,email,phone,source,status,interest,notes,assigned_to_id,assigned_to_name,created_at,updated_at');
  expect(res.body.slice(res.body.indexOf('\n') + 1)).toBe(expected.join(''));

  // Decimals and booleans too (inventory: price, areas).
  const project = await make.project(ctx, {}, await createUser(ctx, { cms: 'rw' }));
  const unit = (await as(ctx, staff).post('/api/crm/inventory', { project_id: project.id, block: 'Z9', lot: '1', price: 1234567.5, floor_area: 80.25, house_model: '=Model, "A"' })).json();
  const csv = parse((await as(ctx, staff).get('/api/crm/inventory/export')).body) as string[][];
  const row = Object.fromEntries(csv[0].map((h, i) => [h, csv.find((r) => r[0] === unit.id)![i]]));
  expect(row).toMatchObject({ price: '1234567.5', floor_area: '80.25', lot_area: '', house_model: "'=Model, \"A\"" });
});

// PostgreSQL writes the records with COPY in ranges of 50,000 rows (src/data/export.ts); PGlite has no COPY stream.
test.runIf(!!process.env.DATABASE_URL)('PostgreSQL: COPY ranges carry every row once in order, values as literals, and an abandoned export frees its connection', async () => {
  const { leads } = await import('../src/db/schema/index.js');
  const { exportColumns, exportCsv: exportRecords } = await import('../src/data/export.js');
  const { leadResource } = await import('../src/modules/crm/lead-resource.js');
  // Two ranges and a tail, with created_at ties across the range boundary (the id breaks them).
  const early = new Date('2026-01-01T00:00:00.123Z');
  const late = new Date('2026-02-01T00:00:00.000Z');
  for (let i = 0; i < 51_000; i += 5_000) {
    await ctx.database.db.insert(leads).values(Array.from({ length: Math.min(5_000, 51_000 - i) }, (_, j) => ({
      first_name: `Range${i + j}`, last_name: "O'Brien\\", source: 'referral' as const, created_at: (i + j) % 2 ? early : late, updated_at: late })));
  }
  const { rows } = await ctx.database.execute(`select id::text from leads where source = 'referral' order by created_at desc, id desc`);
  const all = await exportCsv('/api/crm/leads/export?source=referral');
  expect(all.records.map((r) => r.id)).toEqual(rows.map((r) => r.id));
  expect(all.records[0]).toMatchObject({ last_name: "O'Brien\\", created_at: '2026-02-01T00:00:00.000Z' });
  expect(all.records.at(-1)).toMatchObject({ created_at: '2026-01-01T00:00:00.123Z' });
  // The user's own text (quote, backslash) reaches COPY as a literal and matches as a parameter would.
  const ascending = await exportCsv(`/api/crm/leads/export?source=referral&order=asc&q=${encodeURIComponent("o'brien\\")}`);
  expect(ascending.records.map((r) => r.id)).toEqual(rows.map((r) => r.id).reverse());

  // Abandoned after its first chunk, more times than the pool has connections: each COPY's connection is closed.
  const columns = exportColumns(leadResource.listView ?? leadResource.view);
  for (let i = 0; i < 12; i++) {
    const records = exportRecords(ctx.database.db, leadResource, columns, {}, { copyBinary: ctx.database.copyBinary });
    expect(String((await records.next()).value)).toMatch(/^[0-9a-f-]{36},/);
    await records.return(undefined);
  }
  expect((await ctx.database.execute('select count(*)::int as n from leads')).rows[0].n).toBeGreaterThan(51_000);
  expect(ctx.database.pool!().waiting).toBe(0);
}, 60_000);

test('an empty text is an empty cell, as null is (COPY would write it "")', async () => {
  const { leads } = await import('../src/db/schema/index.js');
  const [lead] = await ctx.database.db.insert(leads).values({ first_name: 'Empty', last_name: 'Cells', interest: '', notes: '', email: null, source: 'event' })
    .returning({ id: leads.id });
  const res = await as(ctx, staff).get('/api/crm/leads/export?q=Cells&sort=last_name');
  const line = res.body.split('\n').find((l) => l.startsWith(lead.id))!;
  expect(line.split(',').slice(1, 9)).toEqual(['Empty', 'Cells', '', '', 'event', 'new', '', '']);
});
