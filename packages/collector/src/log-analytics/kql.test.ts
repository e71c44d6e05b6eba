import { beforeAll, describe, expect, it } from 'vitest';
import type { OperatingSystem } from '@gatehouse/api-contract';
import { diagnose } from '../test-support/kusto.js';
import {
  breakdownsKql,
  dependenciesKql,
  eventsKql,
  exceptionsKql,
  experienceKql,
  freshnessKql,
  NotAvailableError,
  overviewKql,
  pagesKql,
  referrersKql,
  segmentKql,
  sessionsKql,
  signedInIdsKql,
  timelineKql,
  timeseriesKql,
} from './kql.js';

const now = Date.parse('2026-11-25T12:00:00Z');
const hour = 3_600_000;
const segment = { auth: 'signed-in' as const, role: 'admin', browser: 'Chrome' as const };

const queries: Record<string, string> = {
  overview: overviewKql(now - 2 * hour, now - hour, now, segment),
  timeseries: timeseriesKql(now - 24 * hour, now, hour, segment),
  pages: pagesKql(now - hour, now, segment),
  exceptions: exceptionsKql(now - hour, now, segment),
  dependencies: dependenciesKql(now - hour, now, segment),
  sessions: sessionsKql(now - hour, now, 50, segment),
  signedInIds: signedInIdsKql(now - hour, now, segment),
  timeline: timelineKql('abc123'),
  events: eventsKql(now - hour, now, segment),
  experience: experienceKql(now - hour, now, now - hour, now, 5 * 60_000, segment),
  freshness: freshnessKql(now),
  breakdowns: breakdownsKql(now - hour, now, segment),
  referrers: referrersKql(now - 25 * hour, now - hour, now, segment),
  osAndReferrerSegment: `AppEvents${segmentKql({ os: 'macOS', referrer: 'news.example' })}`,
  directSegment: `AppEvents${segmentKql({ referrer: '(direct)' })}`,
};

describe('the KQL queries', () => {
  // The service builds its tables of built-in functions on first use: seconds, so in the hook's time.
  beforeAll(() => {
    diagnose('print 1');
  });

  it.each(Object.entries(queries))('%s binds against the tables without a diagnostic', (_name, query) => {
    expect(diagnose(query)).toEqual([]);
  });

  it('the check itself finds what is wrong', () => {
    expect(diagnose('AppPageViews | summarize sum(ItemCounts) by Nme').join('\n')).toMatch(
      /ItemCounts[\s\S]*Nme/,
    );
    // A column of another table, and a reserved word as a name.
    expect(diagnose('AppEvents | summarize views = sum(DurationMs)')).toHaveLength(2);
  });

  it('counts with sum(ItemCount), so sampled rows count as the items they stand for', () => {
    for (const name of [
      'overview',
      'timeseries',
      'pages',
      'exceptions',
      'dependencies',
      'sessions',
      'events',
    ]) {
      expect(queries[name]).toContain('ItemCount');
      expect(queries[name]).not.toMatch(/\bcount\(\)/);
    }
  });

  it('says the device segment is not available, and quotes values as string literals', () => {
    expect(() => segmentKql({ device: 'mobile' })).toThrow(NotAvailableError);
    expect(segmentKql({ role: 'a"b\\c' })).toContain(String.raw`",a\"b\\c,"`);
    expect(diagnose(`AppEvents${segmentKql({ role: 'a"b\\c' })}`)).toEqual([]);
  });

  it('takes only its own operating systems, not what every object inherits', () => {
    for (const os of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      expect(() => segmentKql({ os: os as OperatingSystem })).toThrow(RangeError);
  });
});
