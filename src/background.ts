/**
 * Work the service starts and does not wait for (staff notices, password-reset mail): the answer never depends on
 * it, but shutdown lets it finish (nothing lost), and tests wait for it to be done instead of sleeping.
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();

  /** Counts `work` as running until it settles; its failure stays the caller's to handle (log it before). */
  track(work: Promise<unknown>): void {
    const done: Promise<void> = work.then(() => undefined, () => undefined).finally(() => this.running.delete(done));
    this.running.add(done);
  }

  /** Resolves once nothing tracked is running, including work tracked while waiting. */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.all(this.running);
  }
}
