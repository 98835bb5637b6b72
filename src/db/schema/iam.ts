import { sql } from 'drizzle-orm';
import { bigint, boolean, check, customType, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, id, ts, updatedAt } from './common.js';

export const MODULES = ['cms', 'crm', 'iam'] as const;
export type ModuleName = (typeof MODULES)[number];
/** `privacy_export`, `privacy_erase`: a person's data exported or erased (src/modules/crm/privacy). */
export const ACTIONS = ['create', 'update', 'delete', 'privacy_export', 'privacy_erase'] as const;
/**
 * A user's record scope in the crm module: `all` records (the default), those of their `department` (owned
 * by anyone in it) or their `own`. Which users own a record: the resource's `ownership` (src/data/resource.ts).
 */
export const RECORD_SCOPES = ['all', 'department', 'own'] as const;
export type RecordScope = (typeof RECORD_SCOPES)[number];

export const departments = pgTable('departments', {
  id: id(),
  name: text('name').notNull(),
  /** Who a late lead of the department's agents is escalated to (speed to lead; migration 0020). No foreign key: users name departments. */
  manager_id: uuid('manager_id'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [uniqueIndex('departments_name_key').on(sql`lower(${t.name})`)]);

/**
 * Better Auth's user model (its field names are the object keys) plus our columns.
 * Deleted users are kept as tombstones (deletedAt set, e-mail kept) so records that name them keep the name and
 * e-mail they had; an address is unique among users that are not deleted, so a new user may take it again.
 * Better Auth sees only the live ones: it works through the `live_users` view (migration 0007), declared with the
 * same columns in src/auth/auth.ts (outside this schema, so drizzle-kit does not take it for a table).
 */
export const userColumns = () => ({
  id: id(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  emailVerified: boolean('email_verified').notNull().default(false),
  image: text('image'),
  twoFactorEnabled: boolean('two_factor_enabled').notNull().default(false),
  departmentId: uuid('department_id').references(() => departments.id, { onDelete: 'restrict' }),
  deletedAt: ts('deleted_at'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});
export const users = pgTable('users', {
  ...userColumns(),
  /** Signs in only through an identity provider (single sign-on): password sign-in and reset are refused. */
  ssoRequired: boolean('sso_required').notNull().default(false),
}, (t) => [
  uniqueIndex('users_email_key').on(t.email).where(sql`${t.deletedAt} is null`),
  index('users_created_idx').on(t.createdAt, t.id).where(sql`${t.deletedAt} is null`),
  index('users_name_idx').on(t.name, t.id).where(sql`${t.deletedAt} is null`),
  index('users_department_idx').on(t.departmentId, t.createdAt),
]);

export const sessions = pgTable('sessions', {
  id: id(),
  token: text('token').notNull(),
  expiresAt: ts('expires_at').notNull(),
  ipAddress: text('ip_address'),
  userAgent: text('user_agent'),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
}, (t) => [uniqueIndex('sessions_token_key').on(t.token), index('sessions_user_idx').on(t.userId)]);

export const accounts = pgTable('accounts', {
  id: id(),
  accountId: text('account_id').notNull(),
  providerId: text('provider_id').notNull(),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  accessToken: text('access_token'),
  refreshToken: text('refresh_token'),
  idToken: text('id_token'),
  accessTokenExpiresAt: ts('access_token_expires_at'),
  refreshTokenExpiresAt: ts('refresh_token_expires_at'),
  scope: text('scope'),
  password: text('password'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
}, (t) => [index('accounts_user_idx').on(t.userId)]);

export const verifications = pgTable('verifications', {
  id: id(),
  identifier: text('identifier').notNull(),
  value: text('value').notNull(),
  expiresAt: ts('expires_at').notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
}, (t) => [index('verifications_identifier_idx').on(t.identifier)]);

export const twoFactors = pgTable('two_factors', {
  id: id(),
  secret: text('secret').notNull(),
  backupCodes: text('backup_codes').notNull(),
  userId: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  verified: boolean('verified').default(true),
  failedVerificationCount: integer('failed_verification_count').default(0),
  lockedUntil: ts('locked_until'),
}, (t) => [index('two_factors_user_idx').on(t.userId)]);

/** TOTP codes accepted lately, per user: a code is accepted once (RFC 6238 §5.2); rows older than its window are pruned. */
export const usedTotpCodes = pgTable('used_totp_codes', {
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  code: text('code').notNull(),
  used_at: createdAt('used_at'),
}, (t) => [uniqueIndex('used_totp_codes_user_code_key').on(t.user_id, t.code)]);

export const moduleAccess = pgTable('module_access', {
  id: id(),
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  module: text('module', { enum: MODULES }).notNull(),
  can_read: boolean('can_read').notNull().default(false),
  can_write: boolean('can_write').notNull().default(false),
  can_delete: boolean('can_delete').notNull().default(false),
  /** Which records of the module the user sees (crm only; migration 0015): see RECORD_SCOPES. */
  scope: text('scope', { enum: RECORD_SCOPES }).notNull().default('all'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('module_access_user_module_key').on(t.user_id, t.module),
  check('module_access_module_check', sql`${t.module} in ('cms', 'crm', 'iam')`),
  check('module_access_scope_check', sql`${t.scope} in ('all', 'department', 'own')`),
  check('module_access_scope_module_check', sql`${t.scope} = 'all' or ${t.module} = 'crm'`),
]);

/** A token's own module flags (at most its creator's when created; its creator's current flags bound them at use). */
export type TokenPermission = { module: ModuleName; can_read: boolean; can_write: boolean; can_delete: boolean };

/**
 * API tokens for integrations: they act as their creator with their own (narrower) permissions. Only the SHA-256 of
 * the token is kept; `prefix` (its first characters) lets people recognise it in a list.
 */
export const apiTokens = pgTable('api_tokens', {
  id: id(),
  user_id: uuid('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  token_hash: text('token_hash').notNull(),
  prefix: text('prefix').notNull(),
  permissions: jsonb('permissions').$type<TokenPermission[]>().notNull(),
  expires_at: ts('expires_at'),
  last_used_at: ts('last_used_at'),
  created_at: createdAt(),
}, (t) => [
  uniqueIndex('api_tokens_hash_key').on(t.token_hash),
  index('api_tokens_user_idx').on(t.user_id, t.created_at, t.id),
  index('api_tokens_created_idx').on(t.created_at, t.id),
]);

export const activityLogs = pgTable('activity_logs', {
  id: id(),
  // No foreign key: the audit trail outlives its actors and must never block a change.
  user_id: uuid('user_id'),
  action: text('action', { enum: ACTIONS }).notNull(),
  module: text('module', { enum: MODULES }).notNull(),
  resource: text('resource').notNull(),
  resource_id: uuid('resource_id').notNull(),
  changes: jsonb('changes').notNull(),
  ip_address: text('ip_address'),
  user_agent: text('user_agent'),
  created_at: createdAt(),
  /** The entry this change restores (migration 0017): a record set back to that change's state, or recreated from the trash. */
  restored_from: uuid('restored_from'),
}, (t) => [
  index('activity_logs_created_idx').on(t.created_at, t.id),
  index('activity_logs_user_idx').on(t.user_id, t.created_at, t.id),
  index('activity_logs_module_idx').on(t.module, t.created_at, t.id),
  index('activity_logs_action_idx').on(t.action, t.created_at, t.id),
  index('activity_logs_resource_idx').on(t.resource_id),
  index('activity_logs_resource_name_idx').on(t.resource, t.created_at, t.id),
]);

/** PostgreSQL's 64-bit transaction id: compared with snapshots, it says which changes a count has already seen. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * Append-only change log: one row per changed record (its table row before and after), written in the change's
 * transaction and stamped with that transaction's id. Many writers append at once without touching a common row;
 * a cached list total is brought forward by the changes its snapshot had not seen. A row without `row_id` says
 * "this resource changed in ways not listed" (a bulk write): totals of that resource are recounted. Kept briefly.
 */
export const changeLog = pgTable('change_log', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  xid: xid8('xid').notNull().default(sql`pg_current_xact_id()`),
  resource: text('resource').notNull(),
  row_id: uuid('row_id'),
  before: jsonb('before'),
  after: jsonb('after'),
  created_at: createdAt(),
}, (t) => [index('change_log_resource_xid_idx').on(t.resource, t.xid)]);

/** Per-module flags a user gets (module_access rows), as a provider's just-in-time users get them. */
export type Grant = { module: ModuleName; can_read: boolean; can_write: boolean; can_delete: boolean };

/**
 * OpenID Connect identity providers staff may sign in with (single sign-on), as an administrator configures them.
 * `client_secret` is never answered, audited or copied to the change log (as webhook secrets). With `jit` on, a person
 * the provider vouches for and the service does not know becomes a user with `jit_department_id` and `jit_grants`.
 */
export const ssoProviders = pgTable('sso_providers', {
  id: id(),
  name: text('name').notNull(),
  issuer: text('issuer').notNull(),
  client_id: text('client_id').notNull(),
  client_secret: text('client_secret').notNull(),
  scopes: text('scopes').notNull().default('openid email profile'),
  enabled: boolean('enabled').notNull().default(true),
  jit: boolean('jit').notNull().default(false),
  jit_department_id: uuid('jit_department_id').references(() => departments.id, { onDelete: 'set null' }),
  jit_grants: jsonb('jit_grants').$type<Grant[]>().notNull().default([]),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [index('sso_providers_created_idx').on(t.created_at, t.id)]);

/** Small facts the service keeps about itself (e.g. the fingerprint of the secret sessions were issued under). */
export const serviceSettings = pgTable('service_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updated_at: updatedAt(),
});
