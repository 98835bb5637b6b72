import { afterAll, expect, test } from 'vitest';
import { revokeSessionsIfSecretChanged } from '../src/auth/secret.js';
import { as, createTestApp, createTestDatabase, createUser, none } from './helpers.js';

const database = await createTestDatabase();
afterAll(async () => { await database.close(); });

const SECRET_A = 'first-secret-that-is-long-enough-0123456789';
const SECRET_B = 'other-secret-that-is-long-enough-9876543210';

test('changing AUTH_SECRET ends every session, bearer and cookie alike (CONTRACT §4)', async () => {
  const first = await createTestApp({ AUTH_SECRET: SECRET_A }, { database });
  await revokeSessionsIfSecretChanged(database, first.config);
  const user = await createUser(first, { cms: 'r' });
  const cookie = `better-auth.session_token=${(await as(first, none).post('/api/auth/login', { email: user.email, password: user.password })).cookies[0].value}`;
  await first.close();

  // Restarting with the same secret keeps the sessions.
  const same = await createTestApp({ AUTH_SECRET: SECRET_A }, { database });
  await revokeSessionsIfSecretChanged(database, same.config);
  expect((await as(same, user).get('/api/auth/session')).statusCode).toBe(200);
  await same.close();

  const changed = await createTestApp({ AUTH_SECRET: SECRET_B }, { database });
  await revokeSessionsIfSecretChanged(database, changed.config);
  expect((await as(changed, user).get('/api/auth/session')).statusCode).toBe(401);
  expect((await as(changed, none, { headers: { cookie } }).get('/api/auth/session')).statusCode).toBe(401);
  // Signing in again works under the new secret.
  const res = await as(changed, none).post('/api/auth/login', { email: user.email, password: user.password });
  expect(res.statusCode).toBe(200);
  await changed.close();
});
