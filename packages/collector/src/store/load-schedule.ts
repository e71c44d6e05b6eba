/** When a load may take fewer rows than a row group: after a pause in appends, or when items wait too long. */
export interface LoadPolicy {
  /** Rows a load takes under load: whole row groups (ROW_GROUP_ROWS). */
  rows: number;
  /** A pause in appends this long loads what is pending. */
  idleMs: number;
  /** No item waits longer than this to be loaded. */
  maxLagMs: number;
}

/**
 * When journaled items are loaded into DuckDB (store.ts): the count of items appended but not loaded,
 * and the loads, one after another. Under load a load takes whole row groups (`policy.rows` at a time),
 * so DuckDB writes them straight to its file and its checkpoints have no partial row groups to merge
 * (which measured as costly as the load itself); a pause, the time limit and reads take all. A failed
 * load is retried with a growing delay (up to 30 s); the items stay in the journal meanwhile. One timer,
 * set only while items wait, for the moment the next of those is due: an idle store wakes nobody (a
 * look every 50 ms cost an idle server about 3 % of a core).
 */
export class LoadSchedule {
  /** Items in the journal, not yet loaded into DuckDB. */
  #pending = 0;
  #oldestPending = 0;
  #lastAppend = 0;
  #failures = 0;
  #retryAt = 0;
  #loading: Promise<void> = Promise.resolve();
  #queued: { all: boolean; done: Promise<void> } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /** `load(limit)` loads up to `limit` journaled items and resolves to how many it loaded. */
  constructor(
    private readonly load: (limit: number) => Promise<number>,
    private readonly policy: LoadPolicy,
    private readonly warn: (message: string) => void,
  ) {}

  /** Items appended to the journal and not loaded yet. */
  get pending(): number {
    return this.#pending;
  }

  /** A row group or more waits: loads are behind, so background work (compaction) waits. */
  get behind(): boolean {
    return this.#pending >= this.policy.rows;
  }

  /** `count` items were appended to the journal (called once they are durable there). */
  appended(count: number): void {
    if (this.#pending === 0) this.#oldestPending = Date.now();
    this.#pending += count;
    this.#lastAppend = Date.now();
    this.#arm();
  }

  /** After an append: a load of whole row groups, when there are some and no failure is being waited out. */
  loadFull(): void {
    if (this.behind && Date.now() >= this.#retryAt) this.loadPending(false).catch(() => undefined);
  }

  /** Everything appended so far, loaded: what reads see. */
  flush(): Promise<void> {
    return this.#pending > 0 ? this.loadPending(true) : this.#loading;
  }

  /** Loads what is pending: all of it, or whole row groups only. Loads queue behind each other; one waits. */
  loadPending(all: boolean): Promise<void> {
    const queued = this.#queued;
    if (queued) {
      queued.all ||= all;
      return queued.done;
    }
    const next: { all: boolean; done: Promise<void> } = { all, done: Promise.resolve() };
    next.done = this.#loading.then(async () => {
      this.#queued = undefined;
      const limit = next.all ? Infinity : Math.floor(this.#pending / this.policy.rows) * this.policy.rows;
      // (With nothing pending, a load still moves past a sealed segment, so that it can be deleted.)
      if (limit === 0) return;
      const started = Date.now();
      try {
        const rows = await this.load(limit); // (Not `pending -= await …`: appends go on meanwhile.)
        this.#pending -= rows;
        this.#failures = 0;
      } catch (error) {
        // Still in the journal, from the same position: the next load tries again.
        this.#retryAt = Date.now() + Math.min(30_000, 1000 * 2 ** this.#failures++);
        this.warn(`loading journaled items into the store failed (${String(error)}); will retry`);
        throw error;
      }
      // What is left arrived about while this load ran.
      if (this.#pending > 0) this.#oldestPending = started;
    });
    // Whatever is still pending once it has settled (a failure's retry included) is due later.
    void next.done.catch(() => undefined).then(() => this.#arm());
    this.#queued = next;
    this.#loading = next.done.catch(() => undefined);
    return next.done;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** When what is pending is next due a load: now when behind, else after a pause or at the lag limit. */
  #due(): number {
    const due = this.behind
      ? 0
      : Math.min(this.#lastAppend + this.policy.idleMs, this.#oldestPending + this.policy.maxLagMs);
    return Math.max(due, this.#retryAt);
  }

  /**
   * Sets the timer for what is pending, unless it is set or a load waits its turn (each load arms it
   * when it settles). Appends only move the pause's end later, so a timer set earlier fires early at
   * worst, and then looks again.
   */
  #arm(): void {
    if (this.#stopped || this.#timer || this.#pending === 0 || this.#queued) return;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, this.#due() - Date.now()));
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#pending === 0) return;
    if (Date.now() < this.#due()) this.#arm();
    else this.loadPending(!this.behind).catch(() => undefined); // Reported by loadPending.
  }
}
