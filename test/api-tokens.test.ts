import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { activityLogs, apiTokens } from '../src/db/schema/index.js';
import { as, createTestApp, createUser, none, PATIENCE_MS, type TestContext } from './helpers.js';
import { outboxReader, resetTokenOf } from './mail.js';

// API tokens for integrations.

let ctx: TestContext;
let owner: Awaited<ReturnType<typeof createUser>>;
let admin: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp({ READ_RATE_LIMIT: '40' });
  owner = await createUser(ctx, { crm: 'rwd', cms: 'r' });
  admin = await createUser(ctx, { iam: 'rwd' });
});
afterAll(() => ctx.close());

const crmWrite = [{ module: 'crm', can_read: true, can_write: true, can_delete: false }];

async function createToken(who: { token: string } = owner, body: Record<string, unknown> = {}) {
  const res = await as(ctx, who).post('/api/auth/tokens', { name: 'Website form', permissions: crmWrite, ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; token: string; prefix: string; message: string };
}

describe('creating a token', () => {
  test('answers the token once; lists show only its prefix; creation is audited without the secret', async () => {
    const created = await createToken();
    expect(created.token).toMatch(/^pms_[A-Za-z0-9_-]{43}$/);
    expect(created.token.startsWith(created.prefix)).toBe(true);
    expect(created.message).toBe('API token created');
    const listed = await as(ctx, owner).get('/api/auth/tokens');
    expect(listed.statusCode).toBe(200);
    const mine = listed.json().data.find((t: { id: string }) => t.id === created.id);
    expect(mine).toEqual({
      id: created.id, name: 'Website form', prefix: created.prefix, permissions: crmWrite, expires_at: null, last_used_at: null,
      user: { id: owner.id, name: owner.name }, created_at: expect.any(String),
    });
    expect(listed.body).not.toContain(created.token);
    const [stored] = await ctx.database.db.select().from(apiTokens).where(eq(apiTokens.id, created.id));
    expect(stored.token_hash).not.toContain(created.token.slice(4));
    const [log] = await ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, created.id));
    expect(log).toMatchObject({ action: 'create', module: 'iam', resource: 'api_tokens', user_id: owner.id });
    expect(JSON.stringify(log.changes)).not.toContain('token_hash');
    expect(JSON.stringify(log.changes)).not.toContain(created.token);
    expect(log.changes).toMatchObject({ after: { name: 'Website form', prefix: created.prefix } });
  });

  test('cannot give more than the creator holds', async () => {
    const res = await as(ctx, owner).post('/api/auth/tokens', { name: 'Too much', permissions: [{ module: 'iam', can_read: true, can_write: false, can_delete: false }, { module: 'cms', can_read: true, can_write: true, can_delete: false }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().details.permissions).toBe('must not exceed your own permissions (you do not hold iam.can_read, cms.can_write)');
  });

  test('refuses a module named twice, an expiry in the past, a missing name', async () => {
    const twice = await as(ctx, owner).post('/api/auth/tokens', { name: 'x', permissions: [...crmWrite, ...crmWrite] });
    expect(twice.json().details).toEqual({ permissions: 'must name each module once' });
    const past = await as(ctx, owner).post('/api/auth/tokens', { name: 'x', permissions: crmWrite, expires_at: '2020-01-01T00:00:00Z' });
    expect(past.json().details).toEqual({ expires_at: 'must be in the future' });
    const unnamed = await as(ctx, owner).post('/api/auth/tokens', { permissions: crmWrite });
    expect(unnamed.json().details).toEqual({ name: 'is required' });
  });

  test('a token cannot create tokens nor manage the account', async () => {
    const { token } = await createToken();
    const res = await as(ctx, token).post('/api/auth/tokens', { name: 'child', permissions: crmWrite });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/sign in with e-mail and password/);
    expect((await as(ctx, token).post('/api/auth/change-password', { currentPassword: owner.password, newPassword: 'N3w!password' })).statusCode).toBe(403);
    expect((await as(ctx, token).post('/api/auth/logout', {})).statusCode).toBe(403);
    const session = await as(ctx, token).get('/api/auth/session');
    expect(session.statusCode).toBe(200);
    expect(session.json().user.id).toBe(owner.id);
    expect(session.json().permissions).toEqual(crmWrite);
  });
});

describe('a new password revokes every token of the user', () => {
  /** A user with two tokens, each used once (so cached), and a token of someone else that must survive. */
  async function withTokens() {
    const user = await createUser(ctx, { crm: 'rw' });
    const tokens = [await createToken(user), await createToken(user)];
    const bystander = await createToken(owner);
    for (const { token } of [...tokens, bystander]) expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    return { user, tokens, bystander };
  }

  /** Each token refused on the very next request, its revocation audited as done by `by`; the bystander still works. */
  async function expectRevoked(tokens: { id: string; token: string }[], by: string, bystander: { token: string }) {
    for (const { id, token } of tokens) {
      const res = await as(ctx, token).get('/api/crm/leads');
      expect(res.statusCode).toBe(401);
      expect(await ctx.database.db.select().from(apiTokens).where(eq(apiTokens.id, id))).toEqual([]);
      const [log] = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource_id, id), eq(activityLogs.action, 'delete')));
      expect(log).toMatchObject({ module: 'iam', resource: 'api_tokens', user_id: by });
    }
    expect((await as(ctx, bystander.token).get('/api/crm/leads')).statusCode).toBe(200);
  }

  test('changing one\'s password', async () => {
    const { user, tokens, bystander } = await withTokens();
    const res = await as(ctx, user).post('/api/auth/change-password', { currentPassword: user.password, newPassword: 'N3w-passw0rd!' });
    expect(res.statusCode, res.body).toBe(200);
    await expectRevoked(tokens, user.id, bystander);
    // The session that changed it stays.
    expect((await as(ctx, user).get('/api/auth/session')).statusCode).toBe(200);
  });

  test('a wrong current password revokes nothing', async () => {
    const { user, tokens } = await withTokens();
    const res = await as(ctx, user).post('/api/auth/change-password', { currentPassword: 'Wr0ng-passw0rd!', newPassword: 'N3w-passw0rd!' });
    expect(res.statusCode).toBe(400);
    for (const { token } of tokens) expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
  });

  test('an administrator setting the password (PATCH /api/iam/users/:id)', async () => {
    const { user, tokens, bystander } = await withTokens();
    const res = await as(ctx, admin).patch(`/api/iam/users/${user.id}`, { password: 'Adm1n-set-passw0rd!' });
    expect(res.statusCode, res.body).toBe(200);
    await expectRevoked(tokens, admin.id, bystander);
    // A change of anything else revokes nothing.
    const other = await createUser(ctx, { crm: 'rw' });
    const kept = await createToken(other);
    expect((await as(ctx, admin).patch(`/api/iam/users/${other.id}`, { name: 'Renamed' })).statusCode).toBe(200);
    expect((await as(ctx, kept.token).get('/api/crm/leads')).statusCode).toBe(200);
  });

  test('a password reset', async () => {
    const { user, tokens, bystander } = await withTokens();
    const outbox = outboxReader(ctx);
    expect((await as(ctx, none).post('/api/auth/forgot-password', { email: user.email })).statusCode).toBe(200);
    const token = resetTokenOf(await outbox.next(user.email));
    const res = await as(ctx, none, { remoteAddress: '203.0.113.9' }).post('/api/auth/reset-password', { token, password: 'Res3t-passw0rd!' }, { 'user-agent': 'reset-agent' });
    expect(res.statusCode, res.body).toBe(200);
    await expectRevoked(tokens, user.id, bystander);
    // Audited from where the reset came.
    const [log] = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource_id, tokens[0].id), eq(activityLogs.action, 'delete')));
    expect(log).toMatchObject({ ip_address: '203.0.113.9', user_agent: 'reset-agent' });
  });
});

describe('using a token', () => {
  test('acts as its creator with its own permissions', async () => {
    const { token } = await createToken();
    const lead = await as(ctx, token).post('/api/crm/leads', { first_name: 'Token', last_name: 'Made', email: 'token.made@example.com' });
    expect(lead.statusCode, lead.body).toBe(201);
    const [log] = await ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, lead.json().id));
    expect(log.user_id).toBe(owner.id);
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    // The creator may delete and read cms; the token was given neither.
    expect((await as(ctx, token).delete(`/api/crm/leads/${lead.json().id}`)).statusCode).toBe(403);
    expect((await as(ctx, token).get('/api/cms/projects')).statusCode).toBe(403);
  });

  test('records when it was last used', async () => {
    const { id, token } = await createToken();
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    await expect.poll(async () => (await ctx.database.db.select().from(apiTokens).where(eq(apiTokens.id, id)))[0].last_used_at, { timeout: PATIENCE_MS }).not.toBeNull();
  });

  test('a wrong, malformed or made-up token is a 401', async () => {
    for (const bad of ['pms_nope', `pms_${'A'.repeat(43)}`, 'pms_']) {
      const res = await as(ctx, bad).get('/api/crm/leads');
      expect(res.statusCode, bad).toBe(401);
      expect(res.json()).toEqual({ error: 'Authentication required' });
    }
  });

  test('revoked: refused on the very next request (also after it was cached)', async () => {
    const { id, token } = await createToken();
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    const revoked = await as(ctx, owner).delete(`/api/auth/tokens/${id}`);
    expect(revoked.json()).toEqual({ message: 'API token revoked' });
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(401);
    const [log] = await ctx.database.db.select().from(activityLogs).where(eq(activityLogs.resource_id, id)).orderBy(activityLogs.created_at);
    expect(log).toBeDefined();
    const logs = await ctx.database.db.select({ action: activityLogs.action }).from(activityLogs).where(eq(activityLogs.resource_id, id));
    expect(logs.map((l) => l.action).sort()).toEqual(['create', 'delete']);
  });

  test('someone else\'s token is not yours to revoke (404); an administrator can revoke any', async () => {
    const other = await createUser(ctx, { crm: 'rw' });
    const { id, token } = await createToken(other);
    expect((await as(ctx, owner).delete(`/api/auth/tokens/${id}`)).statusCode).toBe(404);
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    const listed = await as(ctx, admin).get(`/api/iam/api-tokens?user_id=${other.id}`);
    expect(listed.json().data.map((t: { id: string }) => t.id)).toEqual([id]);
    expect((await as(ctx, admin).delete(`/api/iam/api-tokens/${id}`)).statusCode).toBe(200);
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(401);
    expect((await as(ctx, owner).get('/api/iam/api-tokens')).statusCode).toBe(403);
  });

  test('expired: refused', async () => {
    const { id, token } = await createToken(owner, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    // Changed behind the API's back: every instance hears of it from the database (NOTIFY at commit), within moments.
    await ctx.database.db.update(apiTokens).set({ expires_at: new Date(Date.now() - 1000) }).where(eq(apiTokens.id, id));
    await expect.poll(async () => (await as(ctx, token).get('/api/crm/leads')).statusCode, { timeout: PATIENCE_MS }).toBe(401);
  });

  test('a right the creator loses, the token loses; a deleted creator\'s tokens stop working', async () => {
    const creator = await createUser(ctx, { crm: 'rw' });
    const { token } = await createToken(creator);
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    const access = (await as(ctx, admin).get(`/api/iam/module-access/${creator.id}`)).json().data[0];
    expect((await as(ctx, admin).patch(`/api/iam/module-access/${access.id}`, { can_read: false })).statusCode).toBe(200);
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(403);
    expect((await as(ctx, token).post('/api/crm/leads', { first_name: 'Still', last_name: 'Writes', phone: '+63 900 111 2222' })).statusCode).toBe(201);
    expect((await as(ctx, admin).delete(`/api/iam/users/${creator.id}`)).statusCode).toBe(200);
    expect((await as(ctx, token).post('/api/crm/leads', { first_name: 'No', last_name: 'Longer', phone: '+63 900 111 3333' })).statusCode).toBe(401);
  });

  test('each token has its own rate-limit buckets', async () => {
    const user = await createUser(ctx, { crm: 'r' });
    const { token } = await createToken(user, { permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
    let last = 0;
    for (let i = 0; i < 41; i++) last = (await as(ctx, token).get('/api/crm/leads?limit=1')).statusCode;
    expect(last).toBe(429);
    // The creator's own session still has its whole bucket.
    expect((await as(ctx, user).get('/api/crm/leads?limit=1')).statusCode).toBe(200);
  });
});
