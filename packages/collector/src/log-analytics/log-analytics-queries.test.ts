import { describe, expect, it } from 'vitest';
import {
  breakdownsOnLogAnalytics,
  createLogAnalyticsQueries,
  experienceOnLogAnalytics,
  type Row,
} from './log-analytics-queries.js';

/** The queries over a workspace that answers every query with `rows` (the KQL itself: kql.test.ts). */
const over = (rows: Row[]) => createLogAnalyticsQueries(() => Promise.resolve(rows));

describe('the dashboard over Log Analytics: answers shaped as the local store shapes them', () => {
  it('a session timeline from the union of the App* tables, the signed-in user first', async () => {
    const { usage } = over([
      {
        t: new Date('2026-11-25T10:00:00Z'),
        type: 'pageView',
        name: 'Home',
        url: 'https://app.example/',
        operation_id: 'op1',
        duration_ms: 120,
        success: null,
        result_code: '',
        target: null,
        message: null,
        auth_user_id: '',
        user_id: 'anon-1',
      },
      {
        t: '2026-11-25T10:00:05Z',
        type: 'dependency',
        name: 'GET /api/me',
        url: null,
        operation_id: 'op2',
        duration_ms: 31,
        success: true,
        result_code: '200',
        target: 'app.example',
        message: null,
        auth_user_id: 'user-7',
        user_id: 'anon-1',
      },
    ]);
    const timeline = await usage.sessionTimeline('s1');
    expect(timeline).toEqual({
      sessionId: 's1',
      user: 'user-7',
      authenticated: true,
      truncated: false,
      items: [
        {
          time: '2026-11-25T10:00:00.000Z',
          type: 'pageView',
          name: 'Home',
          url: 'https://app.example/',
          operationId: 'op1',
          durationMs: 120,
          success: null,
          resultCode: null,
          target: null,
          message: null,
        },
        {
          time: '2026-11-25T10:00:05.000Z',
          type: 'dependency',
          name: 'GET /api/me',
          url: null,
          operationId: 'op2',
          durationMs: 31,
          success: true,
          resultCode: '200',
          target: 'app.example',
          message: null,
        },
      ],
    });
    expect(await over([]).usage.sessionTimeline('s1')).toBeNull();
  });

  it('web vitals: overall, per page and per chart bucket, rated by the same thresholds', async () => {
    const now = Date.now();
    const answering = (rows: Row[]) => () => Promise.resolve(rows);
    const run = answering([
      { Name: 'LCP', scope: 'all', n: 10, p75: 2000, goodCount: 8, poorCount: 1 },
      { Name: 'LCP', scope: 'page', page: 'Home', n: 6, p75: 4500, goodCount: 2, poorCount: 3 },
      { Name: 'LCP', scope: 'page', page: 'Profile', n: 4, p75: 1000, goodCount: 4, poorCount: 0 },
    ]);
    const experience = await experienceOnLogAnalytics(run, { range: '7d', now });
    expect(experience.overall.LCP).toEqual({
      count: 10,
      p75: 2000,
      rating: 'good',
      good: 0.8,
      needsImprovement: 0.1,
      poor: 0.1,
    });
    expect(experience.pages.map((p) => [p.page, p.vitals.LCP?.rating])).toEqual([
      ['Home', 'poor'],
      ['Profile', 'good'],
    ]);
    expect(experience.trend.length).toBeGreaterThan(0);
    expect(experience.trend.every((b) => b.p75.LCP === null)).toBe(true);

    const bucketStart = Date.parse(experience.trend[2]!.start);
    const withBucket = await experienceOnLogAnalytics(
      answering([
        {
          Name: 'INP',
          scope: 'bucket',
          bucket: new Date(bucketStart),
          n: 3,
          p75: 180,
          goodCount: 3,
          poorCount: 0,
        },
      ]),
      { range: '7d', now },
    );
    expect(withBucket.trend[2]?.p75.INP).toBe(180);
    expect(withBucket.trend.filter((b) => b.p75.INP !== null)).toHaveLength(1);
  });

  it('breakdowns: browsers and systems by the local names, referrers with none as (direct), no devices', async () => {
    const run = (query: string) =>
      Promise.resolve(
        query.startsWith('let sources')
          ? [
              { value: 'www.search.example', visitors: 3 },
              { value: '', visitors: 1 },
            ]
          : [
              { dim: 'total', value: '', visitors: 4 },
              { dim: 'browser', value: 'Edge', visitors: 1 },
              { dim: 'browser', value: 'Chrome', visitors: 3 },
              { dim: 'os', value: 'macOS', visitors: '2' },
            ],
      );
    const b = await breakdownsOnLogAnalytics(run, { range: '1h' });
    expect(b).toMatchObject({
      total: 4,
      referrers: [
        { value: 'www.search.example', visitors: 3, share: 0.75 },
        { value: '(direct)', visitors: 1, share: 0.25 },
      ],
      browsers: [
        { value: 'Chrome', visitors: 3, share: 0.75 },
        { value: 'Edge', visitors: 1, share: 0.25 },
      ],
      operatingSystems: [{ value: 'macOS', visitors: 2, share: 0.5 }],
      devices: [],
    });
  });
});
