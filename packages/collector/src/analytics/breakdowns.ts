import type { DuckDBValue } from '@duckdb/node-api';
import { DIRECT, type BreakdownRow, type Breakdowns } from '@gatehouse/api-contract';
import {
  DAY,
  describePeriod,
  LIST_LIMIT,
  num,
  period,
  segmentSql,
  strOrNull,
  ts,
  type Period,
  type UsageOptions,
  type UsageReader,
} from './sql.js';
import { rollupRows } from './usage-sql.js';

/** A session lasts at most a day (the SDKs renew it after 24 hours): its first page view is no earlier. */
const SESSION_MAX_MS = DAY;

// Browsers, systems and devices from the hourly rollup (keyed by each), and the parts of an hour at the
// ends from the items, as the overview; one scan for the three and the total (visitors of the period).
const clientSql = (rows: string) => `WITH r AS (${rows})
SELECT 'total' AS dim, NULL AS value, count(DISTINCT user_id)::DOUBLE AS visitors FROM r
UNION ALL SELECT 'browser', browser, count(DISTINCT user_id)::DOUBLE FROM r WHERE browser IS NOT NULL GROUP BY 2
UNION ALL SELECT 'os', os, count(DISTINCT user_id)::DOUBLE FROM r WHERE os IS NOT NULL GROUP BY 2
UNION ALL SELECT 'device', device_type, count(DISTINCT user_id)::DOUBLE FROM r WHERE device_type IS NOT NULL GROUP BY 2`;

// The referrer is a session's (segmentSql): the hosts of its page views from another site, '' for none.
// Sessions of the period (from the rollup), joined with the sources of the sessions of the period and
// the day before it (a session's first page view is within that).
const referrersSql = (rows: string, from: string, to: string) => `WITH s AS (
  SELECT DISTINCT session_id, user_id FROM (${rows}) WHERE session_id IS NOT NULL
), sources AS (
  SELECT DISTINCT session_id, referrer AS source FROM session_sources WHERE time >= ${from} AND time < ${to}
)
SELECT coalesce(source, '') AS value, count(DISTINCT user_id)::DOUBLE AS visitors
FROM s LEFT JOIN sources USING (session_id) WHERE user_id IS NOT NULL
GROUP BY 1 ORDER BY visitors DESC, value LIMIT ${LIST_LIMIT}`;

/**
 * Visitors (distinct users) of the period by referring site, browser family, operating system and
 * device class, each with its share of the period's visitors. Items without a value (a server-side SDK's;
 * the system of items stored before the `os` column) are in no entry, so a list's shares may add up to less
 * than 1; a visitor with two browsers (or a session that came from two sites) is in both entries, so
 * they may add up to more.
 */
export async function queryBreakdowns(
  reader: Pick<UsageReader, 'read'>,
  options: UsageOptions = {},
): Promise<Breakdowns> {
  const p = period(options);
  const clientValues: DuckDBValue[] = [];
  const clientSeg = segmentSql(options, clientValues);
  const clientBind = (value: DuckDBValue) => `$${clientValues.push(value)}`;
  const referrerValues: DuckDBValue[] = [];
  const referrerSeg = segmentSql(options, referrerValues);
  const referrerBind = (value: DuckDBValue) => `$${referrerValues.push(value)}`;
  const [client, referrers] = await Promise.all([
    reader.read(
      clientSql(rollupRows(p.from, p.to, clientSeg, clientBind, ['browser', 'device_type', 'os'])),
      clientValues,
    ),
    reader.read(
      referrersSql(
        rollupRows(p.from, p.to, referrerSeg, referrerBind),
        referrerBind(ts(p.from - SESSION_MAX_MS)),
        referrerBind(ts(p.to)),
      ),
      referrerValues,
    ),
  ]);
  return shapeBreakdowns(describePeriod(p), client, referrers);
}

/**
 * The contract's breakdowns from two answers (the local store's, or Log Analytics' named alike): rows
 * `{ dim: total | browser | os | device, value, visitors }`, and the referrers' `{ value, visitors }`,
 * value '' for none.
 */
export function shapeBreakdowns(
  p: Period,
  client: readonly Record<string, unknown>[],
  referrers: readonly Record<string, unknown>[],
): Breakdowns {
  const total = num(client.find((r) => r.dim === 'total')?.visitors);
  const entry = (value: string, visitors: number): BreakdownRow => ({
    value,
    visitors,
    share: total === 0 ? 0 : Math.min(1, visitors / total),
  });
  const list = (dim: string) =>
    client
      .filter((r) => r.dim === dim)
      .map((r) => entry(strOrNull(r.value) ?? '', num(r.visitors)))
      .sort((a, b) => b.visitors - a.visitors || a.value.localeCompare(b.value))
      .slice(0, LIST_LIMIT);
  return {
    ...p,
    total,
    referrers: referrers.map((r) => entry(strOrNull(r.value) || DIRECT, num(r.visitors))),
    browsers: list('browser'),
    operatingSystems: list('os'),
    devices: list('device'),
  };
}
