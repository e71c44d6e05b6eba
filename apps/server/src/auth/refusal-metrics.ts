import { API_REFUSALS_METRIC, type ApiRefusalReason } from '@gatehouse/api-contract';
import { ingestionTarget } from '@gatehouse/config';
import type { RefusalCounter } from './bearer.js';

/** Posts one batch (newline-delimited envelopes) to the ingestion endpoint; resolves with its status. */
export type SendBatch = (url: string, body: string) => Promise<{ status: number }>;

export interface RefusalMetricsOptions {
  /** The Application Insights connection string the items go to; undefined: nothing is counted or sent. */
  connectionString: string | undefined;
  send?: SendBatch;
  /** Milliseconds since the epoch. */
  now?: () => number;
  /** How often the counts are sent (default one minute). */
  intervalMs?: number;
  log: { warn(fields: Record<string, unknown>, message: string): void };
}

const MINUTE_MS = 60_000;
/** A send that hangs must not hold the drain: it is given up after this long. */
const SEND_TIMEOUT_MS = 10_000;

const postBatch: SendBatch = (url, body) =>
  fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-json-stream' },
    body,
    signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
  });

/**
 * The API's refusals, counted by reason in this process and sent once a minute (and at the drain) as
 * Application Insights metric items, one per reason seen: to the same ingestion endpoint as the browser's
 * telemetry, so they land in the same store (docs/decisions/0105). An item carries the reason and the
 * count only: never a token, a subject or an address. Undefined without a connection string.
 */
export function createRefusalMetrics(options: RefusalMetricsOptions): RefusalMetrics | undefined {
  if (options.connectionString === undefined) return undefined;
  return new RefusalMetrics({ ...options, connectionString: options.connectionString });
}

export class RefusalMetrics implements RefusalCounter {
  private counts = new Map<ApiRefusalReason, number>();
  private windowStart: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly iKey: string;
  private readonly trackUrl: string;
  private readonly send: SendBatch;
  private readonly now: () => number;

  constructor(private readonly options: RefusalMetricsOptions & { connectionString: string }) {
    ({ iKey: this.iKey, trackUrl: this.trackUrl } = ingestionTarget(options.connectionString));
    this.send = options.send ?? postBatch;
    this.now = options.now ?? Date.now;
    this.windowStart = this.now();
  }

  count(reason: ApiRefusalReason): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
  }

  /** Sends the counts once a minute; the timer never keeps the process alive. */
  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.intervalMs ?? MINUTE_MS);
    this.timer.unref();
  }

  /** The last counts go at the drain (SIGTERM), after the requests in flight have finished. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Sends what was counted since the last flush, dated at its start; never throws. */
  async flush(): Promise<void> {
    const counts = this.counts;
    const since = this.windowStart;
    const now = this.now();
    this.counts = new Map();
    this.windowStart = now;
    if (counts.size === 0) return;
    const periodSeconds = String(Math.max(1, Math.round((now - since) / 1000)));
    const time = new Date(since).toISOString();
    const body = [...counts]
      .map(([reason, count]) => JSON.stringify(this.envelope(reason, count, time, periodSeconds)))
      .join('\n');
    const refusals = [...counts.values()].reduce((sum, count) => sum + count, 0);
    try {
      const { status } = await this.send(this.trackUrl, body);
      // 206: some items were refused; the answer's body says which, and all of them are alike.
      if (status !== 200) {
        this.options.log.warn(
          { component: 'refusal-metrics', status, refusals },
          `API refusal metrics were not accepted by the ingestion endpoint (HTTP ${status})`,
        );
      }
    } catch (error) {
      this.options.log.warn(
        { component: 'refusal-metrics', refusals, err: error },
        `API refusal metrics could not be sent: ${String(error)}`,
      );
    }
  }

  /**
   * One MetricData item (Application Insights' Envelope and MetricData contracts): every refusal a sample
   * of 1, so the sum and the count of samples both say how many requests were refused.
   */
  private envelope(reason: ApiRefusalReason, count: number, time: string, periodSeconds: string) {
    return {
      name: `Microsoft.ApplicationInsights.${this.iKey.replace(/-/g, '')}.Metric`,
      time,
      iKey: this.iKey,
      tags: { 'ai.cloud.role': 'gatehouse-server', 'ai.internal.sdkVersion': 'gatehouse-server:1' },
      data: {
        baseType: 'MetricData',
        baseData: {
          ver: 2,
          metrics: [{ name: API_REFUSALS_METRIC, value: count, count, min: 1, max: 1, stdDev: 0 }],
          properties: { reason, periodSeconds },
        },
      },
    };
  }
}
