import { experienceSchema } from '@gatehouse/api-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateVital } from '../store/vitals.js';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A midnight UTC: on every chart bucket boundary. */
const NOW = Math.floor(Date.now() / DAY) * DAY;

/** A web vital as the browser's telemetry sends it (a metric named after it, the landing page in `page`). */
function vital(name: string, value: number, page: string | undefined, at: number) {
  const e = browserEnvelope('metric', browserContext()) as {
    time: string;
    data: { baseData: Record<string, unknown> };
  };
  e.time = new Date(at).toISOString();
  e.data.baseData.metrics = [{ name, value, count: 1 }];
  e.data.baseData.properties =
    page === undefined ? {} : { page, rating: 'ignored', navigationType: 'navigate' };
  return e;
}

const fixtures = [
  // Home: LCP 1000, 2000, 3000, 5000 (p75 = 3500: needs improvement; shares 2 good, 1 NI, 1 poor).
  ...[1000, 2000, 3000, 5000].map((v, i) => vital('LCP', v, 'Home', NOW - 2 * HOUR + i * 60_000)),
  vital('CLS', 0.3, 'Home', NOW - 2 * HOUR),
  // Profile: one LCP exactly on the good threshold (good), in another hour.
  vital('LCP', 2500, 'Profile', NOW - 5 * HOUR),
  // No page property: listed under ''.
  vital('TTFB', 900, undefined, NOW - 5 * HOUR),
  // Not a vital, and outside the period: ignored.
  vital('profile-load-ms', 10, 'Home', NOW - HOUR),
  vital('LCP', 99_999, 'Home', NOW - 2 * DAY),
  vital('LCP', 99_999, 'Home', NOW),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures);
});
afterAll(() => running.close());

describe('experience', () => {
  it("rates by Google's thresholds, a value on the threshold being the better rating", () => {
    expect(rateVital('LCP', 2500)).toBe('good');
    expect(rateVital('LCP', 2501)).toBe('needs-improvement');
    expect(rateVital('LCP', 4000)).toBe('needs-improvement');
    expect(rateVital('LCP', 4001)).toBe('poor');
    expect(rateVital('CLS', 0.1)).toBe('good');
    expect(rateVital('INP', 501)).toBe('poor');
  });

  it('per page: p75 of each vital, its rating, and the shares in each rating', async () => {
    const e = await running.collector.analytics.experience({ range: '24h', now: NOW });
    // The API's description of the answer, as the server sends it.
    expect(experienceSchema.parse(e)).toEqual(e);
    expect(e.from).toBe(new Date(NOW - DAY).toISOString());
    expect(e.pages.map((p) => p.page)).toEqual(['Home', '', 'Profile']);
    const home = e.pages[0]?.vitals;
    expect(home?.LCP).toEqual({
      count: 4,
      p75: 3500,
      rating: 'needs-improvement',
      good: 0.5,
      needsImprovement: 0.25,
      poor: 0.25,
    });
    expect(home?.CLS).toMatchObject({ count: 1, p75: 0.3, rating: 'poor', poor: 1 });
    expect(e.pages[2]?.vitals.LCP).toMatchObject({ count: 1, rating: 'good', good: 1 });
    expect(Object.keys(e.pages[1]?.vitals ?? {})).toEqual(['TTFB']);
    expect(e.pages[1]?.vitals.TTFB?.p75).toBe(900);
    // Overall: Home's four and Profile's one LCP.
    expect(e.overall.LCP).toMatchObject({ count: 5, p75: 3000, good: 0.6 });
    expect(e.overall.INP).toBeUndefined();
  });

  it('trend: the p75 of each vital per aligned bucket, every bucket listed', async () => {
    const e = await running.collector.analytics.experience({ range: '24h', now: NOW });
    expect(e.bucketMs).toBe(HOUR);
    expect(e.trend).toHaveLength(24);
    const at = (ms: number) => e.trend.find((b) => b.start === new Date(ms).toISOString())?.p75;
    expect(at(NOW - 2 * HOUR)).toEqual({ LCP: 3500, INP: null, CLS: 0.3, FCP: null, TTFB: null });
    expect(at(NOW - 5 * HOUR)).toMatchObject({ LCP: 2500, TTFB: 900 });
    // The running bucket [NOW, NOW + 1 h) holds the value at NOW, which the table leaves out.
    expect(at(NOW)?.LCP).toBe(99_999);
    expect(e.trend.filter((b) => Object.values(b.p75).some((v) => v !== null))).toHaveLength(3);
  });

  it('answers empty without vitals', async () => {
    const e = await running.collector.analytics.experience({ range: '1h', now: NOW - 10 * DAY });
    expect(e.pages).toEqual([]);
    expect(e.overall).toEqual({});
    expect(e.trend.every((b) => Object.values(b.p75).every((v) => v === null))).toBe(true);
  });
});
