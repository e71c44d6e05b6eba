import {
  SESSION_ID,
  USER_ID,
  type CustomEvents,
  type Dependencies,
  type Experience,
  type Pages,
  type Breakdowns,
  type Exceptions,
  type Timeseries,
  type WebVitalName,
} from '@gatehouse/api-contract';
import { shapeBreakdowns } from '../analytics/breakdowns.js';
import { shapeExperience } from '../analytics/experience.js';
import {
  bucketedPeriod,
  describePeriod,
  iso,
  num,
  numOrNull,
  period,
  strOrNull,
  timeMs,
  type UsageOptions,
} from '../analytics/sql.js';
import {
  sessionsLimit,
  shapeDependencies,
  shapeExceptions,
  shapeOverview,
  shapePages,
  shapeSessions,
  shapeTimeline,
  shapeTimeseries,
  type UsageQueries,
} from '../analytics/usage-answers.js';
import { shapeCustomEvents } from '../analytics/events.js';
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
  sessionsKql,
  signedInIdsKql,
  timelineKql,
  timeseriesKql,
} from './kql.js';

/** One query's answer: its first table's rows as objects keyed by column name. */
export type Row = Record<string, unknown>;
/** Runs `query` over [from, to) (epoch ms); rejects with LogAnalyticsError when it cannot answer. */
export type RunQuery = (query: string, from: number, to: number) => Promise<Row[]>;

/** Where the portal's own views are, for what KQL cannot answer here (Azure portal, the resource's blade). */
export interface PortalLinks {
  /** The Application Insights resource's id (/subscriptions/…/components/…), for deep links; else the portal's home. */
  resourceId?: string | undefined;
}

/** The portal's view `blade` of the resource (or the portal's list of resources, without its id). */
export const portal = (links: PortalLinks, blade: string) =>
  links.resourceId
    ? `https://portal.azure.com/#@/resource${links.resourceId}/${blade}`
    : 'https://portal.azure.com/#browse/microsoft.insights%2Fcomponents';

const ms = timeMs;

/** The longest a session timeline or an id look-up goes back: the workspace's default retention. */
const LOOKBACK_MS = 90 * 86_400_000;

export interface Freshness {
  /** The newest item's time, or null when the last hour has none. */
  latestItem: string | null;
  /** Median time from an item's event time to its ingestion, over the last hour; null without items. */
  ingestionDelayMs: number | null;
}

export interface LogAnalyticsQueries {
  usage: UsageQueries;
  freshness(now?: number): Promise<Freshness>;
}

/**
 * Kusto's own estimates, as its documentation states them: `dcount` at its default accuracy (a
 * standard error of 0.8 %; exact up to 1,000 values), `percentile` a t-digest (off by at most 1 % of
 * the ranks). (https://learn.microsoft.com/kusto/query/dcount-aggregation-function and
 * percentiles-aggregation-function.)
 */
export function kustoPercentile<F extends string>(field: F) {
  return {
    field,
    kind: 'percentile' as const,
    error: 0.01,
    errorOf: 'rank' as const,
    method: "Kusto's percentile (t-digest)",
  };
}
function kustoDistinct<F extends string>(field: F) {
  return {
    field,
    kind: 'distinct-count' as const,
    error: 0.008,
    errorOf: 'value' as const,
    method: "Kusto's dcount (HyperLogLog)",
  };
}
const KUSTO_PAGE_ESTIMATES: Pages['estimates'] = [kustoDistinct('users'), kustoPercentile('p95DurationMs')];
const KUSTO_EVENT_ESTIMATES: CustomEvents['estimates'] = [kustoDistinct('users'), kustoDistinct('sessions')];
const KUSTO_EXPERIENCE_ESTIMATES: Experience['estimates'] = [kustoPercentile('p75')];
const KUSTO_CALL_ESTIMATES: Dependencies['estimates'] = [
  kustoPercentile('p50DurationMs'),
  kustoPercentile('p95DurationMs'),
];

/**
 * The dashboard's UsageQueries and AnalyticsQueries over a Log Analytics workspace, in KQL (kql.ts):
 * the same answers as the local store's where the tables hold the same facts; NotAvailableError where
 * they do not (funnels, user flows and retention need every item of a user in order: the portal has
 * views of its own for them; access and erasure requests go through Azure's own purge and export).
 */
export function createLogAnalyticsQueries(run: RunQuery): LogAnalyticsQueries {
  const usage: UsageQueries = {
    async overview(options = {}) {
      const p = period(options);
      const length = p.to - p.from;
      return shapeOverview(
        p,
        await run(overviewKql(p.from - length, p.from, p.to, options), p.from - length, p.to),
      );
    },

    async sessions(options = {}) {
      const p = period(options);
      const limit = sessionsLimit(options);
      return shapeSessions(p, await run(sessionsKql(p.from, p.to, limit, options), p.from, p.to));
    },

    async sessionTimeline(sessionId) {
      if (!SESSION_ID.test(sessionId)) throw new RangeError('Invalid session id');
      const now = Date.now();
      const rows = await run(timelineKql(sessionId), now - LOOKBACK_MS, now);
      if (rows.length === 0) return null;
      return shapeTimeline(sessionId, rows);
    },

    userItems(userId) {
      if (!USER_ID.test(userId)) throw new RangeError('Invalid user id');
      throw new NotAvailableError(
        "Exports of one user's items are not available with Azure Monitor as the source: run a query for the user in the workspace, or use Azure's data export.",
        'https://learn.microsoft.com/azure/azure-monitor/logs/personal-data-mgmt',
      );
    },

    eraseUser(userId) {
      if (!USER_ID.test(userId)) throw new RangeError('Invalid user id');
      return Promise.reject(
        new NotAvailableError(
          "Erasure is not available with Azure Monitor as the source: use the workspace's purge API (Azure's own process for personal data).",
          'https://learn.microsoft.com/azure/azure-monitor/logs/personal-data-mgmt',
        ),
      );
    },

    async signedInUserIds(options = {}) {
      const p = period(options);
      const rows = await run(signedInIdsKql(p.from, p.to, options), p.from, p.to);
      return rows.map((r) => String(r.UserAuthenticatedId));
    },
  };

  return {
    usage,
    async freshness(now = Date.now()) {
      const [row] = await run(freshnessKql(now), now - 3_600_000, now);
      const latest = row?.latest;
      return {
        latestItem: latest === null || latest === undefined || latest === '' ? null : iso(ms(latest)),
        ingestionDelayMs: numOrNull(row?.delayMs),
      };
    },
  };
}

/** The timeseries panel's answer over the workspace. */
export async function timeseriesOnLogAnalytics(
  run: RunQuery,
  options: UsageOptions = {},
): Promise<Timeseries> {
  const b = bucketedPeriod(options);
  const rows = await run(timeseriesKql(b.from, b.to, b.bucketMs, options), b.from, b.to);
  // Kusto names a bucket by its start; the shaper by its index.
  return shapeTimeseries(
    b,
    rows.map((r) => ({ ...r, bucket: Math.round((ms(r.bucket) - b.from) / b.bucketMs) })),
  );
}

/** The pages panel's answer over the workspace. */
export async function pagesOnLogAnalytics(run: RunQuery, options: UsageOptions = {}): Promise<Pages> {
  const p = period(options);
  return shapePages(p, await run(pagesKql(p.from, p.to, options), p.from, p.to), KUSTO_PAGE_ESTIMATES);
}

/** The exceptions panel's answer over the workspace. */
export async function exceptionsOnLogAnalytics(
  run: RunQuery,
  options: UsageOptions = {},
): Promise<Exceptions> {
  const p = period(options);
  return shapeExceptions(p, await run(exceptionsKql(p.from, p.to, options), p.from, p.to));
}

/** The dependencies panel's answer over the workspace. */
export async function dependenciesOnLogAnalytics(
  run: RunQuery,
  options: UsageOptions = {},
): Promise<Dependencies> {
  const p = period(options);
  return shapeDependencies(
    p,
    await run(dependenciesKql(p.from, p.to, options), p.from, p.to),
    KUSTO_CALL_ESTIMATES,
  );
}

/** The experience panel's answer over the workspace. */
export async function experienceOnLogAnalytics(
  run: RunQuery,
  options: UsageOptions = {},
): Promise<Experience> {
  const p = period(options);
  const chart = bucketedPeriod(options);
  const rows = await run(
    experienceKql(p.from, p.to, chart.from, chart.to, chart.bucketMs, options),
    Math.min(p.from, chart.from),
    Math.max(p.to, chart.to),
  );
  return shapeExperience(
    p,
    chart,
    rows.map((r) => ({
      name: String(r.Name) as WebVitalName,
      scope: r.scope === 'bucket' ? 'bucket' : r.scope === 'all' ? 'all' : 'page',
      bucket: Math.round((ms(r.bucket) - chart.from) / chart.bucketMs),
      page: strOrNull(r.page) ?? '',
      n: num(r.n),
      p75: numOrNull(r.p75),
      good: num(r.goodCount),
      poor: num(r.poorCount),
    })),
    KUSTO_EXPERIENCE_ESTIMATES,
  );
}

/** The customEvents panel's answer over the workspace. */
export async function customEventsOnLogAnalytics(
  run: RunQuery,
  options: UsageOptions = {},
): Promise<CustomEvents> {
  const p = period(options);
  return shapeCustomEvents(
    p,
    await run(eventsKql(p.from, p.to, options), p.from, p.to),
    KUSTO_EVENT_ESTIMATES,
  );
}

/** The breakdowns panel's answer over the workspace. */
export async function breakdownsOnLogAnalytics(
  run: RunQuery,
  options: UsageOptions = {},
): Promise<Breakdowns> {
  const p = period(options);
  const sourcesFrom = p.from - 86_400_000; // A session's first page view is at most a day before.
  const [client, referrers] = await Promise.all([
    run(breakdownsKql(p.from, p.to, options), p.from, p.to),
    run(referrersKql(sourcesFrom, p.from, p.to, options), sourcesFrom, p.to),
  ]);
  // Azure's tables have no device class (segmentKql): that list stays empty.
  return shapeBreakdowns(
    describePeriod(p),
    client.map((r) => ({ ...r, visitors: num(r.visitors) })),
    referrers.map((r) => ({ value: strOrNull(r.value) ?? '', visitors: num(r.visitors) })),
  );
}
