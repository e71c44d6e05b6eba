import { customEventsSchema } from '@gatehouse/api-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Math.floor(Date.now() / DAY) * DAY;

const alice = browserContext({ userId: 'alice', sessionId: 'a1' });
const alice2 = browserContext({ userId: 'alice', sessionId: 'a2' });
const bob = browserContext({ userId: 'bob', sessionId: 'b1' });

function event(ctx: ReturnType<typeof browserContext>, name: string, at: number) {
  const e = browserEnvelope('event', ctx) as { time: string; data: { baseData: Record<string, unknown> } };
  e.time = new Date(at).toISOString();
  e.data.baseData.name = name;
  return e;
}

const fixtures = [
  event(alice, 'Report exported', NOW - HOUR),
  event(alice, 'Report exported', NOW - HOUR + 1000),
  event(alice2, 'Report exported', NOW - 2 * HOUR),
  event(bob, 'Report exported', NOW - 3 * HOUR),
  event(bob, 'Filter applied', NOW - 3 * HOUR),
  // Outside the period, and a page view: not counted.
  event(bob, 'Filter applied', NOW - 2 * DAY),
  event(bob, 'Filter applied', NOW),
  browserEnvelope('pageview', bob),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures);
});
afterAll(() => running.close());

describe('custom events', () => {
  it('counts each name with its distinct users and sessions over the period, the most frequent first', async () => {
    const answer = await running.collector.analytics.customEvents({ range: '24h', now: NOW });
    expect(customEventsSchema.parse(answer)).toEqual(answer);
    expect(answer.events).toEqual([
      { name: 'Report exported', count: 4, users: 2, sessions: 3 },
      { name: 'Filter applied', count: 1, users: 1, sessions: 1 },
    ]);
  });

  it('answers an empty list without events', async () => {
    const answer = await running.collector.analytics.customEvents({ range: '1h', now: NOW - 10 * DAY });
    expect(answer.events).toEqual([]);
  });
});
