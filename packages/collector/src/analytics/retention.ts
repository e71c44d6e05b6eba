import type { DuckDBValue } from '@duckdb/node-api';
import type { Retention, RetentionUnit } from '@gatehouse/api-contract';
import {
  DAY,
  HOUR,
  describePeriod,
  iso,
  num,
  period,
  segmentSql,
  ts,
  type UsageOptions,
  type UsageReader,
} from './sql.js';
import { ownValue } from '../own-property.js';

const UNIT_MS: Record<RetentionUnit, number> = { day: DAY, week: 7 * DAY };

/**
 * Retention: each user's cohort is the day or week (UTC; weeks start on Monday) of the first item ever
 * stored for them, so a user first seen before the range is never counted as new in it; each cohort
 * whose period overlaps the range counts its users seen again in each following period. Which users were
 * seen in which period comes from the hourly rollup (ADR 0071; days and weeks are whole hours) up to the
 * current hour, and from the items after it ($3): every stored item counts, and far fewer rows are read.
 * `unit` is one of two literals, never a caller's text.
 */
const retentionSql = (unit: RetentionUnit, seg: string) => `WITH seen AS (
  SELECT user_id, date_trunc('${unit}', hour) AS p FROM usage_hourly
  WHERE hour < $3 AND user_id IS NOT NULL${seg}
  UNION
  SELECT user_id, date_trunc('${unit}', time) AS p FROM items
  WHERE time >= $3 AND time < $2 AND user_id IS NOT NULL${seg}
),
cohort AS (
  SELECT user_id, min(p) AS c FROM seen GROUP BY user_id HAVING min(p) >= date_trunc('${unit}', $1::TIMESTAMP)
)
SELECT epoch_ms(c)::DOUBLE AS cohort_ms, datediff('${unit}', c, p)::DOUBLE AS k, count(*)::DOUBLE AS users
FROM cohort JOIN seen USING (user_id) GROUP BY ALL`;

/** The retention triangle over the range: every cohort period, oldest first, with its users seen in each following one. */
export async function queryRetention(
  reader: Pick<UsageReader, 'read'>,
  unit: RetentionUnit,
  options: UsageOptions = {},
): Promise<Retention> {
  const size = ownValue(UNIT_MS, unit);
  if (size === undefined) throw new RangeError(`Unknown retention unit ${String(unit)}`);
  const p = period(options);
  const currentHour = Math.floor(p.to / HOUR) * HOUR;
  const values: DuckDBValue[] = [ts(p.from), ts(p.to), ts(currentHour)];
  const rows = await reader.read(retentionSql(unit, segmentSql(options, values)), values);
  const counts = new Map(rows.map((r) => [`${num(r.cohort_ms)}:${num(r.k)}`, num(r.users)]));
  // The periods overlapping [from, to): the first is truncated as the SQL does (DuckDB's weeks start on
  // Monday, and 1970-01-01 was a Thursday, hence the 3 days' shift).
  const shift = unit === 'week' ? 3 * UNIT_MS.day : 0;
  const first = Math.floor((p.from + shift) / size) * size - shift;
  const starts: number[] = [];
  for (let start = first; start < p.to; start += size) starts.push(start);
  return {
    ...describePeriod(p),
    unit,
    cohorts: starts.map((start, i) => ({
      start: iso(start),
      users: counts.get(`${start}:0`) ?? 0,
      returning: starts.slice(i + 1).map((_, k) => counts.get(`${start}:${k + 1}`) ?? 0),
    })),
  };
}
