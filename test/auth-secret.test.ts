import { afterAll, expect, test } from 'vitest';
import { revokeSessionsIfSecretChanged } from '../src/auth/secret.js';
import { createTestApp, createTestDatabase, createUser } from './helpers.js';

const database = await createTestDatabase();
afterAll(async () => { await database.close(); });

const SECRET_A = 'first-secret-that-is-long-enough-0123456789';
const SECRET_B = 'other-secret-that-is-long-enough-9876543210';

test('changing AUTH_SECRET ends every session, bearer and cookie alike (CONTRACT §4)', async () => {
  const first = await createTestApp({ AUTH_SECRET: SECRET_A }, { database });
  await revokeSessionsIfSecretChanged(database, first.config);
  const user = await createUser(first, { cms: 'r' });
  const cookie = `better-auth.session_token=${(await first.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } })).cookies[0].value}`;
  await first.close();

  // Restarting with the same secret keeps the sessions.
  const same = await createTestApp({ AUTH_SECRET: SECRET_A }, { database });
  await revokeSessionsIfSecretChanged(database, same.config);
  expect((await same.app.inject({ method: 'GET', url: '/api/auth/session', headers: user.headers })).statusCode).toBe(200);
  await same.close();

  const changed = await createTestApp({ AUTH_SECRET: SECRET_B }, { database });
  await revokeSessionsIfSecretChanged(database, changed.config);
  expect((await changed.app.inject({ method: 'GET', url: '/api/auth/session', headers: user.headers })).statusCode).toBe(401);
  expect((await changed.app.inject({ method: 'GET', url: '/api/auth/session', headers: { cookie } })).statusCode).toBe(401);
  // Signing in again works under the new secret.
  const res = await changed.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
  expect(res.statusCode).toBe(200);
  await changed.close();
});
