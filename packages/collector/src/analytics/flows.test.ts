import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
// Yesterday at noon, so no session runs past midnight (flows are per session and UTC day); asked 3 hours later.
const T = Math.floor(Date.now() / DAY) * DAY - DAY / 2;
const NOW = T + 3 * 60 * MIN;

/** A session's page views, one minute apart from `start` (T unless given), in order. */
function visit(sessionId: string, ...names: string[]) {
  return visitFrom(T, sessionId, ...names);
}
function visitFrom(start: number, sessionId: string, ...names: string[]) {
  return names.map((name, i) => {
    const e = browserEnvelope('pageview', browserContext({ sessionId, userId: `u-${sessionId}` })) as {
      time: string;
      data: { baseData: Record<string, unknown> };
    };
    e.time = new Date(start + i * MIN).toISOString();
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
  // Across yesterday's midnight: Profile is the last view of its day (an exit), Home the first of the next.
  ...visitFrom(T - DAY / 2 - 2 * MIN, 's6', 'Usage', 'Profile', 'Home'),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures);
});
afterAll(() => running.close());

describe('user flows', () => {
  it('lists the pages one and two steps before and after each view of the page, within its session', async () => {
    const flows = await running.collector.analytics.userFlows('Profile', { range: '24h', now: NOW });
    // Views of Profile: s1 twice, s2, s3, s4, s6.
    expect(flows).toMatchObject({ page: 'Profile', views: 6, entries: 1, exits: 3 });
    expect(flows.next1).toEqual([
      { pages: ['Usage'], count: 2 },
      { pages: ['Home'], count: 1 },
    ]);
    expect(flows.next2).toEqual([{ pages: ['Usage', 'Profile'], count: 1 }]);
    expect(flows.previous1).toEqual([
      { pages: ['Home'], count: 3 },
      { pages: ['Usage'], count: 2 },
    ]);
    expect(flows.previous2).toEqual([
      { pages: ['Diagnostics', 'Home'], count: 1 },
      // s1's second view of Profile: Profile, Usage before it.
      { pages: ['Profile', 'Usage'], count: 1 },
    ]);
  });

  it("begins and ends a session's flows at UTC midnight", async () => {
    const flows = await running.collector.analytics.userFlows('Home', { range: '24h', now: NOW });
    // s6's view of Home, a minute after midnight, is an entry (as s1's, s2's and s5's first): Profile,
    // before midnight, is not before it (s4's is).
    expect(flows).toMatchObject({ views: 7, entries: 4 });
    expect(flows.previous1).toEqual([
      { pages: ['Diagnostics'], count: 1 },
      { pages: ['Profile'], count: 1 },
      { pages: ['Usage'], count: 1 },
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
