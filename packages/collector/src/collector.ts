import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyError, decode, readBody } from './body.js';
import { countItems } from './count-items.js';
import { GroupCommit } from './group-commit.js';
import type { ItemError } from './ingest.js';
import { startIngest } from './ingest-offload.js';
import { listPacked, type PackedItems } from './packed.js';
import { createUsageQueries, type UsageQueries } from './queries.js';
import { openWritableStore, ROW_GROUP_ROWS, type TelemetryStore } from './store.js';

export type LogLevel = 'info' | 'warn' | 'error';
export type Logger = (level: LogLevel, message: string) => void;

export interface CollectorOptions {
  /** Folder of the embedded database; created when missing. */
  dataDir: string;
  /** Instrumentation keys accepted (case-insensitive), or 'any' to accept every key. */
  instrumentationKeys: string[] | 'any';
  /** Origins (scheme://host[:port]) allowed to post from a browser on another origin. */
  allowedOrigins: string[];
  /** Largest request body as sent (compressed), in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Largest body once gunzipped, in bytes. Default 8 × maxBodyBytes. */
  maxDecompressedBytes?: number;
  /** Items accepted per second across all senders before answering 429. Default unlimited. */
  maxItemsPerSecond?: number;
  /** Seconds a client is asked to wait (Retry-After) after a 503. Default 10. */
  retryAfterSeconds?: number;
  /** Items older than this many days are deleted at start and hourly. Default 90; 0 keeps everything. */
  retentionDays?: number;
  /** Where the collector reports what it does. Default: console. */
  log?: Logger;
  /** Decode and validate bodies in a worker thread (from the compiled package). Default true. */
  ingestWorker?: boolean;
}

export interface Collector {
  /** Answers POST/OPTIONS on /v2/track and /v2.1/track; calls `next()` for anything else (Express-style). */
  handle(req: IncomingMessage, res: ServerResponse, next?: () => void): void;
  store: TelemetryStore;
  /** The usage dashboard's queries, on the store's own connection (the file admits one process). */
  usage: UsageQueries;
  /** Stops accepting, waits for queued writes, closes the store. */
  close(): Promise<void>;
}

/** The ingestion service's answer: https://github.com/microsoft/ApplicationInsights-node.js/blob/develop/Library/Sender.ts */
export interface BreezeResponse {
  itemsReceived: number;
  itemsAccepted: number;
  errors: { index: number; statusCode: number; message: string }[];
}

const TRACK_PATHS = new Set(['/v2/track', '/v2.1/track']);
const DAY_MS = 86_400_000;
/** Items allowed to wait for the journal before the collector answers 503. */
const MAX_QUEUED_ITEMS = 100_000;
/** Items allowed in the journal, not yet loaded into DuckDB, before the collector answers 503. */
const MAX_PENDING_ITEMS = 2 * ROW_GROUP_ROWS;

const consoleLogger: Logger = (level, message) => {
  const line = `[collector] ${message}`;
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.info(line);
};

/** Token bucket over items: refills `rate` tokens a second up to one second's worth. */
class RateLimit {
  private tokens: number;
  private last = Date.now();
  constructor(private readonly rate: number) {
    this.tokens = rate;
  }
  /** Takes `count` tokens, or returns the seconds to wait before that many are available. */
  take(count: number): number {
    const now = Date.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    // A batch larger than a second's worth passes when the bucket is full, else it never could.
    if (this.tokens >= Math.min(count, this.rate)) {
      this.tokens -= count;
      return 0;
    }
    return Math.max(1, Math.ceil((Math.min(count, this.rate) - this.tokens) / this.rate));
  }
}

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

export async function createCollector(options: CollectorOptions): Promise<Collector> {
  const log = options.log ?? consoleLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxDecompressedBytes = options.maxDecompressedBytes ?? 8 * maxBodyBytes;
  const origins = new Set(options.allowedOrigins);
  const rateLimit = options.maxItemsPerSecond ? new RateLimit(options.maxItemsPerSecond) : undefined;
  const retentionDays = options.retentionDays ?? 90;

  const store = await openWritableStore(options.dataDir, { warn: (message) => log('warn', message) });
  const ingest = startIngest(
    { instrumentationKeys: options.instrumentationKeys, maxDecompressedBytes },
    options.ingestWorker ?? true,
    log,
  );
  // One journal write (one fdatasync) at a time; batches arriving meanwhile share the next one.
  const commits = new GroupCommit<PackedItems>(
    (batches) => store.append(listPacked(batches)),
    MAX_QUEUED_ITEMS,
    1,
  );
  let closing = false;

  async function prune(): Promise<void> {
    if (!(retentionDays > 0)) return;
    try {
      const removed = await store.prune(Date.now() - retentionDays * DAY_MS);
      if (removed > 0) log('info', `retention: removed ${removed} items older than ${retentionDays} days`);
    } catch (error) {
      log('error', `retention: pruning failed: ${String(error)}`);
    }
  }
  await prune();
  const pruneTimer = setInterval(() => void prune(), 3_600_000);
  pruneTimer.unref();

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

  /** Whether the journal or the loads behind it are too far behind to take `count` more items. */
  const behind = (count: number) =>
    !commits.hasRoom(count) || store.pending() + commits.queued + count > MAX_PENDING_ITEMS;
  const busy = (headers: Record<string, string>) => ({
    ...headers,
    'Retry-After': String(options.retryAfterSeconds ?? 10),
  });
  /** Says the store is behind at most every 10 s (with how many requests were turned away), not per request. */
  let shed = 0;
  let lastShedLog = 0;
  function logBehind(): void {
    shed++;
    if (Date.now() - lastShedLog < 10_000) return;
    log(
      'warn',
      `store is behind (${commits.queued + store.pending()} items waiting); answered 503 to ${shed} ${shed === 1 ? 'request' : 'requests'}`,
    );
    shed = 0;
    lastShedLog = Date.now();
  }

  async function track(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>) {
    const shedding = behind(0);
    if (shedding) logBehind();
    let body: Buffer;
    try {
      body = await readBody(req, maxBodyBytes);
      if (shedding) {
        // Shed load before validating what would be refused anyway, but name every item of the
        // batch: the Node.js SDK 2.x resends only the items a 503 names (the other SDKs resend all).
        const count = countItems(
          await decode(body, req.headers['content-encoding'], maxDecompressedBytes),
          req.headers['content-type'],
        );
        send(res, 503, retryLater(count, [], 503, 'Store is busy; retry later.'), busy(headers));
        return;
      }
    } catch (error) {
      if (!(error instanceof BodyError)) throw error;
      if (error.statusCode !== 413) {
        if (!res.destroyed)
          send(res, error.statusCode, bodyRefused(error.statusCode, error.message), headers);
        return;
      }
      // Ask the client to close: the refused body has not been read to its end.
      send(res, 413, bodyRefused(413, error.message), { ...headers, Connection: 'close' });
      req.resume();
      return;
    }
    const result = await ingest.ingest(body, req.headers['content-encoding'], req.headers['content-type']);
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
    const wait = accepted > 0 ? (rateLimit?.take(accepted) ?? 0) : 0;
    if (wait > 0) {
      send(res, 429, retryLater(received, errors, 429, 'Too many items; retry later.'), {
        ...headers,
        'Retry-After': String(wait),
      });
      return;
    }

    if (accepted > 0) {
      if (behind(accepted)) {
        logBehind();
        send(res, 503, retryLater(received, errors, 503, 'Store is busy; retry later.'), busy(headers));
        return;
      }
      try {
        await commits.add(result.accepted, accepted);
      } catch (error) {
        log('error', `store write failed: ${String(error)}`);
        send(
          res,
          503,
          retryLater(received, errors, 503, 'Store is unavailable; retry later.'),
          busy(headers),
        );
        return;
      }
    }
    // 200 when everything was taken, 206 when some items were refused, 400 when none were.
    const status = errors.length === 0 ? 200 : accepted > 0 ? 206 : 400;
    send(res, status, { itemsReceived: received, itemsAccepted: accepted, errors }, headers);
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
    store,
    usage: createUsageQueries(store),
    async close() {
      closing = true;
      clearInterval(pruneTimer);
      await ingest.close();
      await commits.drain();
      await store.close();
    },
  };
}
