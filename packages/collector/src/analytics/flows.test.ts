import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';

const MIN = 60_000;
const NOW = Date.now();
const T = NOW - 3 * 60 * MIN;

/** A session's page views, one minute apart, in order. */
function visit(sessionId: string, ...names: string[]) {
  return names.map((name, i) => {
    const e = browserEnvelope('pageview', browserContext({ sessionId, userId: `u-${sessionId}` })) as {
      time: string;
      data: { baseData: Record<string, unknown> };
    };
    e.time = new Date(T + i * MIN).toISOString();
    e.data.baseData.name = name;
    return e;
  });
}

const fixtures = [
  ...visit('s1', 'Home', 'Profile', 'Usage', 'Profile'),
  ...visit('s2', 'Home', 'Profile', 'Usage'),
  ...visit('s3', 'Profile'),
  ...visit('s4', 'Diagnostics', 'Home', 'Profile', 'Home'),
  // Never views Profile: not part of its flows.
  ...visit('s5', 'Home', 'Usage', 'Home'),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures);
});
afterAll(() => running.close());

describe('user flows', () => {
  it('lists the pages one and two steps before and after each view of the page, within its session', async () => {
    const flows = await running.collector.analytics.userFlows('Profile', { range: '24h', now: NOW });
    // Views of Profile: s1 twice, s2, s3, s4.
    expect(flows).toMatchObject({ page: 'Profile', views: 5, entries: 1, exits: 2 });
    expect(flows.next1).toEqual([
      { pages: ['Usage'], count: 2 },
      { pages: ['Home'], count: 1 },
    ]);
    expect(flows.next2).toEqual([{ pages: ['Usage', 'Profile'], count: 1 }]);
    expect(flows.previous1).toEqual([
      { pages: ['Home'], count: 3 },
      { pages: ['Usage'], count: 1 },
    ]);
    expect(flows.previous2).toEqual([
      { pages: ['Diagnostics', 'Home'], count: 1 },
      // s1's second view of Profile: Profile, Usage before it.
      { pages: ['Profile', 'Usage'], count: 1 },
    ]);
  });

  it('answers zeros and empty lists for a page nobody viewed', async () => {
    const flows = await running.collector.analytics.userFlows('Nowhere', { range: '24h', now: NOW });
    expect(flows).toMatchObject({
      views: 0,
      entries: 0,
      exits: 0,
      next1: [],
      next2: [],
      previous1: [],
      previous2: [],
    });
  });
});
