import { clock } from '../../clock.js';

/**
 * Runs `write` while the service's clock reads `when`: the records it creates or changes, and their audit entries, say
 * they happened then, so leads and inquiries arrive over weeks as they would (the dashboard's per-day chart shows
 * them so). Requests run one at a time, so nothing else reads the clock meanwhile but the job queue, whose jobs
 * only ever see an earlier time.
 */
export async function at<T>(when: Date, write: () => Promise<T>): Promise<T> {
  const now = clock.now;
  clock.now = () => new Date(when);
  try {
    return await write();
  } finally {
    clock.now = now;
  }
}
