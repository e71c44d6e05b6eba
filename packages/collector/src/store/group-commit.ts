/**
 * Group commit: batches of items from concurrent requests queue up while earlier writes are in flight
 * and go to the store together in the next write, so many requests share one durable commit (one
 * fsync). A request is answered only once the write holding its items has resolved.
 */
export class GroupCommit<T> {
  private queue: T[] = [];
  private queuedItems = 0;
  private waiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idle: (() => void)[] = [];

  constructor(
    private readonly write: (batches: T[]) => Promise<void>,
    /** Items allowed to wait; beyond that `hasRoom` says no (the store is not keeping up). */
    private readonly maxQueued: number,
    /** Writes allowed in flight at once (the store has as many writer connections). */
    private readonly concurrency: number,
  ) {}

  /** Items waiting for a write. */
  get queued(): number {
    return this.queuedItems;
  }

  hasRoom(count: number): boolean {
    return this.queuedItems + count <= this.maxQueued;
  }

  /** Resolves once the `count` items of `batch` are durably stored; rejects if their write failed. */
  add(batch: T, count: number): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.queue.push(batch);
    this.queuedItems += count;
    this.schedule();
    return done;
  }

  /** Resolves when everything queued so far has been written (or has failed). */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0 && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.concurrency) return;
    this.scheduled = true;
    // setImmediate lets the requests already read in this turn of the event loop join the group.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.queue.length === 0) return this.settleIdle();
    const batches = this.queue;
    const waiters = this.waiters;
    this.queue = [];
    this.queuedItems = 0;
    this.waiters = [];
    this.inFlight++;
    try {
      await this.write(batches);
      for (const w of waiters) w.resolve();
    } catch (error) {
      for (const w of waiters) w.reject(error);
    } finally {
      this.inFlight--;
      if (this.queue.length > 0) this.schedule();
      else this.settleIdle();
    }
  }

  private settleIdle(): void {
    if (this.inFlight > 0 || this.queue.length > 0 || this.scheduled) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
