import { createHash } from 'node:crypto';
import { and, asc, eq, gt, isNull, sql } from 'drizzle-orm';
import * as oidc from 'openid-client';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { type Grant, ssoProviders, users, verifications } from '../db/schema/index.js';

/** The id of the provider set by environment (SSO_OIDC_*): `/api/auth/sso/oidc`. Administrators' providers use their uuid. */
export const ENV_PROVIDER_ID = 'oidc';

/** One identity provider as the sign-in uses it, whichever configured it. */
export type SsoProvider = {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  jit: boolean;
  jitDepartmentId: string | null;
  jitGrants: Grant[];
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const envProvider = (config: Config): SsoProvider | undefined => config.ssoOidc && {
  id: ENV_PROVIDER_ID, name: config.ssoOidc.name, issuer: config.ssoOidc.issuer, clientId: config.ssoOidc.clientId,
  clientSecret: config.ssoOidc.clientSecret, scopes: config.ssoOidc.scopes, jit: false, jitDepartmentId: null, jitGrants: [],
};

const fromRow = (row: typeof ssoProviders.$inferSelect): SsoProvider => ({
  id: row.id, name: row.name, issuer: row.issuer, clientId: row.client_id, clientSecret: row.client_secret, scopes: row.scopes,
  jit: row.jit, jitDepartmentId: row.jit_department_id, jitGrants: row.jit_grants,
});

/** An enabled provider by its id, or undefined. */
export async function enabledProvider(database: Database, config: Config, id: string): Promise<SsoProvider | undefined> {
  if (id === ENV_PROVIDER_ID) return envProvider(config);
  if (!UUID.test(id)) return undefined;
  const [row] = await database.db.select().from(ssoProviders).where(and(eq(ssoProviders.id, id), eq(ssoProviders.enabled, true))).limit(1);
  return row && fromRow(row);
}

/** The providers the sign-in page offers: the environment's first, then the enabled ones by name. */
export async function enabledProviders(database: Database, config: Config): Promise<{ id: string; name: string }[]> {
  const rows = await database.db.select({ id: ssoProviders.id, name: ssoProviders.name }).from(ssoProviders)
    .where(eq(ssoProviders.enabled, true)).orderBy(asc(ssoProviders.name), asc(ssoProviders.id));
  const env = envProvider(config);
  return [...(env ? [{ id: env.id, name: env.name }] : []), ...rows];
}

/** Where the provider sends the browser back: what an administrator registers at the identity provider. */
export const redirectUriOf = (config: Config, providerId: string) => `${config.baseUrl}/api/auth/sso/${providerId}/callback`;

/** Discovered provider metadata, per issuer and client, for an hour; a failed discovery is tried again next time. */
const DISCOVERY_TTL_MS = 3_600_000;
const discovered = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();

export function clientOf(provider: SsoProvider, production: boolean): Promise<oidc.Configuration> {
  const key = createHash('sha256').update(`${provider.issuer}\n${provider.clientId}\n${provider.clientSecret}`).digest('hex');
  const cached = discovered.get(key);
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.config;
  // An http issuer (a test's or a developer's own) only outside production; production takes https alone.
  const insecure = !production && provider.issuer.startsWith('http:');
  // HTTP Basic client authentication: OpenID Connect's default (Okta's too); Google, Entra ID and Keycloak take it.
  const config = oidc.discovery(new URL(provider.issuer), provider.clientId, undefined, oidc.ClientSecretBasic(provider.clientSecret), {
    timeout: 10, ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
  for (const [old, entry] of discovered) if (Date.now() - entry.at >= DISCOVERY_TTL_MS) discovered.delete(old);
  discovered.set(key, { at: Date.now(), config });
  config.catch(() => discovered.delete(key));
  return config;
}

/** A sign-in started (its state) is good for ten minutes and for one callback. */
export const STATE_TTL_MS = 600_000;
const STATE_PREFIX = 'sso-state:';

export type PendingSignIn = { provider: string; codeVerifier: string; nonce: string };

/** Keeps what the callback needs to check the provider's answer, under the state sent with the browser. */
export async function rememberSignIn(database: Database, state: string, pending: PendingSignIn) {
  await database.db.insert(verifications).values({
    identifier: `${STATE_PREFIX}${state}`, value: JSON.stringify(pending), expiresAt: new Date(Date.now() + STATE_TTL_MS),
  });
}

/** The pending sign-in of `state`, taken once (a replay finds nothing); undefined when unknown or expired. */
export async function takeSignIn(database: Database, state: string): Promise<PendingSignIn | undefined> {
  const [row] = await database.db.delete(verifications)
    .where(eq(verifications.identifier, `${STATE_PREFIX}${state}`))
    .returning({ value: verifications.value, expiresAt: verifications.expiresAt });
  // Expired ones left behind by abandoned sign-ins go with the next sign-in that completes.
  await database.db.delete(verifications).where(and(sql`${verifications.identifier} like ${`${STATE_PREFIX}%`}`, sql`${verifications.expiresAt} < now()`));
  if (!row || row.expiresAt.getTime() <= Date.now()) return undefined;
  return JSON.parse(row.value) as PendingSignIn;
}

/** The live user with this address (compared case-insensitively), and whether a deleted one had it. */
export async function userByEmail(database: Database, email: string) {
  const rows = await database.db.select({ id: users.id, deletedAt: users.deletedAt }).from(users)
    .where(eq(users.email, email.toLowerCase())).orderBy(sql`${users.deletedAt} is null desc`).limit(1);
  const [row] = rows;
  return { live: row && !row.deletedAt ? row.id : undefined, deleted: row?.deletedAt != null };
}

/** Whether the live user with this address must sign in with single sign-on. */
export async function requiresSso(database: Database, email: string): Promise<boolean> {
  const [row] = await database.db.select({ ssoRequired: users.ssoRequired }).from(users)
    .where(and(eq(users.email, email.toLowerCase()), isNull(users.deletedAt))).limit(1);
  return row?.ssoRequired ?? false;
}

/** Whether this user must sign in with single sign-on. */
export async function userRequiresSso(database: Database, userId: string): Promise<boolean> {
  const [row] = await database.db.select({ ssoRequired: users.ssoRequired }).from(users).where(eq(users.id, userId)).limit(1);
  return row?.ssoRequired ?? false;
}

/** The user a password reset token was issued to, while it is valid. */
export async function resetTokenHolder(database: Database, token: string): Promise<string | undefined> {
  const [row] = await database.db.select({ value: verifications.value }).from(verifications)
    .where(and(eq(verifications.identifier, `reset-password:${token}`), gt(verifications.expiresAt, new Date()))).limit(1);
  return row?.value;
}
