import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSIONS_LIMIT } from './usage.js';
import { bucketedPeriod, customBucketMs, period } from './sql.js';
import {
  browserContext,
  browserEnvelope,
  browserRequest,
  timeSpan,
  type BrowserContext,
  type BrowserKind,
} from '../test-support/browser-envelopes.js';
import { startTestCollector, type TestCollector } from '../test-support/server.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** The end of the period the tests ask about: a midnight UTC, so on every bucket boundary. */
const NOW = Math.floor(Date.now() / DAY) * DAY;

const ctx = (sessionId: string, userId: string, authUserId?: string): BrowserContext =>
  browserContext({
    sessionId,
    userId,
    ...(authUserId ? { authUserId } : {}),
    operationId: `op-${sessionId}`,
  });
const S1 = ctx('s1', 'u1', 'a1');
const S2 = ctx('s2', 'u2');
const S3 = ctx('s3', 'u1', 'a1');
const S4 = ctx('s4', 'u4');
const S5 = ctx('s5', 'u5');

/** A browser-SDK envelope at `at`, with baseData fields replaced by `patch`. */
function item(kind: BrowserKind, c: BrowserContext, at: number, patch: Record<string, unknown> = {}) {
  const e = browserEnvelope(kind, c) as { time: string; data: { baseData: Record<string, unknown> } };
  e.time = new Date(at).toISOString();
  Object.assign(e.data.baseData, patch);
  return e;
}
const page = (c: BrowserContext, at: number, name: string, ms: number) =>
  item('pageview', c, at, { name, duration: timeSpan(ms) });
const call = (c: BrowserContext, at: number, name: string, ms: number, success: boolean) =>
  item('dependency', c, at, {
    name,
    duration: timeSpan(ms),
    success,
    resultCode: success ? '200' : '500',
    target: 'api.example',
  });
const exception = (c: BrowserContext, at: number, typeName: string, message: string, method: string) =>
  item('exception', c, at, {
    exceptions: [
      {
        typeName,
        message,
        hasFullStack: true,
        stack: `${typeName}: ${message}\n    at ${method} (https://app.example/index.js:7:1)\n    at ${at}`,
        parsedStack: [
          { level: 0, method, assembly: `at ${method}`, fileName: 'https://app.example/index.js', line: 7 },
        ],
      },
    ],
  });

// The current period is [NOW − 24 h, NOW); the previous one [NOW − 48 h, NOW − 24 h).
const fixtures = [
  // s1: signed in (a1), two pages, a good and a failed call, an exception, an event.
  page(S1, NOW - 2 * HOUR, 'Home', 100),
  call(S1, NOW - 2 * HOUR + 30_000, 'GET /api/me', 50, true),
  call(S1, NOW - 2 * HOUR + 40_000, 'GET /api/me', 150, false),
  exception(S1, NOW - 2 * HOUR + 50_000, 'TypeError', 'x is undefined', 'ProfileForm'),
  item('event', S1, NOW - 2 * HOUR + 55_000),
  page(S1, NOW - 2 * HOUR + MIN, 'Profile', 200),
  // s2: anonymous; ten calls of 10..100 ms, two of them failed; three exceptions in two more groups.
  page(S2, NOW - 30 * MIN, 'Home', 300),
  ...Array.from({ length: 10 }, (_, i) =>
    call(S2, NOW - 15 * MIN + i * 1000, 'GET /api/items', 10 * (i + 1), i !== 3 && i !== 7),
  ),
  exception(S2, NOW - 20 * MIN, 'TypeError', 'x is undefined', 'ProfileForm'),
  exception(S2, NOW - 10 * MIN, 'RangeError', 'bad range', 'parse'),
  exception(S2, NOW - 5 * MIN, 'TypeError', 'x is undefined', 'Other'),
  // s3: the same signed-in user, exactly at the start of the period (inside it).
  page(S3, NOW - DAY, 'Home', 500),
  // s4: exactly at the end of the period (outside it).
  page(S4, NOW, 'Home', 1),
  // s5: the previous period.
  page(S5, NOW - 30 * HOUR, 'Home', 1),
  call(S5, NOW - 30 * HOUR, 'GET /api/me', 1, false),
];

let running: TestCollector;
beforeAll(async () => {
  // NOW is the start of today (UTC): its previous period reaches back past the default 48 h window.
  running = await startTestCollector({ retentionDays: 0, timeWindow: { pastMs: 3 * DAY } });
  // Through the ingestion path, as the browser SDK sends them (shuffled: order must not matter).
  const shuffled = [...fixtures].reverse();
  const { body, headers } = browserRequest(shuffled);
  const response = await fetch(`${running.origin}/v2/track`, { method: 'POST', body, headers });
  expect(await response.json()).toMatchObject({ itemsAccepted: fixtures.length, errors: [] });
});
afterAll(() => running.close());

const usage = () => running.collector.usage;

describe('the period of a request', () => {
  const iso = (ms: number) => new Date(ms).toISOString();

  it('is a range up to now, or a custom [from, to) as given (which wins over now)', () => {
    expect(period({ range: '7d', now: NOW })).toEqual({ range: '7d', from: NOW - 7 * DAY, to: NOW });
    expect(period({ now: NOW })).toEqual({ range: '24h', from: NOW - DAY, to: NOW });
    expect(period({ from: iso(NOW - 3 * DAY), to: iso(NOW - DAY), now: NOW + 5 })).toEqual({
      range: 'custom',
      from: NOW - 3 * DAY,
      to: NOW - DAY,
    });
    expect(() => period({ from: iso(NOW), to: iso(NOW - DAY) })).toThrow(RangeError);
  });

  it('buckets a custom period from its start, their width by its length, the last one cut at its end', () => {
    expect(
      [HOUR, 2 * HOUR, 3 * HOUR, 2 * DAY, 3 * DAY, 14 * DAY, 15 * DAY, 92 * DAY].map(customBucketMs),
    ).toEqual([5 * MIN, 5 * MIN, HOUR, HOUR, 6 * HOUR, 6 * HOUR, DAY, DAY]);
    // 23:00 UTC (a midnight in Berlin) for 2 days and 30 minutes: 6-hour buckets.
    const from = NOW - 3 * DAY - HOUR;
    const chart = bucketedPeriod({ from: iso(from), to: iso(from + 2 * DAY + 30 * MIN) });
    expect(chart).toEqual({
      range: 'custom',
      lengthMs: 2 * DAY + 30 * MIN,
      bucketMs: 6 * HOUR,
      from,
      to: from + 2 * DAY + 30 * MIN,
    });
    // A preset keeps its own.
    expect(bucketedPeriod({ range: '24h', now: NOW })).toMatchObject({ range: '24h', bucketMs: HOUR });
  });
});

describe('usage queries', () => {
  it('overview: tiles over [now − range, now) against the previous period', async () => {
    const o = await usage().overview({ range: '24h', now: NOW });
    expect(o.from).toBe(new Date(NOW - DAY).toISOString());
    expect(o.to).toBe(new Date(NOW).toISOString());
    expect(o.previousFrom).toBe(new Date(NOW - 2 * DAY).toISOString());
    expect(o.tiles).toEqual({
      users: { value: 2, previous: 1, change: 1 },
      signedInUsers: { value: 1, previous: 0, change: null },
      sessions: { value: 3, previous: 1, change: 2 },
      pageViews: { value: 4, previous: 1, change: 3 },
      exceptions: { value: 4, previous: 0, change: null },
      failedCalls: { value: 3, previous: 1, change: 2 },
    });
    // One hour: only s2's items (and not s4's, at the end).
    const hour = await usage().overview({ range: '1h', now: NOW });
    expect(hour.tiles.sessions).toEqual({ value: 1, previous: 1, change: 0 });
    expect(hour.tiles.pageViews.value).toBe(1);
    expect(hour.tiles.failedCalls.value).toBe(2);
  });

  it('a custom period: the overview, its previous period of equal length, the charts and the lists', async () => {
    // [NOW − 3 h, NOW − 1 h): s1's items (NOW − 2 h); the period before, [NOW − 5 h, NOW − 3 h): nothing.
    const custom = { from: new Date(NOW - 3 * HOUR).toISOString(), to: new Date(NOW - HOUR).toISOString() };
    const o = await usage().overview(custom);
    expect(o).toMatchObject({
      range: 'custom',
      ...custom,
      previousFrom: new Date(NOW - 5 * HOUR).toISOString(),
    });
    expect(o.tiles.pageViews).toEqual({ value: 2, previous: 0, change: null });
    expect(o.tiles.sessions.value).toBe(1);
    const t = await usage().timeseries(custom);
    expect(t).toMatchObject({ range: 'custom', ...custom, bucketMs: 5 * MIN });
    expect(t.buckets).toHaveLength(24);
    expect(t.buckets.reduce((n, b) => n + b.pageViews, 0)).toBe(2);
    const p = await usage().pages(custom);
    expect(p.pages.map((row) => row.name).sort()).toEqual(['Home', 'Profile']);
    // Three hours on the hour: the hourly rollup answers, with the same counts.
    const hours = await usage().timeseries({
      from: new Date(NOW - 3 * HOUR).toISOString(),
      to: new Date(NOW).toISOString(),
    });
    expect(hours.bucketMs).toBe(HOUR);
    expect(hours.buckets.map((b) => b.pageViews)).toEqual([0, 2, 1]);
  });

  it('timeseries: aligned buckets, every one listed, items counted in the bucket they start', async () => {
    const t = await usage().timeseries({ range: '24h', now: NOW });
    expect(t.bucketMs).toBe(HOUR);
    expect(t.buckets).toHaveLength(24);
    // NOW is on a boundary, so the running bucket is [NOW, NOW + 1 h).
    expect(t.from).toBe(new Date(NOW - 23 * HOUR).toISOString());
    expect(t.to).toBe(new Date(NOW + HOUR).toISOString());
    expect(t.buckets[0]?.start).toBe(t.from);
    const at = (ms: number) => t.buckets.find((b) => b.start === new Date(ms).toISOString());
    expect(at(NOW - 2 * HOUR)).toEqual({
      start: new Date(NOW - 2 * HOUR).toISOString(),
      users: 1,
      sessions: 1,
      pageViews: 2,
      exceptions: 1,
      failedCalls: 1,
    });
    expect(at(NOW - HOUR)).toMatchObject({
      users: 1,
      sessions: 1,
      pageViews: 1,
      exceptions: 3,
      failedCalls: 2,
    });
    expect(at(NOW)).toMatchObject({ users: 1, sessions: 1, pageViews: 1 });
    const total = t.buckets.reduce((n, b) => n + b.pageViews, 0);
    expect(total).toBe(4); // s3 (NOW − 24 h) is before the first bucket; s4 (NOW) is in the last
    for (const [range, count, width] of [
      ['1h', 12, 5 * MIN],
      ['7d', 28, 6 * HOUR],
      ['30d', 30, DAY],
    ] as const) {
      const r = await usage().timeseries({ range, now: NOW + 1 });
      expect(r.buckets).toHaveLength(count);
      expect(r.bucketMs).toBe(width);
      expect(Date.parse(r.to)).toBe(NOW + width);
    }
  });

  it('pages: views, users, average and p95 duration per page name', async () => {
    const p = await usage().pages({ range: '24h', now: NOW });
    expect(p.pages).toEqual([
      // 100, 300, 500 ms: p95 interpolates between the 2nd and 3rd (300 + 0.9 × 200).
      { name: 'Home', views: 3, users: 2, avgDurationMs: 300, p95DurationMs: 480 },
      { name: 'Profile', views: 1, users: 1, avgDurationMs: 200, p95DurationMs: 200 },
    ]);
  });

  it('exceptions: grouped by type, message and top frame, with the latest stack', async () => {
    const e = await usage().exceptions({ range: '24h', now: NOW });
    expect(e.exceptions).toHaveLength(3);
    expect(e.exceptions[0]).toEqual({
      type: 'TypeError',
      message: 'x is undefined',
      topFrame: 'ProfileForm (https://app.example/index.js:7)',
      problemId: null,
      count: 2,
      usersAffected: 2,
      firstSeen: new Date(NOW - 2 * HOUR + 50_000).toISOString(),
      lastSeen: new Date(NOW - 20 * MIN).toISOString(),
      sampleStack: `TypeError: x is undefined\n    at ProfileForm (https://app.example/index.js:7:1)\n    at ${NOW - 20 * MIN}`,
    });
    expect(e.exceptions.slice(1).map((g) => [g.type, g.topFrame, g.count])).toEqual([
      ['TypeError', 'Other (https://app.example/index.js:7)', 1],
      ['RangeError', 'parse (https://app.example/index.js:7)', 1],
    ]);
  });

  it('dependencies: by target and name, failure rate and percentiles', async () => {
    const d = await usage().dependencies({ range: '24h', now: NOW });
    expect(d.dependencies).toEqual([
      {
        target: 'api.example',
        name: 'GET /api/items',
        count: 10,
        failures: 2,
        failureRate: 0.2,
        p50DurationMs: 55,
        p95DurationMs: 95.5,
      },
      {
        target: 'api.example',
        name: 'GET /api/me',
        count: 2,
        failures: 1,
        failureRate: 0.5,
        p50DurationMs: 100,
        p95DurationMs: 145,
      },
    ]);
  });

  it('sessions: most recent first, authenticated user when known, pages and errors', async () => {
    const s = await usage().sessions({ range: '24h', now: NOW });
    expect(s.sessions).toEqual([
      {
        sessionId: 's2',
        user: 'u2',
        authenticated: false,
        start: new Date(NOW - 30 * MIN).toISOString(),
        lengthMs: 25 * MIN,
        pages: 1,
        errors: 5, // 3 exceptions, 2 failed calls
      },
      {
        sessionId: 's1',
        user: 'a1',
        authenticated: true,
        start: new Date(NOW - 2 * HOUR).toISOString(),
        lengthMs: MIN,
        pages: 2,
        errors: 2,
      },
      {
        sessionId: 's3',
        user: 'a1',
        authenticated: true,
        start: new Date(NOW - DAY).toISOString(),
        lengthMs: 0,
        pages: 1,
        errors: 0,
      },
    ]);
    expect((await usage().sessions({ range: '24h', now: NOW, limit: 1 })).sessions).toHaveLength(1);
    await expect(usage().sessions({ limit: SESSIONS_LIMIT.max + 1 })).rejects.toThrow('limit');
  });

  it('a session timeline lists its items in time order with their operation id', async () => {
    const t = await usage().sessionTimeline('s1');
    expect(t).toMatchObject({ sessionId: 's1', user: 'a1', authenticated: true, truncated: false });
    expect(t?.items.map((i) => [i.type, i.name, i.success])).toEqual([
      ['pageview', 'Home', null],
      ['dependency', 'GET /api/me', true],
      ['dependency', 'GET /api/me', false],
      ['exception', 'TypeError', null],
      ['event', 'profile-saved', null],
      ['pageview', 'Profile', null],
    ]);
    expect(t?.items.every((i) => i.operationId === 'op-s1')).toBe(true);
    expect(t?.items[0]).toMatchObject({ time: new Date(NOW - 2 * HOUR).toISOString(), durationMs: 100 });
    expect(t?.items[2]).toMatchObject({ resultCode: '500', target: 'api.example', durationMs: 150 });
    expect(await usage().sessionTimeline('unknown')).toBeNull();
    await expect(usage().sessionTimeline("s1' OR 1=1 --")).rejects.toThrow('session id');
  });
});
