import { hash, verify } from '@node-rs/bcrypt';

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

/** bcrypt on libuv's thread pool (native, async): a burst of logins never blocks the event loop. */
export const bcryptHasher = (cost: number) => ({
  hash: (password: string) => hash(password, cost),
  verify: ({ hash: stored, password }: { hash: string; password: string }) => verify(password, stored),
});
