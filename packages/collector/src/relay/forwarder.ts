import { COLLECTOR_DEFAULTS } from '@gatehouse/config';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Logger } from '../logger.js';
import type { Outbox, OutboxItem } from './outbox.js';
import { ownValue } from '../own-property.js';

const gzip = promisify(gzipCallback);

/**
 * Forwards the outbox to the ingestion endpoint the way the official SDKs send: batches of
 * newline-delimited envelopes (`application/x-json-stream`), gzip-compressed, POSTed to
 * `<IngestionEndpoint>/v2.1/track`; https://github.com/microsoft/ApplicationInsights-node.js
 * (Library/Sender.ts) and @azure/monitor-opentelemetry-exporter (platform/nodejs/baseSender.ts).
 */

/** Item statuses in a 206's `errors` that are worth sending again (the exporter's list, less auth). */
export const RETRYABLE_ITEM_STATUSES: ReadonlySet<number> = new Set([408, 429, 439, 500, 503]);
/** Whole-batch statuses sent again after a back-off: throttling, time-outs, the service failing. */
const RETRY_BATCH_STATUSES: ReadonlySet<number> = new Set([408, 429, 439, 500, 502, 503, 504]);
/**
 * The service's verdict on a batch as a whole (bad data, too large): the same batch would fail the
 * same way, so it is split in halves and sent again until the items refused are alone, and only those
 * are dropped.
 */
const SPLIT_BATCH_STATUSES: ReadonlySet<number> = new Set([400, 413]);
const MAX_REDIRECTS = 10;
/** Longest Retry-After honoured (the exporter's cap), so a bad header cannot stop the relay for weeks. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
/** A failure that goes on is logged at most this often. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

export interface ForwarderOptions {
  /** `<IngestionEndpoint>/v2.1/track`. */
  trackUrl: string;
  /** Items per request. Default 500. */
  maxBatchItems?: number;
  /** Envelope text per request before compression, in bytes. Default 1 MiB. */
  maxBatchBytes?: number;
  /** A request not answered within this is a time-out (sent again). Default 30 s. */
  requestTimeoutMs?: number;
  /** The first back-off. Default 1 s. */
  minRetryMs?: number;
  /** The longest back-off (Retry-After may ask for longer). Default 5 minutes. */
  maxRetryMs?: number;
  log: Logger;
  fetch?: typeof fetch;
  /** For tests: [0, 1). */
  random?: () => number;
}

export interface RelayStats {
  /** Items the endpoint took. */
  forwarded: number;
  /** Items it refused for good (logged). */
  dropped: number;
  /** Items sent again (after a 206, a retryable status, a time-out or a connection failure). */
  resent: number;
  requests: number;
  /** Consecutive failed attempts (0 when the last one went through). */
  failures: number;
  /** Why the last attempt failed, if it did. */
  lastError: string | undefined;
  lastSuccess: Date | undefined;
}

interface BreezeError {
  index: number;
  statusCode: number;
  message?: string;
}

interface BreezeAnswer {
  itemsReceived?: number;
  itemsAccepted?: number;
  errors?: BreezeError[];
}

interface Outcome {
  done: OutboxItem[];
  again: OutboxItem[];
  waitMs?: number;
  failure?: string;
  /** The batch was refused as a whole (a status of SPLIT_BATCH_STATUSES): to be split. */
  refused?: { status: number; answer: string };
  /** Items refused alone by a whole-batch status, and the first such answer: dropped. */
  refusedAlone?: { count: number; status: number; answer: string };
}

/**
 * Azure Monitor's ingestion domains, one per cloud; `dc.services.visualstudio.com` is the public
 * cloud's global endpoint (the SDKs' default), which sends a resource on to its regional one.
 */
const AZURE_INGESTION_DOMAINS = [
  'applicationinsights.azure.com',
  'applicationinsights.azure.us',
  'applicationinsights.azure.cn',
];
const GLOBAL_ENDPOINTS: Record<string, string> = {
  'dc.services.visualstudio.com': 'applicationinsights.azure.com',
};

function azureIngestionDomain(hostname: string): string | undefined {
  return (
    ownValue(GLOBAL_ENDPOINTS, hostname) ??
    AZURE_INGESTION_DOMAINS.find((domain) => hostname === domain || hostname.endsWith(`.${domain}`))
  );
}

/**
 * Where a 307/308 from `current` may send the batch, or undefined when it is not followed: never to
 * another scheme (plain http is configured only for a loopback stand-in), never with credentials, and
 * only to the configured endpoint's host, or, from Azure Monitor's own ingestion, to another of its
 * hosts in the same cloud on the default port. The destination is the operator's choice, not a
 * redirect's.
 */
export function redirectTarget(configured: string, location: string, current = configured): URL | undefined {
  if (!URL.canParse(location, current)) return undefined;
  const target = new URL(location, current);
  const from = new URL(configured);
  if (target.protocol !== from.protocol || target.username !== '' || target.password !== '') return undefined;
  if (target.host === from.host) return target;
  const domain = azureIngestionDomain(from.hostname);
  return target.protocol === 'https:' &&
    target.port === '' &&
    domain !== undefined &&
    azureIngestionDomain(target.hostname) === domain
    ? target
    : undefined;
}

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

export class Forwarder {
  readonly stats: RelayStats = {
    forwarded: 0,
    dropped: 0,
    resent: 0,
    requests: 0,
    failures: 0,
    lastError: undefined,
    lastSuccess: undefined,
  };
  private trackUrl: string;
  private stopping = false;
  private readonly stopped: Promise<void>;
  private wake: (() => void) | undefined;
  private readonly abort = new AbortController();
  private lastFailureLog = -Infinity;
  private redirects = 0;

  constructor(
    private readonly outbox: Outbox,
    private readonly options: ForwarderOptions,
  ) {
    this.trackUrl = options.trackUrl;
    this.stopped = this.run().catch((error: unknown) => {
      options.log('error', `relay: forwarding stopped: ${String(error)}`);
    });
  }

  private async run(): Promise<void> {
    const maxItems = this.options.maxBatchItems ?? 500;
    const maxBytes = this.options.maxBatchBytes ?? 1024 * 1024;
    while (!this.stopping) {
      await this.outbox.waitForItems();
      if (this.stopping) break;
      const batch = await this.outbox.next(maxItems, maxBytes);
      if (batch.length === 0) continue;
      const outcome = await this.deliver(batch);
      if (outcome.refusedAlone) this.droppedAlone(batch.length, outcome.refusedAlone);
      this.stats.resent += outcome.again.length;
      await this.outbox.settle(outcome.done, outcome.again);
      if (outcome.failure !== undefined) {
        // A redirect holds only while the place it names answers: after any failure, the configured URL.
        this.trackUrl = this.options.trackUrl;
        this.redirects = 0;
        this.failed(outcome.failure, outcome.waitMs);
      } else if (this.stats.failures > 0) {
        this.options.log(
          'info',
          `relay: delivering again after ${this.stats.failures} failed attempts; ${this.outbox.pending} items waiting`,
        );
        this.stats.failures = 0;
        this.stats.lastError = undefined;
      }
      if (outcome.waitMs !== undefined && outcome.waitMs > 0) await this.sleep(outcome.waitMs);
    }
  }

  /** The back-off before attempt `failures + 1`: exponential, with half of it random (jitter). */
  private backoff(retryAfter: number | undefined): number {
    const min = this.options.minRetryMs ?? 1000;
    const max = this.options.maxRetryMs ?? COLLECTOR_DEFAULTS.TELEMETRY_RELAY_MAX_RETRY_SECONDS * 1000;
    const exponential = Math.min(max, min * 2 ** Math.min(this.stats.failures, 30));
    const jittered = exponential * (0.5 + 0.5 * (this.options.random ?? Math.random)());
    return Math.max(jittered, retryAfter ?? 0);
  }

  private failed(reason: string, waitMs: number | undefined): void {
    this.stats.failures++;
    this.stats.lastError = reason;
    if (Date.now() - this.lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    this.lastFailureLog = Date.now();
    this.options.log(
      'warn',
      `relay: ${reason}; ${this.outbox.pending} items waiting, next attempt in ${Math.round((waitMs ?? 0) / 1000)} s`,
    );
  }

  /**
   * Sends `batch`; one refused as a whole is sent again in halves, each split again while refused,
   * until an item refused alone is dropped: one bad item costs its batch about 2·log2(size) more
   * requests, never the other items. A half that fails otherwise (an outage) ends the splitting: what
   * is left goes back to the outbox with it.
   */
  private async deliver(batch: OutboxItem[]): Promise<Outcome> {
    const outcome = await this.attempt(batch);
    const refused = outcome.refused;
    if (!refused) return outcome;
    if (batch.length === 1) {
      this.stats.dropped++;
      return { done: batch, again: [], refusedAlone: { count: 1, ...refused } };
    }
    const half = Math.ceil(batch.length / 2);
    const halves = [batch.slice(0, half), batch.slice(half)];
    const merged: Outcome = { done: [], again: [] };
    for (const part of halves) {
      if (merged.failure !== undefined || this.stopping) {
        merged.again.push(...part);
        continue;
      }
      this.stats.resent += part.length;
      const outcome = await this.deliver(part);
      merged.done.push(...outcome.done);
      merged.again.push(...outcome.again);
      if (outcome.waitMs !== undefined) merged.waitMs = outcome.waitMs;
      if (outcome.failure !== undefined) merged.failure = outcome.failure;
      if (outcome.refusedAlone) {
        merged.refusedAlone = {
          ...(merged.refusedAlone ?? outcome.refusedAlone),
          count: (merged.refusedAlone?.count ?? 0) + outcome.refusedAlone.count,
        };
      }
    }
    return merged;
  }

  private droppedAlone(size: number, refused: { count: number; status: number; answer: string }): void {
    this.options.log(
      'error',
      `relay: the ingestion endpoint refused ${refused.count} of ${size} items with ${refused.status} (${refused.answer}), each sent alone; they are dropped, the others were sent apart`,
    );
  }

  /** One POST of `batch`, and what becomes of each item. */
  private async attempt(batch: OutboxItem[]): Promise<Outcome> {
    const body = await gzip(Buffer.from(batch.map((item) => item.text).join('\n'), 'utf8'));
    let response: Response;
    let text: string;
    this.stats.requests++;
    // A timer of our own, not AbortSignal.timeout() inside AbortSignal.any(): on Node 20 the composite
    // holds its sources weakly, and a garbage collection during the request can lose the time-out.
    const timedOut = new AbortController();
    const timer = setTimeout(
      () => timedOut.abort(new DOMException('The request timed out.', 'TimeoutError')),
      this.options.requestTimeoutMs ?? 30_000,
    );
    try {
      const signal = AbortSignal.any([this.abort.signal, timedOut.signal]);
      response = await (this.options.fetch ?? fetch)(this.trackUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-json-stream', 'Content-Encoding': 'gzip' },
        body,
        redirect: 'manual',
        signal,
      });
      text = await response.text();
    } catch (error) {
      const reason =
        (error as Error).name === 'TimeoutError'
          ? 'the ingestion endpoint did not answer in time'
          : `the ingestion endpoint could not be reached (${describe(error)})`;
      return { done: [], again: batch, waitMs: this.backoff(undefined), failure: reason };
    } finally {
      clearTimeout(timer);
    }
    const status = response.status;
    const wait = retryAfterMs(response.headers.get('retry-after'));
    const location = response.headers.get('location');
    if ((status === 307 || status === 308) && location) {
      // The service sends a resource's ingestion to its regional endpoint this way. Followed (and kept
      // for the next batches while they go through) only where redirectTarget allows; else the batch
      // is kept, as for any answer the relay cannot act on.
      const target = redirectTarget(this.options.trackUrl, location, this.trackUrl);
      if (target && this.redirects < MAX_REDIRECTS) {
        this.redirects++;
        this.trackUrl = target.href;
        return { done: [], again: batch };
      }
      return {
        done: [],
        again: batch,
        waitMs: this.backoff(wait),
        failure: target
          ? `the ingestion endpoint redirected ${MAX_REDIRECTS} times in a row`
          : `the ingestion endpoint redirected to ${originOf(location, this.trackUrl)}, which is not followed (only https on the configured host, or within Azure Monitor's ingestion); check the IngestionEndpoint in APPLICATIONINSIGHTS_CONNECTION_STRING`,
      };
    }
    this.redirects = 0;
    if (status === 200) {
      this.stats.forwarded += batch.length;
      this.stats.lastSuccess = new Date();
      return { done: batch, again: [] };
    }
    const answer = parseAnswer(text);
    if (status === 206 || (status === 400 && namesItems(answer, batch.length))) {
      if (!answer || !namesItems(answer, batch.length)) {
        // A 206 without a readable answer: nothing says what was taken, so all of it goes again.
        return { done: [], again: batch, waitMs: this.backoff(wait), failure: `answer ${status} unreadable` };
      }
      return this.partly(batch, answer, status, wait);
    }
    if (RETRY_BATCH_STATUSES.has(status)) {
      return {
        done: [],
        again: batch,
        waitMs: this.backoff(wait),
        failure: `the ingestion endpoint answered ${status}`,
      };
    }
    if (SPLIT_BATCH_STATUSES.has(status)) {
      return { done: [], again: batch, refused: { status, answer: snippet(text) } };
    }
    // 401, 403 (a resource that takes Microsoft Entra tokens only, a wrong key) and anything unexpected:
    // kept and tried again slowly, so an operator can put it right without losing what was accepted.
    return {
      done: [],
      again: batch,
      waitMs: this.backoff(wait),
      failure: `the ingestion endpoint answered ${status} (${snippet(text)}); check APPLICATIONINSIGHTS_CONNECTION_STRING and the resource's local authentication`,
    };
  }

  /** A 206 (or a 400 naming items): the items named with a retryable status go again, others are dropped. */
  private partly(
    batch: OutboxItem[],
    answer: BreezeAnswer,
    status: number,
    wait: number | undefined,
  ): Outcome {
    const refused = new Map<number, BreezeError>();
    for (const error of answer.errors ?? []) {
      if (Number.isInteger(error.index) && error.index >= 0 && error.index < batch.length) {
        refused.set(error.index, error);
      }
    }
    const done: OutboxItem[] = [];
    const again: OutboxItem[] = [];
    const dropped: BreezeError[] = [];
    batch.forEach((item, index) => {
      const error = refused.get(index);
      if (!error) done.push(item);
      else if (RETRYABLE_ITEM_STATUSES.has(error.statusCode)) again.push(item);
      else {
        done.push(item);
        dropped.push(error);
      }
    });
    this.stats.forwarded += batch.length - refused.size;
    if (batch.length > refused.size) this.stats.lastSuccess = new Date();
    if (dropped.length > 0) {
      this.stats.dropped += dropped.length;
      const first = dropped[0] as BreezeError;
      this.options.log(
        'warn',
        `relay: the ingestion endpoint refused ${dropped.length} of ${batch.length} items for good (${status}; first: ${first.statusCode} ${first.message ?? ''}); they are dropped`,
      );
    }
    if (again.length === 0) return { done, again };
    return {
      done,
      again,
      waitMs: this.backoff(wait),
      failure: `the ingestion endpoint took ${batch.length - refused.size} of ${batch.length} items and asked for ${again.length} again`,
    };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopping) return resolve();
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  /**
   * Stops forwarding: no new request; the one under way may finish within `graceMs` (its answer is
   * written down), else it is cut and its items go again at the next start.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    this.wake?.();
    this.outbox.interrupt();
    const grace = setTimeout(() => this.abort.abort(), graceMs);
    await this.stopped;
    clearTimeout(grace);
  }
}

/**
 * Whether a 400's answer says which items it refused, in a way that can be acted on: each error
 * names an item of the batch, and, when it says how many it took, the items it names are the rest.
 * Otherwise the items it does not name may not have been taken, and the batch is split instead.
 */
function namesItems(answer: BreezeAnswer | undefined, size: number): boolean {
  const errors = answer?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return false;
  const indices = new Set<number>();
  for (const error of errors) {
    if (!Number.isInteger(error.index) || error.index < 0 || error.index >= size) return false;
    indices.add(error.index);
  }
  return answer?.itemsAccepted === undefined || answer.itemsAccepted + indices.size === size;
}

/** The service's answer, its `errors` kept only when a list, each only when it is an object. */
function parseAnswer(text: string): BreezeAnswer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { errors, ...counts } = value as BreezeAnswer & { errors?: unknown };
  if (!Array.isArray(errors)) return counts;
  return { ...counts, errors: errors.filter((e): e is BreezeError => typeof e === 'object' && e !== null) };
}

/** A Location's origin (its path and query may carry more than a log line should). */
const originOf = (location: string, base: string) =>
  URL.canParse(location, base) ? new URL(location, base).origin : 'an unreadable Location';

const snippet = (text: string) => text.replace(/\s+/g, ' ').slice(0, 200) || 'no body';

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
