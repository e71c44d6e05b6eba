import type { dashboardQueries } from '../dashboard/dashboard-queries.js';
import type { DashboardQueries, DashboardRunner } from '../dashboard/dashboard-query.js';
import {
  APPEND_PATH,
  authorization,
  encodePacked,
  MIN_TOKEN_LENGTH,
  PACKED_TYPE,
  PING_PATH,
  QUERY_PREFIX,
  REMOTE_QUERIES,
} from './internal-api.js';
import type { PackedItems } from '../protocol/packed.js';
import type { UsageQueries } from '../analytics/usage-answers.js';
import type { AnnotationQueries } from '../store/annotations.js';
import { SinkFull, SinkUnavailable, type ItemSink } from '../store/sink.js';

export interface StoreHolderClientOptions {
  /** The store holder's base URL (COLLECTOR_URL), reached directly, not through the load balancer. */
  url: string;
  /** The shared secret (COLLECTOR_TOKEN). */
  token: string;
  /** How long an append may take, answer included. Default 10 s; then the items are answered 503. */
  appendTimeoutMs?: number;
  /**
   * How long an append waits for a store holder that refuses connections (restarting) before the
   * items are answered 503. Default 5 s: a restart of the store holder is not seen by the browsers.
   */
  waitForStoreHolderMs?: number;
  /** How long a usage query may take. Default 60 s. */
  queryTimeoutMs?: number;
  /** Items being forwarded at once; past it the front sheds load (503). Default 100,000. */
  maxInFlightItems?: number;
  fetch?: typeof fetch;
}

/**
 * The store holder cannot answer a usage query now (restarting, unreachable, busy): a 503 for the
 * dashboard, which asks again. `status` is what Express's error handler reads.
 */
export class StoreUnavailable extends Error {
  override readonly name = 'StoreUnavailable';
  readonly code = 'store_unavailable';
  readonly status = 503;
}

/** A connection the store holder closed while idle, just as a request went out on it: worth one retry. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
/** Nothing listens (the store holder is restarting): nothing was sent, so waiting and retrying is safe. */
const REFUSED = 'ECONNREFUSED';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const causeCode = (error: unknown) =>
  ((error as { cause?: { code?: unknown } }).cause?.code as string | undefined) ?? '';
const retryAfterOf = (res: Response) => {
  const seconds = Number(res.headers.get('retry-after'));
  return Number.isInteger(seconds) && seconds > 0 ? seconds : undefined;
};

function endpoint(base: string, path: string): string {
  return new URL(path, base.endsWith('/') ? base : `${base}/`).href;
}

function checkToken(token: string): void {
  if (token.length < MIN_TOKEN_LENGTH)
    throw new RangeError(`The collector token must be at least ${MIN_TOKEN_LENGTH} characters long.`);
}

export interface ForwardingSink extends ItemSink {
  /** Whether the store holder answers (for readiness). */
  ping(timeoutMs?: number): Promise<boolean>;
}

/**
 * The sink of a replica that does not hold the store (docs/decisions/0041): each accepted batch is
 * posted to the store holder and acknowledged only once the store holder answered that its journal has
 * it. Nothing is kept here: while the store holder is away the front answers 503 and the SDKs keep and
 * resend the items, which the store holder stores once (it de-duplicates by item key).
 */
export function createForwardingSink(options: StoreHolderClientOptions): ForwardingSink {
  checkToken(options.token);
  const fetchImpl = options.fetch ?? fetch;
  const appendUrl = endpoint(options.url, APPEND_PATH);
  const pingUrl = endpoint(options.url, PING_PATH);
  const timeoutMs = options.appendTimeoutMs ?? 10_000;
  const maxInFlight = options.maxInFlightItems ?? 100_000;
  const headers = { Authorization: authorization(options.token), 'Content-Type': PACKED_TYPE };
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  /** Until when the store holder said its disk quota is reached (answered 507 before reading bodies). */
  let fullUntil = 0;

  const waitMs = options.waitForStoreHolderMs ?? 5_000;

  async function post(body: Buffer): Promise<Response> {
    const started = Date.now();
    let pause = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetchImpl(appendUrl, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        // An append sent twice is stored once (item keys), so a stale kept-alive connection is retried.
        if (attempt === 1 && STALE_CONNECTION.has(causeCode(error))) continue;
        if (causeCode(error) === REFUSED && Date.now() - started + pause <= waitMs) {
          await sleep(pause);
          pause = Math.min(pause * 2, 1_000);
          continue;
        }
        const why =
          (error as Error).name === 'TimeoutError'
            ? `no answer within ${timeoutMs} ms`
            : causeCode(error) || String(error);
        throw new SinkUnavailable(`the store holder at ${options.url} is unreachable (${why})`, undefined, {
          cause: error,
        });
      }
    }
  }

  async function forward(items: PackedItems): Promise<void> {
    const res = await post(encodePacked(items));
    await res.arrayBuffer().catch(() => undefined);
    if (res.ok) return;
    if (res.status === 507) {
      fullUntil = Date.now() + (retryAfterOf(res) ?? 10) * 1000;
      throw new SinkFull(`the store holder at ${options.url} is full`);
    }
    // 503 (busy, restarting) and anything unexpected: the SDKs keep the items and send them again.
    throw new SinkUnavailable(
      `the store holder at ${options.url} answered ${res.status}`,
      res.status === 503 ? retryAfterOf(res) : undefined,
    );
  }

  return {
    async append(items) {
      inFlight += items.count;
      const sent = forward(items).finally(() => {
        inFlight -= items.count;
        pending.delete(done);
      });
      const done = sent.catch(() => undefined);
      pending.add(done);
      return sent;
    },
    hasRoom: (count) => inFlight + count <= maxInFlight,
    backlog: () => inFlight,
    full: () => (Date.now() < fullUntil ? `the store holder at ${options.url} is full` : undefined),
    async ping(pingTimeoutMs = 2_000) {
      try {
        const res = await fetchImpl(pingUrl, {
          headers: { Authorization: headers.Authorization },
          signal: AbortSignal.timeout(pingTimeoutMs),
        });
        await res.arrayBuffer();
        return res.ok;
      } catch {
        return false;
      }
    },
    async close() {
      // What was accepted is answered either way: wait for the store holder's answers.
      await Promise.all(pending);
    },
  };
}

/**
 * The usage dashboard's queries answered by the store holder (docs/decisions/0041): the same interfaces
 * as the local store's, so the API routes do not know where the store is. The user was authenticated
 * and authorized by this replica; the store holder trusts the token.
 */
export function createRemoteQueries<R extends DashboardQueries = typeof dashboardQueries>(
  options: StoreHolderClientOptions,
): {
  usage: UsageQueries;
  dashboard: DashboardRunner<R>;
  annotations: AnnotationQueries;
} {
  checkToken(options.token);
  const fetchImpl = options.fetch ?? fetch;
  const timeoutMs = options.queryTimeoutMs ?? 60_000;

  async function request(name: string, args: unknown[], signal: AbortSignal): Promise<Response> {
    let res: Response;
    try {
      res = await fetchImpl(endpoint(options.url, `${QUERY_PREFIX}${name}`), {
        method: 'POST',
        headers: { Authorization: authorization(options.token), 'Content-Type': 'application/json' },
        body: JSON.stringify(args),
        signal,
      });
    } catch (error) {
      throw new StoreUnavailable('The telemetry store could not be reached; try again shortly.', {
        cause: error,
      });
    }
    if (res.ok) return res;
    await res.arrayBuffer().catch(() => undefined);
    if (res.status === 503) throw new StoreUnavailable('The telemetry store is busy; try again shortly.');
    throw new Error(`The store holder answered ${res.status} to the ${name} query.`);
  }

  async function call<T>(name: string, args: unknown[]): Promise<T> {
    const signal = AbortSignal.timeout(timeoutMs);
    const res = await request(name, args, signal);
    return ((await res.json()) as { result: T }).result;
  }

  async function* stream(name: string, args: unknown[]): AsyncIterable<unknown> {
    // No time-out on reading: an export is as long as the user's history. The connection's end tells a
    // cut answer (the store holder failed half way) from a whole one: the read then throws.
    const res = await request(name, args, AbortSignal.timeout(timeoutMs * 10));
    const decoder = new TextDecoder();
    let rest = '';
    for await (const bytes of res.body as AsyncIterable<Uint8Array>) {
      rest += decoder.decode(bytes, { stream: true });
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line) yield JSON.parse(line) as unknown;
    }
    rest += decoder.decode();
    if (rest) yield JSON.parse(rest) as unknown;
  }

  /** A group of queries, each asked by its name on the internal API's list (internal-api.ts). */
  function remoteGroup<G>(names: Record<keyof G & string, 'json' | 'ndjson'>): G {
    const entries = Object.entries(names).map(([name, answer]) => [
      name,
      answer === 'ndjson'
        ? (...args: unknown[]) => stream(name, args)
        : (...args: unknown[]) => call(name, args),
    ]);
    return Object.fromEntries(entries) as G;
  }

  const usage = remoteGroup<UsageQueries>(REMOTE_QUERIES.usage);
  // The panels' queries, by the registry's names (dashboard/dashboard-queries.ts), their query as one argument.
  const dashboard: DashboardRunner<R> = (name, query) => call(name, [query]);
  // Writes too: only the store holder writes its file (docs/decisions/0041).
  const annotations = remoteGroup<AnnotationQueries>(REMOTE_QUERIES.annotations);
  return { usage, dashboard, annotations };
}
