/**
 * Rate limits: a token bucket per client address and one for all senders. An item bucket holds at most
 * one second's worth and never goes into debt, so a large batch takes what is there (the rest of it is
 * answered 429, item by item, and resent by the SDK) and cannot lock anyone out for longer than a second.
 * A byte bucket (stored bytes per source) holds a burst larger than a second's worth, so an SDK's batch
 * fits in one go while the sustained rate stays low.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    /** Tokens a second. */
    readonly rate: number,
    now: number,
    /** The bucket's size: what it holds when full. Default one second's worth. */
    readonly size: number = rate,
  ) {
    this.tokens = size;
    this.last = now;
  }

  /** Whole tokens there now. */
  available(now: number): number {
    this.tokens = Math.min(this.size, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    return Math.floor(this.tokens);
  }

  take(count: number): void {
    this.tokens -= count;
  }

  /** Whole seconds (at least 1) until `count` tokens, at most a bucket's worth, are there. */
  secondsUntil(count: number): number {
    return Math.max(1, Math.ceil((Math.min(count, this.size) - this.tokens) / this.rate));
  }

  /** Full buckets can be forgotten: a new one starts full too. */
  isFull(now: number): boolean {
    return this.available(now) >= this.size;
  }
}

/** Per-source buckets kept at most; past it, full ones are dropped, then the oldest. */
const MAX_SOURCES = 10_000;

export interface Grant {
  /** Items that may be stored now (taken from the buckets). */
  granted: number;
  /** Seconds after which the rest could be taken. */
  retryAfter: number;
}

/**
 * Takes up to `count` (the cost) from the buckets of `source` (a key the caller chose) and the global
 * one: in this process (RateLimits) or shared by every replica (the server's Redis buckets).
 */
export interface RateLimiter {
  grant(source: string, count: number): Grant | Promise<Grant>;
}

export class RateLimits implements RateLimiter {
  private readonly global: TokenBucket | undefined;
  private readonly sources = new Map<string, TokenBucket>();

  constructor(
    globalRate: number | undefined,
    private readonly perSourceRate: number | undefined,
    private readonly now: () => number = Date.now,
    /** Size of each source's bucket. Default one second's worth (`perSourceRate`). */
    private readonly perSourceSize?: number,
  ) {
    this.global = globalRate ? new TokenBucket(globalRate, now()) : undefined;
  }

  /** Takes up to `count` (items, or bytes) for `source` from its bucket and the global one. */
  grant(source: string, count: number): Grant {
    const now = this.now();
    const own = this.bucket(source, now);
    const buckets = [own, this.global].filter((b): b is TokenBucket => b !== undefined);
    const granted = Math.min(count, ...buckets.map((b) => b.available(now)));
    for (const b of buckets) b.take(granted);
    const rest = count - granted;
    const retryAfter = rest > 0 ? Math.max(...buckets.map((b) => b.secondsUntil(rest))) : 0;
    return { granted, retryAfter };
  }

  /** Source buckets tracked (for tests: memory stays bounded). */
  get tracked(): number {
    return this.sources.size;
  }

  private bucket(source: string, now: number): TokenBucket | undefined {
    if (!this.perSourceRate) return undefined;
    let bucket = this.sources.get(source);
    if (!bucket) {
      if (this.sources.size >= MAX_SOURCES) this.forget(now);
      bucket = new TokenBucket(this.perSourceRate, now, this.perSourceSize);
      this.sources.set(source, bucket);
    }
    return bucket;
  }

  /** Drops full buckets; if that frees nothing, the oldest half (they start full again if they return). */
  private forget(now: number): void {
    for (const [source, bucket] of this.sources) if (bucket.isFull(now)) this.sources.delete(source);
    if (this.sources.size < MAX_SOURCES) return;
    let drop = this.sources.size / 2;
    for (const source of this.sources.keys()) {
      if (drop-- <= 0) break;
      this.sources.delete(source);
    }
  }
}
