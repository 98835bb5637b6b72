import { parse } from 'csv-parse/sync';
import { getTableColumns, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openDatabase } from '../src/db/client.js';
import * as schema from '../src/db/schema/index.js';
import { parseTimestamp } from '../src/db/timestamps.js';
import { adminOf, make } from './factories.js';
import { as, createTestApp, createTestDatabase, none, type Reply, resolvedOpenapi, type TestContext } from './helpers.js';

/**
 * Every date-time a request body takes keeps years 1–9999 to the millisecond,
 * first and last instant alike, through create, PATCH and every read: detail, list (also sorted by it and filtered
 * to it), CSV export, the activity log (list, detail, export, the record's history) and webhook payloads. Out of
 * range is 400 `details.<field>`.
 *
 * The fields are found by walking the OpenAPI document (every POST and PATCH body); each needs a recipe below, so a
 * new date field fails this test until it is covered.
 */

const FIRST = '0001-01-01T00:00:00.000Z';
const LAST = '9999-12-31T23:59:59.999Z';
/** What is sent, and what must be read back: the extremes, also written with a zone offset. */
const INPUTS = [
  { sent: FIRST, read: FIRST },
  { sent: LAST, read: LAST },
  { sent: '0001-01-01T08:04:00+08:04', read: FIRST },
  { sent: '9999-12-31T15:59:59.999-08:00', read: LAST },
];
/** Outside years 1–9999 (as written, or as the instant it names in UTC), or no real instant. */
const OUT_OF_RANGE = [
  '0000-12-31T23:59:59.999Z',
  '10000-01-01T00:00:00.000Z',
  '0001-01-01T00:00:00.000+00:01',
  '9999-12-31T23:59:59.999-00:01',
  '9999-12-31T23:59:60Z',
  '0001-02-29T00:00:00Z',
];

let ctx: TestContext;
let admin: Awaited<ReturnType<typeof adminOf>>;
let doc: any;
let hook: string;

type Body = Record<string, unknown>;
type Api = ReturnType<typeof as>;

/** How to send a date field through one operation, and where the record is then read. */
type Recipe = {
  /** The date fields of the operation's body this recipe covers (the walk fails on any other). */
  fields: string[];
  /** The resource's collection: detail `{base}/{id}`, list, `/export`, `/{id}/history` where the document has them. */
  base: string;
  /** Further lists showing the record (GET, as the admin). */
  lists?: string[];
  /** A create: the rest of a valid body. */
  body?: () => Promise<Body>;
  /** A create under a record (`/leads/{id}/activities`): the path to post to. */
  path?: () => Promise<string>;
  /**
   * An update (PATCH or an action on `{id}`): a record to apply it to; `previous` is a value the field may hold
   * beforehand (the other extreme), and the answer is the value the log should show as `before` (undefined: none).
   */
  target?: (field: string, previous: string) => Promise<{ id: string; before: unknown }>;
  /** Instants refused by a rule of the resource (e.g. "must be in the future"): 400 `details.<field>`. */
  refused?: (read: string) => boolean;
  /** Public reads (signed out) of a published record: the collection, read by slug. */
  public?: string;
};

let counter = 0;
const unique = () => `${Date.now().toString(36)}-${++counter}`;
const inPast = (instant: string) => Date.parse(instant) <= Date.now();

/** A content record (project, article, career) made through the API with the field at `value`. */
const contentTarget = (path: string, body: () => Body) => async (field: string, previous: string) => {
  const res = await api().post(path, { ...body(), [field]: previous });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().id as string, before: previous };
};
const projectBody = () => ({ name: `Project ${unique()}`, status: 'active', type: 'residential', published: true });
const articleBody = () => ({ title: `Article ${unique()}`, content: 'Body', type: 'news', published: true });
const careerBody = () => ({ title: `Career ${unique()}`, department: 'Engineering', location: 'Cebu', employment_type: 'full-time', published: true });
const reservationBody = async () => ({ inventory_id: (await make.unit(ctx)).id, client_name: `Client ${unique()}`, contact_number: '+63 900 000 0000' });

const RECIPES: Record<string, Recipe> = {
  'POST /api/cms/projects': { fields: ['publish_date'], base: '/api/cms/projects', body: async () => projectBody(), public: '/api/public/projects' },
  'PATCH /api/cms/projects/{id}': { fields: ['publish_date'], base: '/api/cms/projects', target: contentTarget('/api/cms/projects', projectBody), public: '/api/public/projects' },
  'POST /api/cms/articles': { fields: ['publish_date'], base: '/api/cms/articles', body: async () => articleBody(), public: '/api/public/articles' },
  'PATCH /api/cms/articles/{id}': { fields: ['publish_date'], base: '/api/cms/articles', target: contentTarget('/api/cms/articles', articleBody), public: '/api/public/articles' },
  'POST /api/cms/careers': { fields: ['publish_date'], base: '/api/cms/careers', body: async () => careerBody(), public: '/api/public/careers' },
  'PATCH /api/cms/careers/{id}': { fields: ['publish_date'], base: '/api/cms/careers', target: contentTarget('/api/cms/careers', careerBody), public: '/api/public/careers' },
  'POST /api/crm/reservations': { fields: ['reservation_date'], base: '/api/crm/reservations', body: reservationBody },
  'PATCH /api/crm/reservations/{id}': {
    fields: ['reservation_date'], base: '/api/crm/reservations',
    target: async (field, previous) => {
      const res = await api().post('/api/crm/reservations', { ...(await reservationBody()), [field]: previous });
      expect(res.statusCode, res.body).toBe(201);
      return { id: res.json().id, before: previous };
    },
  },
  // A lead's activity, written by its author (the admin here, who may then edit it).
  'POST /api/crm/leads/{id}/activities': {
    fields: ['occurred_at'], base: '/api/crm/activities', body: async () => ({ kind: 'call', outcome: 'answered', body: 'Called' }),
    path: async () => `/api/crm/leads/${(await make.lead(ctx)).id}/activities`,
  },
  'PATCH /api/crm/activities/{id}': {
    fields: ['occurred_at'], base: '/api/crm/activities',
    target: async (field, previous) => {
      const res = await api().post(`/api/crm/leads/${(await make.lead(ctx)).id}/activities`, { kind: 'note', body: 'Noted', [field]: previous });
      expect(res.statusCode, res.body).toBe(201);
      return { id: res.json().id, before: previous };
    },
  },
  'POST /api/crm/tasks': { fields: ['due_at'], base: '/api/crm/tasks', body: async () => ({ title: `Call back ${unique()}` }) },
  'PATCH /api/crm/tasks/{id}': {
    fields: ['due_at'], base: '/api/crm/tasks',
    target: async (field, previous) => {
      const res = await api().post('/api/crm/tasks', { title: `Follow up ${unique()}`, [field]: previous });
      expect(res.statusCode, res.body).toBe(201);
      return { id: res.json().id, before: previous };
    },
  },
  // Scheduling: only a future instant is taken (year 1 is refused by that rule, not by its range).
  'POST /api/crm/campaigns/{id}/send': {
    fields: ['scheduled_at'], base: '/api/crm/campaigns', refused: (read) => inPast(read),
    target: async () => ({ id: (await make.campaign(ctx)).id, before: null }),
  },
  // A token must expire in the future; it is listed to admins (iam) and to its owner (/api/auth/tokens).
  'POST /api/auth/tokens': {
    fields: ['expires_at'], base: '/api/iam/api-tokens', lists: ['/api/auth/tokens'], refused: (read) => inPast(read),
    body: async () => ({ name: `Token ${unique()}`, permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] }),
  },
};

const api = (): Api => as(ctx, admin);

/** Every request-body property of format date-time or date, by dotted path (arrays as `[]`), through anyOf/oneOf/allOf. */
function dateFields(schema: any, path = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const found: string[] = [];
  if ((schema.format === 'date-time' || schema.format === 'date') && path) found.push(path);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const part of schema[key] ?? []) found.push(...dateFields(part, path));
  for (const [name, property] of Object.entries<any>(schema.properties ?? {})) found.push(...dateFields(property, path ? `${path}.${name}` : name));
  if (schema.items) found.push(...dateFields(schema.items, `${path}[]`));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') found.push(...dateFields(schema.additionalProperties, `${path}.*`));
  return [...new Set(found)];
}

/** `METHOD /path` → its body's date fields, for every POST and PATCH of the document (any content type). */
function dateOperations(): Map<string, string[]> {
  const operations = new Map<string, string[]>();
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of ['post', 'patch']) {
      const content = item[method]?.requestBody?.content ?? {};
      const fields = [...new Set(Object.values<any>(content).flatMap((media) => dateFields(media.schema)))];
      if (fields.length) operations.set(`${method.toUpperCase()} ${path}`, fields);
    }
  }
  return operations;
}

const has = (method: string, path: string) => !!doc.paths[path]?.[method];
const queryParameter = (path: string, name: string) => doc.paths[path]?.get?.parameters?.find((p: any) => p.in === 'query' && p.name === name);
const listItemFields = (path: string): Record<string, unknown> =>
  doc.paths[path].get.responses['200'].content['application/json'].schema.properties.data.items.properties ?? {};
const ok = (res: Reply, what: string) => {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(200);
  return res;
};

/** Every row of a list (all pages), as the admin reads it. */
async function allOf(path: string, query: Record<string, string> = {}): Promise<Body[]> {
  const rows: Body[] = [];
  for (let page = 1; ; page++) {
    const res = ok(await api().get(`${path}?${new URLSearchParams({ ...query, page: String(page), limit: '100' })}`), `GET ${path}`);
    const body = res.json();
    rows.push(...body.data);
    if (body.data.length < 100) return rows;
  }
}

/** The CSV export's rows (objects by header). */
async function exported(path: string, query: Record<string, string> = {}): Promise<Body[]> {
  const res = ok(await api().get(`${path}?${new URLSearchParams(query)}`), `GET ${path}`);
  return parse(res.body, { columns: true, skip_empty_lines: true });
}

/** The filter of a list that ranges over the field (`reservation_date_from`, `scheduled_from` for scheduled_at). */
function rangeFilter(list: string, field: string): string | undefined {
  for (const stem of [field, field.replace(/_(at|date)$/, '')]) if (queryParameter(list, `${stem}_from`) && queryParameter(list, `${stem}_to`)) return stem;
  return undefined;
}

/** The change an activity log entry (as the API gives it) records for the field. */
function expectLogged(log: Body | undefined, field: string, read: string, before: unknown, where: string) {
  expect(log, `${where}: no activity log entry with ${field}`).toBeDefined();
  const changes = (typeof log!.changes === 'string' ? JSON.parse(log!.changes) : log!.changes) as { before: Body; after: Body };
  expect(changes.after[field], `${where}: changes.after.${field}`).toBe(read);
  if (before !== undefined) expect(changes.before[field] ?? null, `${where}: changes.before.${field}`).toBe(before);
}

/** Reads the record every way the API offers and expects `read` in the field each time. */
async function expectEverywhere(recipe: Recipe, id: string, field: string, read: string, action: 'create' | 'update', before: unknown) {
  const { base } = recipe;
  const where = (path: string) => `${field}=${read} at ${path}`;

  // Detail.
  const detail = ok(await api().get(`${base}/${id}`), `GET ${base}/${id}`).json();
  expect(detail[field], where(`${base}/${id}`)).toBe(read);
  covered.add('detail');

  // Lists: the record in them; sorted by the field in both orders (ordered as the values read); filtered to it.
  for (const list of [base, ...(recipe.lists ?? [])].filter((path) => has('get', path))) {
    const shows = field in listItemFields(list);
    const item = (await allOf(list)).find((row) => row.id === id);
    expect(item, where(list)).toBeDefined();
    if (shows) {
      expect(item![field], where(list)).toBe(read);
      covered.add('list');
    }
    if (queryParameter(list, 'sort')?.schema?.enum?.includes(field)) {
      for (const order of ['asc', 'desc']) {
        const rows = await allOf(list, { sort: field, order });
        const row = rows.find((r) => r.id === id);
        expect(row?.[field], where(`${list}?sort=${field}&order=${order}`)).toBe(read);
        const values = rows.map((r) => r[field]).filter((v): v is string => typeof v === 'string');
        expect(values, `${list}?sort=${field}&order=${order} is ordered`).toEqual([...values].sort((a, b) => (order === 'asc' ? a.localeCompare(b) : b.localeCompare(a))));
      }
      covered.add('sorted list');
    }
    const stem = rangeFilter(list, field);
    if (stem) {
      for (const bound of [read, read.slice(0, 10)]) {
        const rows = await allOf(list, { [`${stem}_from`]: bound, [`${stem}_to`]: bound });
        expect(rows.find((r) => r.id === id)?.[field], where(`${list}?${stem}_from=${bound}&${stem}_to=${bound}`)).toBe(read);
      }
      covered.add('list filtered to the instant');
    }
  }

  // CSV export.
  if (has('get', `${base}/export`)) {
    const rows = await exported(`${base}/export`);
    const row = rows.find((r) => r.id === id);
    expect(row, where(`${base}/export`)).toBeDefined();
    expect(row![field], where(`${base}/export`)).toBe(read);
    covered.add('export');
    const stem = rangeFilter(`${base}/export`, field);
    if (stem) {
      const filtered = await exported(`${base}/export`, { [`${stem}_from`]: read, [`${stem}_to`]: read });
      expect(filtered.find((r) => r.id === id)?.[field], where(`${base}/export?${stem}_from…`)).toBe(read);
      covered.add('export filtered to the instant');
    }
  }

  // Activity log: list (filtered to the record), detail, export, and the record's history.
  const logs = (await allOf('/api/iam/activity-logs', { resource_id: id })).filter((log) => log.action === action);
  const log = logs.find((entry) => field in ((entry.changes as { after: Body }).after ?? {}));
  expectLogged(log, field, read, before, where('/api/iam/activity-logs'));
  expectLogged(ok(await api().get(`/api/iam/activity-logs/${log!.id}`), 'activity log').json(), field, read, before, where('/api/iam/activity-logs/{id}'));
  const exportedLog = (await exported('/api/iam/activity-logs/export', { resource_id: id })).find((row) => row.id === log!.id);
  expectLogged(exportedLog, field, read, before, where('/api/iam/activity-logs/export'));
  covered.add('activity log');
  if (before !== undefined) covered.add('activity log before');
  if (has('get', `${base}/{id}/history`)) {
    const history = (await allOf(`${base}/${id}/history`)).find((entry) => entry.id === log!.id);
    expectLogged(history, field, read, before, where(`${base}/{id}/history`));
    covered.add('history');
  }

  // Webhook payloads (resources with events): the newest delivery about the record carries the value.
  const deliveries = ok(await api().get(`/api/iam/webhooks/${hook}/deliveries?limit=20`), 'deliveries').json().data as Body[];
  for (const delivery of deliveries) {
    const { payload } = ok(await api().get(`/api/iam/webhooks/deliveries/${delivery.id}`), 'delivery').json();
    if (payload.data?.id !== id) continue;
    expect(payload.data.after?.[field], where('webhook payload data.after')).toBe(read);
    if (before !== undefined && payload.data.before) expect(payload.data.before[field] ?? null, where('webhook payload data.before')).toBe(before);
    covered.add('webhook payload');
    break;
  }

  // Public pages of published content (an instant in the past is published by then).
  if (recipe.public && inPast(read)) {
    const page = ok(await as(ctx, none).get(`${recipe.public}/${detail.slug}`), `GET ${recipe.public}/${detail.slug}`).json();
    expect(page[field], where(`${recipe.public}/{slug}`)).toBe(read);
    covered.add('public detail');
  }
}
/** The kinds of read that were checked (the last test expects each at least once). */
const covered = new Set<string>();

/** Sends `{field: sent}` through the operation on a fresh record; the record's id and the log's expected `before`. */
async function send(operation: string, recipe: Recipe, field: string, sent: string, previous: string): Promise<{ res: Reply; id?: string; before: unknown }> {
  const [method, path] = operation.split(' ') as ['POST' | 'PATCH', string];
  if (recipe.body) {
    const res = await api().request(method, recipe.path ? await recipe.path() : path, { ...(await recipe.body()), [field]: sent });
    return { res, id: res.statusCode === 201 ? res.json().id : undefined, before: undefined };
  }
  const { id, before } = await recipe.target!(field, previous);
  const res = await api().request(method, path.replace('{id}', id), { [field]: sent });
  return { res, id, before };
}

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await adminOf(ctx);
  doc = await resolvedOpenapi(ctx);
  const endpoint = await api().post('/api/iam/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  expect(endpoint.statusCode, endpoint.body).toBe(201);
  hook = endpoint.json().id;
});
afterAll(async () => ctx?.close());

describe('date fields of request bodies', () => {
  test('every date field of every POST and PATCH body has a recipe (and every recipe a field)', () => {
    const operations = dateOperations();
    const uncovered = [...operations].flatMap(([op, fields]) => fields.filter((f) => !RECIPES[op]?.fields.includes(f)).map((f) => `${op} ${f}`));
    expect(uncovered, 'date fields with no recipe in test/dates-roundtrip.test.ts: add one').toEqual([]);
    const stale = Object.entries(RECIPES).flatMap(([op, recipe]) => recipe.fields.filter((f) => !operations.get(op)?.includes(f)).map((f) => `${op} ${f}`));
    expect(stale, 'recipes for fields the API no longer takes').toEqual([]);
  });

  for (const [operation, recipe] of Object.entries(RECIPES)) {
    for (const field of recipe.fields) {
      test(`${operation} ${field}: years 1 and 9999 round-trip everywhere`, async () => {
        for (const { sent, read } of INPUTS) {
          const previous = read === FIRST ? LAST : FIRST;
          const { res, id, before } = await send(operation, recipe, field, sent, previous);
          if (recipe.refused?.(read)) {
            expect(res.statusCode, `${sent}: ${res.body}`).toBe(400);
            expect(res.json()).toMatchObject({ error: 'Validation error', details: { [field]: expect.any(String) } });
            continue;
          }
          expect(res.statusCode, `${operation} ${field}=${sent}: ${res.body}`).toBe(recipe.body ? 201 : 200);
          await expectEverywhere(recipe, id!, field, read, recipe.body ? 'create' : 'update', before);
        }
      });

      test(`${operation} ${field}: instants outside years 1–9999 are 400 details.${field}`, async () => {
        for (const sent of OUT_OF_RANGE) {
          const { res } = await send(operation, recipe, field, sent, LAST);
          expect(res.statusCode, `${sent}: ${res.body}`).toBe(400);
          expect(res.json(), sent).toMatchObject({ error: 'Validation error', details: { [field]: expect.any(String) } });
        }
      });
    }
  }

  test('every kind of read was checked', () => {
    expect([...covered].sort()).toEqual([
      'activity log', 'activity log before', 'detail', 'export', 'export filtered to the instant', 'history', 'list', 'list filtered to the instant',
      'public detail', 'sorted list', 'webhook payload',
    ]);
  });
});

describe('timestamp columns and database sessions', () => {
  const rowsOf = (result: unknown) => ((result as { rows?: Record<string, unknown>[] }).rows ?? (result as Record<string, unknown>[]));

  test('every timestamp column (server-set ones too) reads years 1 and 9999 back exactly', async () => {
    const tables = (Object.values(schema) as unknown[]).filter((table): table is PgTable => is(table, PgTable));
    const columns = tables.flatMap((table) => Object.values(getTableColumns(table)));
    const timestamps = columns.filter((column) => /^timestamp/.test(column.getSQLType()));
    expect(timestamps.length).toBeGreaterThan(15);
    for (const column of timestamps) {
      // The type name the data layer tests (src/data/mutations.ts, boundaries.ts, export.ts).
      expect(column.columnType, column.name).toBe('PgTimestamp');
      for (const instant of [FIRST, LAST, '1900-01-01T00:00:00.000Z', '0099-12-31T23:59:59.999Z']) {
        // As the driver hands drizzle a value: the text of the session, in a plain query and inside JSON.
        const [row] = rowsOf(await ctx.database.db.execute(sql`select ${instant}::timestamptz as v, to_jsonb(${instant}::timestamptz) #>> '{}' as j`));
        expect((column.mapFromDriverValue(row.v) as Date).toISOString(), `${column.name} ${row.v}`).toBe(instant);
        expect((column.mapFromDriverValue(row.j) as Date).toISOString(), `${column.name} ${row.j}`).toBe(instant);
      }
    }
  });

  test('raw queries (pg-boss, health) read them exactly', async () => {
    const { rows } = await ctx.database.execute('select $1::timestamptz as first, $2::timestamptz as last', [FIRST, LAST]);
    expect((rows[0].first as Date).toISOString()).toBe(FIRST);
    expect((rows[0].last as Date).toISOString()).toBe(LAST);
  });

  test("a database whose own time zone has local mean time for year 1 does not shift it (the session is UTC)", async () => {
    const database = await createTestDatabase();
    let reopened: Awaited<ReturnType<typeof openDatabase>> | undefined;
    try {
      const [{ name }] = (await database.execute('select current_database() as name')).rows as { name: string }[];
      await database.execute(`alter database "${name}" set timezone to 'Asia/Manila'`);
      await database.execute(`alter database "${name}" set datestyle to 'SQL, DMY'`);
      reopened = database.kind === 'postgres'
        ? await openDatabase({ url: (database as { url?: string }).url })
        : await openDatabase({ dataDir: 'memory://', loadDataDir: await database.pglite!.dumpDataDir('none') });
      for (const run of [() => undefined, () => reopened!.execute('reset all')]) {
        await run();
        const { rows } = await reopened.execute(`select current_setting('TimeZone') as zone, $1::timestamptz::text as text, $1::timestamptz as value`, [FIRST]);
        expect(rows[0]).toMatchObject({ zone: 'UTC', text: '0001-01-01 00:00:00+00' });
        expect((rows[0].value as Date).toISOString()).toBe(FIRST);
      }
      const [row] = rowsOf(await reopened.db.execute(sql`select ${FIRST}::timestamptz as v`));
      expect((schema.projects.publish_date.mapFromDriverValue(row.v as string) as Date).toISOString()).toBe(FIRST);
    } finally {
      await reopened?.close();
      await database.close();
    }
  });

  test('PostgreSQL text of a timestamp is read exactly, whatever zone printed it', () => {
    const cases: [string, string][] = [
      ['0001-01-01 00:00:00+00', FIRST],
      ['9999-12-31 23:59:59.999+00', LAST],
      ['0001-01-01T00:00:00+00:00', FIRST],
      ['0001-12-31 08:03:52-15:56:08 BC', FIRST],
      ['0001-01-01 08:04:00+08:04', FIRST],
      ['9999-12-31 15:59:59.999-08', LAST],
      ['2026-11-23 09:30:00.29+00', '2026-11-23T09:30:00.290Z'],
      ['2026-11-23 09:30:00.123456+05:30', '2026-11-23T04:00:00.123Z'],
      ['2026-11-23T09:30:00.123Z', '2026-11-23T09:30:00.123Z'],
      ['0044-03-15 00:00:00', '0044-03-15T00:00:00.000Z'],
      // The everyday text (UTC, years 1000–9999), read by its shortcut: truncated to the millisecond as every other.
      ['2026-11-23 09:30:00.999999+00', '2026-11-23T09:30:00.999Z'],
      ['2026-11-23 09:30:00+00', '2026-11-23T09:30:00.000Z'],
      ['1000-01-01 00:00:00+00', '1000-01-01T00:00:00.000Z'],
      ['1969-12-31 23:59:59.5+00', '1969-12-31T23:59:59.500Z'],
      ['2026-11-23 09:30:00+05', '2026-11-23T04:30:00.000Z'],
      ['12026-01-01 00:00:00+00', '+012026-01-01T00:00:00.000Z'],
    ];
    for (const [text, instant] of cases) expect(parseTimestamp(text).toISOString(), text).toBe(instant);
  });
});
