import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Executor } from '../db/client.js';
import { apiTokens, MODULES, moduleAccess, type TokenPermission, users } from '../db/schema/index.js';

/** Every API token starts so: a bearer credential is told from a session token by it, and scanners recognise it. */
export const TOKEN_PREFIX = 'pms_';
const TOKEN_SHAPE = /^pms_[A-Za-z0-9_-]{43}$/;
/** A token's use is written down at most this often (it is shown, not audited: a hot row must not be written per request). */
const LAST_USED_EVERY_MS = 60_000;

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A new token (256 random bits), its hash (what is stored) and its prefix (what is shown). */
export function newToken() {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashToken(token), prefix: token.slice(0, TOKEN_PREFIX.length + 6) };
}

/** The API token a bearer header carries, if it is one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = authorization && /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match && match[1].startsWith(TOKEN_PREFIX) ? match[1] : undefined;
}

type Flags = Omit<TokenPermission, 'module'>;
const FLAGS = ['can_read', 'can_write', 'can_delete'] as const;

/** What a token may do now: its own flags, each also held by its creator today (a creator who loses a right takes it from their tokens). */
export function effectivePermissions(token: TokenPermission[], holder: TokenPermission[]): TokenPermission[] {
  return MODULES.flatMap((module) => {
    const own = token.find((p) => p.module === module);
    if (!own) return [];
    const held = holder.find((p) => p.module === module);
    const flags = Object.fromEntries(FLAGS.map((flag) => [flag, own[flag] && !!held?.[flag]])) as Flags;
    return [{ module, ...flags }];
  });
}

/** The flags asked for that the creator does not hold: `{ "crm": "can_delete" }`, empty when all are held. */
export function permissionsBeyond(asked: TokenPermission[], holder: TokenPermission[]): string[] {
  return asked.flatMap((p) => {
    const held = holder.find((h) => h.module === p.module);
    return FLAGS.filter((flag) => p[flag] && !held?.[flag]).map((flag) => `${p.module}.${flag}`);
  });
}

export type TokenHolder = {
  token: { id: string; name: string; expiresAt: Date | null };
  user: { id: string; email: string; name: string; image: string | null; emailVerified: boolean; twoFactorEnabled: boolean };
  permissions: TokenPermission[];
};

/** The live, unexpired token and its creator (not deleted), with the permissions it has now; null when none. */
export async function findTokenHolder(db: Executor, token: string, now: Date): Promise<TokenHolder | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const [row] = await db
    .select({
      id: apiTokens.id, name: apiTokens.name, permissions: apiTokens.permissions, expiresAt: apiTokens.expires_at,
      user: { id: users.id, email: users.email, name: users.name, image: users.image, emailVerified: users.emailVerified, twoFactorEnabled: users.twoFactorEnabled },
      held: sql<TokenPermission[]>`coalesce((select json_agg(json_build_object('module', ${moduleAccess.module}, 'can_read', ${moduleAccess.can_read}, 'can_write', ${moduleAccess.can_write}, 'can_delete', ${moduleAccess.can_delete})) from ${moduleAccess} where ${moduleAccess.user_id} = ${users.id}), '[]'::json)`,
    })
    .from(apiTokens)
    .innerJoin(users, and(eq(users.id, apiTokens.user_id), isNull(users.deletedAt)))
    .where(eq(apiTokens.token_hash, hashToken(token)))
    .limit(1);
  if (!row || (row.expiresAt && row.expiresAt.getTime() <= now.getTime())) return null;
  return {
    token: { id: row.id, name: row.name, expiresAt: row.expiresAt },
    user: { ...row.user, image: row.user.image ?? null },
    permissions: effectivePermissions(row.permissions, row.held),
  };
}

/** Writes a token's last use, at most once a minute per token and instance, without holding up the request. */
export class TokenUse {
  private written = new Map<string, number>();
  constructor(private readonly db: Executor, private readonly log: FastifyBaseLogger) {}

  touch(tokenId: string, now: Date) {
    const last = this.written.get(tokenId);
    if (last !== undefined && now.getTime() - last < LAST_USED_EVERY_MS) return;
    if (this.written.size >= 10_000) this.written.clear();
    this.written.set(tokenId, now.getTime());
    this.db.update(apiTokens).set({ last_used_at: now }).where(eq(apiTokens.id, tokenId))
      .catch((err: unknown) => this.log.warn({ err, tokenId }, 'token use not recorded'));
  }
}
