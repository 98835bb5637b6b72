/**
 * The service's time source for the timestamps it writes (created_at, updated_at). Production reads the system
 * clock; tests swap in a clock that always moves forward, so ordering by time needs no sleeping.
 */
export const clock = { now: (): Date => new Date() };

/** A clock that never repeats or goes back: each reading is at least 1 ms after the previous one. */
export function tickingClock(): () => Date {
  let last = 0;
  return () => {
    last = Math.max(Date.now(), last + 1);
    return new Date(last);
  };
}
