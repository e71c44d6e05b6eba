import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// Noon of a Wednesday in the past (2026-11-18), so the 7-day range starts on a Wednesday: its first
// week began on the Monday before the range.
const NOW = Date.UTC(2026, 10, 18, 12);

function pageView(userId: string, at: number) {
  const e = browserEnvelope('pageview', browserContext({ sessionId: `${userId}-${at}`, userId })) as {
    time: string;
  };
  e.time = new Date(at).toISOString();
  return e;
}
const dayOf = (daysAgo: number, hour = 0) => Math.floor(NOW / DAY) * DAY - daysAgo * DAY + hour * HOUR;

const fixtures = [
  // Seen 40 days ago, then in the range: never a new user of the range.
  pageView('old', NOW - 40 * DAY),
  pageView('old', dayOf(5)),
  // Cohort of 5 days ago: a (twice on its first day: counted once), b; a back 4 days later, b 1 day later.
  pageView('a', dayOf(5, 1)),
  pageView('a', dayOf(5, 9)),
  pageView('b', dayOf(5, 2)),
  pageView('a', dayOf(1, 3)),
  pageView('b', dayOf(4, 3)),
  // Cohort of today: c.
  pageView('c', dayOf(0, 1)),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures, 60);
});
afterAll(() => running.close());

describe('retention', () => {
  it('counts each cohort by the day of its users’ first item, and who came back on each following day', async () => {
    const retention = await running.collector.analytics.retention('day', { range: '7d', now: NOW });
    expect(retention.unit).toBe('day');
    // 7 days back from Wednesday noon: 8 days overlap the range, the first one partly.
    expect(retention.cohorts).toHaveLength(8);
    expect(retention.cohorts[0]?.start).toBe(new Date(dayOf(7)).toISOString());
    const byStart = new Map(retention.cohorts.map((c) => [c.start, c]));
    const fiveDaysAgo = byStart.get(new Date(dayOf(5)).toISOString());
    // a and b; then day +1: b; day +4: a. The triangle's row runs to the range's last day.
    expect(fiveDaysAgo).toEqual({
      start: new Date(dayOf(5)).toISOString(),
      users: 2,
      returning: [1, 0, 0, 1, 0],
    });
    expect(byStart.get(new Date(dayOf(0)).toISOString())).toEqual({
      start: new Date(dayOf(0)).toISOString(),
      users: 1,
      returning: [],
    });
    // "old" was first seen 40 days ago: no cohort of the range counts it.
    expect(retention.cohorts.reduce((sum, c) => sum + c.users, 0)).toBe(3);
  });

  it('groups by weeks starting on Monday', async () => {
    const retention = await running.collector.analytics.retention('week', { range: '30d', now: NOW });
    const starts = retention.cohorts.map((c) => new Date(c.start));
    expect(starts.every((d) => d.getUTCDay() === 1 && d.getUTCHours() === 0)).toBe(true);
    expect(starts.at(-1)?.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    // a and b first seen Fri 13 (week of Mon 9), both back the next week (a on Tue 17, b on Sat 14 is the same week).
    const week9 = retention.cohorts.find((c) => c.start === '2026-11-09T00:00:00.000Z');
    expect(week9).toEqual({ start: '2026-11-09T00:00:00.000Z', users: 2, returning: [1] });
    expect(retention.cohorts.at(-1)).toEqual({ start: '2026-11-16T00:00:00.000Z', users: 1, returning: [] });
  });

  it('answers every period with zeros when nothing is stored in the range', async () => {
    const retention = await running.collector.analytics.retention('day', {
      range: '24h',
      now: NOW + 20 * DAY,
    });
    expect(retention.cohorts).toHaveLength(2);
    expect(retention.cohorts.every((c) => c.users === 0 && c.returning.every((n) => n === 0))).toBe(true);
  });
});
