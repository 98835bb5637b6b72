import { type ChildProcess, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { HashingAnswer, HashingJob, HashingRequest } from './hashing-process.js';
import { tooManyRequests } from '../errors.js';

/** CONTRACT §4: 8–128 characters with an upper-case letter, a lower-case letter, a digit and another character. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 8) return 'must be at least 8 characters long';
  if (password.length > 128) return 'must be at most 128 characters long';
  const missing = [
    [/[A-Z]/, 'an upper-case letter'],
    [/[a-z]/, 'a lower-case letter'],
    [/[0-9]/, 'a digit'],
    [/[^A-Za-z0-9]/, 'a special character'],
  ].filter(([pattern]) => !(pattern as RegExp).test(password)).map(([, rule]) => rule);
  return missing.length ? `must contain ${missing.join(', ')}` : undefined;
}

/** How many requests that will hash the gate admits, and how long a refused one waits for room first. */
export type HashingLimits = {
  /** requests that may be hashing or waiting their turn */
  maxAdmitted: number;
  /** the longest expected wait for a turn that is still admitted */
  maxWaitMs: number;
  /**
   * how long a request that finds no room waits for some before it is refused (a client retrying at once is slowed
   * to a knock per `knockMs`, not a storm of refusals)
   */
  knockMs: number;
};

/** What the gate is doing and has done (since it started, or since `limit` last changed its limits). */
export type HashingCounts = {
  /** admitted: hashing or waiting for their turn */
  admitted: number;
  /** found no room and are waiting (at most a knock) for some */
  knocking: number;
  /** jobs sent to the hashing process and not yet answered */
  hashing: number;
  /** requests that found no room at first and were admitted after waiting */
  waited: number;
  /** requests answered 429, by reason: every admitted place taken, or the expected wait too long */
  refused: { full: number; slow: number };
};

const DEFAULT_LIMITS: HashingLimits = { maxAdmitted: 32, maxWaitMs: 10_000, knockMs: 2_000 };
/** The wall time of a hash the gate assumes before it has measured one. */
const FIRST_ESTIMATE_MS = 250;

/**
 * bcrypt costs ~0.3 s of CPU at cost 12, so a login storm could take every core from the requests that are cheap.
 * Hashes run in a child process of lower priority, one at a time (so never more than one core, and only what the
 * rest of the service leaves), and requests that will hash are admitted only while the expected wait stays short:
 * the rest are told when to retry, so none waits long.
 */
export class HashingGate {
  private child?: ChildProcess;
  private pending = new Map<number, { resolve: (value: string | boolean) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private admitted = 0;
  /** Wall time of a hash, lately (it grows when the service is busy and the hashing process gets little CPU). */
  private averageMs = FIRST_ESTIMATE_MS;

  private rooms: (() => void)[] = [];
  private tally = { waited: 0, full: 0, slow: 0 };

  constructor(private limits: HashingLimits = DEFAULT_LIMITS) {}

  /**
   * Other limits and, with `hashMs`, another estimate of a hash's wall time (tests: a small gate whose decisions do
   * not depend on the machine's speed). Resets the counts; answers a function that restores the limits and estimate.
   */
  limit(limits: Partial<HashingLimits> & { hashMs?: number }): () => void {
    const before = { limits: this.limits, averageMs: this.averageMs };
    const { hashMs, ...rest } = limits;
    this.limits = { ...this.limits, ...rest };
    if (hashMs !== undefined) this.averageMs = hashMs;
    this.tally = { waited: 0, full: 0, slow: 0 };
    return () => {
      this.limits = before.limits;
      this.averageMs = before.averageMs;
    };
  }

  get counts(): HashingCounts {
    return {
      admitted: this.admitted,
      knocking: this.rooms.length,
      hashing: this.pending.size,
      waited: this.tally.waited,
      refused: { full: this.tally.full, slow: this.tally.slow },
    };
  }

  /** The hashing process's id (started if it is not running). */
  processId(): number {
    const child = this.process();
    if (this.pending.size === 0) this.release(child);
    return child.pid!;
  }

  /** Why there is no room now: every place taken, or the expected wait too long; undefined when there is room. */
  private get noRoom(): 'full' | 'slow' | undefined {
    if (this.admitted >= this.limits.maxAdmitted) return 'full';
    if (this.admitted > 0 && this.admitted * this.averageMs > this.limits.maxWaitMs) return 'slow';
    return undefined;
  }

  /** Runs a request that will hash; 429 with Retry-After when no room came up within a knock. */
  async admit<T>(request: () => Promise<T>): Promise<T> {
    const knocked = this.noRoom !== undefined;
    if (knocked) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          const at = this.rooms.indexOf(wake);
          if (at >= 0) this.rooms.splice(at, 1);
          resolve();
        }, this.limits.knockMs);
        this.rooms.push(wake);
      });
    }
    const refused = this.noRoom;
    if (refused) {
      this.tally[refused]++;
      throw tooManyRequests(Math.max(1, Math.ceil((this.admitted * this.averageMs) / 1000)), 'Too many sign-ins are being checked at once');
    }
    if (knocked) this.tally.waited++;
    this.admitted++;
    try {
      return await request();
    } finally {
      this.admitted--;
      this.rooms.shift()?.();
    }
  }

  hash(password: string, cost: number) {
    return this.run({ op: 'hash', password, cost }) as Promise<string>;
  }

  verify(password: string, hash: string) {
    return this.run({ op: 'verify', password, hash }) as Promise<boolean>;
  }

  private run(job: HashingJob): Promise<string | boolean> {
    const child = this.process();
    child.ref();
    (child.channel as { ref?: () => void } | undefined)?.ref?.();
    const id = ++this.nextId;
    const started = performance.now();
    return new Promise<string | boolean>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.send({ ...job, id } satisfies HashingRequest);
    }).finally(() => {
      this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started);
    });
  }

  /** The hashing process, started on first use; it does not keep the service alive, and is restarted if it dies. */
  private process(): ChildProcess {
    if (this.child) return this.child;
    const script = fileURLToPath(new URL(`./hashing-process${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
    // From TypeScript sources (tests) the child needs tsx, resolved from the project's root whatever the cwd.
    const fromSources = script.endsWith('.ts');
    const child = fork(script, [], {
      execArgv: fromSources ? ['--import', 'tsx'] : [],
      cwd: fromSources ? fileURLToPath(new URL('../..', import.meta.url)) : undefined,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
      // A session of its own, so its low priority holds for its whole scheduling group (see hashing-process.ts).
      detached: true,
    });
    child.on('message', (answer: HashingAnswer) => {
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (answer.error !== undefined) waiting?.reject(new Error(answer.error));
      else waiting?.resolve(answer.result!);
      if (this.pending.size === 0) this.release(child);
    });
    child.on('exit', () => {
      if (this.child === child) this.child = undefined;
      for (const [, waiting] of this.pending) waiting.reject(new Error('the hashing process exited'));
      this.pending.clear();
    });
    this.child = child;
    return child;
  }

  /** Idle: the hashing process must not keep the service (or a test run) from exiting. */
  private release(child: ChildProcess) {
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
  }
}

/** One per process: every hash (sign-in, password change, reset, user creation) takes its turn here. */
export const hashing = new HashingGate();

/**
 * bcrypt reads only the first 72 bytes of what it hashes. A longer password (up to 128 characters, every one of which
 * counts: CONTRACT §13) is hashed through SHA-256 first; shorter ones as they are, so existing hashes stay valid.
 */
const BCRYPT_MAX_BYTES = 72;
const forBcrypt = (password: string) =>
  Buffer.byteLength(password, 'utf8') <= BCRYPT_MAX_BYTES ? password : `sha256:${createHash('sha256').update(password, 'utf8').digest('base64')}`;

/**
 * Verdicts on passwords checked ahead of a Better Auth call, by stored hash and password, for as long as that call runs.
 * While any Better Auth call runs, its AsyncLocalStorage contexts tax every promise of every request (see
 * context-hooks.ts), and a sign-in spends most of its time waiting for bcrypt: checked before the call, the password's
 * verdict is ready when Better Auth asks for it, and the call lasts a few milliseconds instead of a hash's wait.
 */
const verdicts = new Map<string, { matches: boolean; holders: number }>();

/**
 * Runs `call` (a Better Auth call that will verify `password` against `stored`) with the verdict checked first, outside
 * the call. Only that exact pair is answered from the verdict, and only while `call` runs.
 */
export async function withPasswordChecked<T>(stored: string | undefined, password: string, call: () => Promise<T>): Promise<T> {
  if (stored === undefined) return call();
  const key = `${stored}\0${password}`;
  const matches = await hashing.verify(forBcrypt(password), stored);
  const verdict = verdicts.get(key) ?? { matches, holders: 0 };
  verdict.holders++;
  verdicts.set(key, verdict);
  try {
    return await call();
  } finally {
    if (--verdict.holders === 0) verdicts.delete(key);
  }
}

export const bcryptHasher = (cost: number) => ({
  hash: (password: string) => hashing.hash(forBcrypt(password), cost),
  verify: ({ hash: stored, password }: { hash: string; password: string }) => {
    const verdict = verdicts.get(`${stored}\0${password}`);
    return verdict ? Promise.resolve(verdict.matches) : hashing.verify(forBcrypt(password), stored);
  },
});
