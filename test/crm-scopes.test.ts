import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, inquiries, leads, reservations } from '../src/db/schema/index.js';
import { adminOf, make } from './factories.js';
import { as, createTestApp, createUser, none, type Reply, resolvedOpenapi, type TestContext } from './helpers.js';

/**
 * CRM record scopes: who sees which leads, reservations and inquiries. Every crm route of the
 * OpenAPI document is either in the matrix below (each scope × a record inside and outside it) or allowed out of it
 * with its reason, so a new route cannot escape.
 */

type User = Awaited<ReturnType<typeof createUser>>;
type Scope = 'all' | 'department' | 'own';
type Kind = 'leads' | 'reservations' | 'inquiries' | 'activities' | 'tasks';
/** The resources of this item (their routes are checked one by one); activities and tasks are checked generically. */
type Core = 'leads' | 'reservations' | 'inquiries';

let ctx: TestContext;
let admin: User;
/** The three viewers: `all` (no department), `department` and `own` (both in department A). */
const viewer = {} as Record<Scope, User>;
/** Creates records for the department viewer (department A, scope all). */
let colleague: User;
/** Department B: outside every scoped viewer. */
let stranger: User;
/** Signed in, no crm permission. */
let outsider: User;
let departmentA: string;
let departmentB: string;

const SCOPES: Scope[] = ['all', 'department', 'own'];
const MARK = 'Zqscope';

/** A record of the matrix and the users it belongs to (its assignee, its creator, its responder). */
type Made = { id: string; owners: string[] };

async function setScope(user: { id: string }, scope: Scope) {
  const rows = (await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json().data as { id: string; module: string; scope: string }[];
  const row = rows.find((r) => r.module === 'crm')!;
  const res = await as(ctx, admin).patch(`/api/iam/module-access/${row.id}`, { scope });
  expect(res.statusCode, res.body).toBe(200);
}

async function setDepartment(user: { id: string }, department: string | null) {
  const res = await as(ctx, admin).patch(`/api/iam/users/${user.id}`, { department_id: department });
  expect(res.statusCode, res.body).toBe(200);
}

/** The users whose records a viewer sees now (undefined: every record), as the rule says. */
function membersOf(scope: Scope): string[] | undefined {
  if (scope === 'all') return undefined;
  if (scope === 'own') return [viewer.own.id];
  return [viewer.department.id, viewer.own.id, colleague.id];
}
const sees = (scope: Scope, record: Made) => {
  const members = membersOf(scope);
  return !members || record.owners.some((owner) => members.includes(owner));
};

const lead = async (by: User, overrides: Record<string, unknown> = {}): Promise<Made> => {
  const made = await make.lead(ctx, { last_name: `${MARK} ${Math.random().toString(36).slice(2, 8)}`, ...overrides }, by);
  return { id: made.id, owners: [by.id, ...(typeof overrides.assigned_to === 'string' ? [overrides.assigned_to] : [])] };
};
const reservation = async (by: User): Promise<Made> => {
  const unit = await make.unit(ctx);
  const made = await make.reservation(ctx, { inventory_id: unit.id, client_name: `${MARK} client` }, by);
  return { id: made.id, owners: [by.id] };
};
const inquiry = async (by: User): Promise<Made> => {
  const made = await make.inquiry(ctx, { name: `${MARK} inquirer` }, by);
  return { id: made.id, owners: [by.id] };
};

/** Every record of the matrix, by resource. */
const records: Record<Kind, Made[]> = { leads: [], reservations: [], inquiries: [], activities: [], tasks: [] };
const PATCHES: Record<Kind, Record<string, unknown>> = {
  leads: { notes: 'touched' }, reservations: { notes: 'touched' }, inquiries: { status: 'read' }, activities: { body: 'edited' }, tasks: { notes: 'touched' },
};
/** A note on a lead, by `by` (an administrator's: its author is in no department, so it is seen with its lead). */
const activity = async (on: Made, by: User): Promise<Made> => {
  const res = await as(ctx, by).post(`/api/crm/leads/${on.id}/activities`, { kind: 'note', body: `${MARK} note` });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().id, owners: [...on.owners, by.id] };
};
const task = async (by: User): Promise<Made> => {
  const res = await as(ctx, by).post('/api/crm/tasks', { title: `${MARK} call back`, due_at: '2030-01-01T09:00:00Z' });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().id, owners: [by.id] };
};

beforeAll(async () => {
  ctx = await createTestApp({ SLOW_PAGE_MS: '0' });
  admin = await adminOf(ctx);
  departmentA = (await make.department(ctx)).id;
  departmentB = (await make.department(ctx)).id;
  for (const scope of SCOPES) viewer[scope] = await createUser(ctx, { crm: 'rwd' }, { name: `Viewer ${scope}` });
  colleague = await createUser(ctx, { crm: 'rwd' }, { name: 'Colleague' });
  stranger = await createUser(ctx, { crm: 'rwd' }, { name: 'Stranger' });
  outsider = await createUser(ctx, { cms: 'r' }, { name: 'Outsider' });
  for (const user of [viewer.department, viewer.own, colleague]) await setDepartment(user, departmentA);
  await setDepartment(stranger, departmentB);
  await setScope(viewer.department, 'department');
  await setScope(viewer.own, 'own');

  // Leads: the own viewer's, one assigned to them by a stranger, a colleague's, a stranger's, an administrator's.
  records.leads.push(await lead(viewer.own), await lead(stranger, { assigned_to: viewer.own.id }), await lead(colleague), await lead(stranger), await lead(admin));
  records.reservations.push(await reservation(viewer.own), await reservation(colleague), await reservation(stranger));
  records.inquiries.push(await inquiry(viewer.own), await inquiry(colleague), await inquiry(stranger));
  // From the public website: nobody's.
  const site = await as(ctx, none).post('/api/public/inquiries', { name: `${MARK} visitor`, email: 'visitor@example.com', subject: 'Price', message: 'How much?' });
  expect(site.statusCode, site.body).toBe(201);
  records.inquiries.push({ id: site.json().id, owners: [] });
  for (const on of records.leads) records.activities.push(await activity(on, admin));
  records.tasks.push(await task(viewer.own), await task(colleague), await task(stranger));
}, 180_000);
afterAll(async () => ctx?.close());

const insideOf = (kind: Kind, scope: Scope) => records[kind].filter((record) => sees(scope, record));
const outsideOf = (kind: Kind, scope: Scope) => records[kind].filter((record) => !sees(scope, record));
const ids = (made: Made[]) => made.map((record) => record.id).sort();

/** The ids of a CSV export (the first column). */
const exportedIds = (res: Reply) => res.body.trim().split(/\r?\n/).slice(1).map((line) => line.split(',')[0]).sort();

describe('the matrix: every crm route × (all, department, own) × (inside, outside)', () => {
  const BASES: Record<string, Core> = { '/api/crm/leads': 'leads', '/api/crm/reservations': 'reservations', '/api/crm/inquiries': 'inquiries' };
  /** Routes where record scopes do not apply, each with its reason. */
  const ALLOWED: [RegExp, string][] = [
    [/^\/api\/crm\/inventory(\/|$)/, 'inventory units are the company\'s stock, not anyone\'s record: every crm reader sees the availability'],
    [/^\/api\/projects\/inventory$/, 'the unit status update of SPEC.md: stock, not an owned record'],
    [/^\/api\/crm\/newsletters(\/|$)/, 'newsletter subscribers are the marketing list, shared by the whole team'],
    [/^\/api\/crm\/campaigns(\/|$)/, 'campaigns are sent to the shared list: team-wide'],
    [/^\/api\/crm\/(inventory|newsletters)\/import$/, 'imports of stock and of the shared list'],
    [/^\/api\/crm\/lead-flow\//, 'lead-flow settings (groups, rules, action plans) are the team\'s configuration, not anyone\'s record: every crm reader reads them'],
    [/^\/api\/crm\/my-day$/, 'the caller\'s own day: each of its lists is read with their record scope (test/my-day.test.ts)'],
    [/^\/api\/crm\/privacy-requests(\/|$)/, 'privacy requests refuse every caller whose record scope is not all (403 with the reason): an export or erase must reach every record (test/privacy.test.ts)'],
  ];
  /** Routes of the scoped resources and how each is checked. */
  const CHECKED = new Map<string, string>([
    ['GET /api/crm/leads', 'list'], ['GET /api/crm/reservations', 'list'], ['GET /api/crm/inquiries', 'list'],
    ['GET /api/crm/leads/export', 'export'], ['GET /api/crm/reservations/export', 'export'], ['GET /api/crm/inquiries/export', 'export'],
    ['GET /api/crm/leads/{id}', 'detail'], ['GET /api/crm/reservations/{id}', 'detail'], ['GET /api/crm/inquiries/{id}', 'detail'],
    ['GET /api/crm/leads/{id}/history', 'history'], ['GET /api/crm/reservations/{id}/history', 'history'], ['GET /api/crm/inquiries/{id}/history', 'history'],
    ['PATCH /api/crm/leads/{id}', 'patch'], ['PATCH /api/crm/reservations/{id}', 'patch'], ['PATCH /api/crm/inquiries/{id}', 'patch'],
    ['DELETE /api/crm/leads/{id}', 'delete'], ['DELETE /api/crm/reservations/{id}', 'delete'], ['DELETE /api/crm/inquiries/{id}', 'delete'],
    ['POST /api/crm/leads', 'create'], ['POST /api/crm/reservations', 'create'], ['POST /api/crm/inquiries', 'create'], ['POST /api/crm/tasks', 'create'],
    ['GET /api/crm/trash', 'trash'], ['POST /api/crm/trash/{log_id}/restore', 'trash'],
    ['POST /api/crm/leads/import', 'duplicates'],
    ['GET /api/crm/stats', 'stats'],
    // Figures of the reader's scope: test/crm-reports.test.ts.
    ...['funnel', 'speed-to-lead', 'agent-activity', 'projects'].flatMap((name) => [[`GET /api/crm/reports/${name}`, 'reports'], [`GET /api/crm/reports/${name}/export`, 'reports']] as [string, string][]),
    // Scoped by their uploader: test/crm-scope-reach.test.ts.
    ['GET /api/crm/imports', 'imports'], ['GET /api/crm/imports/{id}', 'imports'], ['GET /api/crm/imports/{id}/history', 'imports'],
    // A run of a plan on a lead, read through its lead's scope: test/lead-flow-plans.test.ts.
    ['POST /api/crm/leads/{id}/plans/{runId}/stop', 'running plans'],
  ]);
  /**
   * Other routes under a scoped record (`{id}` names a lead, reservation, inquiry, activity or task): outside the
   * caller's scope 404 exactly; inside anything but 404 (other rules may still refuse: only an activity's author edits it).
   * The body each sends (none: `{}`), and its query.
   */
  const BY_ID: Record<string, { body?: unknown; query?: string }> = {
    'POST /api/crm/leads/{id}/activities': { body: { kind: 'note', body: 'from the matrix' } },
    'POST /api/crm/inquiries/{id}/convert': { body: {}, query: '' },
    // A plan that does not exist: inside, 400 naming it (after the lead was found).
    'POST /api/crm/leads/{id}/plans': { body: { plan_id: '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d' } },
  };
  /** Collections of a lead's activities and follow-ups: their lists and exports hold no outside record. */
  const OTHER_BASES: Record<string, Kind> = { '/api/crm/activities': 'activities', '/api/crm/tasks': 'tasks' };
  let routes: { method: string; path: string }[] = [];
  const kindOf = (path: string) => Object.entries({ ...BASES, ...OTHER_BASES }).find(([base]) => path.startsWith(`${base}/{id}`))?.[1];
  const generic = (method: string, path: string) => !CHECKED.has(`${method} ${path}`) && kindOf(path) !== undefined;
  const collection = (method: string, path: string) => method === 'GET' && Object.keys(OTHER_BASES).some((base) => path === base || path === `${base}/export`);

  beforeAll(async () => {
    const document = await resolvedOpenapi(ctx);
    routes = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => /^\/api\/(crm\/|projects\/inventory)/.test(path))
      .flatMap(([path, operations]) => Object.keys(operations).filter((m) => ['get', 'post', 'patch', 'put', 'delete'].includes(m)).map((m) => ({ method: m.toUpperCase(), path })));
  });

  test('every crm route of the OpenAPI document is checked by the matrix or allowed out of it with a reason', () => {
    expect(routes.length).toBeGreaterThan(20);
    const unclassified = routes.filter(({ method, path }) => !CHECKED.has(`${method} ${path}`) && !generic(method, path) && !collection(method, path)
      && !ALLOWED.some(([pattern]) => pattern.test(path)));
    expect(unclassified, 'routes neither in the scope matrix nor allowed with a reason').toEqual([]);
    // Every checked route exists (a renamed route does not silently leave the matrix).
    for (const key of CHECKED.keys()) expect(routes.map(({ method, path }) => `${method} ${path}`)).toContain(key);
    for (const [, reason] of ALLOWED) expect(reason.length).toBeGreaterThan(20);
  });

  test('403 without the crm permission, before any lookup, on every crm route', async () => {
    const id = records.leads[0].id;
    for (const { method, path } of routes) {
      const res = await as(ctx, outsider).request(method as 'GET', path.replace('{id}', id), method === 'GET' || method === 'DELETE' ? undefined : {});
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.json()).toEqual({ error: 'Insufficient permissions' });
    }
  });

  test.each(SCOPES)('every other route under a record: outside 404, inside not 404 (%s)', async (scope) => {
    const checked = routes.filter(({ method, path }) => generic(method, path));
    expect(checked.length).toBeGreaterThan(0);
    for (const { method, path } of checked) {
      const kind = kindOf(path)!;
      // A delete takes records of its own (the others stay for the rest of the matrix).
      const made = method !== 'DELETE' ? records[kind]
        : kind === 'activities' ? [await activity(records.leads[0], admin), await activity(records.leads[3], admin)]
        : kind === 'tasks' ? [await task(viewer.own), await task(colleague), await task(stranger)]
        : [];
      expect(made.length, `${method} ${path}: no records to check it with`).toBeGreaterThan(0);
      for (const record of made) {
        const [log] = await ctx.database.db.select({ id: activityLogs.id }).from(activityLogs).where(eq(activityLogs.resource_id, record.id));
        const { body = method === 'PATCH' ? PATCHES[kind] : {}, query = '?dry_run=true' } = BY_ID[`${method} ${path}`] ?? {};
        const url = path.replace('{id}', record.id).replace('{log_id}', log?.id ?? randomUUID()) + (path.includes('{log_id}') ? query : '');
        const res = await as(ctx, viewer[scope]).request(method as 'GET', url, method === 'GET' || method === 'DELETE' ? undefined : body);
        if (sees(scope, record)) expect(res.statusCode, `${scope} ${method} ${path} inside: ${res.body}`).not.toBe(404);
        else expect(res.statusCode, `${scope} ${method} ${path} outside`).toBe(404);
      }
    }
  });

  test.each(SCOPES)('lists and exports of activities and follow-ups hold every record inside and none outside (%s)', async (scope) => {
    for (const [base, kind] of Object.entries(OTHER_BASES)) {
      const listed = (await as(ctx, viewer[scope]).get(`${base}?limit=100`)).json();
      const csv = await as(ctx, viewer[scope]).get(`${base}/export`);
      expect(csv.statusCode).toBe(200);
      for (const record of records[kind]) {
        const inside = sees(scope, record);
        expect(listed.data.some((row: { id: string }) => row.id === record.id), `${scope} ${base} ${inside}`).toBe(inside);
        expect(exportedIds(csv).includes(record.id), `${scope} ${base}/export ${inside}`).toBe(inside);
      }
      expect(listed.pagination.total).toBe(listed.data.length);
    }
  });

  test.each(SCOPES)('lists and their exact totals, q, and exports (%s)', async (scope) => {
    for (const [base, kind] of Object.entries(BASES)) {
      // The matrix's records inside, none outside (other tests' records, such as leads converted from inquiries, may match too).
      const known = new Set(ids(records[kind]));
      const expected = ids(insideOf(kind, scope));
      const page = await as(ctx, viewer[scope]).get(`${base}?q=${MARK}&limit=100`);
      expect(page.statusCode, page.body).toBe(200);
      const listed = page.json().data.map((row: { id: string }) => row.id).sort() as string[];
      expect(listed.filter((id) => known.has(id)), `${scope} ${base}`).toEqual(expected);
      expect(page.json().pagination.total, `${scope} ${base} total`).toBe(listed.length);
      // The same page again (kept: SLOW_PAGE_MS=0) and page 2 of 1-row pages: the rows and totals stay this scope's.
      const again = await as(ctx, viewer[scope]).get(`${base}?q=${MARK}&limit=100`);
      expect(again.json().data.map((row: { id: string }) => row.id).sort()).toEqual(listed);
      const small = await as(ctx, viewer[scope]).get(`${base}?q=${MARK}&limit=1&page=2`);
      expect(small.json().pagination.total).toBe(listed.length);
      const csv = await as(ctx, viewer[scope]).get(`${base}/export?q=${MARK}`);
      expect(csv.statusCode).toBe(200);
      expect(exportedIds(csv), `${scope} ${base}/export`).toEqual(listed);
      // Outside records are not found by a search that names them either.
      for (const outside of outsideOf(kind, scope)) {
        const [row] = await ctx.database.db.select().from(kind === 'leads' ? leads : kind === 'reservations' ? reservations : inquiries).where(eq((kind === 'leads' ? leads : kind === 'reservations' ? reservations : inquiries).id, outside.id));
        const q = encodeURIComponent(String((row as { email?: string | null }).email ?? ''));
        if (!q) continue;
        const found = await as(ctx, viewer[scope]).get(`${base}?q=${q}`);
        expect(found.json().data.map((r: { id: string }) => r.id)).not.toContain(outside.id);
      }
    }
  });

  test.each(SCOPES)('unfiltered totals count exactly the records in scope, whatever else exists (%s)', async (scope) => {
    const members = membersOf(scope);
    const owned = (owners: (string | null)[]) => !members || owners.some((owner) => owner !== null && members.includes(owner));
    const allLeads = await ctx.database.db.select({ a: leads.assigned_to, c: leads.created_by }).from(leads);
    const allReservations = await ctx.database.db.select({ c: reservations.created_by }).from(reservations);
    const allInquiries = await ctx.database.db.select({ c: inquiries.created_by, r: inquiries.responded_by }).from(inquiries);
    const expected = {
      leads: allLeads.filter((r) => owned([r.a, r.c])).length,
      reservations: allReservations.filter((r) => owned([r.c])).length,
      inquiries: allInquiries.filter((r) => owned([r.c, r.r])).length,
    };
    for (const [base, kind] of Object.entries(BASES)) {
      expect((await as(ctx, viewer[scope]).get(base)).json().pagination.total, `${scope} ${base}`).toBe(expected[kind]);
    }
    const stats = (await as(ctx, viewer[scope]).get('/api/crm/stats')).json();
    const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
    expect(stats.leads.total).toBe(expected.leads);
    expect(sum(stats.leads.by_status)).toBe(expected.leads);
    expect(sum(stats.leads.by_source)).toBe(expected.leads);
    expect(sum(stats.leads.new_per_day.map((d: { count: number }) => d.count))).toBe(expected.leads);
    expect(sum(stats.reservations.by_status)).toBe(expected.reservations);
    expect(sum(stats.inquiries.by_status)).toBe(expected.inquiries);
    if (scope !== 'all') expect(expected.leads).toBeLessThan(allLeads.length);
  });

  test.each(SCOPES)('details and history: inside 200, outside 404 as for a missing record (%s)', async (scope) => {
    for (const [base, kind] of Object.entries(BASES)) {
      for (const record of records[kind]) {
        const inside = sees(scope, record);
        const detail = await as(ctx, viewer[scope]).get(`${base}/${record.id}`);
        expect(detail.statusCode, `${scope} GET ${base}/:id`).toBe(inside ? 200 : 404);
        // Exactly the answer for a record that does not exist: nothing tells it is there.
        if (!inside) expect(detail.json()).toEqual((await as(ctx, viewer[scope]).get(`${base}/${randomUUID()}`)).json());
        const history = await as(ctx, viewer[scope]).get(`${base}/${record.id}/history`);
        expect(history.statusCode, `${scope} GET ${base}/:id/history`).toBe(inside ? 200 : 404);
        if (inside) expect(history.json().pagination.total).toBeGreaterThan(0);
      }
    }
  });

  test.each(SCOPES)('PATCH outside 404 and nothing changed or logged; inside 200 (%s)', async (scope) => {
    for (const [base, kind] of Object.entries(BASES)) {
      for (const record of records[kind]) {
        const before = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, kind), eq(activityLogs.resource_id, record.id)));
        const res = await as(ctx, viewer[scope]).patch(`${base}/${record.id}`, PATCHES[kind]);
        const inside = sees(scope, record);
        expect(res.statusCode, `${scope} PATCH ${base}/:id ${res.body}`).toBe(inside ? 200 : 404);
        if (!inside) {
          const after = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, kind), eq(activityLogs.resource_id, record.id)));
          expect(after.length).toBe(before.length);
        }
      }
    }
  });

  test.each(SCOPES)('DELETE outside 404 and kept; inside 200 (%s)', async (scope) => {
    // Records of their own for this test: the matrix's stay for the others.
    const made: Record<Core, Made[]> = {
      leads: [await lead(colleague), await lead(stranger), await lead(viewer.own)],
      reservations: [await reservation(colleague), await reservation(stranger)],
      inquiries: [await inquiry(colleague), await inquiry(stranger)],
    };
    for (const [base, kind] of Object.entries(BASES)) {
      for (const record of made[kind]) {
        const inside = sees(scope, record);
        const res = await as(ctx, viewer[scope]).delete(`${base}/${record.id}`);
        expect(res.statusCode, `${scope} DELETE ${base}/:id`).toBe(inside ? 200 : 404);
        expect((await as(ctx, admin).get(`${base}/${record.id}`)).statusCode).toBe(inside ? 404 : 200);
      }
    }
  });

  test.each(SCOPES)('what a user creates is theirs: created_by is the caller, and they see it (%s)', async (scope) => {
    const user = viewer[scope];
    const made = { leads: await lead(user), reservations: await reservation(user), inquiries: await inquiry(user) };
    const tables = { leads, reservations, inquiries };
    const theirs = await task(user);
    expect((await as(ctx, user).get(`/api/crm/tasks/${theirs.id}`)).statusCode).toBe(200);
    for (const [base, kind] of Object.entries(BASES)) {
      expect((await as(ctx, user).get(`${base}/${made[kind].id}`)).statusCode).toBe(200);
      const [row] = await ctx.database.db.select({ created_by: tables[kind].created_by }).from(tables[kind]).where(eq(tables[kind].id, made[kind].id));
      expect(row.created_by).toBe(user.id);
    }
  });

  test.each(SCOPES)('the trash lists and restores only records in scope (%s)', async (scope) => {
    const deleted = [await lead(viewer.own), await lead(colleague), await lead(stranger)];
    const entries: string[] = [];
    for (const record of deleted) {
      expect((await as(ctx, admin).delete(`/api/crm/leads/${record.id}`)).statusCode).toBe(200);
      const [log] = await ctx.database.db.select({ id: activityLogs.id }).from(activityLogs)
        .where(and(eq(activityLogs.resource, 'leads'), eq(activityLogs.resource_id, record.id), eq(activityLogs.action, 'delete')));
      entries.push(log.id);
    }
    const listed = (await as(ctx, viewer[scope]).get('/api/crm/trash?limit=100')).json();
    expect(listed.pagination.total).toBe(listed.data.length);
    for (const [i, record] of deleted.entries()) {
      const inside = sees(scope, record);
      expect(listed.data.some((entry: { record_id: string }) => entry.record_id === record.id), `${scope} trash ${inside}`).toBe(inside);
      const restored = await as(ctx, viewer[scope]).post(`/api/crm/trash/${entries[i]}/restore`);
      expect(restored.statusCode, `${scope} restore ${inside}: ${restored.body}`).toBe(inside ? 200 : 404);
    }
  });

  test.each(SCOPES)('the import dry run counts duplicates among every lead, and names none (%s)', async (scope) => {
    const outside = records.leads.find((record) => !sees('own', record))!;
    const [row] = await ctx.database.db.select({ phone: leads.phone }).from(leads).where(eq(leads.id, outside.id));
    const BOUNDARY = '----crm-scopes-boundary';
    const csv = `first_name,last_name,phone\nAna,Cruz,${row.phone}\nBen,Diaz,+63 917 555 0101\n`;
    const body = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="leads.csv"\r\nContent-Type: text/csv\r\n\r\n${csv}\r\n--${BOUNDARY}--\r\n`);
    const res = await as(ctx, viewer[scope], { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/crm/leads/import?dry_run=true', body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ total_rows: 2, valid_rows: 1, duplicate_rows: 1, invalid_rows: 0, errors: [], errors_truncated: false });
    expect(res.body).not.toContain(outside.id);
  });
});

describe('scopes change what is seen at once, and totals stay exact per scope', () => {
  const total = async (user: User, query = '') => (await as(ctx, user).get(`/api/crm/leads?limit=1${query}`)).json().pagination.total as number;

  test('a colleague who joins or leaves the department takes their records with them, from the next request', async () => {
    const mover = await createUser(ctx, { crm: 'rw' }, { name: 'Mover' });
    await setDepartment(mover, departmentB);
    const theirs = await lead(mover);
    const before = { department: await total(viewer.department), own: await total(viewer.own), all: await total(viewer.all) };
    expect((await as(ctx, viewer.department).get(`/api/crm/leads/${theirs.id}`)).statusCode).toBe(404);

    await setDepartment(mover, departmentA);
    expect(await total(viewer.department)).toBe(before.department + 1);
    expect((await as(ctx, viewer.department).get(`/api/crm/leads/${theirs.id}`)).statusCode).toBe(200);
    expect(await total(viewer.own)).toBe(before.own);
    expect(await total(viewer.all)).toBe(before.all);

    await setDepartment(mover, null);
    expect(await total(viewer.department)).toBe(before.department);
    expect((await as(ctx, viewer.department).get(`/api/crm/leads/${theirs.id}`)).statusCode).toBe(404);
  });

  test('cached totals and kept pages move with each scope\'s own changes', async () => {
    const search = `&q=${MARK}`;
    const before = { all: await total(viewer.all, search), department: await total(viewer.department, search), own: await total(viewer.own, search) };
    // A stranger's lead handed to the own viewer: in every scope now.
    const handed = await lead(stranger);
    expect(await total(viewer.all, search)).toBe(before.all + 1);
    expect(await total(viewer.department, search)).toBe(before.department);
    expect(await total(viewer.own, search)).toBe(before.own);
    expect((await as(ctx, stranger).patch(`/api/crm/leads/${handed.id}`, { assigned_to: viewer.own.id })).statusCode).toBe(200);
    expect(await total(viewer.all, search)).toBe(before.all + 1);
    expect(await total(viewer.department, search)).toBe(before.department + 1);
    expect(await total(viewer.own, search)).toBe(before.own + 1);
    const page = (await as(ctx, viewer.own).get(`/api/crm/leads?limit=100${search}`)).json();
    expect(page.data.map((row: { id: string }) => row.id)).toContain(handed.id);
    // Taken back: gone from the own and department views, their kept pages too.
    expect((await as(ctx, stranger).patch(`/api/crm/leads/${handed.id}`, { assigned_to: null })).statusCode).toBe(200);
    expect(await total(viewer.own, search)).toBe(before.own);
    expect(await total(viewer.department, search)).toBe(before.department);
    const again = (await as(ctx, viewer.own).get(`/api/crm/leads?limit=100${search}`)).json();
    expect(again.data.map((row: { id: string }) => row.id)).not.toContain(handed.id);
    expect(again.pagination.total).toBe(before.own);
  });

  test('an activity is seen with its lead: handing the lead over takes its activities along at once', async () => {
    const handed = await lead(stranger, { assigned_to: viewer.own.id });
    const note = await activity(handed, admin);
    const listed = async () => (await as(ctx, viewer.own).get(`/api/crm/activities?limit=100&q=${MARK}`)).json();
    const before = await listed();
    expect(before.data.map((row: { id: string }) => row.id)).toContain(note.id);
    expect(before.pagination.total).toBe(before.data.length);
    // Only the lead changes (no activity does): the activities list still follows.
    expect((await as(ctx, stranger).patch(`/api/crm/leads/${handed.id}`, { assigned_to: stranger.id })).statusCode).toBe(200);
    const after = await listed();
    expect(after.data.map((row: { id: string }) => row.id)).not.toContain(note.id);
    expect(after.pagination.total).toBe(before.pagination.total - 1);
    expect((await as(ctx, viewer.own).get(`/api/crm/activities/${note.id}`)).statusCode).toBe(404);
  });

  test('a scope change applies from the next request; an inquiry answered by a user becomes theirs', async () => {
    const site = records.inquiries.find((record) => record.owners.length === 0)!;
    const user = await createUser(ctx, { crm: 'rw' }, { name: 'Responder' });
    await setScope(user, 'own');
    expect((await as(ctx, user).get(`/api/crm/inquiries/${site.id}`)).statusCode).toBe(404);
    await setScope(user, 'all');
    expect((await as(ctx, user).patch(`/api/crm/inquiries/${site.id}`, { response: 'It is 3M.' })).statusCode).toBe(200);
    await setScope(user, 'own');
    expect((await as(ctx, user).get(`/api/crm/inquiries/${site.id}`)).statusCode).toBe(200);
    expect((await as(ctx, viewer.own).get(`/api/crm/inquiries/${site.id}`)).statusCode).toBe(404);
  });

  test('administrators (iam write) see every record whatever their crm scope; API tokens have their creator\'s scope', async () => {
    const boss = await createUser(ctx, { crm: 'rwd', iam: 'rw' }, { name: 'Boss' });
    await setScope(boss, 'own');
    expect(await total(boss)).toBe(await total(viewer.all));
    const created = await as(ctx, viewer.own).post('/api/auth/tokens', { name: 'Sync', permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
    expect(created.statusCode, created.body).toBe(201);
    const token = created.json().token as string;
    expect(await total({ token } as User)).toBe(await total(viewer.own));
    const outside = records.leads.find((record) => !sees('own', record))!;
    expect((await as(ctx, token).get(`/api/crm/leads/${outside.id}`)).statusCode).toBe(404);
  });
});

describe('the scope in the module-access API', () => {
  test('shown, set on crm (audited), refused on other modules, validated', async () => {
    const user = await createUser(ctx, { crm: 'r', cms: 'r' });
    const rows = (await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json().data as { id: string; module: string; scope: string }[];
    expect(rows.map((r) => [r.module, r.scope])).toEqual([['cms', 'all'], ['crm', 'all']]);
    const crm = rows.find((r) => r.module === 'crm')!;
    const cms = rows.find((r) => r.module === 'cms')!;

    expect((await as(ctx, admin).patch(`/api/iam/module-access/${crm.id}`, { scope: 'department' })).statusCode).toBe(200);
    const [log] = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'module_access'), eq(activityLogs.resource_id, crm.id), eq(activityLogs.action, 'update')));
    expect(log.changes).toEqual({ before: { scope: 'all' }, after: { scope: 'department' } });
    expect(log.user_id).toBe(admin.id);

    const refused = await as(ctx, admin).patch(`/api/iam/module-access/${cms.id}`, { scope: 'own' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().details.scope).toMatch(/crm module only/);
    expect((await as(ctx, admin).patch(`/api/iam/module-access/${cms.id}`, { scope: 'all' })).statusCode).toBe(200);
    const bad = await as(ctx, admin).patch(`/api/iam/module-access/${crm.id}`, { scope: 'team' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details).toHaveProperty('scope');

    const other = await createUser(ctx);
    const granted = await as(ctx, admin).post('/api/iam/module-access', { user_id: other.id, module: 'crm', can_read: true, scope: 'own' });
    expect(granted.statusCode, granted.body).toBe(201);
    const iam = await as(ctx, admin).post('/api/iam/module-access', { user_id: other.id, module: 'iam', can_read: true, scope: 'department' });
    expect(iam.statusCode).toBe(400);
    expect(iam.json().details.scope).toMatch(/crm module only/);
    expect((await as(ctx, admin).get(`/api/iam/module-access/${other.id}`)).json().data).toEqual([
      { id: granted.json().id, module: 'crm', can_read: true, can_write: false, can_delete: false, scope: 'own' },
    ]);
    // iam write is needed to set it.
    expect((await as(ctx, viewer.all).patch(`/api/iam/module-access/${crm.id}`, { scope: 'all' })).statusCode).toBe(403);
  });
});

describe('a record named in a body or a query is read with the caller\'s scope', () => {
  /** Fields naming a scoped crm record, and which. */
  const NAMES: Record<string, Core> = { lead_id: 'leads', reservation_id: 'reservations', inquiry_id: 'inquiries', sold_to: 'reservations' };
  /** UUID fields of crm operations that name no scoped record, each with its reason. */
  const NOT_RECORDS: Record<string, string> = {
    assigned_to: 'a user: anyone with crm read may be handed a record (a user without it is refused)',
    author_id: 'a user: the author of an activity',
    user_id: 'a user: who deleted a record (the trash shows entries of records in scope only)',
    inventory_id: 'an inventory unit: stock every crm reader sees',
    project_id: 'a project: public content',
    fallback_user_id: 'a user: who takes the leads a lead group could not place (must have crm write)',
    fallback_group_id: 'a lead group: team configuration every crm reader sees',
    members: 'users: the members of a lead group (must have crm write)',
    assign_user_id: 'a user: who a lead-flow rule sends leads to (must have crm write)',
    assign_group_id: 'a lead group: team configuration every crm reader sees',
    action_plan_id: 'an action plan: team configuration every crm reader sees',
    plan_id: 'an action plan: the team\'s lead-flow settings every crm reader reads',
    department_id: 'a department: a report\'s filter of agents, within the reader\'s scope',
    agent_id: 'a user: a report\'s filter of agents, within the reader\'s scope',
  };
  type Request = { method: 'GET' | 'POST' | 'PATCH'; url: string; body?: Record<string, unknown> };
  /**
   * How each operation is asked, as the `own` viewer, with `field` naming `id`; every operation with a field of NAMES
   * must be here. Writes act on the viewer's own records; lists list them.
   */
  const ASK: Record<string, (field: string, id: string) => Promise<Request>> = {
    'POST /api/crm/reservations': async (field, id) => ({ method: 'POST', url: '/api/crm/reservations', body: { inventory_id: (await make.unit(ctx)).id, client_name: `${MARK} walled`, email: 'walled@example.com', [field]: id } }),
    'PATCH /api/crm/reservations/{id}': async (field, id) => ({ method: 'PATCH', url: `/api/crm/reservations/${records.reservations[0].id}`, body: { [field]: id } }),
    'POST /api/crm/tasks': async (field, id) => ({ method: 'POST', url: '/api/crm/tasks', body: { title: `${MARK} walled`, due_at: '2030-01-01T09:00:00Z', [field]: id } }),
    'PATCH /api/crm/tasks/{id}': async (field, id) => ({ method: 'PATCH', url: `/api/crm/tasks/${records.tasks[0].id}`, body: { [field]: id } }),
    'PATCH /api/projects/inventory': async (field, id) => ({ method: 'PATCH', url: '/api/projects/inventory', body: { inventory_id: (await make.unit(ctx)).id, status: 'sold', [field]: id } }),
  };
  for (const base of ['/api/crm/reservations', '/api/crm/tasks', '/api/crm/inquiries', '/api/crm/activities']) {
    for (const path of [base, `${base}/export`]) ASK[`GET ${path}`] = async (field, id) => ({ method: 'GET', url: `${path}?${field}=${id}` });
  }

  let cases: { operation: string; field: string }[] = [];
  const isUuid = (schema: Record<string, unknown> | undefined): boolean => !!schema && (schema.format === 'uuid'
    || ((schema.anyOf ?? schema.oneOf ?? []) as Record<string, unknown>[]).some(isUuid) || (schema.type === 'array' && isUuid(schema.items as Record<string, unknown>)));
  /** A record outside the own viewer's scope, of each kind, that one of their own records is linked to. */
  const hidden = {} as Record<Core, string>;

  beforeAll(async () => {
    const document = await resolvedOpenapi(ctx);
    const found: { operation: string; field: string }[] = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, { parameters?: { in: string; name: string; schema: Record<string, unknown> }[]; requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, Record<string, unknown>> } }> } }>>)) {
      if (!/^\/api\/(crm\/|projects\/inventory)/.test(path)) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const fields = [
          ...(operation.parameters ?? []).filter((p) => p.in === 'query' && isUuid(p.schema)).map((p) => p.name),
          ...Object.entries(operation.requestBody?.content?.['application/json']?.schema?.properties ?? {}).filter(([, schema]) => isUuid(schema)).map(([name]) => name),
        ];
        for (const field of fields) found.push({ operation: `${method.toUpperCase()} ${path}`, field });
      }
    }
    cases = found;
    hidden.leads = records.leads[3].id;
    hidden.reservations = records.reservations[2].id;
    hidden.inquiries = records.inquiries[2].id;
    // The own viewer's records linked (by an administrator) to the hidden ones: a filter naming one would find them.
    expect((await as(ctx, admin).patch(`/api/crm/reservations/${records.reservations[0].id}`, { lead_id: hidden.leads })).statusCode).toBe(200);
    const linked = await as(ctx, admin).patch(`/api/crm/tasks/${records.tasks[0].id}`, { lead_id: hidden.leads, reservation_id: hidden.reservations, inquiry_id: hidden.inquiries });
    expect(linked.statusCode, linked.body).toBe(200);
    // A note the viewer wrote on a lead since handed to someone else: theirs, its lead not.
    const handed = await lead(stranger, { assigned_to: viewer.own.id });
    await activity(handed, viewer.own);
    expect((await as(ctx, stranger).patch(`/api/crm/leads/${handed.id}`, { assigned_to: stranger.id })).statusCode).toBe(200);
    hidden.leads = handed.id;
  });

  test('every UUID field of a crm body or query is known: a record name (asked below) or not a record, with a reason', () => {
    expect(cases.length).toBeGreaterThan(20);
    const unknown = cases.filter(({ field }) => !(field in NAMES) && !(field in NOT_RECORDS));
    expect(unknown, 'UUID fields neither naming a known crm record nor allowed with a reason').toEqual([]);
    const unasked = cases.filter(({ operation, field }) => field in NAMES && !ASK[operation]);
    expect(unasked, 'operations naming a crm record that this test does not ask').toEqual([]);
    for (const operation of Object.keys(ASK)) expect(cases.map((c) => c.operation)).toContain(operation);
  });

  test('outside the scope: exactly the unknown id\'s answer, nothing changed; inside: accepted', async () => {
    const asked = cases.filter(({ field }) => field in NAMES);
    expect(asked.length).toBeGreaterThanOrEqual(20);
    const logs = async () => (await ctx.database.db.select({ id: activityLogs.id }).from(activityLogs)).length;
    for (const { operation, field } of asked) {
      const kind = NAMES[field];
      const send = ({ method, url, body }: Request) => as(ctx, viewer.own).request(method, url, body);
      // Asked first: a request may need a record of its own (a unit), made and logged before the count.
      const [outsideRequest, missingRequest] = [await ASK[operation](field, hidden[kind]), await ASK[operation](field, randomUUID())];
      const before = await logs();
      const outside = await send(outsideRequest);
      const missing = await send(missingRequest);
      expect(outside.statusCode, `${operation} ${field} outside`).toBe(missing.statusCode);
      expect(outside.body, `${operation} ${field} outside`).toBe(missing.body);
      expect(outside.body).not.toContain(hidden[kind]);
      if (operation.startsWith('GET')) {
        expect(outside.statusCode).toBe(200);
        // The viewer's own record linked to it is not found through it.
        if (!operation.endsWith('/export')) expect(outside.json().pagination.total, `${operation} ${field}`).toBe(0);
      } else {
        expect(outside.statusCode, `${operation} ${field}`).toBe(400);
        expect(Object.keys(outside.json().details), `${operation} ${field}`).toEqual([field]);
        expect(await logs(), `${operation} ${field}: nothing written`).toBe(before);
      }
      // A write naming a record of the viewer's own is not refused as unknown (a unit's buyer must also be a
      // reservation of that unit: another answer).
      if (operation.startsWith('GET')) continue;
      const own = { leads: records.leads[0].id, reservations: records.reservations[0].id, inquiries: records.inquiries[0].id }[kind];
      const inside = await send(await ASK[operation](field, own));
      expect(inside.body, `${operation} ${field} inside`).not.toBe(missing.body);
    }
  });
});
