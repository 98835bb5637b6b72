/**
 * Reads that many requests ask for at once, shared by key. A read in flight may have been sent before a caller's
 * request arrived (and a write it must see committed), so a caller arriving meanwhile never joins it: it waits for the
 * next read of its key, which starts as soon as the one in flight ends and serves everyone who asked in between. Every
 * caller thus gets an answer read after it asked, and the database answers one read per round instead of one per
 * request (forty readers of one page: a few reads in flight, not forty).
 */
export class SharedReads<T> {
  private inFlight = new Map<string, Promise<T>>();
  private queued = new Map<string, Promise<T>>();

  /** Keys read at once at most; a read of a key beyond them is not shared. */
  constructor(private readonly maxKeys = 1000) {}

  read(key: string, read: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(key);
    if (!running) return this.inFlight.size < this.maxKeys ? this.start(key, read) : read();
    let next = this.queued.get(key);
    if (!next) {
      next = running.then(noop, noop).then(() => {
        this.queued.delete(key);
        return this.start(key, read);
      });
      this.queued.set(key, next);
    }
    return next;
  }

  private start(key: string, read: () => Promise<T>): Promise<T> {
    const round: Promise<T> = (async () => read())().finally(() => {
      if (this.inFlight.get(key) === round) this.inFlight.delete(key);
    });
    this.inFlight.set(key, round);
    return round;
  }
}

const noop = () => undefined;
