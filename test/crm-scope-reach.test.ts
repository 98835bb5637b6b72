import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sendTaskDigests } from '../src/jobs/task-digest.js';
import { adminOf, make } from './factories.js';
import { as, createTestApp, createUser, eventually, none, type Reply, type TestContext } from './helpers.js';
import { outboxReader } from './mail.js';

/**
 * CRM record scopes reach everything a scoped user receives, not only the records' own routes: a reservation's
 * automatic link to a lead, references shown in answers, exports and history, staff notices, assignees, import jobs,
 * the activity log, the conflict of a second conversion and the morning follow-up e-mail.
 */

type User = Awaited<ReturnType<typeof createUser>>;
type Row = Record<string, any>;

let ctx: TestContext;
/** An administrator (iam write): sees every record. */
let admin: User;
/** Agents A and B, crm scope `own`, in no department: each sees only their own records. A also reads iam. */
let agentA: User;
let agentB: User;
/** Crm scope `department` (in a department of their own), iam read. */
let deptAgent: User;
/** Crm scope `all` (not an administrator), iam read. */
let allUser: User;
/** No crm access at all: cms and iam read. */
let noCrm: User;
/** Crm read only: may be handed records. */
let crmReader: User;

const NOT_A_CRM_READER = 'must be a user with access to the crm (read at least): give them crm access first';
const tag = randomUUID().slice(0, 8);

async function setScope(user: { id: string }, scope: 'all' | 'department' | 'own') {
  const rows = (await as(ctx, admin).get(`/api/iam/module-access/${user.id}`)).json().data as { id: string; module: string }[];
  const row = rows.find((r) => r.module === 'crm')!;
  const res = await as(ctx, admin).patch(`/api/iam/module-access/${row.id}`, { scope });
  expect(res.statusCode, res.body).toBe(200);
}

/** The answer's JSON after checking its status. */
async function ok(res: Promise<Reply> | Reply, status = 200): Promise<any> {
  const reply = await res;
  expect(reply.statusCode, reply.body).toBe(status);
  return reply.json();
}

/** A CSV export's rows by header (200 expected). */
async function csvRows(res: Promise<Reply>): Promise<Row[]> {
  const reply = await res;
  expect(reply.statusCode, reply.body).toBe(200);
  return parse(reply.body, { columns: true, bom: true }) as Row[];
}

/** The row of `id` in a list answer (expected to be there). */
function rowOf(page: { data: Row[] }, id: string): Row {
  const row = page.data.find((r) => r.id === id);
  expect(row, `row ${id} in the list`).toBeDefined();
  return row!;
}

/** A unit, made by the administrator (agents have no cms write to make its project). */
const unit = () => make.unit(ctx);
const reservationBy = async (by: User, fields: Record<string, unknown> = {}) =>
  make.reservation(ctx, { inventory_id: (await unit()).id, client_name: `Client ${tag}`, ...fields }, by);

/** Every staff notice the service started has been sent (or has failed). */
const settle = () => ctx.app.background.settled();

beforeAll(async () => {
  ctx = await createTestApp();
  admin = await adminOf(ctx);
  agentA = await createUser(ctx, { crm: 'rwd', iam: 'r' }, { name: 'Agent Ann' });
  agentB = await createUser(ctx, { crm: 'rwd' }, { name: 'Agent Ben' });
  deptAgent = await createUser(ctx, { crm: 'rwd', iam: 'r' }, { name: 'Dept Dana' });
  allUser = await createUser(ctx, { crm: 'rwd', iam: 'r' }, { name: 'All Al' });
  noCrm = await createUser(ctx, { cms: 'rw', iam: 'r' }, { name: 'Cms Cara' });
  crmReader = await createUser(ctx, { crm: 'r' }, { name: 'Reader Rae' });
  const department = await make.department(ctx);
  expect((await as(ctx, admin).patch(`/api/iam/users/${deptAgent.id}`, { department_id: department.id })).statusCode).toBe(200);
  await setScope(agentA, 'own');
  await setScope(agentB, 'own');
  await setScope(deptAgent, 'department');
}, 120_000);
afterAll(async () => ctx?.close());

describe('1. a reservation links to a lead by e-mail only within its maker\'s scope', () => {
  test('an own agent sending the e-mail of a colleague\'s lead gets no link, and no answer names that lead', async () => {
    const email = `shared-1-${tag}@example.com`;
    const leadB = await make.lead(ctx, { first_name: 'Bea', last_name: `Colleague${tag}`, email }, agentB);
    const created = await as(ctx, agentA).post('/api/crm/reservations', { inventory_id: (await unit()).id, client_name: `Walled ${tag}`, email });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.body).not.toContain(leadB.id);
    const id = created.json().id as string;

    const answers = [
      await as(ctx, agentA).get(`/api/crm/reservations/${id}`),
      await as(ctx, agentA).get(`/api/crm/reservations?q=${encodeURIComponent(email)}`),
      await as(ctx, agentA).get(`/api/crm/reservations/export?q=${encodeURIComponent(email)}`),
      await as(ctx, agentA).get(`/api/crm/reservations/${id}/history`),
    ];
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).not.toContain(leadB.id);
    }
    expect(answers[0].json().lead_id).toBeNull();
    // Not linked at all (not merely hidden): the administrator sees no lead on it either.
    expect((await ok(as(ctx, admin).get(`/api/crm/reservations/${id}`))).lead_id).toBeNull();
  });

  test('the e-mail of the agent\'s own lead links it, even when a colleague\'s lead for it is newer', async () => {
    const email = `shared-2-${tag}@example.com`;
    const leadA = await make.lead(ctx, { first_name: 'Ann', last_name: `Own${tag}`, email }, agentA);
    const newerB = await make.lead(ctx, { first_name: 'Bea', last_name: `Newer${tag}`, email }, agentB);
    const made = await reservationBy(agentA, { email: email.toUpperCase() });
    expect((await ok(as(ctx, agentA).get(`/api/crm/reservations/${made.id}`))).lead_id).toBe(leadA.id);
    expect((await ok(as(ctx, admin).get(`/api/crm/reservations/${made.id}`))).lead_id).toBe(leadA.id);
    expect(newerB.id).not.toBe(leadA.id);
  });

  test('a user with scope all links the newest lead of the e-mail, whoever owns it', async () => {
    const email = `shared-3-${tag}@example.com`;
    await make.lead(ctx, { first_name: 'Ann', last_name: `Older${tag}`, email }, agentA);
    const newest = await make.lead(ctx, { first_name: 'Bea', last_name: `Newest${tag}`, email }, agentB);
    const made = await reservationBy(allUser, { email });
    expect((await ok(as(ctx, allUser).get(`/api/crm/reservations/${made.id}`))).lead_id).toBe(newest.id);
  });
});

describe('2. answers never carry the id of a record outside the caller\'s scope', () => {
  test('a reservation\'s lead: detail, list row, CSV export and history', async () => {
    const leadB = await make.lead(ctx, { first_name: 'Bea', last_name: `Linked${tag}` }, agentB);
    const resA = await reservationBy(agentA, { client_name: `Linked client ${tag}` });
    expect((await ok(as(ctx, admin).patch(`/api/crm/reservations/${resA.id}`, { lead_id: leadB.id }))).message).toBeDefined();

    const seen = async (who: User) => {
      const detail = await ok(as(ctx, who).get(`/api/crm/reservations/${resA.id}`));
      const row = rowOf(await ok(as(ctx, who).get(`/api/crm/reservations?q=${encodeURIComponent(`Linked client ${tag}`)}`)), resA.id);
      const exported = (await csvRows(as(ctx, who).get(`/api/crm/reservations/export?q=${encodeURIComponent(`Linked client ${tag}`)}`))).find((r) => r.id === resA.id);
      expect(exported, 'the reservation in the export').toBeDefined();
      const history = await ok(as(ctx, who).get(`/api/crm/reservations/${resA.id}/history`));
      const change = (history.data as Row[]).find((entry) => entry.action === 'update' && entry.user?.id === admin.id);
      expect(change, 'the administrator\'s change in the history').toBeDefined();
      return { detail: detail.lead_id, row: row.lead_id, exported: exported!.lead_id, after: change!.changes.after.lead_id, history };
    };

    const a = await seen(agentA);
    expect([a.detail, a.row, a.exported, a.after]).toEqual([null, null, '', null]);
    expect(JSON.stringify(a.history)).not.toContain(leadB.id);
    const boss = await seen(admin);
    expect([boss.detail, boss.row, boss.exported, boss.after]).toEqual([leadB.id, leadB.id, leadB.id, leadB.id]);
  });

  test('a reservation\'s lead: nor in the answer to a restore of the administrator\'s change (dry run or not)', async () => {
    const leadB = await make.lead(ctx, { first_name: 'Bea', last_name: `Restored${tag}` }, agentB);
    const resA = await reservationBy(agentA);
    await ok(as(ctx, admin).patch(`/api/crm/reservations/${resA.id}`, { lead_id: leadB.id }));
    const history = await ok(as(ctx, agentA).get(`/api/crm/reservations/${resA.id}/history`));
    const change = (history.data as Row[]).find((entry) => entry.action === 'update' && entry.user?.id === admin.id)!;
    expect(change).toBeDefined();
    const dry = await as(ctx, agentA).post(`/api/crm/reservations/${resA.id}/history/${change.id}/restore?dry_run=true`, {});
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.body).not.toContain(leadB.id);
    const restored = await as(ctx, agentA).post(`/api/crm/reservations/${resA.id}/history/${change.id}/restore`, {});
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.body).not.toContain(leadB.id);
  });

  test('an inventory unit\'s buyer: detail, list and export', async () => {
    const project = await make.project(ctx);
    const sold = await make.unit(ctx, { project_id: project.id });
    const resB = await make.reservation(ctx, { inventory_id: sold.id, client_name: `Buyer ${tag}` }, agentB);
    await ok(as(ctx, admin).patch('/api/projects/inventory', { inventory_id: sold.id, sold_to: resB.id, status: 'sold' }));

    const seen = async (who: User) => {
      const detail = await ok(as(ctx, who).get(`/api/crm/inventory/${sold.id}`));
      expect(detail.status).toBe('sold');
      const row = rowOf(await ok(as(ctx, who).get(`/api/crm/inventory?project_id=${project.id}`)), sold.id);
      const exported = (await csvRows(as(ctx, who).get(`/api/crm/inventory/export?project_id=${project.id}`))).find((r) => r.id === sold.id);
      expect(exported, 'the unit in the export').toBeDefined();
      return [detail.sold_to, row.sold_to, exported!.sold_to];
    };
    expect(await seen(agentA)).toEqual([null, null, '']);
    expect(await seen(agentB)).toEqual([resB.id, resB.id, resB.id]);
    expect(await seen(admin)).toEqual([resB.id, resB.id, resB.id]);
    // The unit's history neither (an answer to A).
    const history = await as(ctx, agentA).get(`/api/crm/inventory/${sold.id}/history`);
    expect(history.statusCode, history.body).toBe(200);
    expect(history.body).not.toContain(resB.id);
  });

  test('a follow-up for A about B\'s lead, reservation and inquiry: the three fields null in detail, list and export', async () => {
    const leadB = await make.lead(ctx, {}, agentB);
    const resB = await reservationBy(agentB);
    const inqB = await make.inquiry(ctx, {}, agentB);
    const title = `About B ${tag}`;
    const task = await ok(as(ctx, admin).post('/api/crm/tasks', {
      title, due_at: '2031-01-10T01:00:00Z', assigned_to: agentA.id, lead_id: leadB.id, reservation_id: resB.id, inquiry_id: inqB.id,
    }), 201);
    const FIELDS = ['lead_id', 'reservation_id', 'inquiry_id'];

    const seen = async (who: User) => {
      const detail = await ok(as(ctx, who).get(`/api/crm/tasks/${task.id}`));
      const row = rowOf(await ok(as(ctx, who).get(`/api/crm/tasks?q=${encodeURIComponent(title)}`)), task.id);
      const exported = (await csvRows(as(ctx, who).get(`/api/crm/tasks/export?q=${encodeURIComponent(title)}`))).find((r) => r.id === task.id);
      expect(exported, 'the follow-up in the export').toBeDefined();
      return [detail, row, exported!].map((shown) => FIELDS.map((field) => shown[field]));
    };
    const a = await seen(agentA);
    expect(a).toEqual([[null, null, null], [null, null, null], ['', '', '']]);
    // Nor the follow-up's history (the administrator's create names all three).
    const history = await as(ctx, agentA).get(`/api/crm/tasks/${task.id}/history`);
    expect(history.statusCode, history.body).toBe(200);
    for (const id of [leadB.id, resB.id, inqB.id]) expect(history.body).not.toContain(id);
    const all = [leadB.id, resB.id, inqB.id];
    expect(await seen(admin)).toEqual([all, all, all]);
  });
});

describe('3. the inquiry notice goes only to crm writers who may read the inquiry', () => {
  test('a website inquiry (nobody\'s): no mail to own or department agents; users with scope all and administrators get it', async () => {
    const outbox = outboxReader(ctx);
    const subject = `Units left ${tag}`;
    const res = await as(ctx, none).post('/api/public/inquiries', { name: 'Vera Visitor', email: `vera-${tag}@example.com`, subject, message: 'Any left?' });
    expect(res.statusCode, res.body).toBe(201);
    await settle();
    const got = (who: User) => outbox.unread(who.email).filter((mail) => mail.subject === `New inquiry: ${subject}`).length;
    expect({ own: got(agentA), ownToo: got(agentB), department: got(deptAgent), all: got(allUser), admin: got(admin) })
      .toEqual({ own: 0, ownToo: 0, department: 0, all: 1, admin: 1 });
  });

  test('a lead\'s assignment notice still reaches its (own-scoped) assignee', async () => {
    const outbox = outboxReader(ctx);
    const lead = await make.lead(ctx, { first_name: 'Nora', last_name: `Notice${tag}`, assigned_to: agentA.id });
    const subject = `Lead assigned to you: Nora Notice${tag}`;
    const mail = await eventually(() => outbox.unread(agentA.email).find((m) => m.subject === subject), `"${subject}" to agent A`);
    expect(mail.text).toContain(`http://localhost:3000/leads/${lead.id}`);
  });
});

describe('4. an assignee must have crm read', () => {
  const refused = (res: Reply, message = NOT_A_CRM_READER) => {
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'Validation error' });
    expect(res.json().details).toEqual({ assigned_to: message });
  };
  const total = async (url: string) => (await ok(as(ctx, admin).get(url))).pagination.total as number;
  let outbox: ReturnType<typeof outboxReader>;
  beforeAll(() => {
    outbox = outboxReader(ctx);
  });

  test('creating a lead: a user without crm access is refused, nothing created, no mail; unknown stays "must be an existing user"', async () => {
    const last = `Refused${tag}`;
    refused(await as(ctx, admin).post('/api/crm/leads', { first_name: 'Rex', last_name: last, phone: '+63 900 111 2222', assigned_to: noCrm.id }));
    refused(await as(ctx, admin).post('/api/crm/leads', { first_name: 'Rex', last_name: last, phone: '+63 900 111 2222', assigned_to: randomUUID() }), 'must be an existing user');
    await settle();
    expect(await total(`/api/crm/leads?q=${last}`)).toBe(0);
    expect(outbox.unread(noCrm.email)).toEqual([]);
    // Crm read is enough.
    await ok(as(ctx, admin).post('/api/crm/leads', { first_name: 'Rex', last_name: last, phone: '+63 900 111 2222', assigned_to: crmReader.id }), 201);
    expect(await total(`/api/crm/leads?q=${last}`)).toBe(1);
  });

  test('changing a lead\'s assignee: refused, the lead unchanged, no mail', async () => {
    const lead = await make.lead(ctx, { assigned_to: crmReader.id });
    refused(await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: noCrm.id, notes: 'handed over' }));
    refused(await as(ctx, admin).patch(`/api/crm/leads/${lead.id}`, { assigned_to: randomUUID() }), 'must be an existing user');
    await settle();
    const after = await ok(as(ctx, admin).get(`/api/crm/leads/${lead.id}`));
    expect(after.assigned_to?.id).toBe(crmReader.id);
    expect(after.notes).not.toBe('handed over');
    expect(outbox.unread(noCrm.email)).toEqual([]);
  });

  test('writing a follow-up: refused, nothing created', async () => {
    const title = `Refused follow-up ${tag}`;
    refused(await as(ctx, admin).post('/api/crm/tasks', { title, due_at: '2031-02-01T01:00:00Z', assigned_to: noCrm.id }));
    refused(await as(ctx, admin).post('/api/crm/tasks', { title, due_at: '2031-02-01T01:00:00Z', assigned_to: randomUUID() }), 'must be an existing user');
    expect(await total(`/api/crm/tasks?q=${encodeURIComponent(title)}`)).toBe(0);
    await ok(as(ctx, admin).post('/api/crm/tasks', { title, due_at: '2031-02-01T01:00:00Z', assigned_to: crmReader.id }), 201);
    expect(await total(`/api/crm/tasks?q=${encodeURIComponent(title)}`)).toBe(1);
  });

  test('converting an inquiry: refused, no lead made, the inquiry still unconverted, no mail', async () => {
    const email = `convert-${tag}@example.com`;
    const inquiry = await make.inquiry(ctx, { name: 'Ina Inquirer', email });
    refused(await as(ctx, admin).post(`/api/crm/inquiries/${inquiry.id}/convert`, { assigned_to: noCrm.id }));
    refused(await as(ctx, admin).post(`/api/crm/inquiries/${inquiry.id}/convert`, { assigned_to: randomUUID() }), 'must be an existing user');
    await settle();
    expect((await ok(as(ctx, admin).get(`/api/crm/inquiries/${inquiry.id}`))).lead_id).toBeNull();
    expect(await total(`/api/crm/leads?q=${encodeURIComponent(email)}`)).toBe(0);
    expect(outbox.unread(noCrm.email)).toEqual([]);
    await ok(as(ctx, admin).post(`/api/crm/inquiries/${inquiry.id}/convert`, { assigned_to: crmReader.id }), 201);
    expect(await total(`/api/crm/leads?q=${encodeURIComponent(email)}`)).toBe(1);
  });

  test('a CSV lead import row assigned to a user without crm access is a bad row with that message (dry run)', async () => {
    const csv = [
      'first_name,last_name,email,assigned_to_id',
      `Ina,Nocrm,ina-${tag}@example.com,${noCrm.id}`,
      `Uma,Unknown,uma-${tag}@example.com,${randomUUID()}`,
      `Rita,Reader,rita-${tag}@example.com,${crmReader.id}`,
    ].join('\n');
    const res = await upload(admin, csv, true);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      total_rows: 3, valid_rows: 1, duplicate_rows: 0, invalid_rows: 2, errors_truncated: false,
      errors: [
        { line: 2, field: 'assigned_to_id', message: NOT_A_CRM_READER },
        { line: 3, field: 'assigned_to_id', message: 'must be an existing user' },
      ],
    });
  });
});

const BOUNDARY = '----crm-scope-reach-boundary';
/** Uploads a leads CSV file as `who` (a dry run, or a queued import). */
function upload(who: User, content: string, dryRun = false) {
  const body = Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="leads-${tag}.csv"\r\nContent-Type: text/csv\r\n\r\n`),
    Buffer.from(content, 'utf8'),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
  return as(ctx, who, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } })
    .post(`/api/crm/leads/import${dryRun ? '?dry_run=true' : ''}`, body);
}

describe('5. the imports list is scoped by who uploaded', () => {
  let importA: string;
  let importB: string;
  beforeAll(async () => {
    const csv = (who: string) => `first_name,last_name,email\n${who},Imported,${who.toLowerCase()}-import-${tag}@example.com\n`;
    importA = (await ok(upload(agentA, csv('Ann')), 202)).id;
    importB = (await ok(upload(agentB, csv('Ben')), 202)).id;
  });

  test('an own agent lists only their own imports; a colleague\'s is 404 exactly as an unknown id', async () => {
    const page = await ok(as(ctx, agentA).get('/api/crm/imports?limit=100'));
    const ids = (page.data as Row[]).map((row) => row.id);
    expect(ids).toContain(importA);
    expect(ids).not.toContain(importB);
    expect((page.data as Row[]).every((row) => row.created_by?.id === agentA.id)).toBe(true);
    expect(page.pagination.total).toBe(page.data.length);

    expect((await ok(as(ctx, agentA).get(`/api/crm/imports/${importA}`))).id).toBe(importA);
    const colleague = await as(ctx, agentA).get(`/api/crm/imports/${importB}`);
    const unknown = await as(ctx, agentA).get(`/api/crm/imports/${randomUUID()}`);
    expect(colleague.statusCode).toBe(404);
    expect(colleague.json()).toEqual(unknown.json());
  });

  test('users with scope all see every import', async () => {
    const ids = ((await ok(as(ctx, allUser).get('/api/crm/imports?limit=100'))).data as Row[]).map((row) => row.id);
    expect(ids).toEqual(expect.arrayContaining([importA, importB]));
    expect((await ok(as(ctx, allUser).get(`/api/crm/imports/${importB}`))).id).toBe(importB);
  });
});

describe('6. the activity log shows crm entries only to those who read every crm record', () => {
  let crmLog: string;
  let cmsLog: string;
  let crmTotal: number;
  let cmsTotal: number;
  beforeAll(async () => {
    await make.lead(ctx);
    await make.project(ctx);
    const crm = await ok(as(ctx, admin).get('/api/iam/activity-logs?module=crm&limit=1'));
    const cms = await ok(as(ctx, admin).get('/api/iam/activity-logs?module=cms&limit=1'));
    crmLog = crm.data[0].id;
    cmsLog = cms.data[0].id;
    crmTotal = crm.pagination.total;
    cmsTotal = cms.pagination.total;
    expect(crmTotal).toBeGreaterThan(0);
    expect(cmsTotal).toBeGreaterThan(0);
  });

  test.each([['own', () => agentA], ['department', () => deptAgent], ['no crm read', () => noCrm]] as const)(
    'crm scope %s with iam read: no crm entry in the list, detail (404 as unknown) or export; cms and iam entries remain', async (_scope, whom) => {
      const who = whom();
      const crm = await ok(as(ctx, who).get('/api/iam/activity-logs?module=crm'));
      expect(crm.pagination.total).toBe(0);
      expect(crm.data).toEqual([]);
      const page = await ok(as(ctx, who).get('/api/iam/activity-logs?limit=100'));
      expect((page.data as Row[]).filter((log) => log.module === 'crm')).toEqual([]);
      expect((page.data as Row[]).some((log) => log.module === 'iam')).toBe(true);
      expect((await ok(as(ctx, who).get('/api/iam/activity-logs?module=cms'))).pagination.total).toBe(cmsTotal);

      const hidden = await as(ctx, who).get(`/api/iam/activity-logs/${crmLog}`);
      const unknown = await as(ctx, who).get(`/api/iam/activity-logs/${randomUUID()}`);
      expect(hidden.statusCode).toBe(404);
      expect(hidden.json()).toEqual(unknown.json());
      expect((await ok(as(ctx, who).get(`/api/iam/activity-logs/${cmsLog}`))).id).toBe(cmsLog);

      const exported = await csvRows(as(ctx, who).get('/api/iam/activity-logs/export'));
      expect(exported.filter((row) => row.module === 'crm')).toEqual([]);
      expect(exported.filter((row) => row.module === 'cms').length).toBe(cmsTotal);
    });

  test.each([['crm scope all with iam read', () => allUser], ['an administrator', () => admin]] as const)('%s sees the crm entries', async (_who, whom) => {
    const who = whom();
    expect((await ok(as(ctx, who).get('/api/iam/activity-logs?module=crm'))).pagination.total).toBe(crmTotal);
    expect((await ok(as(ctx, who).get(`/api/iam/activity-logs/${crmLog}`))).module).toBe('crm');
    const exported = await csvRows(as(ctx, who).get('/api/iam/activity-logs/export?module=crm'));
    expect(exported.length).toBe(crmTotal);
    expect(exported.map((row) => row.id)).toContain(crmLog);
  });
});

describe('7. a second conversion of an inquiry', () => {
  test('409 naming no lead, also to an agent who may not read the lead the first conversion made', async () => {
    const inquiry = await make.inquiry(ctx, { name: 'Tia Twice', email: `twice-${tag}@example.com` }, agentA);
    const lead = await ok(as(ctx, admin).post(`/api/crm/inquiries/${inquiry.id}/convert`, { assigned_to: agentB.id }), 201);
    for (const who of [agentA, admin]) {
      const again = await as(ctx, who).post(`/api/crm/inquiries/${inquiry.id}/convert`, {});
      expect(again.statusCode, again.body).toBe(409);
      expect(again.json()).toEqual({ error: 'Conflict', message: 'This inquiry has already been turned into a lead' });
      expect(again.body).not.toContain(lead.id);
    }
    // The inquiry's own link shows only to those who read the lead.
    expect((await ok(as(ctx, agentA).get(`/api/crm/inquiries/${inquiry.id}`))).lead_id).toBeNull();
    expect((await ok(as(ctx, admin).get(`/api/crm/inquiries/${inquiry.id}`))).lead_id).toBe(lead.id);
  });
});

describe('8. the morning follow-up digest names a lead only to an assignee who may read it', () => {
  test('A\'s digest lists the follow-up about B\'s lead without its name or link; a user with scope all gets both', async () => {
    const leadB = await make.lead(ctx, { first_name: 'Bianca', last_name: `Hidden${tag}` }, agentB);
    const leadA = await make.lead(ctx, { first_name: 'Alma', last_name: `Visible${tag}` }, agentA);
    // 2035-06-02, 08:10 in Manila (TASK_DIGEST_HOUR 8, TASK_TIME_ZONE Asia/Manila by default): due at 10:00 and 11:00.
    const now = new Date('2035-06-02T00:10:00Z');
    await ok(as(ctx, admin).post('/api/crm/tasks', { title: `Hidden-lead call ${tag}`, due_at: '2035-06-02T02:00:00Z', assigned_to: agentA.id, lead_id: leadB.id }), 201);
    await ok(as(ctx, admin).post('/api/crm/tasks', { title: `Own-lead call ${tag}`, due_at: '2035-06-02T03:00:00Z', assigned_to: agentA.id, lead_id: leadA.id }), 201);
    await ok(as(ctx, admin).post('/api/crm/tasks', { title: `Team call ${tag}`, due_at: '2035-06-02T02:00:00Z', assigned_to: allUser.id, lead_id: leadB.id }), 201);

    const outbox = outboxReader(ctx);
    await sendTaskDigests({ config: ctx.config, database: ctx.database, mailer: ctx.app.mailer, log: ctx.app.log }, now);
    const digestOf = (who: User) => {
      const mails = outbox.unread(who.email).filter((mail) => mail.subject.startsWith('Your follow-ups for 2035-06-02'));
      expect(mails.length, `one digest to ${who.name}`).toBe(1);
      return mails[0];
    };

    const mailA = digestOf(agentA);
    expect(mailA.text).toContain(`- 10:00  Hidden-lead call ${tag}\n`);
    expect(mailA.text).toContain(`- 11:00  Own-lead call ${tag} (Alma Visible${tag}: http://localhost:3000/leads/${leadA.id})`);
    for (const part of [mailA.text, mailA.html]) {
      expect(part).toContain(`Hidden-lead call ${tag}`);
      expect(part).not.toContain('Bianca');
      expect(part).not.toContain(leadB.id);
    }
    const mailAll = digestOf(allUser);
    expect(mailAll.text).toContain(`Team call ${tag} (Bianca Hidden${tag}: http://localhost:3000/leads/${leadB.id})`);
  });
});
