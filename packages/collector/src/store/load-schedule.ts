/** When a load may take fewer rows than a row group: after a pause in appends, or when items wait too long. */
export interface LoadPolicy {
  /** Rows a load takes under load: whole row groups (ROW_GROUP_ROWS). */
  rows: number;
  /** A pause in appends this long loads what is pending. */
  idleMs: number;
  /** No item waits longer than this to be loaded. */
  maxLagMs: number;
}

/** How often the schedule looks at what is pending. */
const TICK_MS = 50;

/**
 * When journaled items are loaded into DuckDB (store.ts): the count of items appended but not loaded,
 * and the loads, one after another. Under load a load takes whole row groups (`policy.rows` at a time),
 * so DuckDB writes them straight to its file and its checkpoints have no partial row groups to merge
 * (which measured as costly as the load itself); a pause, the time limit and reads take all. A failed
 * load is retried with a growing delay (up to 30 s); the items stay in the journal meanwhile.
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
  readonly #timer: NodeJS.Timeout;

  /** `load(limit)` loads up to `limit` journaled items and resolves to how many it loaded. */
  constructor(
    private readonly load: (limit: number) => Promise<number>,
    private readonly policy: LoadPolicy,
    private readonly warn: (message: string) => void,
  ) {
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    this.#timer.unref();
  }

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
    this.#queued = next;
    this.#loading = next.done.catch(() => undefined);
    return next.done;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #tick(): void {
    const now = Date.now();
    if (this.#pending === 0 || now < this.#retryAt) return;
    if (this.behind)
      this.loadPending(false).catch(() => undefined); // Reported by loadPending.
    else if (
      now - this.#lastAppend >= this.policy.idleMs ||
      now - this.#oldestPending >= this.policy.maxLagMs
    )
      this.loadPending(true).catch(() => undefined);
  }
}
