import { endpoints } from '@gatehouse/api-contract';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { browserContext, browserEnvelope, type BrowserContext } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';
import { dashboardQueries } from './dashboard-queries.js';
import { runOnStore } from './dashboard-query.js';
import { alertOf, signInHealth } from './sign-in-health.js';

const MINUTE = 60_000;
const NOW = Date.now();
const chrome = browserContext({ userId: 'u1', sessionId: 's1' });
const firefox = browserContext({ userId: 'u2', sessionId: 's2' });

type Envelope = { time: string; tags: Record<string, string>; data: { baseData: Record<string, unknown> } };
function item(
  kind: 'event' | 'metric',
  ctx: BrowserContext,
  minutesAgo: number,
  name: string,
  properties: Record<string, string>,
  measurements?: Record<string, number>,
) {
  const e = browserEnvelope(kind, ctx) as Envelope;
  e.time = new Date(NOW - minutesAgo * MINUTE).toISOString();
  if (ctx === firefox) e.tags['ai.device.browser'] = 'Firefox';
  if (kind === 'event')
    Object.assign(e.data.baseData, { name, properties, ...(measurements && { measurements }) });
  else {
    const metrics = e.data.baseData.metrics as { name: string; value: number }[];
    Object.assign(metrics[0]!, { name, value: measurements?.value ?? 1, count: measurements?.value ?? 1 });
    e.data.baseData.properties = properties;
  }
  return e;
}
const signIn = (
  ctx: BrowserContext,
  minutesAgo: number,
  properties: Record<string, string>,
  durationMs?: number,
) =>
  item(
    'event',
    ctx,
    minutesAgo,
    'gatehouse.sign-in',
    properties,
    durationMs === undefined ? undefined : { durationMs },
  );

const fixtures = [
  // Two journeys that signed in (400 and 800 ms), one cancelled at the provider, one with a tampered state.
  signIn(chrome, 30, { outcome: 'started', trigger: 'button' }),
  signIn(chrome, 30, { outcome: 'returned' }, 300),
  signIn(chrome, 30, { outcome: 'redeemed' }, 350),
  signIn(chrome, 30, { outcome: 'signed-in' }, 400),
  signIn(firefox, 20, { outcome: 'started', trigger: 'guarded-page' }),
  signIn(firefox, 20, { outcome: 'signed-in' }, 800),
  signIn(chrome, 10, { outcome: 'started', trigger: 'button' }),
  signIn(chrome, 10, { outcome: 'failed', step: 'provider', reason: 'access_denied' }, 90),
  signIn(chrome, 5, { outcome: 'failed', step: 'return', reason: 'state_mismatch' }, 20),
  item('event', chrome, 15, 'gatehouse.renewal', { outcome: 'succeeded' }),
  item('event', chrome, 14, 'gatehouse.renewal', { outcome: 'failed', reason: 'invalid_grant' }),
  item('event', chrome, 14, 'gatehouse.session-end', { reason: 'renewal-failed' }),
  item('event', chrome, 13, 'gatehouse.renewal', { outcome: 'forced-sign-in' }),
  // The server's refusals, per minute and reason; another app's event of the same shape is not counted.
  item('metric', browserContext(), 12, 'gatehouse.api-refusals', { reason: 'expired' }, { value: 3 }),
  item('metric', browserContext(), 11, 'gatehouse.api-refusals', { reason: 'expired' }, { value: 2 }),
  item(
    'metric',
    browserContext(),
    11,
    'gatehouse.api-refusals',
    { reason: 'insufficient_role' },
    { value: 1 },
  ),
  item('event', chrome, 9, 'checkout', { outcome: 'failed', reason: 'card_declined' }),
  // The period before (24 h ago): one journey, signed in.
  signIn(chrome, 25 * 60, { outcome: 'signed-in' }, 1000),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures);
});
afterAll(() => running.close());

describe('sign-in health over the store', () => {
  it('the funnel, its success rate against the period before, time to sign in, failures, renewals and refusals', async () => {
    const answer = await runOnStore(dashboardQueries, running.collector.sink.store)('usageSignIn', {
      range: '24h',
      now: NOW,
    });
    expect(endpoints.usageSignIn.response.parse(answer)).toEqual(answer);
    expect(answer.funnel).toEqual({ started: 3, returned: 1, redeemed: 1, signedIn: 2, failed: 2 });
    expect(answer.successRate).toBe(0.5);
    expect(answer.previousSuccessRate).toBe(1);
    expect(answer.change).toBe(-0.5);
    expect(answer.timeToSignIn).toEqual({ p50Ms: 600, p95Ms: 780 });
    expect(answer.failures).toEqual(
      expect.arrayContaining([
        { reason: 'access_denied', step: 'provider', count: 1 },
        { reason: 'state_mismatch', step: 'return', count: 1 },
      ]),
    );
    expect(answer.failures).toHaveLength(2);
    const renewals = answer.renewals.reduce(
      (sum, b) => ({
        succeeded: sum.succeeded + b.succeeded,
        failed: sum.failed + b.failed,
        forcedSignIn: sum.forcedSignIn + b.forcedSignIn,
      }),
      { succeeded: 0, failed: 0, forcedSignIn: 0 },
    );
    expect(renewals).toEqual({ succeeded: 1, failed: 1, forcedSignIn: 1 });
    expect(answer.renewals).toHaveLength(24);
    expect(answer.sessionEnds).toEqual([{ reason: 'renewal-failed', count: 1 }]);
    expect(answer.refusals).toEqual([
      { reason: 'expired', count: 5 },
      { reason: 'insufficient_role', count: 1 },
    ]);
    expect(answer.alert).toMatchObject({ raised: false, lastHour: { ended: 4, failed: 2, rate: 0.5 } });
  });

  it('takes the segment: only Firefox’s journeys', async () => {
    const answer = await runOnStore(dashboardQueries, running.collector.sink.store)('usageSignIn', {
      range: '24h',
      now: NOW,
      browser: 'Firefox',
    });
    expect(answer.funnel).toEqual({ started: 1, returned: 0, redeemed: 0, signedIn: 1, failed: 0 });
    expect(answer.timeToSignIn).toEqual({ p50Ms: 800, p95Ms: 800 });
  });
});

describe('the period of one answer', () => {
  it('is read once: the answer names the period its questions asked, even as the clock moves on', async () => {
    const bucketMs = 5 * MINUTE;
    const start = Math.floor(NOW / bucketMs) * bucketMs + bucketMs - 1;
    let calls = 0;
    // The clock passes a bucket's end after its first reading.
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => start + (calls++ === 0 ? 0 : bucketMs));
    const reads: unknown[][] = [];
    const reader = {
      read: (_sql: string, values: unknown[] = []) => {
        reads.push(values);
        return Promise.resolve([]);
      },
    };
    try {
      const answer = await signInHealth.store(reader, { range: '1h' });
      const to = Math.floor(start / bucketMs) * bucketMs + bucketMs;
      expect([answer.from, answer.to]).toEqual([
        new Date(to - 60 * MINUTE).toISOString(),
        new Date(to).toISOString(),
      ]);
      // The chart's buckets the events were counted in start where the answer's period does.
      expect(reads[0]?.[3]).toBe(to - 60 * MINUTE);
    } finally {
      clock.mockRestore();
    }
  });
});

describe('the alert: far above the week before', () => {
  it('is raised by a burst of failures against a clean week, not by a few, nor by a usual rate', () => {
    expect(alertOf({ ended: 10, failed: 6 }, { ended: 500, failed: 5 }).raised).toBe(true);
    expect(alertOf({ ended: 10, failed: 6 }, { ended: 0, failed: 0 }).raised).toBe(true);
    expect(alertOf({ ended: 4, failed: 4 }, { ended: 500, failed: 5 }).raised).toBe(false); // too few
    expect(alertOf({ ended: 100, failed: 12 }, { ended: 5000, failed: 500 }).raised).toBe(false); // as usual
    expect(alertOf({ ended: 100, failed: 30 }, { ended: 5000, failed: 500 }).raised).toBe(true);
  });
});
