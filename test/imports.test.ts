import { parse } from 'csv-parse/sync';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, imports, leads, webhookDeliveries } from '../src/db/schema/index.js';
import { runImport } from '../src/modules/crm/import-engine.js';
import { as, createTestApp, createTestDatabase, createUser, eventually, none, type TestContext } from './helpers.js';
import { make } from './factories.js';

// CSV import: leads, inventory units and newsletter subscribers, in their export's columns.

let ctx: TestContext;
let staff: Awaited<ReturnType<typeof createUser>>;
let reader: Awaited<ReturnType<typeof createUser>>;
const IMPORT_MAX_BYTES = 200_000;
const tag = uuidv7().slice(-8);

beforeAll(async () => {
  ctx = await createTestApp({ IMPORT_MAX_BYTES: String(IMPORT_MAX_BYTES) }, { jobs: true });
  staff = await createUser(ctx, { crm: 'rwd', cms: 'rw' }, { name: 'Ima Porter' });
  reader = await createUser(ctx, { crm: 'r' });
}, 180_000);
afterAll(async () => ctx?.close());

const BOUNDARY = '----pms-import-boundary-3c9a';
function multipart(content: Buffer | string, filename = 'data.csv', field = 'file') {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

type Upload = { dryRun?: boolean; who?: { token: string } | typeof none; filename?: string; field?: string; c?: TestContext };
const upload = (resource: string, content: Buffer | string, options: Upload = {}) =>
  as(options.c ?? ctx, options.who ?? staff, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'user-agent': 'import-test/1.0' } })
    .post(`/api/crm/${resource}/import${options.dryRun ? '?dry_run=true' : ''}`, multipart(content, options.filename, options.field));

/** Uploads a file for import, expects 202, waits for the job to finish and answers the import. */
async function importFile(resource: string, content: string, c: TestContext = ctx) {
  const res = await upload(resource, content, { c });
  expect(res.statusCode, res.body).toBe(202);
  expect(res.json()).toMatchObject({ status: 'queued', id: expect.any(String), message: expect.any(String) });
  return finished(res.json().id, c);
}

async function finished(id: string, c: TestContext = ctx, who: { token: string } = staff) {
  return eventually(async () => {
    const res = await as(c, who).get(`/api/crm/imports/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    return body.status === 'completed' || body.status === 'failed' ? body : undefined;
  }, 'the import to finish', 30_000);
}

const total = async (path: string) => (await as(ctx, staff).get(`${path}${path.includes('?') ? '&' : '?'}limit=1`)).json().pagination.total as number;
const exported = async (path: string) => {
  const res = await as(ctx, staff).get(path);
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
};

describe('round trip: an export re-imports as it is and creates nothing new', () => {
  test('leads, inventory units and subscribers', async () => {
    await make.lead(ctx, { first_name: '=Formula', last_name: `Round${tag}`, email: `round-a-${tag}@example.com`, assigned_to: staff.id, notes: 'two\nlines, "quoted"' }, staff);
    await make.lead(ctx, { first_name: 'Phone', last_name: `Round${tag}`, phone: `+63 917 ${tag}` }, staff);
    const project = await make.project(ctx, { name: `Round Trip ${tag}` }, staff);
    await make.unit(ctx, { project_id: project.id, block: '1', lot: '1', house_model: 'Alder', floor_area: 80.5, price: 2_500_000.75 }, staff);
    await make.unit(ctx, { project_id: project.id, block: '1', lot: '2' }, staff);
    await make.newsletter(ctx, { email: `round-${tag}@example.com`, name: 'Rita' }, staff);

    for (const [resource, path] of [['leads', '/api/crm/leads'], ['inventory', '/api/crm/inventory'], ['newsletters', '/api/crm/newsletters']]) {
      const before = await total(path);
      const csv = await exported(`${path}/export`);
      expect(before).toBeGreaterThan(0);

      const dry = await upload(resource, csv, { dryRun: true });
      expect(dry.statusCode, dry.body).toBe(200);
      expect(dry.json()).toEqual({ total_rows: before, valid_rows: 0, duplicate_rows: before, invalid_rows: 0, errors: [], errors_truncated: false });

      const result = await importFile(resource, csv);
      expect(result).toMatchObject({ resource, status: 'completed', total_rows: before, processed_rows: before, created: 0, skipped: before, failed: 0, errors: [] });
      expect(await total(path)).toBe(before);
    }
  });
});

describe('dry run', () => {
  test('reports the line and column of every bad row, and writes nothing', async () => {
    const dup = `dry-${tag}@example.com`;
    const csv = [
      'first_name,last_name,email,phone,status,assigned_to_id,notes',
      `Ann,Valid,${dup},,new,${staff.id},`, // 2: valid
      'Bob,BadMail,not-an-email,,,,', // 3
      'Cid,NoContact,,,,,', // 4: neither e-mail nor phone
      'Dee,BadStatus,dee@example.com,,hot,,', // 5
      `Eve,Ghost,eve-${tag}@example.com,,,${uuidv7()},`, // 6: no such user
      `Fay,Multi,fay-${tag}@example.com,,,,"a note`, // 7–8: one record over two lines (valid)
      'on two lines"',
      ',NoFirst,x@example.com,,,,', // 9: first_name empty → required
      'Gus,Short,gus@example.com', // 10: too few cells
      `Hal,Twin,${dup.toUpperCase()},,,,`, // 11: same e-mail as line 2 → duplicate
      `Ivy,BadId,ivy-${tag}@example.com,,,not-a-uuid,`, // 12
      '', // blank line: not a row
    ].join('\r\n');
    const leadsBefore = await total('/api/crm/leads');
    const importsBefore = await total('/api/crm/imports');
    const res = await upload('leads', csv, { dryRun: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total_rows: 10, valid_rows: 2, duplicate_rows: 1, invalid_rows: 7, errors_truncated: false });
    const at = (line: number) => body.errors.filter((e: { line: number }) => e.line === line);
    expect(at(3)).toEqual([{ line: 3, field: 'email', message: 'must be a valid e-mail address' }]);
    expect(at(4).map((e: { field: string }) => e.field).sort()).toEqual(['email', 'phone']);
    expect(at(5)).toEqual([{ line: 5, field: 'status', message: 'must be one of: new, contacted, qualified, converted, lost' }]);
    expect(at(6)).toEqual([{ line: 6, field: 'assigned_to_id', message: 'must be an existing user' }]);
    expect(at(7)).toEqual([]);
    expect(at(8)).toEqual([]);
    expect(at(9)).toEqual([{ line: 9, field: 'first_name', message: 'is required' }]);
    expect(at(10)).toEqual([{ line: 10, field: null, message: 'has 3 cells where the header row has 7' }]);
    expect(at(11)).toEqual([]);
    expect(at(12)).toEqual([{ line: 12, field: 'assigned_to_id', message: 'must be a valid uuid' }]);
    // Nothing was written: no lead, no import.
    expect(await total('/api/crm/leads')).toBe(leadsBefore);
    expect(await total('/api/crm/imports')).toBe(importsBefore);
  });

  test('inventory units and subscribers: the create routes\' checks', async () => {
    const project = await make.project(ctx, { name: 'Dry Run Estates' }, staff);
    const units = [
      'project_id,block,lot,price,floor_area,status',
      `${project.id},1,1,1000000,,`, // 2: valid
      `${uuidv7()},1,2,1000000,,`, // 3: no such project
      `${project.id},1,3,cheap,,`, // 4: price not a number
      `${project.id},${'B'.repeat(51)},4,1000,,`, // 5: block too long
      `${project.id},1,5,1e13,,`, // 6: more than the column holds
      `${project.id},1,1,5,,sold`, // 7: same project, block and lot as line 2 → duplicate
      `${project.id},1,6,5,-1,`, // 8: negative area
    ].join('\n');
    const res = await upload('inventory', units, { dryRun: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ total_rows: 7, valid_rows: 1, duplicate_rows: 1, invalid_rows: 5 });
    expect(res.json().errors.map((e: { line: number; field: string }) => [e.line, e.field])).toEqual([[3, 'project_id'], [4, 'price'], [5, 'block'], [6, 'price'], [8, 'floor_area']]);
    expect(res.json().errors[0].message).toBe('must be an existing project');

    const subscribers = ['email,name', 'ok@example.com,Ok', 'nope,Bad', `"ok@EXAMPLE.com",Again`].join('\n');
    const sub = await upload('newsletters', subscribers, { dryRun: true });
    expect(sub.json()).toEqual({
      total_rows: 3, valid_rows: 1, duplicate_rows: 1, invalid_rows: 1, errors_truncated: false,
      errors: [{ line: 3, field: 'email', message: 'must be a valid e-mail address' }],
    });
  });

  test('more than 1,000 errors: the first 1,000 are listed, with errors_truncated', async () => {
    const csv = ['first_name,last_name,email', ...Array.from({ length: 1005 }, (_, i) => `F${i},L${i},bad${i}`)].join('\n');
    const body = (await upload('leads', csv, { dryRun: true })).json();
    expect(body).toMatchObject({ total_rows: 1005, invalid_rows: 1005, errors_truncated: true });
    expect(body.errors).toHaveLength(1000);
    expect(body.errors[999]).toEqual({ line: 1001, field: 'email', message: 'must be a valid e-mail address' });
  });
});

describe('import', () => {
  test('creates the valid rows, audited as the importing user; progress and result are readable', async () => {
    const csv = [
      '\uFEFFfirst_name,last_name,email,phone,source,assigned_to_id,created_at,id',
      `Ana,Imported${tag},ana-${tag}@Example.com,,referral,${staff.id},2020-01-01T00:00:00.000Z,${uuidv7()}`,
      `Ben,Imported${tag},,+63 2 ${tag},,,,`,
      `Cat,Imported${tag},broken,,,,,`,
      `Dan,Imported${tag},dan-${tag}@example.com,,event,,,`,
    ].join('\n');
    const result = await importFile('leads', csv);
    expect(result).toMatchObject({
      resource: 'leads', filename: 'data.csv', status: 'completed', total_rows: 4, processed_rows: 4, created: 3, skipped: 0, failed: 1,
      errors: [{ line: 4, field: 'email', message: 'must be a valid e-mail address' }], errors_truncated: false, failure_reason: null,
      created_by: { id: staff.id, name: 'Ima Porter', email: staff.email },
    });
    expect(Date.parse(result.finished_at)).toBeGreaterThanOrEqual(Date.parse(result.started_at));
    expect(Date.parse(result.started_at)).toBeGreaterThanOrEqual(Date.parse(result.created_at));

    const list = (await as(ctx, staff).get(`/api/crm/leads?q=Imported${tag}&sort=first_name&order=asc`)).json();
    expect(list.data.map((l: { first_name: string }) => l.first_name)).toEqual(['Ana', 'Ben', 'Dan']);
    const ana = list.data[0];
    // As the create route stores it: e-mail lower-case, the reference kept, defaults applied; server columns ignored.
    expect(ana).toMatchObject({ email: `ana-${tag}@example.com`, source: 'referral', status: 'new', assigned_to: { id: staff.id, name: 'Ima Porter' } });
    expect(ana.created_at.startsWith('2020')).toBe(false);

    const logs = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'leads'), inArray(activityLogs.resource_id, list.data.map((l: { id: string }) => l.id))));
    expect(logs).toHaveLength(3);
    for (const log of logs) expect(log).toMatchObject({ action: 'create', module: 'crm', user_id: staff.id, user_agent: 'import-test/1.0', ip_address: '127.0.0.1' });
    expect((logs.find((l) => l.resource_id === ana.id)!.changes as { after: Record<string, unknown> }).after).toMatchObject({ first_name: 'Ana', email: `ana-${tag}@example.com` });
    // The upload itself is one audited create of the import, without the file.
    const [importLog] = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'imports'), eq(activityLogs.resource_id, result.id)));
    expect(importLog).toMatchObject({ action: 'create', user_id: staff.id });
    expect(JSON.stringify(importLog.changes)).not.toContain('Imported');

    // Listed newest first, filtered by resource and status; the list leaves the errors to the detail.
    const imports = (await as(ctx, reader).get('/api/crm/imports?resource=leads&status=completed')).json();
    expect(imports.data[0]).toMatchObject({ id: result.id, created: 3, failed: 1, created_by: { id: staff.id } });
    expect(imports.data[0].errors).toBeUndefined();
    expect((await as(ctx, reader).get('/api/crm/imports?resource=inventory&status=failed')).json().data.map((i: { id: string }) => i.id)).not.toContain(result.id);
    expect((await as(ctx, reader).get('/api/crm/imports?status=done')).statusCode).toBe(400);
    expect((await as(ctx, reader).get(`/api/crm/imports/${uuidv7()}`)).statusCode).toBe(404);

    // Run again: nothing new.
    const again = await importFile('leads', csv);
    expect(again).toMatchObject({ status: 'completed', created: 0, skipped: 3, failed: 1 });
    expect(await total(`/api/crm/leads?q=Imported${tag}`)).toBe(3);
  });

  test('duplicates inside one file (e-mail in any case, or phone) are skipped, across batches too', async () => {
    const rows = [
      `One,Twin${tag},twin-${tag}@example.com,`,
      `Two,Twin${tag},TWIN-${tag}@EXAMPLE.COM,`, // same e-mail
      `Three,Twin${tag},,+1 555 ${tag}`,
      `Four,Twin${tag},other-${tag}@example.com,+1 555 ${tag}`, // same phone as Three
      ...Array.from({ length: 600 }, (_, i) => `Bulk${i},Twin${tag},bulk${i}-${tag}@example.com,`),
      `Late,Twin${tag},bulk3-${tag}@example.com,`, // a duplicate of a row in the previous batch
    ];
    const csv = ['first_name,last_name,email,phone', ...rows].join('\n');
    const dry = (await upload('leads', csv, { dryRun: true })).json();
    expect(dry).toMatchObject({ total_rows: 605, valid_rows: 602, duplicate_rows: 3, invalid_rows: 0 });
    const result = await importFile('leads', csv);
    expect(result).toMatchObject({ status: 'completed', total_rows: 605, processed_rows: 605, created: 602, skipped: 3, failed: 0 });
    expect(await total(`/api/crm/leads?q=Twin${tag}`)).toBe(602);
    const again = await importFile('leads', csv);
    expect(again).toMatchObject({ created: 0, skipped: 605 });
    expect(await total(`/api/crm/leads?q=Twin${tag}`)).toBe(602);
  });

  test('inventory units get their code as the create route derives it; subscribers keep an opt-out', async () => {
    const project = await make.project(ctx, { name: `Arcadia Residences ${tag}` }, staff);
    const taken = await make.unit(ctx, { project_id: project.id, block: '3-1', lot: '2' }, staff);
    const csv = ['project_id,block,lot,price,house_model,inventory_code,project_name', `${project.id},3,12,1500000,Birch,IGNORED,ignored`, `${project.id},3,1-2,1000,,,`, `${project.id},3-1,2,1000,,,`].join('\n');
    const result = await importFile('inventory', csv);
    expect(result).toMatchObject({ status: 'completed', created: 2, skipped: 1, failed: 0 });
    const units = (await as(ctx, staff).get(`/api/crm/inventory?project_id=${project.id}&sort=inventory_code&order=asc`)).json().data;
    const initials = `AR${tag.match(/[a-z0-9]/i)![0].toUpperCase()}`;
    expect(units.map((u: { inventory_code: string }) => u.inventory_code)).toEqual([`${initials}-3-1-2`, `${initials}-3-1-2-2`, `${initials}-3-12`]);
    expect(units.find((u: { id: string }) => u.id === taken.id).inventory_code).toBe(`${initials}-3-1-2`);
    expect(units.find((u: { lot: string }) => u.lot === '12')).toMatchObject({ house_model: 'Birch', price: 1500000, status: 'available' });

    const subscribers = ['email,name,status,subscribed_at', `in-${tag}@example.com,In,subscribed,2020-01-01T00:00:00.000Z`, `out-${tag}@example.com,,unsubscribed,`].join('\n');
    expect(await importFile('newsletters', subscribers)).toMatchObject({ created: 2, skipped: 0 });
    const out = (await as(ctx, staff).get('/api/crm/newsletters?status=unsubscribed&limit=100')).json().data.find((s: { email: string }) => s.email === `out-${tag}@example.com`);
    expect(out).toMatchObject({ status: 'unsubscribed', unsubscribed_at: expect.any(String) });
    // Imported subscribers' consent says so (no confirmation mail goes to them).
    const imported = (await as(ctx, staff).get('/api/crm/newsletters?status=subscribed&limit=100')).json().data.find((s: { email: string }) => s.email === `in-${tag}@example.com`);
    expect(imported.consent).toMatchObject({ method: 'import', ip: null, form: null });
    expect(await importFile('newsletters', subscribers)).toMatchObject({ created: 0, skipped: 2 });
  });
});

describe('webhooks', () => {
  test('every imported record is a webhook event, recorded with its batch', async () => {
    const admin = await createUser(ctx, { iam: 'rwd' });
    const endpoint = await as(ctx, admin).post('/api/iam/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['lead.created'] });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const result = await importFile('leads', `first_name,last_name,email\nHook,One,hook.one.${tag}@example.com\nHook,Two,hook.two.${tag}@example.com\n`);
    expect(result).toMatchObject({ status: 'completed', created: 2 });
    const rows = await ctx.database.db.select({ payload: webhookDeliveries.payload }).from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpoint_id, endpoint.json().id), eq(webhookDeliveries.event_type, 'lead.created')));
    const emails = rows.map((row) => (row.payload as { data: { after: { email: string } } }).data.after.email).sort();
    expect(emails).toEqual([`hook.one.${tag}@example.com`, `hook.two.${tag}@example.com`]);
    expect(rows[0].payload).toMatchObject({ type: 'lead.created', data: { resource: 'leads', id: expect.any(String) } });
    expect((await as(ctx, admin).delete(`/api/iam/webhooks/${endpoint.json().id}`)).statusCode).toBe(200);
  });
});

describe('refusals', () => {
  test('unknown column, missing required column, not CSV, not UTF-8, empty, too large, not multipart', async () => {
    const bad = async (resource: string, content: Buffer | string, dryRun = false) => {
      const res = await upload(resource, content, { dryRun });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe('Validation error');
      return res.json().details.file as string;
    };
    expect(await bad('leads', 'first_name,last_name,email,favourite_colour\nA,B,a@example.com,red')).toContain('unknown column "favourite_colour"');
    expect(await bad('leads', 'first_name,email\nA,a@example.com', true)).toContain('"last_name"');
    expect(await bad('inventory', 'project_id,block,lot\n')).toMatch(/required column "price" is missing/);
    expect(await bad('leads', 'first_name,last_name,notes\nA,B,c')).toMatch(/email.*phone/);
    expect(await bad('newsletters', 'email,email\na@example.com,b@example.com')).toContain('appears twice');
    expect(await bad('leads', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]))).toMatch(/not (UTF-8|a CSV)/);
    expect(await bad('leads', Buffer.from('first_name,last_name,email\n\u0000\u0001,b,c', 'utf8'))).toMatch(/binary/);
    expect(await bad('leads', Buffer.from([0x66, 0xff, 0xfe, 0x0a]))).toMatch(/UTF-8/);
    expect(await bad('leads', '')).toMatch(/empty/);
    expect(await bad('leads', 'first_name,last_name,email\n"unclosed,b,c\n')).toMatch(/line 2: a quoted cell is never closed/);

    const imports = await total('/api/crm/imports');
    const large = await upload('leads', `first_name,last_name,email\n${'x'.repeat(IMPORT_MAX_BYTES)}`);
    expect(large.statusCode).toBe(413);
    expect(large.json()).toEqual({ error: 'Payload too large', message: `The file is larger than the limit of ${IMPORT_MAX_BYTES} bytes` });

    const json = await as(ctx, staff).post('/api/crm/leads/import', { file: 'first_name' });
    expect(json.statusCode).toBe(415);
    expect(json.json().error).toBe('Unsupported media type');
    const wrongField = await upload('leads', 'first_name,last_name,email\n', { field: 'csv' });
    expect(wrongField.json()).toEqual({ error: 'Validation error', details: { file: 'is required' } });
    const query = await as(ctx, staff, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/crm/leads/import?dry_run=maybe', multipart('first_name'));
    expect(query.statusCode).toBe(400);
    expect(query.json().details.dry_run).toBeDefined();
    const unknownParam = await as(ctx, staff, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/crm/leads/import?force=1', multipart('first_name'));
    expect(unknownParam.json().details.force).toBe('is not an allowed field');
    expect(await total('/api/crm/imports')).toBe(imports);
  });

  test('permissions: crm read may follow imports, not start one; signed out is 401', async () => {
    const csv = 'email\nperm@example.com\n';
    expect((await upload('newsletters', csv, { who: reader })).statusCode).toBe(403);
    expect((await upload('newsletters', csv, { who: reader, dryRun: true })).statusCode).toBe(403);
    expect((await upload('newsletters', csv, { who: none })).statusCode).toBe(401);
    expect((await as(ctx, reader).get('/api/crm/imports')).statusCode).toBe(200);
    expect((await as(ctx, none).get('/api/crm/imports')).statusCode).toBe(401);
    const outsider = await createUser(ctx, { cms: 'rw' });
    expect((await as(ctx, outsider).get('/api/crm/imports')).statusCode).toBe(403);
  });
});

test('one import is one write for the rate limit, however many rows it creates', async () => {
  const limited = await createTestApp({ WRITE_RATE_LIMIT: '5' }, { jobs: true });
  try {
    const user = await createUser(limited, { crm: 'rw' });
    const csv = ['first_name,last_name,email', ...Array.from({ length: 40 }, (_, i) => `R${i},Limit,limit${i}-${tag}@example.com`)].join('\n');
    const res = await as(limited, user, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/crm/leads/import', multipart(csv));
    expect(res.statusCode, res.body).toBe(202);
    expect(res.headers['x-ratelimit-remaining']).toBe('4');
    const done = await eventually(async () => {
      const body = (await as(limited, user).get(`/api/crm/imports/${res.json().id}`)).json();
      return body.status === 'completed' ? body : undefined;
    }, 'the import', 30_000);
    expect(done.created).toBe(40);
    const next = await as(limited, user).post('/api/crm/leads', { first_name: 'After', last_name: 'Import', email: `after-${tag}@example.com` });
    expect(next.statusCode).toBe(201);
    expect(next.headers['x-ratelimit-remaining']).toBe('3');
  } finally {
    await limited.close();
  }
}, 180_000);

test('an import interrupted after a committed batch resumes there on restart; one whose file is gone fails with the reason', async () => {
  const database = await createTestDatabase();
  const first = await createTestApp({}, { database, jobs: false });
  let second: TestContext | undefined;
  try {
    const user = await createUser(first, { crm: 'rw' });
    const csv = ['first_name,last_name,email', ...Array.from({ length: 1200 }, (_, i) => `C${i},Crash,crash${i}-${tag}@example.com`)].join('\n');
    const post = () => as(first, user, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/crm/leads/import', multipart(csv));
    const interrupted = (await post()).json().id as string;
    const lost = (await post()).json().id as string;
    // The job queue is off: both wait. One batch of the first runs, as a worker would before it died.
    const sent: unknown[] = [];
    const services = { config: first.config, database, mailer: first.app.mailer, log: first.app.log, jobs: { send: async (_job: unknown, data: unknown) => void sent.push(data) } };
    await runImport(services as never, interrupted, 0);
    expect(sent).toEqual([{ importId: interrupted }]);
    const midway = (await as(first, user).get(`/api/crm/imports/${interrupted}`)).json();
    expect(midway).toMatchObject({ status: 'running', processed_rows: 500, created: 500, total_rows: 1200 });
    await database.db.update(imports).set({ content: null }).where(eq(imports.id, lost));
    await first.app.close();

    // A new instance with the queue on picks both up at start.
    second = await createTestApp({}, { database, jobs: true });
    const reader2 = await createUser(second, { crm: 'r' });
    const resumed = await finished(interrupted, second, reader2);
    expect(resumed).toMatchObject({ status: 'completed', processed_rows: 1200, created: 1200, skipped: 0, failed: 0 });
    const [{ count }] = await database.db.select({ count: sql<number>`count(*)::int` }).from(leads).where(eq(leads.last_name, 'Crash'));
    expect(count).toBe(1200);
    const failed = await finished(lost, second, reader2);
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'the file is no longer stored', created: 0 });
  } finally {
    await second?.close();
    await first.close().catch(() => undefined);
    await database.close();
  }
}, 180_000);
