import { COLLECTOR_DEFAULTS } from '@gatehouse/config';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { packedBytes, rowBytes, type PackedItems } from '../protocol/packed.js';
import { refuseUnread } from './breeze-answers.js';
import type { CollectorFrontOptions } from './front-options.js';
import { LOG_INTERVAL_MS, requests, throttled } from './front-log.js';
import { InFlightBudget, type InFlightTicket } from './in-flight.js';
import { RateLimits, type RateLimiter } from './rate-limit.js';

/** The least a request's admission takes from its source's byte bucket: below it, the bucket is empty. */
const MIN_BYTE_TICKET = 1024;

/** What one request may cost the collector: items and bytes per source, bytes in flight, its body's rate. */
export interface RequestBudgets {
  /** The request's hold on the bytes in flight, charged as its body is read and inflated. */
  open(from: string): InFlightTicket;
  /** The least rate its body must arrive at (readBody's). */
  bodyRate: { minBytesPerSecond: number; graceMs: number };
  /**
   * Admission, before a byte of the body is read: the request's first item and its body's declared
   * bytes (at least MIN_BYTE_TICKET; the burst when it declares none) are taken from its source's
   * buckets, and the bytes in flight must not be full already (for all, or for its source). The bytes
   * taken, or undefined when refused (answered 429 or 503, the body left unread) or when the client
   * left meanwhile. What it stores is charged after parsing (`charge`): the rest of its cost.
   */
  admit(
    req: IncomingMessage,
    res: ServerResponse,
    headers: Record<string, string>,
    from: string,
  ): Promise<number | undefined>;
  /**
   * The rest of a request's cost, beyond what its admission took (`byteTicket` bytes): how many of the
   * `stored` items, in order, its buckets let it store, and when to retry the rest; undefined when no
   * rate applies.
   */
  charge(
    from: string,
    stored: PackedItems,
    byteTicket: number,
  ): Promise<{ granted: number; retryAfter: number } | undefined>;
  /** Answers 503 to a request over the bytes in flight (before or while reading its body). */
  refuseOverBudget(res: ServerResponse, headers: Record<string, string>): void;
}

/** Whether the client is gone: nothing more to read, nobody to answer. */
export const gone = (req: IncomingMessage, res: ServerResponse) =>
  res.destroyed || (req.socket?.destroyed ?? true);

export function createRequestBudgets(
  options: CollectorFrontOptions,
  limits: { maxBodyBytes: number; retryAfterSeconds: number; log: Logger },
): RequestBudgets {
  const { maxBodyBytes, retryAfterSeconds, log } = limits;
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
  const logInFlight = throttled(LOG_INTERVAL_MS, (times) =>
    log(
      'warn',
      `request bodies in flight at the cap (${inFlight.held} of ${maxBytesInFlight} bytes, or a source's share); answered 503 to ${requests(times)}`,
    ),
  );
  function refuseOverBudget(res: ServerResponse, headers: Record<string, string>) {
    logInFlight();
    refuseUnread(res, 503, retryAfterSeconds, headers);
  }

  return {
    open: (from) => inFlight.open(from),
    bodyRate: {
      minBytesPerSecond:
        options.minBodyBytesPerSecond ?? COLLECTOR_DEFAULTS.TELEMETRY_MIN_BODY_BYTES_PER_SECOND,
      graceMs: options.minBodyRateGraceMs ?? COLLECTOR_DEFAULTS.TELEMETRY_MIN_BODY_RATE_GRACE_SECONDS * 1000,
    },
    refuseOverBudget,

    async admit(req, res, headers, from) {
      const declared = Number(req.headers['content-length']);
      const byteTicket = Math.min(
        byteBurst,
        Math.max(MIN_BYTE_TICKET, declared >= 0 ? declared : maxBodyBytes),
      );
      if (rateLimits) {
        const { granted, retryAfter } = await rateLimits.grant(from, 1);
        if (gone(req, res)) return undefined;
        if (granted < 1) {
          refuseUnread(res, 429, retryAfter, headers);
          return undefined;
        }
      }
      if (byteLimits) {
        const { granted, retryAfter } = await byteLimits.grant(from, byteTicket);
        if (gone(req, res)) return undefined;
        if (granted < byteTicket) {
          refuseUnread(res, 429, retryAfter, headers);
          return undefined;
        }
      }
      if (inFlight.full(from)) {
        refuseOverBudget(res, headers);
        return undefined;
      }
      return byteTicket;
    },

    async charge(from, stored, byteTicket) {
      const accepted = stored.count;
      if (!(accepted > 0 && (rateLimits || byteLimits))) return undefined;
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
      return { granted, retryAfter };
    },
  };
}
