import { webVitals, type VitalRating, type WebVitalName } from '@gatehouse/api-contract';

// In store/, not analytics/: the daily sketches (daily-sketch.ts) count good and poor vitals as they load.

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

/**
 * The thresholds as a table `t(name, good, poor)`, to join the vitals' items with (`USING (name)`): the
 * join also keeps only the web vitals among the metrics.
 */
export const vitalThresholdsSql = `(VALUES ${webVitals
  .map((name) => `('${name}', ${vitalThresholds[name].good}, ${vitalThresholds[name].poor})`)
  .join(', ')}) AS t(name, good, poor)`;

/**
 * What a vital's value is counted in the duration bins as (daily-sketch.ts's binSql): milliseconds,
 * and CLS (a score, mostly under 1) in thousandths, so that its bins are as fine as a duration's.
 */
export const CLS_SCALE = 1000;
export const vitalBinnedSql = (name: string, value: string) =>
  `CASE WHEN ${name} = 'CLS' THEN ${value} * ${CLS_SCALE} ELSE ${value} END`;
/** A value in vitalBinnedSql's units (a bin's middle, binValueSql) back in the vital's own. */
export const vitalUnbinnedSql = (name: string, binned: string) =>
  `CASE WHEN ${name} = 'CLS' THEN ${binned} / ${CLS_SCALE} ELSE ${binned} END`;
