import { type DuckDBValue } from '@duckdb/node-api';
import { FAILED_CALL } from '../store/rollup.js';
import { nameKeySql } from '../store/row-layout.js';
import {
  binQuantilesSql,
  binSql,
  binValueSql,
  CALL_DAILY,
  CALL_DAILY_DURATIONS,
  callKeySql,
  distinctEstimateSql,
  PAGE_DAILY,
  PAGE_DAILY_DURATIONS,
  PAGE_DAILY_USERS,
  pageKeySql,
  userHashSql,
} from '../store/daily-sketch.js';
import { HOUR, LIST_LIMIT, sketchEdgeSql, ts } from './sql.js';
import { inSampleSql } from './sample.js';
import { SIGNED_IN_IDS_LIMIT, TIMELINE_LIMIT } from './usage-answers.js';

/** The usage queries' SQL (usage.ts runs it; usage-answers.ts shapes what it answers). */

/**
 * The items of [from, to) as rollup rows (store/rollup.ts): the whole hours from the hourly rollup, the
 * parts of an hour at either end from the items themselves (each its own scan, pruned by its range), so
 * the answer is the exact one over the items. `bind` adds a value and names it.
 */
export function rollupRows(
  from: number,
  to: number,
  seg: string,
  bind: (value: DuckDBValue) => string,
  /** More of the rollup's keys to give (the breakdowns'). */
  keys: readonly ('browser' | 'device_type' | 'os')[] = [],
  /**
   * Also give `seen_at`: the item's time, or a rollup row's hour (a lower bound of its items' times, none
   * of them an hour later): the sessions list's first pass.
   */
  withTime = false,
): string {
  let firstHour = Math.ceil(from / HOUR) * HOUR;
  let lastHour = Math.floor(to / HOUR) * HOUR;
  if (firstHour > lastHour) firstHour = lastHour = to; // Within one hour: the items alone.
  const ids = ['user_id', 'auth_user_id', 'session_id', ...keys].join(', ');
  const item = (a: number, b: number) => `SELECT ${ids},${withTime ? ' time AS seen_at,' : ''}
    (type = 'pageview')::BIGINT AS page_views, (type = 'exception')::BIGINT AS exceptions,
    (${FAILED_CALL})::BIGINT AS failed_calls
  FROM items WHERE time >= ${bind(ts(a))} AND time < ${bind(ts(b))}${seg}`;
  const parts = [
    `SELECT ${ids},${withTime ? ' hour AS seen_at,' : ''} page_views, exceptions, failed_calls FROM usage_hourly
  WHERE hour >= ${bind(ts(firstHour))} AND hour < ${bind(ts(lastHour))}${seg}`,
  ];
  if (from < firstHour) parts.push(item(from, firstHour));
  if (lastHour < to) parts.push(item(lastHour, to));
  return parts.join('\nUNION ALL ');
}

// One aggregate per period (UNION ALL), so each scan prunes by its own time range, which FILTER clauses
// over both periods at once cannot (docs/performance/collector-history.md, "Usage queries"). Each period
// reads the hourly rollup, and the parts of an hour at the ends from the items
// (docs/performance/usage-history.md, section 2).
export const periodTotals = (rows: string) => `SELECT
  count(DISTINCT user_id)::DOUBLE AS users,
  count(DISTINCT auth_user_id)::DOUBLE AS signed_in,
  count(DISTINCT session_id)::DOUBLE AS sessions,
  sum(page_views)::DOUBLE AS page_views,
  sum(exceptions)::DOUBLE AS exceptions,
  sum(failed_calls)::DOUBLE AS failed_calls
FROM (${rows})`;

/** Each bucket's figures from `rows`, a SELECT of bucket, user_id, session_id, page_views, exceptions, failed_calls. */
export const bucketTotals = (rows: string) => `SELECT bucket::DOUBLE AS bucket,
  count(DISTINCT user_id)::DOUBLE AS users,
  count(DISTINCT session_id)::DOUBLE AS sessions,
  sum(page_views)::DOUBLE AS page_views,
  sum(exceptions)::DOUBLE AS exceptions,
  sum(failed_calls)::DOUBLE AS failed_calls
FROM (${rows}
) GROUP BY bucket`;
// Buckets of whole hours (every range but the last hour's) from the hourly rollup, counted straight over
// its rows: a rollup row is already nearly one per (hour, user, session), so grouping them by (bucket,
// user, session) first took longer than it saved (docs/performance/usage-history.md, section 17).
export const timeseriesRollupSql = (seg: string) =>
  bucketTotals(`
  SELECT (epoch_ms(hour) - $3::BIGINT) // $4::BIGINT AS bucket, user_id, session_id, page_views, exceptions,
    failed_calls
  FROM usage_hourly WHERE hour >= $1 AND hour < $2${seg}`);
// From the items (the last hour's 5-minute buckets, or a custom period off the hour): (bucket, user,
// session) groups first, many items each, which count(DISTINCT) straight over the rows is slower than
// (docs/performance/collector-history.md, "Usage queries").
export const timeseriesSql = (seg: string) =>
  bucketTotals(
    `
  SELECT (epoch_ms(time) - $3::BIGINT) // $4::BIGINT AS bucket, user_id, session_id,
    count(*) FILTER (WHERE type = 'pageview') AS page_views,
    count(*) FILTER (WHERE type = 'exception') AS exceptions,
    count(*) FILTER (WHERE ${FAILED_CALL}) AS failed_calls
  FROM items WHERE time >= $1 AND time < $2${seg}
  GROUP BY ALL`,
  );

/**
 * Each page's figures over the page views it groups; its users over those of a sample of 1 in 2^`shift`
 * users (sample.ts) when `shift` is not 0, the rest over every page view.
 */
export const pageFigures = (shift: number) => `count(*)::DOUBLE AS views,
    count(DISTINCT user_key)${shift === 0 ? '' : ` FILTER (WHERE ${inSampleSql(shift)})`}::DOUBLE AS users,
    avg(duration_ms) AS avg_ms, quantile_cont(duration_ms, 0.95) AS p95_ms`;
export const PAGE_VIEWS = `FROM items WHERE type = 'pageview' AND time >= $1 AND time < $2`;
/** Every stored page's name ('' for none) and key: the daily sketches list them. */
export const pageNamesSql = `SELECT DISTINCT name, ${nameKeySql(`'pageview'`, 'name')} AS name_key FROM ${PAGE_DAILY}`;

// The page views grouped by their integer keys, the page's (name_key) and the users' (user_key, ADR
// 0077), never reading the name's text, which took a fourth of a segment's page list at 50 M items: each
// page's name is looked up once from the daily sketches (docs/performance/usage-history.md, section 17).
export const pagesSql = (
  seg: string,
  shift: number,
) => `SELECT n.name, g.views, g.users, g.avg_ms, g.p95_ms FROM (
  SELECT name_key, ${pageFigures(shift)} ${PAGE_VIEWS}${seg} GROUP BY name_key
) g JOIN (${pageNamesSql}) n USING (name_key)
ORDER BY views DESC, name LIMIT ${LIST_LIMIT}`;

// The same grouped by the name's text, when the keys cannot tell the pages apart (pagesPlanSql).
export const pagesByNameSql = (
  seg: string,
  shift: number,
) => `SELECT coalesce(name, '') AS name, ${pageFigures(shift)}
${PAGE_VIEWS}${seg} GROUP BY 1 ORDER BY views DESC, name LIMIT ${LIST_LIMIT}`;

/**
 * Whether the page views must be grouped by their names (`ambiguous` > 0): a stored page view has no
 * name (the sketches list it as '', for NULL and '' alike, which the Pages panel shows as one page and
 * the keys as two), or two names share a key (a hash collision: never seen, but possible). And how many
 * page views the days [$1, $2) hold (`views`): a bound on what the page list reads.
 */
export const pagesPlanSql = `SELECT (SELECT count(*) FILTER (WHERE name = '') + count(*) - count(DISTINCT name_key)
    FROM (${pageNamesSql})) AS ambiguous,
  (SELECT coalesce(sum(views), 0)::DOUBLE FROM ${PAGE_DAILY} WHERE day >= $1 AND day < $2) AS views`;

/**
 * The Pages panel from the daily sketches (store/daily-sketch.ts) for the whole days [$1, $2), and from
 * the page views of the parts of a day at either end, [$3, $1) and [$2, $4): the views and the average
 * exact, the users and the 95th percentile estimated from the sketches merged with those of the ends.
 */
export const pagesSketchSql = `WITH ${sketchEdgeSql('pageview', `coalesce(name, '') AS name, duration_ms, user_id`)},
top AS (
  SELECT name, sum(views) AS views, sum(duration_n) AS n, sum(duration_sum) AS s FROM (
    SELECT name, views, duration_n, duration_sum FROM ${PAGE_DAILY} WHERE day >= $1 AND day < $2
    UNION ALL SELECT name, 1, (duration_ms IS NOT NULL)::BIGINT, coalesce(duration_ms, 0) FROM edge
  ) GROUP BY name ORDER BY views DESC, name LIMIT ${LIST_LIMIT}
),
users AS (${distinctEstimateSql(
  PAGE_DAILY_USERS,
  'page_reg',
  `SELECT name, ${userHashSql('user_id')} AS h FROM edge WHERE user_id IS NOT NULL`,
  'SELECT name FROM top',
)}),
bins AS (
  SELECT name, bin, sum(n) AS n FROM (
    SELECT name, bin, n FROM ${PAGE_DAILY_DURATIONS} WHERE day >= $1 AND day < $2
    UNION ALL SELECT name, ${binSql('duration_ms')}, 1 FROM edge WHERE duration_ms IS NOT NULL
  ) WHERE name IN (SELECT name FROM top) GROUP BY name, bin
),
p95 AS (${binQuantilesSql('SELECT name, bin, n FROM bins', 'name', [0.95])})
SELECT top.name, top.views::DOUBLE AS views, round(coalesce(users.estimate, 0))::DOUBLE AS users,
  CASE WHEN top.n > 0 THEN top.s / top.n END AS avg_ms, ${binValueSql('p95.q95')} AS p95_ms
FROM top LEFT JOIN users ON users.key = ${pageKeySql('top.name')} LEFT JOIN p95 USING (name)
ORDER BY views DESC, name`;

/**
 * The Calls panel from the daily sketches for the whole days [$1, $2), and from the calls of the parts
 * of a day at either end, [$3, $1) and [$2, $4): the counts and failures exact, the median and the 95th
 * percentile estimated from the duration bins (as pagesSketchSql's).
 */
export const dependenciesSketchSql = `WITH ${sketchEdgeSql('dependency', 'target, name, success, duration_ms')},
top AS (
  SELECT target, name, sum(n) AS n, sum(failures) AS failures FROM (
    SELECT target, name, n, failures FROM ${CALL_DAILY} WHERE day >= $1 AND day < $2
    UNION ALL SELECT target, name, 1, (success = false)::BIGINT FROM edge
  ) GROUP BY target, name ORDER BY n DESC, target, name LIMIT ${LIST_LIMIT}
),
bins AS (
  SELECT call, bin, sum(n) AS n FROM (
    SELECT call, bin, n FROM ${CALL_DAILY_DURATIONS} WHERE day >= $1 AND day < $2
    UNION ALL SELECT ${callKeySql('target', 'name')}, ${binSql('duration_ms')}, 1 FROM edge
    WHERE duration_ms IS NOT NULL
  ) WHERE call IN (SELECT ${callKeySql('target', 'name')} FROM top) GROUP BY call, bin
),
q AS (${binQuantilesSql('SELECT call, bin, n FROM bins', 'call', [0.5, 0.95])})
SELECT top.target, top.name, top.n::DOUBLE AS n, coalesce(top.failures, 0)::DOUBLE AS failures,
  [${binValueSql('q.q50')}, ${binValueSql('q.q95')}] AS quantiles
FROM top LEFT JOIN q ON q.call = ${callKeySql('top.target', 'top.name')}
ORDER BY n DESC, target, name`;

// The sample stack is the latest row's (`stack`, derived from the envelope at load): reading the envelope
// here, or a row per group after it, cost more than the rest of the query, the more so with the envelope
// compressed (docs/performance/usage-history.md, section 2). arg_max_null: a latest row without a stack
// gives none, as the envelope's did.
export const exceptionsSql = (seg: string) => `SELECT name AS type, message, top_frame,
  arg_max(problem_id, time) AS problem_id,
  count(*)::DOUBLE AS n,
  count(DISTINCT user_id)::DOUBLE AS users,
  epoch_ms(min(time))::DOUBLE AS first_seen,
  epoch_ms(max(time))::DOUBLE AS last_seen,
  arg_max_null(stack, time) AS stack
FROM items WHERE type = 'exception' AND time >= $1 AND time < $2${seg}
GROUP BY name, message, top_frame
ORDER BY n DESC, last_seen DESC LIMIT ${LIST_LIMIT}`;

export const dependenciesSql = (seg: string) => `SELECT target, name,
  count(*)::DOUBLE AS n,
  count(*) FILTER (WHERE success = false)::DOUBLE AS failures,
  quantile_cont(duration_ms, [0.5, 0.95]) AS quantiles -- one sort for both: ~15 % faster than two
FROM items WHERE type = 'dependency' AND time >= $1 AND time < $2${seg}
GROUP BY target, name ORDER BY n DESC, target, name LIMIT ${LIST_LIMIT}`;

export const signedInIdsSql = (seg: string) => `SELECT DISTINCT auth_user_id FROM items
WHERE auth_user_id IS NOT NULL AND time >= $1 AND time < $2${seg} LIMIT ${SIGNED_IN_IDS_LIMIT}`;

/**
 * The first pass of the sessions list: of the sessions in `rows` (rollupRows with times), those whose
 * first `seen_at` is at or after the limit-th latest one's (all of them when there are fewer), with it.
 */
export const latestSessionsSql = (rows: string, limit: string) => `WITH firsts AS (
  SELECT session_id, min(seen_at) AS first_at FROM (${rows}) WHERE session_id IS NOT NULL GROUP BY session_id
)
SELECT session_id, epoch_ms(first_at)::DOUBLE AS first_ms FROM firsts
WHERE first_at >= (SELECT min(first_at) FROM (SELECT first_at FROM firsts ORDER BY first_at DESC LIMIT ${limit}::INTEGER))`;

export const sessionsSql = (seg: string) => `SELECT session_id,
  max(auth_user_id) AS auth_user,
  max(user_id) AS anon_user,
  epoch_ms(min(time))::DOUBLE AS start,
  epoch_ms(max(time))::DOUBLE AS end,
  count(*) FILTER (WHERE type = 'pageview')::DOUBLE AS pages,
  count(*) FILTER (WHERE type = 'exception' OR (${FAILED_CALL}))::DOUBLE AS errors
FROM items WHERE session_id IN (SELECT unnest($4::VARCHAR[])) AND time >= $1 AND time < $2${seg}
GROUP BY session_id ORDER BY start DESC, session_id LIMIT $3::INTEGER`;

export const timelineSql = `SELECT epoch_ms(time)::DOUBLE AS t, type, name, url, operation_id, duration_ms, success,
  result_code, target, message, auth_user_id, user_id
FROM items WHERE session_id = $1 ORDER BY time, rowid LIMIT ${TIMELINE_LIMIT + 1}`;
