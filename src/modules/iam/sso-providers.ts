import { type Static, Type } from '@sinclair/typebox';
import { asc, eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import { ENV_PROVIDER_ID, redirectUriOf } from '../../auth/sso.js';
import type { Config } from '../../config.js';
import { defineResource } from '../../data/resource.js';
import { withSecret } from '../../data/secret-columns.js';
import type { Executor } from '../../db/client.js';
import { departments, MODULES, ssoProviders } from '../../db/schema/index.js';
import { notFound, validationError } from '../../errors.js';
import { describeRoutes } from '../../http/openapi.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { errorResponses, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

const providers = ssoProviders;

/** Identity providers for single sign-on, as administrators configure them; the client secret never shows. */
export const ssoProviderResource = defineResource({
  name: 'sso_providers',
  module: 'iam',
  label: 'SSO provider',
  table: providers,
  id: providers.id,
  view: {
    fields: {
      id: providers.id, name: providers.name, issuer: providers.issuer, client_id: providers.client_id, scopes: providers.scopes,
      enabled: providers.enabled, jit: providers.jit, jit_department: { id: departments.id, name: departments.name },
      jit_grants: providers.jit_grants, created_at: providers.created_at, updated_at: providers.updated_at,
    },
    joins: (query) => query.leftJoin(departments, eq(departments.id, providers.jit_department_id)),
  },
});

const EXAMPLE_ID = '0190f5a2-7c1e-7d3a-9b1c-2f4e6a8b0c1d';
const TWO_FACTOR_RULE = 'Its sign-ins are not asked for the service\'s two-factor code: the identity provider owns authentication and its MFA.';

const Grant = Strict({
  module: StringEnum(MODULES), can_read: Type.Boolean(), can_write: Type.Boolean(), can_delete: Type.Boolean(),
});
const Grants = Type.Array(Grant, {
  maxItems: MODULES.length,
  description: 'The module permissions a user provisioned just in time gets (one entry per module, as a user\'s module access)',
  examples: [[{ module: 'crm', can_read: true, can_write: true, can_delete: false }]],
});

export const SsoProvider = Strict({
  id: Type.String({ description: 'A uuid; `oidc` for the provider set by environment (SSO_OIDC_*), which is read-only here' }),
  name: Type.String({ description: 'Shown on the sign-in button: *Sign in with <name>*' }),
  issuer: Type.String({ description: 'The OpenID issuer URL (its discovery document is at `<issuer>/.well-known/openid-configuration`)' }),
  client_id: Type.String(),
  scopes: Type.String(),
  enabled: Type.Boolean(),
  jit: Type.Boolean({ description: 'Just-in-time provisioning: a person the provider vouches for and the service does not know becomes a user' }),
  jit_department: Nullable(Strict({ id: Uuid(), name: Type.String() })),
  jit_grants: Type.Array(Grant),
  redirect_uri: Type.String({ description: 'Register this redirect (callback) URL at the identity provider' }),
  read_only: Type.Boolean({ description: 'True for the provider set by environment: change it there' }),
  created_at: Nullable(Timestamp()),
  updated_at: Nullable(Timestamp()),
}, {
  examples: [{
    id: EXAMPLE_ID, name: 'Okta', issuer: 'https://example.okta.com', client_id: '0oa1b2c3d4e5f6g7h8i9', scopes: 'openid email profile', enabled: true,
    jit: true, jit_department: { id: '0190f5a2-0000-7000-8000-000000000002', name: 'Sales' },
    jit_grants: [{ module: 'crm', can_read: true, can_write: true, can_delete: false }],
    redirect_uri: `https://pms.example.com/api/auth/sso/${EXAMPLE_ID}/callback`, read_only: false,
    created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:00.000Z',
  }],
});

const inputFields = {
  name: RequiredText({ maxLength: 100, description: 'Shown on the sign-in button: *Sign in with <name>*' }),
  issuer: Type.String({ minLength: 1, maxLength: 2000, description: 'The OpenID issuer URL, e.g. `https://accounts.google.com`, `https://login.microsoftonline.com/<tenant>/v2.0`, `https://<org>.okta.com`, `https://<host>/realms/<realm>`' }),
  client_id: RequiredText({ maxLength: 500 }),
  client_secret: Type.String({ minLength: 1, maxLength: 2000, description: 'Write-only: stored, never answered, never in the audit trail' }),
  scopes: Type.Optional(RequiredText({ maxLength: 500, default: 'openid email profile', description: 'Space-separated; must include `openid` (and `email` for most providers)' })),
  enabled: Type.Optional(Type.Boolean({ default: true, description: 'A disabled provider is not offered and its sign-ins are refused' })),
  jit: Type.Optional(Type.Boolean({ default: false, description: 'Create unknown (verified) e-mail addresses as users, with the department and grants below; they must use single sign-on' })),
  jit_department_id: Type.Optional(Nullable(Uuid({ description: 'The department of users provisioned just in time' }))),
  jit_grants: Type.Optional(Grants),
};
const ProviderInput = Strict(inputFields, {
  examples: [{
    name: 'Okta', issuer: 'https://example.okta.com', client_id: '0oa1b2c3d4e5f6g7h8i9', client_secret: 'a-secret-from-okta',
    jit: true, jit_grants: [{ module: 'crm', can_read: true, can_write: true, can_delete: false }],
  }],
});
const ProviderPatch = PartialStrict(Strict(inputFields, { examples: [{ enabled: false }, { client_secret: 'the-rotated-secret' }] }));

/** The client secret is never in the audit trail (nor the change log: migration `sso`). */
const secret = withSecret(ssoProviderResource, 'client_secret');

/** 400 `details.issuer` unless an absolute http(s) URL (https in production) with no query or fragment. */
function assertIssuer(config: Config, issuer: string | undefined) {
  if (issuer === undefined) return;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw validationError({ issuer: 'must be the identity provider\'s issuer URL, such as https://accounts.google.com' });
  }
  const protocols = config.production ? ['https:'] : ['https:', 'http:'];
  if (!protocols.includes(url.protocol)) throw validationError({ issuer: `must be an ${config.production ? 'https' : 'http(s)'} URL, such as https://accounts.google.com` });
  if (url.search || url.hash || url.username || url.password) throw validationError({ issuer: 'must not hold a query, a fragment or credentials' });
}

function assertScopes(scopes: string | undefined) {
  if (scopes !== undefined && !scopes.split(/\s+/).includes('openid')) throw validationError({ scopes: 'must include openid' });
}

function assertGrants(grants: { module: string }[] | undefined) {
  const modules = grants?.map((grant) => grant.module) ?? [];
  if (new Set(modules).size !== modules.length) throw validationError({ jit_grants: 'must name each module at most once' });
}

async function assertDepartment(db: Executor, id: string | null | undefined) {
  if (!id) return;
  const [found] = await db.select({ id: departments.id }).from(departments).where(eq(departments.id, id)).limit(1);
  if (!found) throw validationError({ jit_department_id: 'does not name an existing department' });
}

type Body = Partial<{ issuer: string; scopes: string; jit_grants: { module: string }[]; jit_department_id: string | null }>;
const assertBody = async (config: Config, db: Executor, body: Body) => {
  assertIssuer(config, body.issuer);
  assertScopes(body.scopes);
  assertGrants(body.jit_grants);
  await assertDepartment(db, body.jit_department_id);
};

const DESCRIPTIONS: Record<string, string> = {
  'GET /api/iam/sso-providers': 'Every identity provider: the one set by environment (id `oidc`, `read_only`) first, then those configured here, by name. '
    + `Each answers the \`redirect_uri\` to register at the provider. The client secret is never shown. ${TWO_FACTOR_RULE}`,
  'GET /api/iam/sso-providers/:id': 'One identity provider configured here (never its client secret).',
  'POST /api/iam/sso-providers': 'Adds an OpenID Connect identity provider; its *Sign in with <name>* button shows on the sign-in page while it is enabled. '
    + 'The client secret is stored and never answered again. A bad issuer URL is 400 `details.issuer`; an unknown department 400 `details.jit_department_id`. '
    + `Register the answer's provider's \`redirect_uri\` (GET it) at the identity provider. ${TWO_FACTOR_RULE}`,
  'PATCH /api/iam/sso-providers/:id': 'Changes the fields sent; `client_secret` replaces the secret (audited as replaced, never its value). Disabling hides the button and refuses its sign-ins.',
  'DELETE /api/iam/sso-providers/:id': 'Removes the provider: its button goes and its sign-ins are refused. Users it provisioned stay.',
};

export default async function ssoProviderRoutes(app: App) {
  const { db } = app.database;
  const { config } = app;
  const answer = (row: Record<string, unknown>) => ({ ...row, redirect_uri: redirectUriOf(config, String(row.id)), read_only: false }) as Static<typeof SsoProvider>;

  const envAnswer = () => config.ssoOidc && {
    id: ENV_PROVIDER_ID, name: config.ssoOidc.name, issuer: config.ssoOidc.issuer, client_id: config.ssoOidc.clientId, scopes: config.ssoOidc.scopes,
    enabled: true, jit: false, jit_department: null, jit_grants: [], redirect_uri: redirectUriOf(config, ENV_PROVIDER_ID), read_only: true,
    created_at: null, updated_at: null,
  };

  describeRoutes(app, DESCRIPTIONS);

  app.get(`/api/iam/sso-providers/${ENV_PROVIDER_ID}`, {
    schema: {
      operationId: 'getSsoProviderOfEnvironment', summary: 'The identity provider set by environment',
      description: 'The provider SSO_OIDC_* configure, as the list shows it (`read_only`: change it in the environment); 404 when none is set.',
      response: { 200: SsoProvider, ...errorResponses },
    },
  }, async () => {
    const env = envAnswer();
    if (!env) throw notFound('SSO provider');
    return env;
  });

  app.get('/api/iam/sso-providers', {
    schema: {
      operationId: 'listSsoProviders', summary: 'List identity providers (single sign-on)',
      response: { 200: Strict({ data: Type.Array(SsoProvider) }, { title: 'SsoProviderPage' }), ...errorResponses },
    },
  }, async () => {
    const rows = await db.select(ssoProviderResource.view.fields as never).from(providers)
      .leftJoin(departments, eq(departments.id, providers.jit_department_id)).orderBy(asc(providers.name), asc(providers.id)) as Record<string, unknown>[];
    const env = envAnswer();
    return { data: [...(env ? [env] : []), ...rows.map(answer)] };
  });

  resourceRoutes(app, ssoProviderResource, {
    path: '/api/iam/sso-providers',
    Item: SsoProvider,
    complete: async (row) => answer(row),
    create: {
      body: ProviderInput,
      summary: 'Add an identity provider (single sign-on)',
      values: async (body) => {
        await assertBody(config, db, body);
        return {
          name: body.name, issuer: body.issuer, client_id: body.client_id, client_secret: body.client_secret, scopes: body.scopes ?? 'openid email profile',
          enabled: body.enabled ?? true, jit: body.jit ?? false, jit_department_id: body.jit_department_id ?? null, jit_grants: body.jit_grants ?? [],
        };
      },
      insert: secret.insert,
    },
    update: {
      body: ProviderPatch,
      summary: 'Update an identity provider (only the fields sent; the secret is replaced when sent)',
      validate: async (body) => assertBody(config, db, body),
      change: secret.change,
    },
    remove: { summary: 'Remove an identity provider', remove: secret.remove },
  });
}
