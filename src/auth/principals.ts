import type { Database, Listener } from '../db/client.js';
import { SharedReads } from '../data/shared-reads.js';

/** The channel the database triggers notify (migration 0005): the payload is the id of a user whose principal changed. */
export const PRINCIPALS_CHANNEL = 'pms_principals';
/** A cached principal is resolved again after this long, so Better Auth still slides the session's expiry with use. */
const REFRESH_MS = 30_000;
const MAX_ENTRIES = 10_000;

type Entry<P> = { principal: P; userId: string; sessionId: string; expiresAt: number; cachedAt: number };

/**
 * What a notification names (migration 0013): `user:<id>` (the user, their permissions: every principal of theirs) or
 * `session:<id>` (one session, or `session:token:<id>` one API token: only the principals resolved from it). A bare id
 * (an instance of an older version) names a user.
 */
export function parsePrincipalChange(payload: string): { user: string } | { session: string } {
  if (payload.startsWith('session:')) return { session: payload.slice('session:'.length) };
  return { user: payload.startsWith('user:') ? payload.slice('user:'.length) : payload };
}

/** Invalidations remembered, so a principal resolved while one happened is not cached if it concerned it. */
const REMEMBERED_CHANGES = 1000;

/**
 * Signed-in callers by credential (the bearer header or session cookie as sent), so a request costs no query to say
 * who it is. An entry goes when anything it holds changes: the database notifies every instance at the commit of any
 * change to a session, a user or a permission (triggers, whatever code made it), and this instance also drops an
 * entry at once when it makes such a change itself. Exactly what changed is dropped: a session's change drops the
 * principals of that session, a user's or a permission's change those of that user; a sign-in (a new session) drops
 * nothing. While notifications cannot arrive, nothing is cached.
 */
export class PrincipalCache<P> {
  private entries = new Map<string, Entry<P>>();
  private byUser = new Map<string, Set<string>>();
  private bySession = new Map<string, Set<string>>();
  private listening = false;
  /** Counts invalidations: a resolution takes it before it starts (`version`) and hands it to `set`. */
  private sequence = 0;
  /** The sequence of the last `clear` (everything invalidated). */
  private clearedAt = 0;
  /** The latest invalidations, oldest first. */
  private changes: { at: number; user?: string; session?: string }[] = [];
  private listener?: Listener;
  /** Round trips on the LISTEN connection, shared by the requests waiting at once (see `heard`). */
  private syncs = new SharedReads<boolean>(1);
  /** Told of every invalidation (a user's, a session's, or everything's: null): live streams check their caller again. */
  readonly watchers = new Set<(change: { user: string } | { session: string } | null) => void>();

  async start(database: Database) {
    this.listener = await database.listen(PRINCIPALS_CHANNEL, (payload) => {
      const change = parsePrincipalChange(payload);
      if ('session' in change) this.forgetSession(change.session);
      else this.forgetUser(change.user);
    }, (on) => {
      this.clear();
      this.listening = on;
    });
  }

  async close() {
    await this.listener?.stop();
    this.listening = false;
    this.clear();
  }

  get(credential: string): P | undefined {
    const entry = this.entries.get(credential);
    if (!entry) return undefined;
    const now = Date.now();
    if (now >= entry.expiresAt || now - entry.cachedAt >= REFRESH_MS) {
      this.forget(credential);
      return undefined;
    }
    return entry.principal;
  }

  /**
   * The cached principal of `credential`, once every invalidation committed before this call has been heard: a change
   * made through another instance (its NOTIFY arrives a moment after its commit) holds here from the very next request.
   */
  async current(credential: string): Promise<P | undefined> {
    if (!this.get(credential) || !(await this.heard())) return undefined;
    return this.get(credential);
  }

  /**
   * Resolves true once every notification committed before the call has been handled (false: that cannot be known). One
   * round trip on the LISTEN connection serves every request waiting at the same time; one already in flight may have
   * left before the caller's change committed, so a caller arriving then waits for the next.
   */
  heard(): Promise<boolean> {
    const listener = this.listener;
    if (!listener) return Promise.resolve(false);
    return this.syncs.read('', () => listener.sync().catch(() => false));
  }

  /** Taken before resolving a principal, handed to `set`. */
  get version() {
    return this.sequence;
  }

  /**
   * Caches a principal resolved from `credential` (of user `userId`, session or token `sessionId`), unless something
   * it holds was invalidated since `version` was taken: then what was read may be what changed.
   */
  set(credential: string, owner: { userId: string; sessionId: string }, expiresAt: Date, principal: P, version: number) {
    if (!this.listening || this.changedSince(version, owner)) return;
    if (this.entries.size >= MAX_ENTRIES) this.forget(this.entries.keys().next().value!);
    this.forget(credential);
    this.entries.set(credential, { principal, ...owner, expiresAt: expiresAt.getTime(), cachedAt: Date.now() });
    index(this.byUser, owner.userId).add(credential);
    index(this.bySession, owner.sessionId).add(credential);
  }

  /** Everything of the user (their account, permissions, every session and token). */
  forgetUser(userId: string) {
    this.remember({ user: userId });
    for (const credential of [...(this.byUser.get(userId) ?? [])]) this.forget(credential);
    for (const watch of this.watchers) watch({ user: userId });
  }

  /** The principals resolved from one session (or `token:<id>`, one API token). */
  forgetSession(sessionId: string) {
    this.remember({ session: sessionId });
    for (const credential of [...(this.bySession.get(sessionId) ?? [])]) this.forget(credential);
    for (const watch of this.watchers) watch({ session: sessionId });
  }

  clear() {
    this.clearedAt = ++this.sequence;
    this.changes = [];
    this.entries.clear();
    this.byUser.clear();
    this.bySession.clear();
    for (const watch of this.watchers) watch(null);
  }

  private remember(change: { user?: string; session?: string }) {
    this.changes.push({ at: ++this.sequence, ...change });
    if (this.changes.length > REMEMBERED_CHANGES) this.changes.shift();
  }

  private changedSince(version: number, owner: { userId: string; sessionId: string }): boolean {
    if (this.clearedAt > version) return true;
    // Invalidations older than those remembered may have concerned it.
    if (this.changes.length && this.changes[0].at > version + 1) return true;
    for (let i = this.changes.length - 1; i >= 0 && this.changes[i].at > version; i--) {
      const change = this.changes[i];
      if (change.user === owner.userId || change.session === owner.sessionId) return true;
    }
    return false;
  }

  private forget(credential: string) {
    const entry = this.entries.get(credential);
    if (!entry) return;
    this.entries.delete(credential);
    unindex(this.byUser, entry.userId, credential);
    unindex(this.bySession, entry.sessionId, credential);
  }
}

function index(map: Map<string, Set<string>>, key: string): Set<string> {
  let keys = map.get(key);
  if (!keys) map.set(key, (keys = new Set()));
  return keys;
}

function unindex(map: Map<string, Set<string>>, key: string, credential: string) {
  const keys = map.get(key);
  keys?.delete(credential);
  if (keys?.size === 0) map.delete(key);
}
