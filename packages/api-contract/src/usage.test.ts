import { describe, expect, it } from 'vitest';
import { funnelQuery, retentionQuery, userFlowsQuery } from './analytics.js';
import { CUSTOM_PERIOD_MAX_DAYS, rangeQuery, sessionsQuery } from './usage.js';

const messages = (result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) => result.error?.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`) ?? [];

describe('the period of a usage query', () => {
  it('is a range (24 hours when none is given), or a custom from and to', () => {
    expect(rangeQuery.parse({})).toEqual({});
    expect(rangeQuery.parse({ range: '7d' })).toEqual({ range: '7d' });
    const custom = { from: '2026-11-01T00:00:00Z', to: '2026-11-08T00:00:00Z' };
    expect(rangeQuery.parse(custom)).toEqual(custom);
    expect(sessionsQuery.parse({ ...custom, limit: '5' })).toEqual({ ...custom, limit: 5 });
  });

  it('refuses half a period, a period beside a range, one backwards, too long, or not a time', () => {
    expect(messages(rangeQuery.safeParse({ from: '2026-11-01T00:00:00Z' }))).toEqual([
      'to must be given with from and to both',
    ]);
    expect(messages(rangeQuery.safeParse({ to: '2026-11-01T00:00:00Z' }))).toEqual([
      'from must be given with from and to both',
    ]);
    expect(
      messages(
        rangeQuery.safeParse({ range: '7d', from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z' }),
      ),
    ).toEqual(['range must not be given with from and to']);
    expect(
      messages(rangeQuery.safeParse({ from: '2026-11-02T00:00:00Z', to: '2026-11-02T00:00:00Z' })),
    ).toEqual(['to must be after from']);
    const start = Date.parse('2026-08-01T00:00:00Z');
    const at = (days: number) => new Date(start + days * 86_400_000).toISOString();
    expect(rangeQuery.safeParse({ from: at(0), to: at(CUSTOM_PERIOD_MAX_DAYS) }).success).toBe(true);
    expect(messages(rangeQuery.safeParse({ from: at(0), to: at(CUSTOM_PERIOD_MAX_DAYS + 0.01) }))).toEqual([
      `to must be at most ${CUSTOM_PERIOD_MAX_DAYS} days after from`,
    ]);
    expect(rangeQuery.safeParse({ from: 'yesterday', to: '2026-11-02T00:00:00Z' }).success).toBe(false);
  });

  it('is checked the same on the analytics endpoints', () => {
    const half = { from: '2026-11-01T00:00:00Z' };
    expect(messages(retentionQuery.safeParse(half))).toEqual(['to must be given with from and to both']);
    expect(messages(userFlowsQuery.safeParse({ ...half, page: 'Home' }))).toEqual([
      'to must be given with from and to both',
    ]);
    expect(messages(funnelQuery.safeParse({ ...half, step: ['page:Home', 'page:Profile'] }))).toEqual([
      'to must be given with from and to both',
    ]);
  });
});
