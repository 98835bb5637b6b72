import { getCurrentAuthContextAsyncLocalStorage, getCurrentDBAdapterAsyncLocalStorage, getRequestStateAsyncLocalStorage } from '@better-auth/core/context';

/**
 * Node 20 carries an AsyncLocalStorage's context by a hook on every promise the process makes while any instance is
 * enabled, and Better Auth enables three at its first call that nothing ever disabled: from the first sign-in on, every
 * request paid for them (the hooks were 4-5 % of the service's CPU profile while serving the leads list, none after).
 * So every call into Better Auth is counted (`countCalls`, over `auth.api`), and when none is running the instances
 * are disabled; the next call's `run` enables them again. Better Auth awaits all its work within a call (no
 * background handler is configured), so nothing of it runs once the call is over.
 */
let running = 0;
/** What is disabled between calls: an AsyncLocalStorage. */
type Storage = { disable(): void };
const storages: Storage[] = [];

/** Better Auth's storages, and those of ours used around its calls (they too are disabled between calls). */
export async function trackStorages(ours: Storage[]) {
  const theirs = await Promise.all([getRequestStateAsyncLocalStorage(), getCurrentAuthContextAsyncLocalStorage(), getCurrentDBAdapterAsyncLocalStorage()]);
  for (const storage of [...theirs, ...ours]) if (!storages.includes(storage)) storages.push(storage);
}

/** Runs `work` (a Better Auth call, or code that sets up a storage around one) counted as a call. */
export async function authCall<T>(work: () => T | Promise<T>): Promise<T> {
  running++;
  try {
    return await work();
  } finally {
    if (--running === 0) for (const storage of storages) storage.disable();
  }
}

/** Better Auth's `api` with every endpoint call counted; the endpoints keep their own properties. */
export function countCalls<Api extends object>(api: Api): Api {
  const counted = new Map<PropertyKey, unknown>();
  return new Proxy(api, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      let wrapped = counted.get(key);
      if (!wrapped) {
        wrapped = new Proxy(value, { apply: (endpoint, self, args) => authCall(() => Reflect.apply(endpoint, self, args) as unknown) });
        counted.set(key, wrapped);
      }
      return wrapped;
    },
  });
}
