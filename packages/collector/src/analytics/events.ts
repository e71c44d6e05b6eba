import type { DuckDBValue } from '@duckdb/node-api';
import type { CustomEvents } from '@gatehouse/api-contract';
import {
  distinctEstimate,
  distinctEstimateSql,
  EVENT_DAILY,
  EVENT_DAILY_SESSIONS,
  EVENT_DAILY_USERS,
  EVENT_DISTINCT_METHOD,
  pageKeySql,
  userHashSql,
} from '../store/daily-sketch.js';
import {
  describePeriod,
  LIST_LIMIT,
  num,
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

// Typed columns only (name, user_id, session_id), so the envelope is never read.
const eventsSql = (seg: string) => `SELECT coalesce(name, '') AS name,
  count(*)::DOUBLE AS n,
  count(DISTINCT user_id)::DOUBLE AS users,
  count(DISTINCT session_id)::DOUBLE AS sessions
FROM items WHERE type = 'event' AND time >= $1 AND time < $2${seg}
GROUP BY 1 ORDER BY n DESC, name LIMIT ${LIST_LIMIT}`;

/** What the Custom events panel estimates when it reads the sketches, and how closely. */
export const EVENT_ESTIMATES: CustomEvents['estimates'] = [
  distinctEstimate('users', EVENT_DISTINCT_METHOD),
  distinctEstimate('sessions', EVENT_DISTINCT_METHOD),
];

/**
 * The panel from the daily sketches for the whole days [$1, $2), and from the events of the parts of a
 * day at either end, [$3, $1) and [$2, $4) (as the Pages panel's, usage.ts): the counts exact, the
 * users and sessions estimated.
 */
const eventsSketchSql = `WITH ${sketchEdgeSql('event', `coalesce(name, '') AS name, user_id, session_id`)},
top AS (
  SELECT name, sum(n) AS n FROM (
    SELECT name, n FROM ${EVENT_DAILY} WHERE day >= $1 AND day < $2
    UNION ALL SELECT name, 1 FROM edge
  ) GROUP BY name ORDER BY n DESC, name LIMIT ${LIST_LIMIT}
),
${(
  [
    ['users', EVENT_DAILY_USERS, 'user_id'],
    ['sessions', EVENT_DAILY_SESSIONS, 'session_id'],
  ] as const
)
  .map(
    ([cte, table, column]) =>
      `${cte} AS (${distinctEstimateSql(
        table,
        'reg',
        `SELECT name, ${userHashSql(column)} AS h FROM edge WHERE ${column} IS NOT NULL`,
        'SELECT name FROM top',
      )})`,
  )
  .join(',\n')}
SELECT top.name, top.n::DOUBLE AS n, round(coalesce(users.estimate, 0))::DOUBLE AS users,
  round(coalesce(sessions.estimate, 0))::DOUBLE AS sessions
FROM top LEFT JOIN users ON users.key = ${pageKeySql('top.name')}
  LEFT JOIN sessions ON sessions.key = ${pageKeySql('top.name')}
ORDER BY n DESC, name`;

/**
 * The custom events (`telemetry.trackEvent`) of the period: count, users and sessions per name; over
 * two whole days or more with no segment from the daily sketches, the users and sessions then estimates.
 */
export async function queryCustomEvents(
  reader: Pick<UsageReader, 'read'>,
  options: UsageOptions = {},
): Promise<CustomEvents> {
  const p = period(options);
  const values: DuckDBValue[] = [ts(p.from), ts(p.to)];
  const seg = segmentSql(options, values);
  const days = sketchDays(p, seg);
  const rows = days
    ? await reader.read(eventsSketchSql, sketchValues(p, days))
    : await reader.read(eventsSql(seg), values);
  return shapeCustomEvents(p, rows, days ? EVENT_ESTIMATES : []);
}

/** The answer from rows named as the store names them (the workspace's KQL names its columns alike). */
export function shapeCustomEvents(
  p: ReturnType<typeof period>,
  rows: readonly Record<string, unknown>[],
  estimates: CustomEvents['estimates'],
): CustomEvents {
  return {
    ...describePeriod(p),
    events: rows.map((r) => ({
      name: strOrNull(r.name) ?? '',
      count: num(r.n),
      users: num(r.users),
      sessions: num(r.sessions),
    })),
    estimates,
  };
}
