import type { DuckDBValue } from '@duckdb/node-api';
import type { UserFlows } from '@gatehouse/api-contract';
import { FLOW_DAILY, flowContextsSql, flowRowsSql } from '../store/daily-sketch.js';
import {
  describePeriod,
  num,
  period,
  segmentSql,
  sketchDays,
  sketchValues,
  type UsageOptions,
  type UsageReader,
} from './sql.js';

/** Most paths each way the answer lists. */
export const FLOW_PATHS_LIMIT = 10;

/**
 * User flows around one page (ADR 0075): within each session's named page views of one UTC day, in time
 * order, for each view of the page the one or two before and after it. Over the whole days of a long
 * period the daily sketches count them (flow_daily); the parts of a day at either end, and any period
 * with a segment or under two whole days, are windowed from the items: only the sessions that viewed
 * the page. sketchValues' parameters ($1, $2 the whole days, none when firstDay = lastDay = the end;
 * $3, $4 the period), then $5 the page's name.
 */
const flowsSql = (seg: string) => {
  const rows = (from: string, to: string) =>
    flowRowsSql('items', `AND time >= ${from} AND time < ${to}${seg}`);
  return `WITH pv AS MATERIALIZED (${rows('$3', '$1')} UNION ALL ${rows('$2', '$4')}),
here AS (SELECT * FROM (${flowContextsSql('(SELECT * FROM pv WHERE session_id IN (SELECT session_id FROM pv WHERE name = $5))')}) WHERE name = $5),
f AS MATERIALIZED (
  SELECT forward, a, b, sum(n) AS n FROM (
    SELECT forward, a, b, n FROM ${FLOW_DAILY} WHERE name = $5 AND day >= $1 AND day < $2
    UNION ALL SELECT true, n1, n2, 1 FROM here
    UNION ALL SELECT false, p1, p2, 1 FROM here
  ) GROUP BY ALL HAVING sum(n) <> 0
)
SELECT 'views' AS way, NULL AS a, NULL AS b, sum(n)::DOUBLE AS n FROM f WHERE forward
UNION ALL SELECT 'entries', NULL, NULL, sum(n) FILTER (WHERE a IS NULL)::DOUBLE FROM f WHERE NOT forward
UNION ALL SELECT 'exits', NULL, NULL, sum(n) FILTER (WHERE a IS NULL)::DOUBLE FROM f WHERE forward
UNION ALL (SELECT 'next1', a, NULL, sum(n)::DOUBLE AS n FROM f WHERE forward AND a IS NOT NULL GROUP BY a ORDER BY n DESC, a LIMIT ${FLOW_PATHS_LIMIT})
UNION ALL (SELECT 'next2', a, b, sum(n)::DOUBLE AS n FROM f WHERE forward AND b IS NOT NULL GROUP BY a, b ORDER BY n DESC, a, b LIMIT ${FLOW_PATHS_LIMIT})
UNION ALL (SELECT 'previous1', a, NULL, sum(n)::DOUBLE AS n FROM f WHERE NOT forward AND a IS NOT NULL GROUP BY a ORDER BY n DESC, a LIMIT ${FLOW_PATHS_LIMIT})
UNION ALL (SELECT 'previous2', b, a, sum(n)::DOUBLE AS n FROM f WHERE NOT forward AND b IS NOT NULL GROUP BY b, a ORDER BY n DESC, b, a LIMIT ${FLOW_PATHS_LIMIT})`;
};

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
  // With no whole days from the sketches, the items' first part is the whole period, the second empty.
  const values: DuckDBValue[] = [...sketchValues(p, { firstDay: p.to, lastDay: p.to }), page];
  const seg = segmentSql(options, values);
  const days = sketchDays(p, seg);
  if (days) values.splice(0, 4, ...sketchValues(p, days));
  const rows = await reader.read(flowsSql(seg), values);
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
