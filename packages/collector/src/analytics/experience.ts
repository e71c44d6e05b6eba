import type { DuckDBValue } from '@duckdb/node-api';
import { webVitals, type Experience, type VitalSummary, type WebVitalName } from '@gatehouse/api-contract';
import {
  binQuantilesSql,
  binSql,
  binValueSql,
  durationEstimate,
  VITAL_DAILY,
  VITAL_DAILY_BINS,
  VITAL_METHOD,
} from '../store/daily-sketch.js';
import {
  bucketedPeriod,
  DAY,
  describePeriod,
  iso,
  LIST_LIMIT,
  num,
  numOrNull,
  period,
  segmentSql,
  sketchDays,
  sketchEdgeSql,
  sketchValues,
  strOrNull,
  ts,
  type UsageOptions,
  type UsageReader,
} from './sql.js';
import { rateVital, vitalBinnedSql, vitalThresholdsSql, vitalUnbinnedSql } from '../store/vitals.js';
import { metricPageKeySql } from '../store/row-layout.js';

/**
 * The Experience section's query: the web vitals the browser reports (apps/web/src/telemetry/web-vitals.ts)
 * as metrics named LCP, INP, CLS, FCP and TTFB, each with the landing page's name in its `page` property.
 */

type ExperiencePage = Experience['pages'][number];
type ExperienceBucket = Experience['trend'][number];

// One scan for the table and the chart, over typed columns: the value and page are derived from the
// envelope when the store loads a metric (store/row-layout.ts), never read from its JSON here (334 ms p95 over
// 1,000,000 items when they were). The period's values give each page's figures and, with no page, the
// overall ones (one grouping each); the chart's give each bucket's p75 over every page. (One grouping of
// both sets of rows by (name, page, bucket) and (name, bucket) cost a fourth more: it also grouped the
// chart's rows a second time, for nothing.) The pages by their key (metric_page_key), each page's text
// looked up once from the daily sketches, which list every page with a vital: reading and grouping the
// text was a fourth of the segmented query at 50 M items (docs/performance/usage-history.md, section 17);
// by the text when two pages share a key (`byText`).
const experienceSql = (seg: string, byText: boolean) => `WITH w AS (
  SELECT i.name, (epoch_ms(i.time) - $5::BIGINT) // $6::BIGINT AS bucket, i.time >= $1 AND i.time < $2 AS in_period,
    i.metric_value AS value, ${byText ? `coalesce(i.metric_page, '')` : 'i.metric_page_key'} AS page, t.good, t.poor
  FROM items i JOIN ${vitalThresholdsSql} USING (name)
  WHERE i.type = 'metric' AND i.name IN (${webVitals.map((n) => `'${n}'`).join(', ')})
    AND i.time >= least($1, $3) AND i.time < greatest($2, $4) AND i.metric_value IS NOT NULL${seg}
)
SELECT name, ${byText ? 'page' : 'k.text AS page'}, NULL::DOUBLE AS bucket, all_pages, n, p75, good, poor FROM (
  SELECT name, page, GROUPING(page)::INTEGER AS all_pages, count(*)::DOUBLE AS n,
    quantile_cont(value, 0.75) AS p75,
    count(*) FILTER (WHERE value <= good)::DOUBLE AS good,
    count(*) FILTER (WHERE value > poor)::DOUBLE AS poor
  FROM w WHERE in_period GROUP BY GROUPING SETS ((name, page), (name))
)${byText ? '' : ` LEFT JOIN (${pageTextsSql}) k ON k.key = page`}
UNION ALL
SELECT name, NULL, bucket::DOUBLE, 1, count(*)::DOUBLE, quantile_cont(value, 0.75), 0, 0
FROM w WHERE bucket >= 0 AND bucket < $7::BIGINT GROUP BY name, bucket`;

/** Each page with a web vital, as its text and key: the daily sketches list them ('' for none). */
const pageTextsSql = `SELECT DISTINCT page AS text, ${metricPageKeySql('page')} AS key FROM ${VITAL_DAILY}`;
/** Whether two pages with a web vital share a key (a hash collision: never seen, but possible). */
const pageKeysSharedSql = `SELECT count(*) - count(DISTINCT key) AS n FROM (${pageTextsSql})`;

/** What the Experience panel estimates when it reads the sketches, and how closely. */
export const EXPERIENCE_ESTIMATES: Experience['estimates'] = [durationEstimate('p75', VITAL_METHOD)];

/**
 * The same answer from the daily sketches (store/daily-sketch.ts), for a period of whole days [$1, $2)
 * and the parts of a day at either end, [$3, $1) and [$2, $4), read from the items, and a chart of
 * whole-day buckets from $7 to $8 (each $6 ms wide, the first starting at $5 ms): the counts, good and
 * poor exact, the 75th percentiles estimated from the bins.
 */
const experienceSketchSql = `WITH ${sketchEdgeSql(
  'metric',
  `name, coalesce(metric_page, '') AS page, metric_value AS value`,
)},
e AS (SELECT edge.*, t.good, t.poor FROM edge JOIN ${vitalThresholdsSql} USING (name) WHERE value IS NOT NULL),
counts AS (
  SELECT name, page, GROUPING(page)::INTEGER AS all_pages, sum(n) AS n, sum(good) AS good, sum(poor) AS poor
  FROM (
    SELECT name, page, n, good, poor FROM ${VITAL_DAILY} WHERE day >= $1 AND day < $2
    UNION ALL SELECT name, page, 1, (value <= good)::BIGINT, (value > poor)::BIGINT FROM e
  ) GROUP BY GROUPING SETS ((name, page), (name))
),
bins AS (
  SELECT name, page, GROUPING(page)::INTEGER AS all_pages, bin, sum(n) AS n FROM (
    SELECT name, page, bin, n FROM ${VITAL_DAILY_BINS} WHERE day >= $1 AND day < $2
    UNION ALL SELECT name, page, ${binSql(vitalBinnedSql('name', 'value'))}, 1 FROM e
  ) GROUP BY GROUPING SETS ((name, page, bin), (name, bin))
),
q AS (${binQuantilesSql('SELECT name, page, all_pages, bin, n FROM bins', 'name, page, all_pages', [0.75])}),
chart AS (
  SELECT name, (epoch_ms(day) - $5::BIGINT) // $6::BIGINT AS bucket, bin, sum(n) AS n
  FROM ${VITAL_DAILY_BINS} WHERE day >= $7 AND day < $8 GROUP BY ALL
),
cq AS (${binQuantilesSql('SELECT name, bucket, bin, n FROM chart', 'name, bucket', [0.75])})
SELECT counts.name, counts.page, NULL::DOUBLE AS bucket, counts.all_pages, counts.n::DOUBLE AS n,
  ${vitalUnbinnedSql('counts.name', binValueSql('q.q75'))} AS p75, counts.good::DOUBLE AS good,
  counts.poor::DOUBLE AS poor
FROM counts JOIN q ON q.name = counts.name AND q.all_pages = counts.all_pages
  AND q.page IS NOT DISTINCT FROM counts.page
UNION ALL
SELECT name, NULL, bucket::DOUBLE, 1, NULL, ${vitalUnbinnedSql('name', binValueSql('q75'))}, 0, 0 FROM cq`;

/**
 * The chart's buckets are whole UTC days (the 30-day range, or a long custom one from midnight to
 * midnight) and the period holds whole days the sketches serve, with no segment: the sketches answer;
 * else the items.
 */
function sketchServes(p: ReturnType<typeof period>, chart: ReturnType<typeof bucketedPeriod>, seg: string) {
  const days = sketchDays(p, seg);
  return days && chart.bucketMs % DAY === 0 && chart.from % DAY === 0 && chart.to % DAY === 0 ? days : null;
}

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
  const seg = segmentSql(options, values, 'i.');
  const days = sketchServes(p, chart, seg);
  const rows = days
    ? await reader.read(experienceSketchSql, [
        ...sketchValues(p, days),
        chart.from,
        chart.bucketMs,
        ts(chart.from),
        ts(chart.to),
      ])
    : await reader.read(experienceSql(seg, num((await reader.read(pageKeysSharedSql))[0]?.n) > 0), values);
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
    days ? EXPERIENCE_ESTIMATES : [],
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
  estimates: Experience['estimates'],
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
    estimates,
  };
}
