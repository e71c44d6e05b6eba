import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const NOW = Math.floor(Date.now() / DAY) * DAY;

function item(kind: 'pageview' | 'event', sessionId: string, userId: string, name: string, at: number) {
  const ctx = browserContext({ sessionId, userId });
  const e = browserEnvelope(kind, ctx) as { time: string; data: { baseData: Record<string, unknown> } };
  e.time = new Date(at).toISOString();
  e.data.baseData.name = name;
  return e;
}
const page = (s: string, u: string, name: string, at: number) => item('pageview', s, u, name, at);
const event = (s: string, u: string, name: string, at: number) => item('event', s, u, name, at);

const T = NOW - 3 * 60 * MIN;
const fixtures = [
  // u1: Home → Profile (2 min) → "Report exported" (4 min): the whole funnel.
  page('s1', 'u1', 'Home', T),
  page('s1', 'u1', 'Profile', T + 2 * MIN),
  event('s1', 'u1', 'Report exported', T + 6 * MIN),
  // u2: Home → Profile (4 min), no export.
  page('s2', 'u2', 'Home', T),
  page('s2', 'u2', 'Profile', T + 4 * MIN),
  // u3: Profile before Home (out of order: only step 1), and the export in another session (not counted).
  page('s3', 'u3', 'Profile', T),
  page('s3', 'u3', 'Home', T + MIN),
  event('s4', 'u3', 'Report exported', T + 2 * MIN),
  // u4: two sessions both reaching step 2: counted once; the medians take each session.
  page('s5', 'u4', 'Home', T),
  page('s5', 'u4', 'Profile', T + 6 * MIN),
  page('s6', 'u4', 'Home', T + 10 * MIN),
  page('s6', 'u4', 'Profile', T + 18 * MIN),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures);
});
afterAll(() => running.close());

const steps = [
  { kind: 'page', name: 'Home' },
  { kind: 'page', name: 'Profile' },
  { kind: 'event', name: 'Report exported' },
] as const;

describe('funnel', () => {
  it('counts users reaching each step in order within a session, the drop-off and the median time between steps', async () => {
    const funnel = await running.collector.analytics.funnel([...steps], { range: '24h', now: NOW });
    expect(funnel.steps).toEqual([
      { ...steps[0], users: 4, dropOff: 0, medianMsFromPrevious: null },
      // s1 2 min, s2 4 min, s5 6 min, s6 8 min: median 5 min; u3 dropped.
      { ...steps[1], users: 3, dropOff: 0.25, medianMsFromPrevious: 5 * MIN },
      { ...steps[2], users: 1, dropOff: 2 / 3, medianMsFromPrevious: 4 * MIN },
    ]);
  });

  it('takes 2 to 5 steps, each a page or an event with a name', async () => {
    const funnel = (s: Parameters<TestCollector['collector']['analytics']['funnel']>[0]) =>
      running.collector.analytics.funnel(s);
    await expect(funnel([steps[0]])).rejects.toThrow(RangeError);
    await expect(funnel([steps[0], { kind: 'page', name: '' }])).rejects.toThrow(RangeError);
  });
});
