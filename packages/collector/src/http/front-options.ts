import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import type { RateLimiter } from './rate-limit.js';
import type { TrustProxySetting } from './source-address.js';

/** What the collector's front (limits, validation, rate limits) is told, whatever its sink. */
export interface CollectorFrontOptions {
  /** Instrumentation keys accepted (case-insensitive), or 'any' to accept every key. */
  instrumentationKeys: string[] | 'any';
  /** Origins (scheme://host[:port]) allowed to post from a browser on another origin. */
  allowedOrigins: string[];
  /** Largest request body as sent (compressed), in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Largest body once gunzipped, in bytes. Default 4 MiB: half the store's load run (store.ts), and the
   * most memory one gzip body can take, whatever it inflates to.
   */
  maxDecompressedBytes?: number;
  /** Items one request may hold; a body with more is refused whole (413). Default 1,000. */
  maxItemsPerRequest?: number;
  /**
   * Items accepted per second across all senders. Beyond it, the items over are answered 429 one by
   * one (206 when some were stored), with Retry-After. Default unlimited.
   */
  maxItemsPerSecond?: number;
  /**
   * The same per source: a client address (see `trustProxy`), an IPv6 address by its /64 (see
   * `sourceKey`). Default unlimited.
   */
  maxItemsPerSecondPerSource?: number;
  /**
   * Buckets of the caller's (shared by every replica through Redis) instead of this process's; the two
   * rates above are then the caller's to apply.
   */
  rateLimiter?: RateLimiter;
  /**
   * Bytes stored per second per source, sustained: a request costs the UTF-8 bytes of the rows it
   * stores (what the journal writes and the disk quota counts), and at least its body's declared
   * length. Past it, as for items: what fits is stored, the rest answered 429 with Retry-After. Default
   * unlimited (Gatehouse's server sets 60 KiB/s: a day to fill the default 5 GiB quota).
   */
  maxBytesPerSecondPerSource?: number;
  /** What a source's byte bucket holds when full, its burst. Default 1 MiB. */
  maxBytesBurstPerSource?: number;
  /** Byte buckets of the caller's (shared by replicas) instead of this process's, as `rateLimiter`. */
  byteRateLimiter?: RateLimiter;
  /**
   * Request body bytes held at once across all requests, counted as they are taken: each chunk of a
   * body as it arrives, then its text (identity) or each chunk as it inflates (gzip). A request whose
   * next chunk would go past it is answered 503 with Retry-After then, and its connection closed; one
   * that finds it full, before its body is read. A request alone is always let through. Default
   * 64 MiB; 0: none.
   */
  maxBytesInFlight?: number;
  /**
   * The same, for the requests of one source (as the rate limits key it): one address cannot take the
   * bytes in flight from everyone. Default a quarter of `maxBytesInFlight`; 0: none.
   */
  maxBytesInFlightPerSource?: number;
  /**
   * The least rate a body arrives at, in bytes per second, once `minBodyRateGraceMs` have passed
   * since its reading began (Apache's mod_reqtimeout `MinRate`). A slower body is answered 408 and its
   * connection closed. Default 500 (mod_reqtimeout's); 0: none (the request timeout still applies).
   */
  minBodyBytesPerSecond?: number;
  /** How long a body may take before the least rate applies, in ms. Default 5,000. */
  minBodyRateGraceMs?: number;
  /**
   * Proxies in front whose `X-Forwarded-For` is believed: their addresses and ranges (believed only
   * from them), or a count of hops (`true`: one; believed from whoever connects). The client address is
   * then the first entry, from the right, that no trusted proxy wrote (see `clientAddress`); the entries
   * before it are the client's to write, so a limit keyed on them could be dodged. Otherwise the
   * connection's address. Default none.
   */
  trustProxy?: TrustProxySetting;
  /** Seconds a client is asked to wait (Retry-After) after a 503. Default 10. */
  retryAfterSeconds?: number;
  /** Items older than this many days are refused (and deleted by the store). Default 90; 0 keeps everything. */
  retentionDays?: number;
  /**
   * How far back and ahead of the server's clock an item may be dated, in ms; items outside are refused
   * (400 for that item). Default 48 hours back, 5 minutes ahead, as the ingestion service.
   */
  timeWindow?: { pastMs?: number; futureMs?: number };
  /** Where the collector reports what it does. Default: console. */
  log?: Logger;
  /** Decode and validate bodies in a worker thread (from the compiled package). Default true. */
  ingestWorker?: boolean;
}

/** The collector's front: the ingestion endpoints, handing accepted items to its sink. */
export interface CollectorFront {
  /** Answers POST/OPTIONS on /v2/track and /v2.1/track; calls `next()` for anything else (Express-style). */
  handle(req: IncomingMessage, res: ServerResponse, next?: () => void): void;
  /**
   * Whether items can be stored now (for readiness): not closing, the last append succeeded, the sink
   * not full, and the sink's own check (a store holder reachable) passing.
   */
  ready(): Promise<boolean>;
  /** Stops accepting, waits for what the sink was given, closes the sink. */
  close(): Promise<void>;
}
