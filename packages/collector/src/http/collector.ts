import { COLLECTOR_DEFAULTS } from '@gatehouse/config';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyError, BodyStopped, inflate, overBudget, readBody, tooManyItems } from '../protocol/body.js';
import { clientOf } from '../protocol/client.js';
import { InFlightBudget, type InFlightTicket } from './in-flight.js';
import { lingerOnClose } from './lingering-close.js';
import { countItems } from '../protocol/count-items.js';
import type { ItemError } from '../protocol/ingest.js';
import { startIngest } from '../protocol/ingest-offload.js';
import { packedBytes, rowBytes, selectPacked, type PackedItems } from '../protocol/packed.js';
import { RateLimits, type RateLimiter } from './rate-limit.js';
import { clientAddress, compileTrust, sourceKey, type TrustProxySetting } from './source-address.js';
import type { AnalyticsQueries } from '../analytics/product.js';
import type { UsageQueries } from '../analytics/usage-answers.js';
import { dashboardQueries, type Dashboard } from '../dashboard/dashboard-queries.js';
import { runOnStore } from '../dashboard/dashboard-query.js';
import type { AnnotationQueries } from '../store/annotations.js';
import { openStoreSink, type StoreSink } from '../analytics/store-sink.js';
import { SinkFull, SinkUnavailable, type ItemSink, type StoreSinkOptions } from '../store/sink.js';
import type { TelemetryStore } from '../store/store.js';
import type { Logger } from '../logger.js';

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

/** A collector over the embedded store in `dataDir` (the default sink). */
export interface CollectorOptions
  extends CollectorFrontOptions, Omit<StoreSinkOptions, 'log' | 'retentionDays'> {
  sink?: undefined;
}

/** A collector whose accepted items go to `sink` (another process's store, a relay, ...) instead. */
export interface SinkCollectorOptions extends CollectorFrontOptions {
  sink: ItemSink;
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

/** A collector holding the embedded store, with the store's queries. */
export interface Collector extends CollectorFront {
  store: TelemetryStore;
  /** The store's sink, which a store holder's internal API also appends to (store-holder.ts). */
  sink: StoreSink;
  /** The usage dashboard's queries, on the store's own connection (the file admits one process). */
  usage: UsageQueries;
  /** The dashboard's product analytics (web vitals, events, funnels, ...), on the same connection. */
  analytics: AnalyticsQueries;
  /** The panels' registered queries (dashboard/dashboard-queries.ts) on this store. */
  dashboard: Dashboard;
  /** The admins' annotations, in the same store. */
  annotations: AnnotationQueries;
}

/** The ingestion service's answer: https://github.com/microsoft/ApplicationInsights-node.js/blob/develop/Library/Sender.ts */
export interface BreezeResponse {
  itemsReceived: number;
  itemsAccepted: number;
  errors: { index: number; statusCode: number; message: string }[];
}

const TOO_MANY = 'Too many items; retry later.';
/** The least a request's admission takes from its source's byte bucket: below it, the bucket is empty. */
const MIN_BYTE_TICKET = 1024;
const TRACK_PATHS = new Set(['/v2/track', '/v2.1/track']);
/** Refused items listed in an answer; after as many, the rest of the body is not checked. */
const MAX_REFUSED_ITEMS = 100;
/** How often a repeated condition (store behind, store full) is logged, with how many requests it hit. */
const LOG_INTERVAL_MS = 10_000;

const consoleLogger: Logger = (level, message) => {
  const line = `[collector] ${message}`;
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.info(line);
};

function send(
  res: ServerResponse,
  statusCode: number,
  body: BreezeResponse,
  headers: Record<string, string> = {},
): void {
  const json = JSON.stringify(body);
  res.writeHead(statusCode, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
  });
  res.end(json);
}

/** No item could be read, so the one error names the body (index 0), in the service's shape. */
function bodyRefused(statusCode: number, message: string): BreezeResponse {
  return { itemsReceived: 0, itemsAccepted: 0, errors: [{ index: 0, statusCode, message }] };
}

/**
 * Nothing stored this time: every valid item is marked `statusCode` (429/503), which both SDKs resend
 * item by item, and invalid items keep their 400, which they drop.
 */
function retryLater(
  received: number,
  invalid: ItemError[],
  statusCode: number,
  message: string,
): BreezeResponse {
  const byIndex = new Map(invalid.map((e) => [e.index, e]));
  return {
    itemsReceived: received,
    itemsAccepted: 0,
    errors: Array.from(
      { length: received },
      (_, index) => byIndex.get(index) ?? { index, statusCode, message },
    ),
  };
}

/**
 * Some of a batch stored, the rest over the rate limit: each valid item not stored is marked 429,
 * which the SDKs resend item by item (they drop the 400s).
 */
function partlyAccepted(
  received: number,
  checked: number,
  invalid: ItemError[],
  stored: number,
  message: string,
): BreezeResponse {
  const refused = new Set(invalid.map((e) => e.index));
  const errors = [...invalid];
  let valid = 0;
  for (let index = 0; index < checked; index++) {
    if (!refused.has(index) && valid++ >= stored) errors.push({ index, statusCode: 429, message });
  }
  errors.sort((a, b) => a.index - b.index);
  return { itemsReceived: received, itemsAccepted: stored, errors };
}

/**
 * Refused before the body was read, so no item can be named: an empty answer, which every SDK takes as
 * "resend the whole batch" (Node.js 2.x resends all when the answer is not JSON, 3.x when it is empty,
 * the browser on the status alone); the connection is closed, since the body is left unread.
 */
function refuseUnread(
  res: ServerResponse,
  statusCode: 429 | 503,
  retryAfterSeconds: number,
  headers: Record<string, string>,
): void {
  res.writeHead(statusCode, {
    ...headers,
    'Retry-After': String(retryAfterSeconds),
    'Content-Length': 0,
    Connection: 'close',
  });
  lingerOnClose(res);
  res.end();
}

/** The first `count` packed rows. */
function firstRows(items: PackedItems, count: number): PackedItems {
  return selectPacked(items, (index) => index < count);
}

/** A function that calls `say` (with how often it was called since) at most once per `intervalMs`. */
function throttled(intervalMs: number, say: (times: number) => void): () => void {
  let times = 0;
  let last = -Infinity;
  return () => {
    times++;
    if (Date.now() - last < intervalMs) return;
    say(times);
    times = 0;
    last = Date.now();
  };
}

const requests = (n: number) => `${n} ${n === 1 ? 'request' : 'requests'}`;

/** The collector over the embedded store, or, given a `sink`, the front alone handing items to it. */
export async function createCollector(options: CollectorOptions): Promise<Collector>;
export async function createCollector(options: SinkCollectorOptions): Promise<CollectorFront>;
export async function createCollector(
  options: CollectorOptions | SinkCollectorOptions,
): Promise<Collector | CollectorFront> {
  const log = options.log ?? consoleLogger;
  if (options.sink) return createFront(options, options.sink);
  const sink = await openStoreSink({ ...options, log });
  const { store, usage, analytics, annotations } = sink;
  const dashboard = runOnStore(dashboardQueries, store);
  return { ...createFront(options, sink), sink, store, usage, analytics, dashboard, annotations };
}

function createFront(options: CollectorFrontOptions, sink: ItemSink): CollectorFront {
  const log = options.log ?? consoleLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxDecompressedBytes = options.maxDecompressedBytes ?? 4 * 1024 * 1024;
  const maxItemsPerRequest = options.maxItemsPerRequest ?? COLLECTOR_DEFAULTS.TELEMETRY_MAX_ITEMS_PER_REQUEST;
  const origins = new Set(options.allowedOrigins);
  const rateLimits: RateLimiter | undefined =
    options.rateLimiter ??
    (options.maxItemsPerSecond || options.maxItemsPerSecondPerSource
      ? new RateLimits(options.maxItemsPerSecond, options.maxItemsPerSecondPerSource)
      : undefined);
  const byteBurst =
    options.maxBytesBurstPerSource ?? COLLECTOR_DEFAULTS.TELEMETRY_MAX_KB_BURST_PER_SOURCE * 1024;
  const byteLimits: RateLimiter | undefined =
    options.byteRateLimiter ??
    (options.maxBytesPerSecondPerSource
      ? new RateLimits(undefined, options.maxBytesPerSecondPerSource, Date.now, byteBurst)
      : undefined);
  const maxBytesInFlight =
    options.maxBytesInFlight ?? COLLECTOR_DEFAULTS.TELEMETRY_MAX_MB_IN_FLIGHT * 1024 * 1024;
  const inFlight = new InFlightBudget(
    maxBytesInFlight,
    options.maxBytesInFlightPerSource ?? Math.floor(maxBytesInFlight / 4),
  );
  const bodyRate = {
    minBytesPerSecond:
      options.minBodyBytesPerSecond ?? COLLECTOR_DEFAULTS.TELEMETRY_MIN_BODY_BYTES_PER_SECOND,
    graceMs: options.minBodyRateGraceMs ?? COLLECTOR_DEFAULTS.TELEMETRY_MIN_BODY_RATE_GRACE_SECONDS * 1000,
  };
  const retryAfterSeconds = options.retryAfterSeconds ?? 10;
  const retentionDays = options.retentionDays ?? COLLECTOR_DEFAULTS.TELEMETRY_RETENTION_DAYS;
  const ingest = startIngest(
    {
      instrumentationKeys: options.instrumentationKeys,
      maxItemsPerRequest,
      maxRefusedItems: MAX_REFUSED_ITEMS,
      timeWindow: { ...options.timeWindow, retentionDays },
    },
    options.ingestWorker ?? true,
    log,
  );
  let closing = false;
  let writeFailing = false;

  /** CORS headers for an allowed cross-origin caller; `undefined` when the origin is not allowed. */
  function cors(req: IncomingMessage): Record<string, string> | undefined {
    const origin = req.headers.origin;
    if (origin === undefined) return {};
    if (origins.has(origin)) return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
    // Browsers send Origin on same-origin POSTs too: the app posting to its own host is always fine.
    try {
      if (new URL(origin).host === req.headers.host) return {};
    } catch {
      // An Origin that is not a URL ("null") is not allowed.
    }
    return undefined;
  }

  /** Whether the sink (the journal or the loads behind it) is too far behind to take `count` more items. */
  const behind = (count: number) => !sink.hasRoom(count);
  const busy = (headers: Record<string, string>) => ({
    ...headers,
    'Retry-After': String(retryAfterSeconds),
  });
  // Said at most every 10 s (with how many requests were turned away), not per request.
  const logBehind = throttled(LOG_INTERVAL_MS, (times) =>
    log('warn', `store is behind (${sink.backlog()} items waiting); answered 503 to ${requests(times)}`),
  );
  // A sink that cannot take items says it for every request until it is back: said every 10 s.
  let unavailableBecause = '';
  const logUnavailable = throttled(LOG_INTERVAL_MS, (times) =>
    log('warn', `${unavailableBecause}; answered 503 to ${requests(times)}`),
  );
  let fullBecause = '';
  const logFull = throttled(LOG_INTERVAL_MS, (times) =>
    log('error', `store is full: ${fullBecause}; answered 507 to ${requests(times)}`),
  );

  const logInFlight = throttled(LOG_INTERVAL_MS, (times) =>
    log(
      'warn',
      `request bodies in flight at the cap (${inFlight.held} of ${maxBytesInFlight} bytes, or a source's share); answered 503 to ${requests(times)}`,
    ),
  );

  const trust = compileTrust(options.trustProxy);
  /** The key of the client's per-source buckets: its address, an IPv6 address by its /64. */
  const source = (req: IncomingMessage) => sourceKey(clientAddress(req, trust));

  /** Whether the client is gone: nothing more to read, nobody to answer. */
  const gone = (req: IncomingMessage, res: ServerResponse) =>
    res.destroyed || (req.socket?.destroyed ?? true);

  /**
   * Admission, before a byte of the body is read: the request's first item and its body's declared
   * bytes (at least MIN_BYTE_TICKET; the burst when it declares none) are taken from its source's
   * buckets, and the bytes in flight must not be full already (for all, or for its source). False
   * when refused (answered 429 or 503, the body left unread) or when the client left meanwhile. What
   * it stores is charged after parsing: the rest of its cost.
   */
  async function admit(
    req: IncomingMessage,
    res: ServerResponse,
    headers: Record<string, string>,
    from: string,
    byteTicket: number,
  ): Promise<boolean> {
    if (rateLimits) {
      const { granted, retryAfter } = await rateLimits.grant(from, 1);
      if (gone(req, res)) return false;
      if (granted < 1) {
        refuseUnread(res, 429, retryAfter, headers);
        return false;
      }
    }
    if (byteLimits) {
      const { granted, retryAfter } = await byteLimits.grant(from, byteTicket);
      if (gone(req, res)) return false;
      if (granted < byteTicket) {
        refuseUnread(res, 429, retryAfter, headers);
        return false;
      }
    }
    if (inFlight.full(from)) {
      logInFlight();
      refuseUnread(res, 503, retryAfterSeconds, headers);
      return false;
    }
    return true;
  }

  /**
   * Answers one POST. Whatever the request holds of the bytes in flight is given back exactly once,
   * whenever and however it ends: the release is registered before the first await (a `close`
   * listener added after the client has gone is never called), and again when the answer is done.
   */
  async function track(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>) {
    const from = source(req);
    const ticket = inFlight.open(from);
    res.once('close', ticket.release);
    try {
      await answer(req, res, headers, from, ticket);
    } finally {
      ticket.release();
    }
  }

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    headers: Record<string, string>,
    from: string,
    ticket: InFlightTicket,
  ) {
    const full = sink.full();
    if (full !== undefined) {
      // Refused before reading: nothing more fits. Not a retry status, so the SDKs do not pile up resends.
      fullBecause = full;
      logFull();
      req.resume();
      send(res, 507, bodyRefused(507, 'Telemetry store is full; items are not stored.'), headers);
      return;
    }
    const declared = Number(req.headers['content-length']);
    const byteTicket = Math.min(
      byteBurst,
      Math.max(MIN_BYTE_TICKET, declared >= 0 ? declared : maxBodyBytes),
    );
    if (!(await admit(req, res, headers, from, byteTicket))) return;
    const shedding = behind(0);
    if (shedding) logBehind();
    let body: Buffer;
    try {
      const raw = await readBody(req, maxBodyBytes, { ...bodyRate, charge: ticket.charge });
      // Inflated here rather than by the ingest (maybe in its worker), so that each inflated chunk is
      // charged as it is made; an identity body is charged again for the text the ingest makes of it.
      body = await inflate(raw, req.headers['content-encoding'], maxDecompressedBytes, ticket.charge);
      if (body === raw && !ticket.charge(raw.length)) throw overBudget();
      if (shedding) {
        // Shed load before validating what would be refused anyway, but name every item of the
        // batch: the Node.js SDK 2.x resends only the items a 503 names (the other SDKs resend all).
        const count = countItems(body.toString('utf8'), req.headers['content-type']);
        if (count > maxItemsPerRequest) {
          // Naming every item of an oversized body would make the answer the amplifier.
          send(res, 413, bodyRefused(413, tooManyItems(maxItemsPerRequest).message), headers);
          return;
        }
        send(res, 503, retryLater(count, [], 503, 'Store is busy; retry later.'), busy(headers));
        return;
      }
    } catch (error) {
      if (!(error instanceof BodyError || error instanceof BodyStopped)) throw error;
      if (gone(req, res)) return;
      if (error instanceof BodyStopped) {
        if (error.code === 'over-budget') {
          logInFlight();
          refuseUnread(res, 503, retryAfterSeconds, headers);
        } else {
          // A sender this slow is holding a connection, not sending telemetry: it is not waited for.
          lingerOnClose(res);
          send(res, 408, bodyRefused(408, error.message), { ...headers, Connection: 'close' });
        }
        return;
      }
      if (error.statusCode !== 413) {
        send(res, error.statusCode, bodyRefused(error.statusCode, error.message), headers);
        return;
      }
      // Ask the client to close: the refused body may not have been read to its end.
      lingerOnClose(res);
      send(res, 413, bodyRefused(413, error.message), { ...headers, Connection: 'close' });
      req.resume();
      return;
    }
    const result = await ingest.ingest(body, req.headers['content-type'], clientOf(req.headers));
    if (!result.ok) {
      send(res, result.statusCode, bodyRefused(result.statusCode, result.message), headers);
      return;
    }
    const { received, errors } = result;
    const accepted = result.accepted.count;

    if (closing) {
      send(res, 503, retryLater(received, errors, 503, 'Collector is shutting down.'), busy(headers));
      return;
    }
    let stored = result.accepted;
    let answer: BreezeResponse | undefined;
    if (accepted > 0 && (rateLimits || byteLimits)) {
      // The rest of the request's cost, beyond what its admission took.
      let granted = accepted;
      let retryAfter = 0;
      if (rateLimits && accepted > 1) {
        const more = await rateLimits.grant(from, accepted - 1);
        granted = 1 + more.granted;
        retryAfter = more.retryAfter;
      }
      if (byteLimits) {
        const sizes = granted < accepted ? rowBytes(stored) : undefined;
        const bytes = sizes ? sizes.slice(0, granted).reduce((a, b) => a + b, 0) : packedBytes(stored);
        if (bytes > byteTicket) {
          const more = await byteLimits.grant(from, bytes - byteTicket);
          if (more.granted < bytes - byteTicket) {
            const budget = byteTicket + more.granted;
            const each = sizes ?? rowBytes(stored);
            let fit = 0;
            for (let used = 0; fit < granted && used + (each[fit] ?? 0) <= budget; fit++)
              used += each[fit] ?? 0;
            granted = fit;
            retryAfter = Math.max(retryAfter, more.retryAfter);
          }
        }
      }
      const wait = { ...headers, 'Retry-After': String(retryAfter) };
      if (granted === 0) {
        send(res, 429, retryLater(received, errors, 429, TOO_MANY), wait);
        return;
      }
      if (granted < accepted) {
        // What the buckets hold is stored; the rest is resent by the SDK, so nothing runs into debt.
        stored = firstRows(stored, granted);
        answer = partlyAccepted(received, result.checked, errors, granted, TOO_MANY);
        headers = wait;
      }
    }

    if (stored.count > 0) {
      if (behind(stored.count)) {
        logBehind();
        send(res, 503, retryLater(received, errors, 503, 'Store is busy; retry later.'), busy(headers));
        return;
      }
      try {
        await sink.append(stored);
        writeFailing = false;
      } catch (error) {
        if (error instanceof SinkFull) {
          fullBecause = error.message;
          logFull();
          send(res, 507, bodyRefused(507, 'Telemetry store is full; items are not stored.'), headers);
          return;
        }
        let wait = busy(headers);
        if (error instanceof SinkUnavailable) {
          unavailableBecause = error.message;
          logUnavailable();
          if (error.retryAfterSeconds !== undefined)
            wait = { ...headers, 'Retry-After': String(error.retryAfterSeconds) };
        } else {
          // The local store could not write: readiness fails until a write succeeds again.
          writeFailing = true;
          log('error', `store write failed: ${String(error)}`);
        }
        send(res, 503, retryLater(received, errors, 503, 'Store is unavailable; retry later.'), wait);
        return;
      }
    }
    // 200 when everything was taken, 206 when some items were refused, 400 when none were.
    answer ??= { itemsReceived: received, itemsAccepted: accepted, errors };
    const status = answer.errors.length === 0 ? 200 : answer.itemsAccepted > 0 ? 206 : 400;
    send(res, status, answer, headers);
  }

  function handle(req: IncomingMessage, res: ServerResponse, next?: () => void): void {
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    if (!TRACK_PATHS.has(path) || (req.method !== 'POST' && req.method !== 'OPTIONS')) {
      if (next) next();
      else {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Not found');
      }
      return;
    }
    const headers = cors(req);
    if (headers === undefined) {
      req.resume();
      send(res, 403, bodyRefused(403, 'Origin is not allowed.'));
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...headers,
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        // What the browser SDK sets: Content-Type always, Sdk-Context for the app id; gzip for other senders.
        'Access-Control-Allow-Headers': 'Content-Type, Content-Encoding, Sdk-Context',
        'Access-Control-Max-Age': '86400',
      });
      res.end();
      return;
    }
    track(req, res, headers).catch((error: unknown) => {
      log('error', `unexpected failure answering ${path}: ${String(error)}`);
      if (!res.headersSent) send(res, 500, bodyRefused(500, 'Internal error.'));
      else res.destroy();
    });
  }

  return {
    handle,
    async ready() {
      if (closing || writeFailing || sink.full() !== undefined) return false;
      return (await sink.ready?.()) ?? true;
    },
    async close() {
      closing = true;
      await ingest.close();
      await sink.close();
    },
  };
}
