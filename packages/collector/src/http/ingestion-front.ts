import { COLLECTOR_DEFAULTS } from '@gatehouse/config';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyError, BodyStopped, inflate, overBudget, readBody, tooManyItems } from '../protocol/body.js';
import { clientOf } from '../protocol/client.js';
import { countItems } from '../protocol/count-items.js';
import { startIngest } from '../protocol/ingest-offload.js';
import { selectPacked, type PackedItems } from '../protocol/packed.js';
import { SinkFull, SinkUnavailable, type ItemSink } from '../store/sink.js';
import { bodyRefused, partlyAccepted, retryLater, send, type BreezeResponse } from './breeze-answers.js';
import { consoleLogger, LOG_INTERVAL_MS, requests, throttled } from './front-log.js';
import type { CollectorFront, CollectorFrontOptions } from './front-options.js';
import type { InFlightTicket } from './in-flight.js';
import { lingerOnClose } from './lingering-close.js';
import { createRequestBudgets, gone } from './request-budgets.js';
import { clientAddress, compileTrust, sourceKey } from './source-address.js';

const TOO_MANY = 'Too many items; retry later.';
const TRACK_PATHS = new Set(['/v2/track', '/v2.1/track']);
/** Refused items listed in an answer; after as many, the rest of the body is not checked. */
const MAX_REFUSED_ITEMS = 100;

/** The first `count` packed rows. */
function firstRows(items: PackedItems, count: number): PackedItems {
  return selectPacked(items, (index) => index < count);
}

/**
 * The ingestion endpoints: admits a request within its budgets (request-budgets.ts), reads, validates
 * and charges it, hands what it accepted to `sink`, and answers as the ingestion service does.
 */
export function createFront(options: CollectorFrontOptions, sink: ItemSink): CollectorFront {
  const log = options.log ?? consoleLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxDecompressedBytes = options.maxDecompressedBytes ?? 4 * 1024 * 1024;
  const maxItemsPerRequest = options.maxItemsPerRequest ?? COLLECTOR_DEFAULTS.TELEMETRY_MAX_ITEMS_PER_REQUEST;
  const origins = new Set(options.allowedOrigins);
  const retryAfterSeconds = options.retryAfterSeconds ?? 10;
  const budgets = createRequestBudgets(options, { maxBodyBytes, retryAfterSeconds, log });
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
  const logUnavailable = throttled(LOG_INTERVAL_MS, (times, because: string) =>
    log('warn', `${because}; answered 503 to ${requests(times)}`),
  );
  const logFull = throttled(LOG_INTERVAL_MS, (times, because: string) =>
    log('error', `store is full: ${because}; answered 507 to ${requests(times)}`),
  );

  const trust = compileTrust(options.trustProxy);
  /** The key of the client's per-source buckets: its address, an IPv6 address by its /64. */
  const source = (req: IncomingMessage) => sourceKey(clientAddress(req, trust));

  /**
   * Answers one POST. Whatever the request holds of the bytes in flight is given back exactly once,
   * whenever and however it ends: the release is registered before the first await (a `close`
   * listener added after the client has gone is never called), and again when the answer is done.
   */
  async function track(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>) {
    const from = source(req);
    const ticket = budgets.open(from);
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
      logFull(full);
      req.resume();
      send(res, 507, bodyRefused(507, 'Telemetry store is full; items are not stored.'), headers);
      return;
    }
    const byteTicket = await budgets.admit(req, res, headers, from);
    if (byteTicket === undefined) return;
    const shedding = behind(0);
    if (shedding) logBehind();
    let body: Buffer;
    try {
      const raw = await readBody(req, maxBodyBytes, { ...budgets.bodyRate, charge: ticket.charge });
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
        if (error.code === 'over-budget') budgets.refuseOverBudget(res, headers);
        else {
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
    const charged = await budgets.charge(from, stored, byteTicket);
    if (charged) {
      const { granted, retryAfter } = charged;
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
          logFull(error.message);
          send(res, 507, bodyRefused(507, 'Telemetry store is full; items are not stored.'), headers);
          return;
        }
        let wait = busy(headers);
        if (error instanceof SinkUnavailable) {
          logUnavailable(error.message);
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
