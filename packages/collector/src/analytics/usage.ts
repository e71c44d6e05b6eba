import { listValue, type DuckDBValue } from '@duckdb/node-api';
import {
  SESSION_ID,
  SESSIONS_LIMIT,
  USER_ID,
  type Overview as ApiOverview,
  type Dependencies,
  type Exceptions,
  type Pages,
  type SessionRow as ApiSessionRow,
  type SessionTimeline as ApiSessionTimeline,
  type Tile,
  type TileKey,
  type Timeseries,
  type TimeseriesBucket,
} from '@gatehouse/api-contract';
import type { Envelope } from '../store/store.js';
import { FAILED_CALL } from '../store/rollup.js';
import { nameKeySql } from '../store/row-layout.js';
import {
  binQuantilesSql,
  binSql,
  binValueSql,
  CALL_DAILY,
  CALL_DAILY_DURATIONS,
  CALL_DURATION_METHOD,
  callKeySql,
  distinctEstimate,
  durationEstimate,
  distinctEstimateSql,
  DURATION_METHOD,
  PAGE_DAILY,
  PAGE_DAILY_DURATIONS,
  PAGE_DAILY_USERS,
  pageKeySql,
  userHashSql,
  USERS_METHOD,
} from '../store/daily-sketch.js';
import {
  bucketedPeriod,
  change,
  describePeriod,
  HOUR,
  iso,
  LIST_LIMIT,
  num,
  numOrNull,
  period,
  segmentSql,
  sketchDays,
  sketchBoundValues,
  sketchEdgeSql,
  sketchValues,
  strOrNull,
  timeMs,
  ts,
  type Period,
  type UsageOptions,
  type UsageReader,
} from './sql.js';
import { inSampleSql, sampledCountEstimate, sampleShift, type Sampling } from './sample.js';

// The API's own (one description of the usage API for the server, the SPA and these queries).
export { SESSION_ID, SESSIONS_LIMIT, USER_ID, usageRanges } from '@gatehouse/api-contract';
export type {
  DependencyRow,
  ExceptionGroup,
  PageRow,
  Tile,
  TimelineItem,
  Timeseries,
  TimeseriesBucket,
  UsageRange,
} from '@gatehouse/api-contract';

/**
 * The usage dashboard's queries over the collector's `items` table (docs/decisions/0004-collector-store.md):
 * parameterised SQL on the collector's own DuckDB instance. Every range query reads `time` ranges and the
 * typed columns only (DuckDB's zone maps on `time` skip what is outside; loads write rows in time order),
 * never the envelope; the overview and the charts of whole hours read the hourly rollup (ADR 0071).
 */

/** Most items a session timeline answers. */
export const TIMELINE_LIMIT = 1000;
/** Beyond this many distinct signed-in ids in one period, the rest are not checked (and not counted). */
export const SIGNED_IN_IDS_LIMIT = 100_000;

const quantiles = (r: Record<string, unknown>): unknown[] => (Array.isArray(r.quantiles) ? r.quantiles : []);

/**
 * The answers' shapes are the API's (@gatehouse/api-contract), less what only the server knows: whether
 * a signed-in user id is one it issued (`verified`, `verifiedUsers`).
 */
export type Overview = Omit<ApiOverview, 'tiles' | 'storeFull'> & {
  tiles: Record<Exclude<TileKey, 'verifiedUsers'>, Tile>;
  /** Set by the store's own queries (store/sink.ts); the server answers null without it. */
  storeFull?: ApiOverview['storeFull'];
};
export type SessionRow = Omit<ApiSessionRow, 'verified'>;
export type SessionTimeline = Omit<ApiSessionTimeline, 'verified'>;

export interface UsageQueries {
  overview(options?: UsageOptions): Promise<Overview>;
  timeseries(options?: UsageOptions): Promise<Timeseries>;
  pages(options?: UsageOptions): Promise<Pages>;
  exceptions(options?: UsageOptions): Promise<Exceptions>;
  dependencies(options?: UsageOptions): Promise<Dependencies>;
  sessions(options?: UsageOptions & { limit?: number }): Promise<Period & { sessions: SessionRow[] }>;
  /** null when no item of the session is stored. */
  sessionTimeline(sessionId: string): Promise<SessionTimeline | null>;
  /** Every stored envelope of one user (pseudonymous or SDK user id), for an access request. */
  userItems(userId: string): AsyncIterable<Envelope>;
  /** Deletes them all (journal included), for an erasure request; resolves to how many. */
  eraseUser(userId: string): Promise<number>;
  /** The distinct authenticated user ids of the period (at most SIGNED_IN_IDS_LIMIT), to be verified. */
  signedInUserIds(options?: UsageOptions): Promise<string[]>;
}

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
const periodTotals = (rows: string) => `SELECT
  count(DISTINCT user_id)::DOUBLE AS users,
  count(DISTINCT auth_user_id)::DOUBLE AS signed_in,
  count(DISTINCT session_id)::DOUBLE AS sessions,
  sum(page_views)::DOUBLE AS page_views,
  sum(exceptions)::DOUBLE AS exceptions,
  sum(failed_calls)::DOUBLE AS failed_calls
FROM (${rows})`;

/** Each bucket's figures from `rows`, a SELECT of bucket, user_id, session_id, page_views, exceptions, failed_calls. */
const bucketTotals = (rows: string) => `SELECT bucket::DOUBLE AS bucket,
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
const timeseriesRollupSql = (seg: string) =>
  bucketTotals(`
  SELECT (epoch_ms(hour) - $3::BIGINT) // $4::BIGINT AS bucket, user_id, session_id, page_views, exceptions,
    failed_calls
  FROM usage_hourly WHERE hour >= $1 AND hour < $2${seg}`);
// From the items (the last hour's 5-minute buckets, or a custom period off the hour): (bucket, user,
// session) groups first, many items each, which count(DISTINCT) straight over the rows is slower than
// (docs/performance/collector-history.md, "Usage queries").
const timeseriesSql = (seg: string) =>
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
const pageFigures = (shift: number) => `count(*)::DOUBLE AS views,
    count(DISTINCT user_key)${shift === 0 ? '' : ` FILTER (WHERE ${inSampleSql(shift)})`}::DOUBLE AS users,
    avg(duration_ms) AS avg_ms, quantile_cont(duration_ms, 0.95) AS p95_ms`;
const PAGE_VIEWS = `FROM items WHERE type = 'pageview' AND time >= $1 AND time < $2`;
/** Every stored page's name ('' for none) and key: the daily sketches list them. */
const pageNamesSql = `SELECT DISTINCT name, ${nameKeySql(`'pageview'`, 'name')} AS name_key FROM ${PAGE_DAILY}`;

// The page views grouped by their integer keys, the page's (name_key) and the users' (user_key, ADR
// 0077), never reading the name's text, which took a fourth of a segment's page list at 50 M items: each
// page's name is looked up once from the daily sketches (docs/performance/usage-history.md, section 17).
const pagesSql = (seg: string, shift: number) => `SELECT n.name, g.views, g.users, g.avg_ms, g.p95_ms FROM (
  SELECT name_key, ${pageFigures(shift)} ${PAGE_VIEWS}${seg} GROUP BY name_key
) g JOIN (${pageNamesSql}) n USING (name_key)
ORDER BY views DESC, name LIMIT ${LIST_LIMIT}`;

// The same grouped by the name's text, when the keys cannot tell the pages apart (pagesPlanSql).
const pagesByNameSql = (
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
const pagesPlanSql = `SELECT (SELECT count(*) FILTER (WHERE name = '') + count(*) - count(DISTINCT name_key)
    FROM (${pageNamesSql})) AS ambiguous,
  (SELECT coalesce(sum(views), 0)::DOUBLE FROM ${PAGE_DAILY} WHERE day >= $1 AND day < $2) AS views`;

/** A page list reads every user's page views up to three million in the period, a sample past that (ADR 0079). */
export const PAGES_SAMPLING: Sampling = { rowBudget: 3_000_000, minUsers: 2_000 };

/** What the Pages panel estimates when it reads the sketches, and how closely. */
export const PAGE_ESTIMATES: Pages['estimates'] = [
  distinctEstimate('users', USERS_METHOD),
  durationEstimate('p95DurationMs', DURATION_METHOD),
];

/**
 * The Pages panel from the daily sketches (store/daily-sketch.ts) for the whole days [$1, $2), and from
 * the page views of the parts of a day at either end, [$3, $1) and [$2, $4): the views and the average
 * exact, the users and the 95th percentile estimated from the sketches merged with those of the ends.
 */
const pagesSketchSql = `WITH ${sketchEdgeSql('pageview', `coalesce(name, '') AS name, duration_ms, user_id`)},
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

/** What the Calls panel estimates when it reads the sketches, and how closely. */
export const CALL_ESTIMATES: Dependencies['estimates'] = [
  durationEstimate('p50DurationMs', CALL_DURATION_METHOD),
  durationEstimate('p95DurationMs', CALL_DURATION_METHOD),
];

/**
 * The Calls panel from the daily sketches for the whole days [$1, $2), and from the calls of the parts
 * of a day at either end, [$3, $1) and [$2, $4): the counts and failures exact, the median and the 95th
 * percentile estimated from the duration bins (as pagesSketchSql's).
 */
const dependenciesSketchSql = `WITH ${sketchEdgeSql('dependency', 'target, name, success, duration_ms')},
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
const exceptionsSql = (seg: string) => `SELECT name AS type, message, top_frame,
  arg_max(problem_id, time) AS problem_id,
  count(*)::DOUBLE AS n,
  count(DISTINCT user_id)::DOUBLE AS users,
  epoch_ms(min(time))::DOUBLE AS first_seen,
  epoch_ms(max(time))::DOUBLE AS last_seen,
  arg_max_null(stack, time) AS stack
FROM items WHERE type = 'exception' AND time >= $1 AND time < $2${seg}
GROUP BY name, message, top_frame
ORDER BY n DESC, last_seen DESC LIMIT ${LIST_LIMIT}`;

const dependenciesSql = (seg: string) => `SELECT target, name,
  count(*)::DOUBLE AS n,
  count(*) FILTER (WHERE success = false)::DOUBLE AS failures,
  quantile_cont(duration_ms, [0.5, 0.95]) AS quantiles -- one sort for both: ~15 % faster than two
FROM items WHERE type = 'dependency' AND time >= $1 AND time < $2${seg}
GROUP BY target, name ORDER BY n DESC, target, name LIMIT ${LIST_LIMIT}`;

const signedInIdsSql = (seg: string) => `SELECT DISTINCT auth_user_id FROM items
WHERE auth_user_id IS NOT NULL AND time >= $1 AND time < $2${seg} LIMIT ${SIGNED_IN_IDS_LIMIT}`;

/**
 * The first pass of the sessions list: of the sessions in `rows` (rollupRows with times), those whose
 * first `seen_at` is at or after the limit-th latest one's (all of them when there are fewer), with it.
 */
const latestSessionsSql = (rows: string, limit: string) => `WITH firsts AS (
  SELECT session_id, min(seen_at) AS first_at FROM (${rows}) WHERE session_id IS NOT NULL GROUP BY session_id
)
SELECT session_id, epoch_ms(first_at)::DOUBLE AS first_ms FROM firsts
WHERE first_at >= (SELECT min(first_at) FROM (SELECT first_at FROM firsts ORDER BY first_at DESC LIMIT ${limit}::INTEGER))`;

const sessionsSql = (seg: string) => `SELECT session_id,
  max(auth_user_id) AS auth_user,
  max(user_id) AS anon_user,
  epoch_ms(min(time))::DOUBLE AS start,
  epoch_ms(max(time))::DOUBLE AS end,
  count(*) FILTER (WHERE type = 'pageview')::DOUBLE AS pages,
  count(*) FILTER (WHERE type = 'exception' OR (${FAILED_CALL}))::DOUBLE AS errors
FROM items WHERE session_id IN (SELECT unnest($4::VARCHAR[])) AND time >= $1 AND time < $2${seg}
GROUP BY session_id ORDER BY start DESC, session_id LIMIT $3::INTEGER`;

const timelineSql = `SELECT epoch_ms(time)::DOUBLE AS t, type, name, url, operation_id, duration_ms, success,
  result_code, target, message, auth_user_id, user_id
FROM items WHERE session_id = $1 ORDER BY time, rowid LIMIT ${TIMELINE_LIMIT + 1}`;

/**
 * The Pages panel from the page views of the period [$1, $2) (`values`, then the segment's): exact, or
 * past `sampling.rowBudget` page views its users over a sample of users (sample.ts), multiplied back.
 * A page with fewer than `sampling.minUsers` users in the sample has them counted again over every page
 * view, so that each estimate rests on that many.
 */
async function pagesFromItems(
  reader: Pick<UsageReader, 'read'>,
  p: { from: number; to: number },
  values: DuckDBValue[],
  seg: string,
  sampling: Sampling,
): Promise<{ rows: Record<string, unknown>[]; estimates: Pages['estimates'] }> {
  const [plan] = await reader.read(pagesPlanSql, sketchBoundValues(p));
  const sql = num(plan?.ambiguous) > 0 ? pagesByNameSql : pagesSql;
  const shift = sampleShift(num(plan?.views), sampling);
  const rows = await reader.read(sql(seg, shift), values);
  if (shift === 0) return { rows, estimates: [] };
  const few = rows.filter((r) => num(r.users) < sampling.minUsers).map((r) => String(r.name));
  const exact = new Map<string, unknown>();
  if (few.length > 0) {
    const only = [...values];
    const names = few.map((name) => `$${only.push(name)}::VARCHAR`).join(', ');
    for (const r of await reader.read(sql(`${seg} AND coalesce(name, '') IN (${names})`, 0), only))
      exact.set(String(r.name), r.users);
  }
  const sampled = rows.filter((r) => !exact.has(String(r.name))).map((r) => num(r.users));
  return {
    rows: rows.map((r) => ({ ...r, users: exact.get(String(r.name)) ?? num(r.users) * 2 ** shift })),
    estimates: sampled.length === 0 ? [] : [sampledCountEstimate('users', shift, Math.min(...sampled))],
  };
}

/** The dashboard's queries on `reader` (the collector's store). */
export function createUsageQueries(
  reader: UsageReader,
  pagesSampling: Sampling = PAGES_SAMPLING,
): UsageQueries {
  return {
    async overview(options) {
      const p = period(options);
      const length = p.to - p.from;
      // The segment's values first (bound once, named by both periods' scans), then the periods'.
      const values: DuckDBValue[] = [];
      const seg = segmentSql(options, values);
      const bind = (value: DuckDBValue) => `$${values.push(value)}`;
      const sql = `SELECT true AS current, * FROM (${periodTotals(rollupRows(p.from, p.to, seg, bind))})
UNION ALL SELECT false AS current, * FROM (${periodTotals(rollupRows(p.from - length, p.from, seg, bind))})`;
      return shapeOverview(p, await reader.read(sql, values));
    },

    async timeseries(options) {
      const { range, lengthMs, bucketMs, from, to } = bucketedPeriod(options);
      const values: DuckDBValue[] = [ts(from), ts(to), from, bucketMs];
      // Whole-hour buckets aligned on hours (those since the epoch of 1, 6 and 24 hours are).
      // (A custom period's are when it starts and ends on the hour.)
      const query =
        bucketMs % HOUR === 0 && from % HOUR === 0 && to % HOUR === 0 ? timeseriesRollupSql : timeseriesSql;
      return shapeTimeseries(
        { range, lengthMs, bucketMs, from, to },
        await reader.read(query(segmentSql(options, values)), values),
      );
    },

    async pages(options) {
      const p = period(options);
      const values: DuckDBValue[] = [ts(p.from), ts(p.to)];
      const seg = segmentSql(options, values);
      // Two whole days or more and no segment: the whole days from the daily sketches, the parts of a
      // day at either end from the items; users and the 95th percentile are then estimates (ADR 0074).
      const days = sketchDays(p, seg);
      const { rows, estimates } = days
        ? { rows: await reader.read(pagesSketchSql, sketchValues(p, days)), estimates: PAGE_ESTIMATES }
        : await pagesFromItems(reader, p, values, seg, pagesSampling);
      return shapePages(p, rows, estimates);
    },

    async exceptions(options) {
      const p = period(options);
      const values: DuckDBValue[] = [ts(p.from), ts(p.to)];
      return shapeExceptions(p, await reader.read(exceptionsSql(segmentSql(options, values)), values));
    },

    async dependencies(options) {
      const p = period(options);
      const values: DuckDBValue[] = [ts(p.from), ts(p.to)];
      const seg = segmentSql(options, values);
      // As the Pages panel: over two whole days or more with no segment, from the daily sketches.
      const days = sketchDays(p, seg);
      const rows = days
        ? await reader.read(dependenciesSketchSql, sketchValues(p, days))
        : await reader.read(dependenciesSql(seg), values);
      // The store's two quantiles come in one list (one sort for both).
      const named = rows.map((r) => ({ ...r, p50_ms: quantiles(r)[0], p95_ms: quantiles(r)[1] }));
      return shapeDependencies(p, named, days ? CALL_ESTIMATES : []);
    },

    async sessions(options) {
      const p = period(options);
      const limit = sessionsLimit(options);
      // First pass, over the rollup: each session's first hour in the period (its first item's time in
      // the parts of an hour at either end), and the sessions whose first is at or after the limit-th
      // latest of them. They hold the latest `limit` sessions (any other started before each of them),
      // and their items in the period are all at or after the earliest first: the second pass reads
      // the items of those sessions only, from that time on.
      const firstValues: DuckDBValue[] = [];
      const firstSeg = segmentSql(options, firstValues);
      const firstBind = (value: DuckDBValue) => `$${firstValues.push(value)}`;
      const candidates = await reader.read(
        latestSessionsSql(rollupRows(p.from, p.to, firstSeg, firstBind, [], true), firstBind(limit)),
        firstValues,
      );
      if (candidates.length === 0) return { ...describePeriod(p), sessions: [] };
      const since = Math.min(...candidates.map((r) => num(r.first_ms)));
      const ids = listValue(candidates.map((r) => String(r.session_id)));
      const values: DuckDBValue[] = [ts(Math.max(p.from, since)), ts(p.to), limit, ids];
      const rows = await reader.read(sessionsSql(segmentSql(options, values)), values);
      return shapeSessions(p, rows);
    },

    userItems(userId) {
      if (!USER_ID.test(userId)) throw new RangeError('Invalid user id');
      return reader.export({ user: userId });
    },

    eraseUser(userId) {
      if (!USER_ID.test(userId)) throw new RangeError('Invalid user id');
      return reader.erase(userId);
    },

    async signedInUserIds(options) {
      const p = period(options);
      const values: DuckDBValue[] = [ts(p.from), ts(p.to)];
      const rows = await reader.read(signedInIdsSql(segmentSql(options, values)), values);
      return rows.map((r) => String(r.auth_user_id));
    },

    async sessionTimeline(sessionId) {
      if (!SESSION_ID.test(sessionId)) throw new RangeError('Invalid session id');
      const rows = await reader.read(timelineSql, [sessionId]);
      if (rows.length === 0) return null;
      return shapeTimeline(sessionId, rows);
    },
  };
}

/*
 * The answers, each shaped once from rows whose columns both back-ends name alike (the store's SQL and
 * the workspace's KQL, kql.ts): a figure cannot mean one thing over DuckDB and another over Log Analytics.
 */
type Row = Record<string, unknown>;
type PeriodMs = ReturnType<typeof period>;

/** The overview's tiles from the totals of the period (`current`) and of the one before it. */
export function shapeOverview(p: PeriodMs, rows: readonly Row[]): Overview {
  const current = rows.find((r) => r.current === true) ?? {};
  const before = rows.find((r) => r.current === false) ?? {};
  const tile = (key: string): Tile => {
    const value = num(current[key]);
    const previous = num(before[key]);
    return { value, previous, change: change(value, previous) };
  };
  return {
    ...describePeriod(p),
    previousFrom: iso(p.from - (p.to - p.from)),
    tiles: {
      users: tile('users'),
      signedInUsers: tile('signed_in'),
      sessions: tile('sessions'),
      pageViews: tile('page_views'),
      exceptions: tile('exceptions'),
      failedCalls: tile('failed_calls'),
    },
  };
}

/** Every bucket of the chart, those without rows at zero; `bucket` is the bucket's index. */
export function shapeTimeseries(b: ReturnType<typeof bucketedPeriod>, rows: readonly Row[]): Timeseries {
  const byBucket = new Map(rows.map((r) => [num(r.bucket), r]));
  const buckets: TimeseriesBucket[] = [];
  for (let i = 0; i < b.lengthMs / b.bucketMs; i++) {
    const r = byBucket.get(i) ?? {};
    buckets.push({
      start: iso(b.from + i * b.bucketMs),
      users: num(r.users),
      sessions: num(r.sessions),
      pageViews: num(r.page_views),
      exceptions: num(r.exceptions),
      failedCalls: num(r.failed_calls),
    });
  }
  return { range: b.range, from: iso(b.from), to: iso(b.to), bucketMs: b.bucketMs, buckets };
}

export function shapePages(p: PeriodMs, rows: readonly Row[], estimates: Pages['estimates']): Pages {
  return {
    ...describePeriod(p),
    pages: rows.map((r) => ({
      name: strOrNull(r.name) ?? '',
      views: num(r.views),
      users: num(r.users),
      avgDurationMs: numOrNull(r.avg_ms),
      p95DurationMs: numOrNull(r.p95_ms),
    })),
    estimates,
  };
}

export function shapeExceptions(p: PeriodMs, rows: readonly Row[]): Exceptions {
  return {
    ...describePeriod(p),
    exceptions: rows.map((r) => ({
      type: strOrNull(r.type),
      message: strOrNull(r.message),
      topFrame: strOrNull(r.top_frame),
      problemId: strOrNull(r.problem_id),
      count: num(r.n),
      usersAffected: num(r.users),
      firstSeen: iso(timeMs(r.first_seen)),
      lastSeen: iso(timeMs(r.last_seen)),
      sampleStack: strOrNull(r.stack),
    })),
  };
}

export function shapeDependencies(
  p: PeriodMs,
  rows: readonly Row[],
  estimates: Dependencies['estimates'],
): Dependencies {
  return {
    ...describePeriod(p),
    dependencies: rows.map((r) => ({
      target: strOrNull(r.target),
      name: strOrNull(r.name),
      count: num(r.n),
      failures: num(r.failures),
      failureRate: num(r.n) === 0 ? 0 : num(r.failures) / num(r.n),
      p50DurationMs: numOrNull(r.p50_ms),
      p95DurationMs: numOrNull(r.p95_ms),
    })),
    estimates,
  };
}

export function shapeSessions(p: PeriodMs, rows: readonly Row[]): Period & { sessions: SessionRow[] } {
  return {
    ...describePeriod(p),
    sessions: rows.map((r) => {
      const auth = strOrNull(r.auth_user);
      return {
        sessionId: String(r.session_id),
        user: auth ?? strOrNull(r.anon_user),
        authenticated: auth !== null,
        start: iso(timeMs(r.start)),
        lengthMs: timeMs(r.end) - timeMs(r.start),
        pages: num(r.pages),
        errors: num(r.errors),
      };
    }),
  };
}

/**
 * The contract's session timeline from its items in time order, as columns named like the store's
 * (a Log Analytics answer is renamed to them first); the user is the first id the items carry.
 */
export function shapeTimeline(sessionId: string, rows: readonly Record<string, unknown>[]): SessionTimeline {
  const listed = rows.slice(0, TIMELINE_LIMIT);
  const auth = listed.map((r) => strOrNull(r.auth_user_id)).find((v) => v !== null) ?? null;
  const anon = listed.map((r) => strOrNull(r.user_id)).find((v) => v !== null) ?? null;
  return {
    sessionId,
    user: auth ?? anon,
    authenticated: auth !== null,
    truncated: rows.length > TIMELINE_LIMIT,
    items: listed.map((r) => ({
      time: iso(timeMs(r.t)),
      type: String(r.type),
      name: strOrNull(r.name),
      url: strOrNull(r.url),
      operationId: strOrNull(r.operation_id),
      durationMs: numOrNull(r.duration_ms),
      success: typeof r.success === 'boolean' ? r.success : null,
      resultCode: strOrNull(r.result_code),
      target: strOrNull(r.target),
      message: strOrNull(r.message),
    })),
  };
}

/** How many sessions a list asks for: the default, or an integer within the contract's bounds. */
export function sessionsLimit(options: { limit?: number } | undefined): number {
  const limit = options?.limit ?? SESSIONS_LIMIT.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > SESSIONS_LIMIT.max) {
    throw new RangeError(`limit must be an integer from 1 to ${SESSIONS_LIMIT.max}`);
  }
  return limit;
}
