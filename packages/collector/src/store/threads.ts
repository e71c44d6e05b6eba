import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/** DuckDB's thread counts for the store's two kinds of work. */
export interface ThreadCounts {
  /** While no read runs: the loads, checkpoints and compaction on the writer. */
  loads: number;
  /** While a read runs (a dashboard query, an export, a count). */
  reads: number;
}

/**
 * The counts for a machine where DuckDB would use `all` threads: reads use them all; the loads leave two
 * cores to the ingest (the event loop and the ingest worker), keeping at least one (ADR 0140).
 */
export function threadCountsFor(all: number): ThreadCounts {
  return { loads: Math.max(1, all - 2), reads: all };
}

/**
 * DuckDB's thread count is its instance's, shared by the store's loads and its reads: on two cores a
 * load's second thread took the core the ingest needed (a fifth less taken over HTTP), while a dashboard
 * query over millions of items needs every thread to meet its goal (ADR 0140). Once `start`ed, the
 * instance runs the loads' count, and the reads' while any read runs (and a moment after). Settings are
 * applied one at a time, in order, on a connection of their own; a read begins once its setting is in
 * place. DuckDB starts or stops its threads as a query begins, so a load under way keeps the threads it
 * began with.
 */
export class StoreThreads {
  #counts: ThreadCounts | undefined;
  #reading = 0;
  #applied: number | undefined;
  #connection: Promise<DuckDBConnection> | undefined;
  #connected: DuckDBConnection | undefined;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;
  #linger: ReturnType<typeof setTimeout> | undefined;

  /**
   * `lingerMs`: how long the reads' count stays after the last read ends, so a dashboard page's burst of
   * queries changes the setting once, not twice a query (each change costs a round trip, and DuckDB
   * starting or stopping a thread as the next query begins).
   */
  constructor(
    private readonly instance: DuckDBInstance,
    private readonly lingerMs = 1000,
  ) {}

  /** The counts in effect from now on (until then DuckDB's own, for the store's opening). */
  start(counts: ThreadCounts): Promise<void> {
    this.#counts = counts;
    return this.#apply();
  }

  /** Marks a read as running, once the reads' count is set; call the function it resolves to at its end. */
  async begin(): Promise<() => void> {
    this.#reading++;
    clearTimeout(this.#linger);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (--this.#reading > 0) return;
      clearTimeout(this.#linger);
      if (this.lingerMs <= 0) void this.#apply();
      else {
        this.#linger = setTimeout(() => void this.#apply(), this.lingerMs);
        this.#linger.unref();
      }
    };
    await this.#apply();
    return end;
  }

  /** Runs `read` as a read (begin, then its end however it ends). */
  async during<T>(read: () => Promise<T>): Promise<T> {
    const end = await this.begin();
    try {
      return await read();
    } finally {
      end();
    }
  }

  /** Settles once every setting asked for so far is applied (not one still lingering). */
  settled(): Promise<void> {
    return this.#queue;
  }

  /** Closes its connection (now, or once it is made); later settings are not applied. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#linger);
    if (this.#connected) this.#connected.closeSync();
    else void this.#connection?.then((c) => c.closeSync()).catch(() => undefined);
  }

  /**
   * Queues setting the count the moment calls for; never rejects: the setting only changes how fast
   * DuckDB works, so a failure (the instance closing) is let go, and the next change tries again.
   */
  #apply(): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      if (!this.#counts || this.#closed) return;
      const wanted = this.#reading > 0 ? this.#counts.reads : this.#counts.loads;
      if (wanted === this.#applied) return;
      this.#connection ??= this.instance.connect();
      try {
        this.#connected = await this.#connection;
        if (this.#closed) return;
        await this.#connected.run(`SET threads = ${wanted}`);
        this.#applied = wanted;
      } catch {
        this.#applied = undefined;
      }
    });
    return this.#queue;
  }
}
