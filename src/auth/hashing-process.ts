import { writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { hashSync, verifySync } from '@node-rs/bcrypt';

/**
 * The process bcrypt runs in (started by passwords.ts): one hash at a time, at a lower scheduling priority, so
 * sign-ins use the CPU the service's other requests leave idle and never more than one core.
 */
export type HashingJob = { op: 'hash'; password: string; cost: number } | { op: 'verify'; password: string; hash: string };
export type HashingRequest = HashingJob & { id: number };
export type HashingAnswer = { id: number; result?: string | boolean; error?: string };

/** The lowest priority: what a busy service leaves, all of an idle core. */
const NICE = 19;

if (process.send) {
  try {
    setPriority(NICE);
  } catch {
    // Not permitted here: hashing still runs one at a time, at normal priority.
  }
  try {
    // Linux groups a session's processes and shares the CPU between groups before it looks at niceness: started in a
    // session of its own, this process lowers its group's share too, or it would take its group's share from PostgreSQL
    // and the clients however low its niceness.
    writeFileSync('/proc/self/autogroup', String(NICE));
  } catch {
    // Not Linux, or no autogroups: the niceness above is what there is.
  }
  // The service gone (its channel closed): nothing more to answer.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (request: HashingRequest) => {
    let answer: HashingAnswer;
    try {
      answer = { id: request.id, result: request.op === 'hash' ? hashSync(request.password, request.cost) : verifySync(request.password, request.hash) };
    } catch (err) {
      answer = { id: request.id, error: (err as Error).message };
    }
    // The service may have gone meanwhile: an answer nobody reads is not an error.
    process.send!(answer, undefined, undefined, () => undefined);
  });
}
