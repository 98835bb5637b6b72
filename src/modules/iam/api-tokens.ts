import { Type } from '@sinclair/typebox';
import { count, eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import { newToken, permissionsBeyond } from '../../auth/api-tokens.js';
import { currentPrincipal, requireSession } from '../../auth/guard.js';
import { clock } from '../../clock.js';
import { audited, createAudited } from '../../data/mutations.js';
import { apiTokens, MODULES } from '../../db/schema/index.js';
import { conflict, notFound, validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { listQuerySchema } from '../../http/list-query.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { errorResponses, IdParams, Message, Nullable, Paginated, RequiredText, Strict, StringEnum, Timestamp, TimestampInput, Uuid } from '../../http/schemas.js';
import { UserRef } from '../crm/shared.js';
import { apiTokenResource } from './api-token-resource.js';

/** At most this many tokens per user: each is a standing credential someone must look after. */
const MAX_TOKENS_PER_USER = 50;

const TokenPermission = Strict({ module: StringEnum(MODULES), can_read: Type.Boolean(), can_write: Type.Boolean(), can_delete: Type.Boolean() });

export const ApiToken = Strict({
  id: Uuid(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the token, to recognise it' }),
  permissions: Type.Array(TokenPermission),
  expires_at: Nullable(Timestamp()),
  last_used_at: Nullable(Timestamp({ description: 'Updated at most once a minute' })),
  user: UserRef,
  created_at: Timestamp(),
});

const TokenInput = Strict({
  name: RequiredText({ maxLength: 100, description: 'What the token is for ("Website lead form")' }),
  permissions: Type.Array(TokenPermission, { minItems: 1, maxItems: MODULES.length, description: 'Per module; at most the flags you hold yourself' }),
  expires_at: Type.Optional(Nullable(TimestampInput({ description: 'When it stops working; none: until revoked' }))),
}, {
  examples: [{ name: 'Website lead form', permissions: [{ module: 'crm', can_read: false, can_write: true, can_delete: false }], expires_at: '2027-06-30T00:00:00Z' }],
});

const TokenCreated = Strict({
  id: Uuid(),
  token: Type.String({ description: 'Shown once: send it as `Authorization: Bearer <token>`' }),
  prefix: Type.String(),
  message: Type.String(),
}, { examples: [{ id: '019a0000-0000-7000-8000-000000000000', token: 'pms_3q2-…', prefix: 'pms_3q2-7Z', message: 'API token created' }] });

/** Admins' view (iam): every user's tokens, revocable by whoever holds iam delete. */
export default async function apiTokenRoutes(app: App) {
  resourceRoutes(app, apiTokenResource, { path: '/api/iam/api-tokens', Item: ApiToken, update: false });
}

/** A user's own tokens: listed, created and revoked under /api/auth/tokens with a real sign-in (not with a token). */
export async function accountTokenRoutes(app: App) {
  const { db } = app.database;
  const tags = ['auth'];
  const onRequest = requireSession(app);
  const OwnQuery = listQuerySchema(apiTokenResource, { hiddenFilters: ['user_id'] });

  app.get('/api/auth/tokens', {
    onRequest,
    schema: { tags, summary: 'Your API tokens, newest first', querystring: OwnQuery, response: { 200: Paginated(ApiToken), ...errorResponses } },
  }, async (request) => {
    const principal = await currentPrincipal(app, request);
    return app.lists.page(apiTokenResource, { ...(request.query as object), user_id: principal.user.id });
  });

  app.post('/api/auth/tokens', {
    onRequest,
    schema: {
      tags, summary: 'Create an API token',
      description: 'The token acts as you, with the permissions given here (never more than yours: if you lose a right, '
        + 'your tokens lose it too). It is shown once in this answer and stored only as a hash. Creation is audited.',
      body: TokenInput, response: { 201: TokenCreated, ...errorResponses },
    },
  }, async (request, reply) => {
    const principal = await currentPrincipal(app, request);
    const { name, permissions, expires_at } = request.body;
    const modules = permissions.map((p) => p.module);
    if (new Set(modules).size !== modules.length) throw validationError({ permissions: 'must name each module once' });
    const beyond = permissionsBeyond(permissions, principal.permissions);
    if (beyond.length) throw validationError({ permissions: `must not exceed your own permissions (you do not hold ${beyond.join(', ')})` });
    const expiresAt = expires_at ? new Date(expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= clock.now().getTime()) throw validationError({ expires_at: 'must be in the future' });
    const [{ n }] = await db.select({ n: count() }).from(apiTokens).where(eq(apiTokens.user_id, principal.user.id));
    if (n >= MAX_TOKENS_PER_USER) throw conflict(`You have ${MAX_TOKENS_PER_USER} API tokens, the most allowed: revoke one first`);
    const { token, hash, prefix } = newToken();
    const row = await createAudited(db, await actorOf(app, request), apiTokenResource, { user_id: principal.user.id, name, token_hash: hash, prefix, permissions, expires_at: expiresAt });
    return reply.code(201).send({ id: row.id, token, prefix, message: 'API token created' });
  });

  app.delete('/api/auth/tokens/:id', {
    onRequest,
    schema: { 'x-answer-message': 'API token revoked', tags, summary: 'Revoke one of your API tokens (it stops working at once)', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const principal = await currentPrincipal(app, request);
    await audited(db, await actorOf(app, request), (work) => work.remove(apiTokenResource, request.params.id, (current) => {
      // Someone else's token is not yours to see.
      if (current.user_id !== principal.user.id) throw notFound(apiTokenResource.label);
    }));
    return { message: 'API token revoked' };
  });
}
