import type { Pages, Segment, UsageRange } from '@gatehouse/api-contract';
import { ownValue } from '../own-property.js';
import { iso } from './values.js';

/*
 * The period a query asks for, read from its options: the one reading shared by the store's annotations
 * (annotations.ts) and every dashboard query (analytics/, through analytics/sql.ts).
 */

const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Each range's length and the width of its chart buckets. */
export const rangeSpecs: Record<UsageRange, { lengthMs: number; bucketMs: number }> = {
  '1h': { lengthMs: HOUR, bucketMs: 5 * MINUTE },
  '24h': { lengthMs: DAY, bucketMs: HOUR },
  '7d': { lengthMs: 7 * DAY, bucketMs: 6 * HOUR },
  '30d': { lengthMs: 30 * DAY, bucketMs: DAY },
};

export interface UsageOptions extends Segment {
  range?: UsageRange | undefined;
  /**
   * A custom period [from, to) (ISO 8601) instead of a range: both or neither, checked by the API's
   * contract (checkPeriod: forwards, at most CUSTOM_PERIOD_MAX_DAYS).
   */
  from?: string | undefined;
  to?: string | undefined;
  /** The end of the period (epoch ms); default: now. For tests. */
  now?: number;
}

/** The period asked for: [from, to). ISO 8601 times. */
export type Period = Pick<Pages, 'range' | 'from' | 'to'>;

/** A custom period's bucket width, from its length: about 12 to 90 buckets a chart. */
export function customBucketMs(lengthMs: number): number {
  if (lengthMs <= 2 * HOUR) return 5 * MINUTE;
  if (lengthMs <= 2 * DAY) return HOUR;
  if (lengthMs <= 14 * DAY) return 6 * HOUR;
  return DAY;
}

/** The custom period of the options, if they give one (epoch ms); else null. */
function customPeriod(options: UsageOptions): { from: number; to: number } | null {
  if (options.from === undefined || options.to === undefined) return null;
  const from = Date.parse(options.from);
  const to = Date.parse(options.to);
  if (!(from < to)) throw new RangeError(`Not a period: ${options.from} to ${options.to}`);
  return { from, to };
}

/** A preset range's spec, or a custom period's bounds: the one reading of the options both periods share. */
function chosenPeriod(
  options: UsageOptions,
): { from: number; to: number } | { range: UsageRange; lengthMs: number; bucketMs: number; now: number } {
  const custom = customPeriod(options);
  if (custom) return custom;
  const range = options.range ?? '24h';
  const spec = ownValue(rangeSpecs, range);
  if (!spec) throw new RangeError(`Unknown range ${String(range)}`);
  return { range, ...spec, now: options.now ?? Date.now() };
}

/**
 * The period asked for, [from, to) in epoch ms: the custom one as given, or the range's length up to
 * now. The one place a request's period is made; every usage, analytics and Log Analytics query takes it
 * from here (or from bucketedPeriod, for charts).
 */
export function period(options: UsageOptions = {}): {
  range: UsageRange | 'custom';
  from: number;
  to: number;
} {
  const chosen = chosenPeriod(options);
  if (!('range' in chosen)) return { range: 'custom', ...chosen };
  return { range: chosen.range, from: chosen.now - chosen.lengthMs, to: chosen.now };
}

export const describePeriod = (p: { range: UsageRange | 'custom'; from: number; to: number }): Period => ({
  range: p.range,
  from: iso(p.from),
  to: iso(p.to),
});

/**
 * A chart's period: for a range, buckets aligned to multiples of their width since the epoch (UTC), so
 * charts of the same range line up from one call to the next, the period ending at the end of the
 * current bucket; for a custom period, buckets from its start (a day's buckets start at the viewer's
 * midnight), their width from its length, the last one cut at its end.
 */
export function bucketedPeriod(options: UsageOptions = {}): {
  range: UsageRange | 'custom';
  lengthMs: number;
  bucketMs: number;
  from: number;
  to: number;
} {
  const chosen = chosenPeriod(options);
  if (!('range' in chosen)) {
    const lengthMs = chosen.to - chosen.from;
    return { range: 'custom', lengthMs, bucketMs: customBucketMs(lengthMs), ...chosen };
  }
  const { range, lengthMs, bucketMs, now } = chosen;
  const to = Math.floor(now / bucketMs) * bucketMs + bucketMs;
  return { range, lengthMs, bucketMs, from: to - lengthMs, to };
}
