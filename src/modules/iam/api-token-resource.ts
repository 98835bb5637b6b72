import { eq } from 'drizzle-orm';
import { equals } from '../../data/filters.js';
import type { Work } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import { apiTokens, users } from '../../db/schema/index.js';
import { Uuid } from '../../http/schemas.js';
import { userRefFields } from '../crm/shared.js';

// The declaration apart from the routes (api-tokens.ts): sign-in, password changes and the users resource revoke tokens
// through it without importing the HTTP side, which itself imports the guard.

/** API tokens: integrations' credentials, created by a signed-in user for themselves, revocable. */
export const apiTokenResource = defineResource({
  name: 'api_tokens',
  module: 'iam',
  label: 'API token',
  table: apiTokens,
  id: apiTokens.id,
  view: {
    fields: {
      id: apiTokens.id, name: apiTokens.name, prefix: apiTokens.prefix, permissions: apiTokens.permissions, expires_at: apiTokens.expires_at,
      last_used_at: apiTokens.last_used_at, user: userRefFields, created_at: apiTokens.created_at,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, apiTokens.user_id)),
  },
  list: {
    sortable: { created_at: apiTokens.created_at },
    defaultSort: 'created_at',
    filters: { user_id: equals(apiTokens.user_id, Uuid()) },
  },
});

/**
 * Revokes every API token of a user, each audited in `work`'s transaction: a new password (reset, change, an
 * administrator's) ends them, so a token minted from a stolen session does not outlive the recovery. How many.
 */
export async function revokeTokensOf(work: Work, userId: string): Promise<number> {
  return (await work.removeAll(apiTokenResource, eq(apiTokens.user_id, userId))).length;
}
