import { performance } from 'node:perf_hooks';
import { hash, verify } from '@node-rs/bcrypt';
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

/**
 * bcrypt costs ~0.3 s of CPU at cost 12, so a login storm could take every core from the requests that are cheap.
 * Hashes run one at a time (on libuv's thread pool: the event loop never blocks), and requests that will hash are
 * admitted only while few wait: the rest are told when to retry, so none waits long.
 */
class HashingGate {
  private running = 0;
  private queue: (() => void)[] = [];
  private admitted = 0;
  private averageMs = 250;
  constructor(private readonly concurrency = 1, private readonly maxAdmitted = 32) {}

  /** Runs a request that will hash; 429 with Retry-After while too many already wait. */
  async admit<T>(request: () => Promise<T>): Promise<T> {
    if (this.admitted >= this.maxAdmitted) {
      const seconds = Math.max(1, Math.ceil((this.admitted * this.averageMs) / this.concurrency / 1000));
      throw tooManyRequests(seconds, 'Too many sign-ins are being checked at once');
    }
    this.admitted++;
    try {
      return await request();
    } finally {
      this.admitted--;
    }
  }

  async run<T>(hashing: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) this.running++;
    else await new Promise<void>((resolve) => this.queue.push(resolve)); // handed the slot of a finished hash
    const started = performance.now();
    try {
      return await hashing();
    } finally {
      this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started);
      const next = this.queue.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** One per process: every hash (sign-in, password change, reset, user creation) takes its turn here. */
export const hashing = new HashingGate();

export const bcryptHasher = (cost: number) => ({
  hash: (password: string) => hashing.run(() => hash(password, cost)),
  verify: ({ hash: stored, password }: { hash: string; password: string }) => hashing.run(() => verify(password, stored)),
});
