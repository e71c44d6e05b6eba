import type { DuckDBValue } from '@duckdb/node-api';
import type { UserFlows } from '@gatehouse/api-contract';
import { describePeriod, num, period, segmentSql, ts, type UsageOptions, type UsageReader } from './sql.js';

/** Most paths each way the answer lists. */
export const FLOW_PATHS_LIMIT = 10;

/**
 * User flows around one page: within each session of the period that viewed it, the page views in time
 * order, and for each view of the page the one or two before and after it. Only the sessions that viewed
 * the page are windowed (typed columns only). $1, $2 the period, $3 the page's name.
 */
const flowsSql = (seg: string) => `WITH v AS (
  SELECT name,
    lag(name, 2) OVER w AS p2, lag(name, 1) OVER w AS p1, lead(name, 1) OVER w AS n1, lead(name, 2) OVER w AS n2
  FROM items
  WHERE type = 'pageview' AND time >= $1 AND time < $2 AND name IS NOT NULL${seg}
    AND session_id IN (
      SELECT session_id FROM items
      WHERE type = 'pageview' AND time >= $1 AND time < $2 AND name = $3 AND session_id IS NOT NULL${seg}
    )
  WINDOW w AS (PARTITION BY session_id ORDER BY time, rowid)
),
here AS (SELECT * FROM v WHERE name = $3)
SELECT 'views' AS way, NULL AS a, NULL AS b, count(*)::DOUBLE AS n FROM here
UNION ALL SELECT 'entries', NULL, NULL, count(*) FILTER (WHERE p1 IS NULL)::DOUBLE FROM here
UNION ALL SELECT 'exits', NULL, NULL, count(*) FILTER (WHERE n1 IS NULL)::DOUBLE FROM here
UNION ALL (SELECT 'next1', n1, NULL, count(*)::DOUBLE AS n FROM here WHERE n1 IS NOT NULL GROUP BY n1 ORDER BY n DESC, n1 LIMIT ${FLOW_PATHS_LIMIT})
UNION ALL (SELECT 'next2', n1, n2, count(*)::DOUBLE AS n FROM here WHERE n2 IS NOT NULL GROUP BY n1, n2 ORDER BY n DESC, n1, n2 LIMIT ${FLOW_PATHS_LIMIT})
UNION ALL (SELECT 'previous1', p1, NULL, count(*)::DOUBLE AS n FROM here WHERE p1 IS NOT NULL GROUP BY p1 ORDER BY n DESC, p1 LIMIT ${FLOW_PATHS_LIMIT})
UNION ALL (SELECT 'previous2', p2, p1, count(*)::DOUBLE AS n FROM here WHERE p2 IS NOT NULL GROUP BY p2, p1 ORDER BY n DESC, p2, p1 LIMIT ${FLOW_PATHS_LIMIT})`;

type Way = 'next1' | 'next2' | 'previous1' | 'previous2';
const WAYS: Way[] = ['next1', 'next2', 'previous1', 'previous2'];

/** From `page`, the most common next and previous pages, one and two steps away, over the period. */
export async function queryUserFlows(
  reader: Pick<UsageReader, 'read'>,
  page: string,
  options: UsageOptions = {},
): Promise<UserFlows> {
  if (!page) throw new RangeError('User flows start from a page');
  const p = period(options);
  const values: DuckDBValue[] = [ts(p.from), ts(p.to), page];
  const rows = await reader.read(flowsSql(segmentSql(options, values)), values);
  const total = (way: string) => num(rows.find((r) => r.way === way)?.n);
  const paths = (way: Way) =>
    rows
      .filter((r) => r.way === way)
      .map((r) => ({ pages: [r.a, r.b].filter((x): x is string => typeof x === 'string'), count: num(r.n) }))
      .sort((x, y) => y.count - x.count || x.pages.join('\n').localeCompare(y.pages.join('\n')));
  return {
    ...describePeriod(p),
    page,
    views: total('views'),
    entries: total('entries'),
    exits: total('exits'),
    ...(Object.fromEntries(WAYS.map((way) => [way, paths(way)])) as Record<Way, UserFlows['next1']>),
  };
}
