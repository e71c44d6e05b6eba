import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { validateEnvelope } from '@gatehouse/collector';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRefusalMetrics, type SendBatch } from './refusal-metrics.js';

const KEY = LOCAL_INSTRUMENTATION_KEY;
const CONNECTION = `InstrumentationKey=${KEY};IngestionEndpoint=http://localhost:3000/`;
const START = Date.parse('2026-11-27T10:00:00Z');

function setUp(answer: () => Promise<{ status: number }> = () => Promise.resolve({ status: 200 })) {
  let now = START;
  const sent: Array<{ url: string; items: Array<Record<string, unknown>> }> = [];
  const send = vi.fn<SendBatch>((url, body) => {
    sent.push({ url, items: body.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>) });
    return answer();
  });
  const warn = vi.fn();
  const metrics = createRefusalMetrics({
    connectionString: CONNECTION,
    send,
    now: () => now,
    log: { warn },
  });
  if (!metrics) throw new Error('expected metrics');
  return { metrics, sent, send, warn, advance: (ms: number) => (now += ms) };
}

afterEach(() => vi.useRealTimers());

describe('the API refusal metrics', () => {
  it('sends one metric item per reason with the minute’s count, to the connection string’s endpoint', async () => {
    const { metrics, sent, advance } = setUp();
    metrics.count('expired');
    metrics.count('expired');
    metrics.count('dpop_replay');
    advance(60_000);
    await metrics.flush();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url).toBe('http://localhost:3000/v2.1/track');
    const items = sent[0]?.items ?? [];
    expect(items.map((item) => (item.data as { baseData: unknown }).baseData)).toEqual([
      {
        ver: 2,
        metrics: [{ name: 'gatehouse.api-refusals', value: 2, count: 2, min: 1, max: 1, stdDev: 0 }],
        properties: { reason: 'expired', periodSeconds: '60' },
      },
      {
        ver: 2,
        metrics: [{ name: 'gatehouse.api-refusals', value: 1, count: 1, min: 1, max: 1, stdDev: 0 }],
        properties: { reason: 'dpop_replay', periodSeconds: '60' },
      },
    ]);
    for (const item of items) {
      expect(item.time).toBe('2026-11-27T10:00:00.000Z');
      // What the collector (and the ingestion service) accepts.
      expect(validateEnvelope(item, (key) => key === KEY)).toMatchObject({ ok: true });
    }
  });

  it('sends nothing for a minute without refusals, and dates each item at the start of its minute', async () => {
    const { metrics, send, sent, advance } = setUp();
    await metrics.flush();
    expect(send).not.toHaveBeenCalled();
    metrics.count('missing');
    await metrics.flush();
    advance(60_000);
    await metrics.flush();
    metrics.count('insufficient_role');
    advance(60_000);
    await metrics.flush();
    expect(sent.map(({ items }) => items.length)).toEqual([1, 1]);
    expect(sent[1]?.items[0]?.time).toBe('2026-11-27T10:01:00.000Z');
  });

  it('flushes once a minute when started, and on close', async () => {
    vi.useFakeTimers();
    const { metrics, send } = setUp();
    metrics.start();
    metrics.count('nonce_needed');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(send).toHaveBeenCalledTimes(1);
    metrics.count('nonce_needed');
    await metrics.close();
    expect(send).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('writes one log line when a batch cannot be sent, and never throws', async () => {
    const { metrics, warn } = setUp(() => Promise.reject(new TypeError('fetch failed')));
    for (let i = 0; i < 50; i++) metrics.count('bad_signature');
    await expect(metrics.flush()).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatchObject({ component: 'refusal-metrics', refusals: 50 });

    const refused = setUp(() => Promise.resolve({ status: 400 }));
    refused.metrics.count('expired');
    await refused.metrics.flush();
    expect(refused.warn.mock.calls[0]?.[0]).toMatchObject({ status: 400, refusals: 1 });
  });

  it('carries no token, no subject and no address: reasons and counts only', async () => {
    const { metrics, sent } = setUp();
    for (const reason of ['expired', 'wrong_audience', 'missing'] as const) metrics.count(reason);
    await metrics.flush();
    const text = JSON.stringify(sent);
    for (const absent of ['eyJ', 'sub', 'alice', 'ai.location.ip', 'ai.user', 'client_ip', '127.0.0.1']) {
      expect(text).not.toContain(absent);
    }
  });

  it('is off without a connection string', () => {
    expect(createRefusalMetrics({ connectionString: undefined, log: { warn: vi.fn() } })).toBeUndefined();
  });
});
