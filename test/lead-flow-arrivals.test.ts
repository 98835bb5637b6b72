import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openDatabase } from '../src/db/client.js';
import { make } from './factories.js';
import { as, createTestApp, createTestDatabase, createUser, eventually, serverUrl, type TestContext } from './helpers.js';

/**
 * Lead flow where leads arrive in bulk or on several instances: a CSV import's rows without an assignee are routed
 * (channel `import`); two app instances on one PostgreSQL database share a round robin exactly.
 */

type User = Awaited<ReturnType<typeof createUser>>;

const BOUNDARY = '----pms-lead-flow-boundary-7d1e';
const multipart = (content: string) => Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="leads.csv"\r\nContent-Type: text/csv\r\n\r\n`),
  Buffer.from(content, 'utf8'),
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);

async function roundRobin(ctx: TestContext, admin: User, members: User[], channel: string) {
  const group = await as(ctx, admin).post('/api/crm/lead-flow/groups', { name: `Turns ${channel}`, kind: 'round_robin', members: members.map((m) => m.id) });
  expect(group.statusCode, group.body).toBe(201);
  const rule = await as(ctx, admin).post('/api/crm/lead-flow/rules', { name: `By ${channel}`, channel, assign_group_id: group.json().id });
  expect(rule.statusCode, rule.body).toBe(201);
}

const assignedCount = async (ctx: TestContext, who: User, user: User, q: string) =>
  (await as(ctx, who).get(`/api/crm/leads?assigned_to=${user.id}&q=${q}&limit=1`)).json().pagination.total as number;

describe('a CSV import', () => {
  let ctx: TestContext;
  let admin: User;
  let agents: User[];
  beforeAll(async () => {
    ctx = await createTestApp({}, { jobs: true });
    admin = await createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' });
    agents = [await createUser(ctx, { crm: 'rw' }), await createUser(ctx, { crm: 'rw' })];
  });
  afterAll(async () => ctx?.close());

  test('routes its rows without an assignee (channel import), in turn; rows with one keep it', async () => {
    await roundRobin(ctx, admin, agents, 'import');
    const rows = Array.from({ length: 6 }, (_, i) => `Imported,Row${i},row${i}@example.com,`);
    rows.push(`Imported,Kept,kept@example.com,${admin.id}`);
    const res = await as(ctx, admin, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } })
      .post('/api/crm/leads/import', multipart(`first_name,last_name,email,assigned_to_id\n${rows.join('\n')}\n`));
    expect(res.statusCode, res.body).toBe(202);
    const done = await eventually(async () => {
      const body = (await as(ctx, admin).get(`/api/crm/imports/${res.json().id}`)).json();
      return body.status === 'completed' || body.status === 'failed' ? body : undefined;
    }, 'the import to finish');
    expect(done).toMatchObject({ status: 'completed', created: 7 });
    expect(await Promise.all(agents.map((agent) => assignedCount(ctx, admin, agent, 'Imported')))).toEqual([3, 3]);
    expect(await assignedCount(ctx, admin, admin, 'Imported')).toBe(1);
    // Leads made by hand through the API are not the import's channel: untouched.
    const made = await make.lead(ctx, {}, admin);
    expect((await as(ctx, admin).get(`/api/crm/leads/${made.id}`)).json().assigned_to).toBeNull();
  });
});

describe.skipIf(!serverUrl)('two app instances on one PostgreSQL database', () => {
  let first: TestContext;
  let second: TestContext;
  let closeSecondDatabase: () => Promise<void>;
  beforeAll(async () => {
    first = await createTestApp();
    const url = (first.database as { url?: string }).url!;
    const other = await openDatabase({ url });
    closeSecondDatabase = () => other.close();
    second = await createTestApp({}, { database: other });
  });
  afterAll(async () => {
    await second?.close();
    await closeSecondDatabase?.();
    await first?.close();
  });

  test('thirty website inquiries, half through each instance, at once: a round robin of three gives exactly ten each', async () => {
    const admin = await createUser(first, { cms: 'rwd', crm: 'rwd', iam: 'rwd' });
    const members = [await createUser(first, { crm: 'rw' }), await createUser(first, { crm: 'rw' }), await createUser(first, { crm: 'rw' })];
    await roundRobin(first, admin, members, 'website');
    const sent = await Promise.all(Array.from({ length: 30 }, (_, i) => as(i % 2 ? second : first, 'unused')
      .post('/api/public/inquiries', { name: `Twin Guest${i}`, email: `twin-${i}@example.com`, subject: 'Azure', message: 'Hello' })));
    expect(sent.map((res) => res.statusCode)).toEqual(Array(30).fill(201));
    expect(await Promise.all(members.map((member) => assignedCount(second, admin, member, 'Twin')))).toEqual([10, 10, 10]);
  });
});
