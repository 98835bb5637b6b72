import type { Database } from '../db/client.js';

/** The channel the database triggers notify (migration 0005): the payload is the id of a user whose principal changed. */
export const PRINCIPALS_CHANNEL = 'pms_principals';
/** A cached principal is resolved again after this long, so Better Auth still slides the session's expiry with use. */
const REFRESH_MS = 30_000;
const MAX_ENTRIES = 10_000;

type Entry<P> = { principal: P; userId: string; expiresAt: number; cachedAt: number };

/**
 * Signed-in callers by credential (the bearer header or session cookie as sent), so a request costs no query to say
 * who it is. An entry goes when anything it holds changes: the database notifies every instance at the commit of any
 * change to a session, a user or a permission (triggers, whatever code made it), and this instance also drops an
 * entry at once when it makes such a change itself. While notifications cannot arrive, nothing is cached.
 */
export class PrincipalCache<P> {
  private entries = new Map<string, Entry<P>>();
  private byUser = new Map<string, Set<string>>();
  private listening = false;
  /** Moves on every invalidation: a principal resolved across one is not cached (it may be what was invalidated). */
  private epoch = 0;
  private stop?: () => Promise<void>;

  async start(database: Database) {
    this.stop = await database.listen(PRINCIPALS_CHANNEL, (userId) => this.forgetUser(userId), (on) => {
      this.clear();
      this.listening = on;
    });
  }

  async close() {
    await this.stop?.();
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

  /** Taken before resolving a principal, handed to `set`. */
  get version() {
    return this.epoch;
  }

  set(credential: string, userId: string, expiresAt: Date, principal: P, version: number) {
    if (!this.listening || version !== this.epoch) return;
    if (this.entries.size >= MAX_ENTRIES) this.forget(this.entries.keys().next().value!);
    this.forget(credential);
    this.entries.set(credential, { principal, userId, expiresAt: expiresAt.getTime(), cachedAt: Date.now() });
    let keys = this.byUser.get(userId);
    if (!keys) this.byUser.set(userId, (keys = new Set()));
    keys.add(credential);
  }

  forgetUser(userId: string) {
    this.epoch++;
    for (const credential of this.byUser.get(userId) ?? []) this.entries.delete(credential);
    this.byUser.delete(userId);
  }

  clear() {
    this.epoch++;
    this.entries.clear();
    this.byUser.clear();
  }

  private forget(credential: string) {
    const entry = this.entries.get(credential);
    if (!entry) return;
    this.entries.delete(credential);
    const keys = this.byUser.get(entry.userId);
    keys?.delete(credential);
    if (keys?.size === 0) this.byUser.delete(entry.userId);
  }
}
