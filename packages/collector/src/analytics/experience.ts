import type { DuckDBValue } from '@duckdb/node-api';
import {
  webVitals,
  type Experience,
  type VitalRating,
  type VitalSummary,
  type WebVitalName,
} from '@gatehouse/api-contract';
import {
  bucketedPeriod,
  describePeriod,
  iso,
  LIST_LIMIT,
  num,
  numOrNull,
  period,
  segmentSql,
  strOrNull,
  ts,
  type UsageOptions,
  type UsageReader,
} from './sql.js';

/**
 * The Experience section's query: the web vitals the browser reports (apps/web/src/telemetry/web-vitals.ts)
 * as metrics named LCP, INP, CLS, FCP and TTFB, each with the landing page's name in its `page` property.
 */

/**
 * Google's thresholds: a value up to `good` is good, above `poor` is poor, between needs improvement.
 * Milliseconds, except CLS (a score). https://web.dev/articles/vitals#core-web-vitals and
 * https://web.dev/articles/fcp, https://web.dev/articles/ttfb (the same as web-vitals' `*Thresholds`).
 */
export const vitalThresholds: Record<WebVitalName, { good: number; poor: number }> = {
  LCP: { good: 2500, poor: 4000 },
  INP: { good: 200, poor: 500 },
  CLS: { good: 0.1, poor: 0.25 },
  FCP: { good: 1800, poor: 3000 },
  TTFB: { good: 800, poor: 1800 },
};

export function rateVital(name: WebVitalName, value: number): VitalRating {
  const { good, poor } = vitalThresholds[name];
  return value <= good ? 'good' : value <= poor ? 'needs-improvement' : 'poor';
}

type ExperiencePage = Experience['pages'][number];
type ExperienceBucket = Experience['trend'][number];

const thresholdRows = webVitals
  .map((name) => `('${name}', ${vitalThresholds[name].good}, ${vitalThresholds[name].poor})`)
  .join(', ');

// One scan for the table and the chart, over typed columns: the value and page are derived from the
// envelope when the store loads a metric (store/row-layout.ts), never read from its JSON here (334 ms p95 over
// 1,000,000 items when they were). The period's values give each page's figures and, with no page, the
// overall ones (one grouping each); the chart's give each bucket's p75 over every page. (One grouping of
// both sets of rows by (name, page, bucket) and (name, bucket) cost a fourth more: it also grouped the
// chart's rows a second time, for nothing.)
const experienceSql = (seg: string) => `WITH t(name, good, poor) AS (VALUES ${thresholdRows}),
w AS (
  SELECT i.name, (epoch_ms(i.time) - $5::BIGINT) // $6::BIGINT AS bucket, i.time >= $1 AND i.time < $2 AS in_period,
    i.metric_value AS value, coalesce(i.metric_page, '') AS page, t.good, t.poor
  FROM items i JOIN t USING (name)
  WHERE i.type = 'metric' AND i.name IN (${webVitals.map((n) => `'${n}'`).join(', ')})
    AND i.time >= least($1, $3) AND i.time < greatest($2, $4) AND i.metric_value IS NOT NULL${seg}
)
SELECT name, page, NULL::DOUBLE AS bucket, GROUPING(page)::INTEGER AS all_pages, count(*)::DOUBLE AS n,
  quantile_cont(value, 0.75) AS p75,
  count(*) FILTER (WHERE value <= good)::DOUBLE AS good,
  count(*) FILTER (WHERE value > poor)::DOUBLE AS poor
FROM w WHERE in_period GROUP BY GROUPING SETS ((name, page), (name))
UNION ALL
SELECT name, NULL, bucket::DOUBLE, 1, count(*)::DOUBLE, quantile_cont(value, 0.75), 0, 0
FROM w WHERE bucket >= 0 AND bucket < $7::BIGINT GROUP BY name, bucket`;

/** The web vitals over the period: overall and per page (p75, shares), and p75 per chart bucket. */
export async function queryExperience(reader: Pick<UsageReader, 'read'>, options: UsageOptions = {}) {
  const p = period(options);
  const chart = bucketedPeriod(options);
  const buckets = chart.lengthMs / chart.bucketMs;
  const values: DuckDBValue[] = [
    ts(p.from),
    ts(p.to),
    ts(chart.from),
    ts(chart.to),
    chart.from,
    chart.bucketMs,
    buckets,
  ];
  const rows = await reader.read(experienceSql(segmentSql(options, values, 'i.')), values);
  return shapeExperience(
    p,
    chart,
    rows.map((r): VitalRow => {
      const inChart = r.bucket !== null && r.bucket !== undefined;
      return {
        name: String(r.name) as WebVitalName,
        scope: inChart ? 'bucket' : num(r.all_pages) === 1 ? 'all' : 'page',
        bucket: num(r.bucket),
        page: strOrNull(r.page) ?? '',
        n: num(r.n),
        p75: numOrNull(r.p75),
        good: num(r.good),
        poor: num(r.poor),
      };
    }),
  );
}

/** One row of a web-vitals query, whichever store answered it (DuckDB here, Log Analytics elsewhere). */
export interface VitalRow {
  name: WebVitalName;
  /** A chart bucket's p75 (`bucket` is its index), the period over every page, or one page's. */
  scope: 'bucket' | 'all' | 'page';
  bucket: number;
  page: string;
  /** Samples, their 75th percentile, and how many were good and poor. */
  n: number;
  p75: number | null;
  good: number;
  poor: number;
}

/** The contract's Experience from the vitals rows of a period and its chart. */
export function shapeExperience(
  p: ReturnType<typeof period>,
  chart: ReturnType<typeof bucketedPeriod>,
  rows: readonly VitalRow[],
): Experience {
  const summary = (r: VitalRow): VitalSummary => {
    const { n: count, p75, good, poor } = r;
    return {
      count,
      p75,
      rating: p75 === null ? null : rateVital(r.name, p75),
      good: count ? good / count : 0,
      needsImprovement: count ? (count - good - poor) / count : 0,
      poor: count ? poor / count : 0,
    };
  };
  const overall: Experience['overall'] = {};
  const pages = new Map<string, ExperiencePage & { n: number }>();
  const trend: ExperienceBucket[] = Array.from({ length: chart.lengthMs / chart.bucketMs }, (_, i) => ({
    start: iso(chart.from + i * chart.bucketMs),
    p75: { LCP: null, INP: null, CLS: null, FCP: null, TTFB: null },
  }));
  for (const r of rows) {
    if (r.scope === 'bucket') {
      const bucket = trend[r.bucket];
      if (bucket) bucket.p75[r.name] = r.p75;
    } else if (r.scope === 'all') {
      overall[r.name] = summary(r);
    } else {
      const entry = pages.get(r.page) ?? { page: r.page, vitals: {}, n: 0 };
      entry.vitals[r.name] = summary(r);
      entry.n = Math.max(entry.n, r.n);
      pages.set(r.page, entry);
    }
  }
  return {
    ...describePeriod(p),
    overall,
    pages: [...pages.values()]
      .sort((a, b) => b.n - a.n || a.page.localeCompare(b.page))
      .slice(0, LIST_LIMIT)
      .map(({ page, vitals }) => ({ page, vitals })),
    bucketMs: chart.bucketMs,
    trend,
  };
}
