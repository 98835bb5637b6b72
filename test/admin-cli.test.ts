import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as OTPAuth from 'otpauth';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runAdmin } from '../src/cli/admin.js';
import { openDatabase } from '../src/db/client.js';
import { activityLogs, trash } from '../src/db/schema/index.js';
import { compiled } from './compiled.js';
import { adminOf, make } from './factories.js';
import { as, createTestApp, createTestDatabase, pgliteDataDir, none, serverUrl, type TestContext } from './helpers.js';

// `npm run admin -- …` creates a user, resets a password, disables two-factor; each audited.

const dataDir = mkdtempSync(join(tmpdir(), 'pms-admin-'));
let server: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  if (serverUrl) server = await createTestDatabase();
  else await pgliteDataDir(join(dataDir, 'pglite'));
  env = { DATA_DIR: dataDir, AUTH_SECRET: 'admin-cli-secret-0123456789-0123456789', BCRYPT_COST: '4', LOG_LEVEL: 'silent', ...(server ? { DATABASE_URL: server.url! } : {}) };
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The service on the same database, for as long as `check` runs (PGlite: one process at a time, so closed after). */
async function withService<T>(check: (ctx: TestContext) => Promise<T>): Promise<T> {
  const database = server ?? (await openDatabase({ dataDir: join(dataDir, 'pglite') }));
  // Its own DATA_DIR (a test app removes its own when it closes); the database is the one the command line uses.
  const { DATA_DIR: _dataDir, ...appEnv } = env;
  const ctx = await createTestApp(appEnv, { database });
  try {
    return await check(ctx);
  } finally {
    await ctx.close();
    if (!server) await database.close();
  }
}
const login = (ctx: TestContext, email: string, password: string) => as(ctx, none).post('/api/auth/login', { email, password });
const passwordIn = (text: string) => /password:? (\S+) \(shown once\)/i.exec(text)?.[1];

describe('npm run admin', () => {
  test('create-user: signs in with the printed password and the flags given; audited as the command line', async () => {
    const out = await runAdmin(['create-user', '--email', 'Ops@Example.com', '--name', 'Ops Person', '--grant', 'crm=rw,cms=r'], env);
    expect(out).toMatch(/^created ops@example.com \(/);
    const password = passwordIn(out)!;
    await withService(async (ctx) => {
      const res = await login(ctx, 'ops@example.com', password);
      expect(res.statusCode, res.body).toBe(200);
      const session = await as(ctx, res.json().session.token).get('/api/auth/session');
      expect(session.json().permissions).toEqual(expect.arrayContaining([
        { module: 'crm', can_read: true, can_write: true, can_delete: false },
        { module: 'cms', can_read: true, can_write: false, can_delete: false },
      ]));
      const logs = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.resource, 'users'), eq(activityLogs.resource_id, session.json().user.id)));
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ action: 'create', user_id: null, user_agent: 'npm run admin' });
    });
  });

  test('create-user refuses a taken address and a weak password, saying why', async () => {
    await expect(runAdmin(['create-user', '--email', 'ops@example.com', '--name', 'Again', '--password', 'Str0ng!pass'], env)).rejects.toThrow('A user with this e-mail address already exists');
    await expect(runAdmin(['create-user', '--email', 'weak@example.com', '--name', 'Weak', '--password', 'short'], env)).rejects.toMatchObject({ body: { details: { password: expect.any(String) } } });
    await expect(runAdmin(['create-user', '--email', 'x@example.com', '--name', 'X', '--grant', 'crm=all'], env)).rejects.toThrow('--grant takes module=flags pairs');
  });

  test('reset-password: the new password signs in, the old one and every session end', async () => {
    const out = await runAdmin(['create-user', '--email', 'forgetful@example.com', '--name', 'Forgetful', '--password', 'First!pass1', '--admin'], env);
    expect(passwordIn(out)).toBeUndefined();
    const token = await withService(async (ctx) => (await login(ctx, 'forgetful@example.com', 'First!pass1')).json().session.token as string);
    expect(await runAdmin(['reset-password', '--email', 'forgetful@example.com', '--password', 'Second!pass2'], env)).toBe('new password set for forgetful@example.com; their sessions ended');
    await withService(async (ctx) => {
      expect((await as(ctx, token).get('/api/auth/session')).statusCode).toBe(401);
      expect((await login(ctx, 'forgetful@example.com', 'First!pass1')).statusCode).toBe(401);
      expect((await login(ctx, 'forgetful@example.com', 'Second!pass2')).statusCode).toBe(200);
      const [log] = await ctx.database.db.select().from(activityLogs).where(and(eq(activityLogs.action, 'update'), eq(activityLogs.user_agent, 'npm run admin')));
      expect(log.changes).toEqual({ before: { credential: null }, after: { credential: 'replaced' } });
    });
    await expect(runAdmin(['reset-password', '--email', 'nobody@example.com'], env)).rejects.toThrow('User not found');
  });

  test('disable-2fa: a locked-out user signs in with the password alone again', async () => {
    await runAdmin(['create-user', '--email', 'locked@example.com', '--name', 'Locked', '--password', 'Locked!pass1', '--admin'], env);
    await withService(async (ctx) => {
      const token = (await login(ctx, 'locked@example.com', 'Locked!pass1')).json().session.token;
      const enabled = await as(ctx, token).post('/api/auth/two-factor/enable', { password: 'Locked!pass1' });
      const totp = OTPAuth.URI.parse(enabled.json().totpURI) as OTPAuth.TOTP;
      expect((await as(ctx, token).post('/api/auth/two-factor/confirm', { code: totp.generate() })).statusCode).toBe(200);
      expect((await login(ctx, 'locked@example.com', 'Locked!pass1')).json()).toMatchObject({ twoFactorRequired: true });
    });
    expect(await runAdmin(['disable-2fa', '--email', 'locked@example.com'], env)).toBe('two-factor authentication is off for locked@example.com');
    await withService(async (ctx) => {
      const res = await login(ctx, 'locked@example.com', 'Locked!pass1');
      expect(res.statusCode).toBe(200);
      expect(res.json().session.token).toEqual(expect.any(String));
      const logs = await ctx.database.db.select().from(activityLogs).where(eq(activityLogs.user_agent, 'npm run admin'));
      expect(logs.map((log) => log.changes)).toContainEqual({ before: { twoFactorEnabled: true }, after: { twoFactorEnabled: false } });
    });
    expect(await runAdmin(['disable-2fa', '--email', 'locked@example.com'], env)).toBe('locked@example.com had no two-factor authentication; nothing changed');
  });

  test('purge-trash: entries deleted more than TRASH_RETENTION_DAYS ago go, younger ones stay restorable', async () => {
    const [old, young] = await withService(async (ctx) => {
      const admin = await adminOf(ctx);
      const leads = [await make.lead(ctx), await make.lead(ctx)];
      for (const lead of leads) expect((await as(ctx, admin).delete(`/api/crm/leads/${lead.id}`)).statusCode).toBe(200);
      const entries = await Promise.all(leads.map(async (lead) => (await ctx.database.db.select().from(trash).where(eq(trash.record_id, lead.id)))[0]));
      // The first was deleted 31 days ago (the default retention is 30).
      await ctx.database.db.update(trash).set({ deleted_at: sql`now() - interval '31 days'` }).where(eq(trash.id, entries[0].id));
      return entries;
    });
    expect(await runAdmin(['purge-trash'], env)).toBe('Purged 1 trash entry deleted more than 30 days ago');
    expect(await runAdmin(['purge-trash'], env)).toBe('Purged 0 trash entries deleted more than 30 days ago');
    expect(await runAdmin(['purge-trash'], { ...env, TRASH_RETENTION_DAYS: '1' })).toBe('Purged 0 trash entries deleted more than 1 days ago');
    await expect(runAdmin(['purge-trash', '--email', 'x@example.com'], env)).rejects.toThrow('purge-trash takes no options (got --email)');
    await withService(async (ctx) => {
      const admin = await adminOf(ctx);
      expect((await as(ctx, admin).post(`/api/crm/trash/${old.id}/restore`)).statusCode).toBe(404);
      const restored = await as(ctx, admin).post(`/api/crm/trash/${young.id}/restore`);
      expect(restored.statusCode, restored.body).toBe(200);
    });
  });

  test.skipIf(Boolean(serverUrl))('refuses to open the embedded database while the service runs on it', async () => {
    writeFileSync(join(dataDir, 'service.pid'), String(process.ppid));
    try {
      await expect(runAdmin(['reset-password', '--email', 'ops@example.com'], env)).rejects.toThrow(/is running on the embedded database.*stop it first/);
    } finally {
      rmSync(join(dataDir, 'service.pid'));
    }
  });

  test('as a process: usage on a bad command, exit code 1', async () => {
    const run = promisify(execFile);
    const failed = await run(process.execPath, [...await compiled('cli/admin.ts'), 'make-coffee'], { env: { ...process.env, ...env } }).catch((err: { code: number; stderr: string }) => err);
    expect((failed as { code: number }).code).toBe(1);
    expect((failed as { stderr: string }).stderr).toContain('admin: unknown command "make-coffee"');
    expect((failed as { stderr: string }).stderr).toContain('Usage: npm run admin -- <command>');
    expect((failed as { stderr: string }).stderr).toContain('purge-trash');
  });
});
