import type { DuckDBConnection } from '@duckdb/node-api';
import { vitalBinnedSql, vitalThresholds, vitalThresholdsSql } from './vitals.js';
import { canaryHolds, inTransaction, tableExists } from './rollup.js';

/*
 * The daily sketches (ADR 0074): beside the items, per UTC day, what the Pages and Calls
 * panels show over a long period without reading every page view and call of it.
 *
 * Per page name:
 *
 * - `page_daily`: the views and the durations' count and sum: exact, and summed across days.
 * - `page_daily_users`: a HyperLogLog of the page's users (their anonymous ids): one row per register
 *   that some user set (keyed with the page: pageRegisterSql), with its highest rank. Registers merge
 *   across days by `max`, so the users of any set of days are estimated from them, with a relative
 *   standard error of 1.04/√2,048 = 2.3 %.
 *   The hash is DuckDB's, hashed twice (userHashSql).
 * - `page_daily_durations`: the durations counted in bins 5 % wide, summed across days; the 95th
 *   percentile is the bin holding the value at its rank, given as the bin's middle: within 2.5 % of
 *   that value.
 *
 * Per custom event name:
 * - `event_daily`: the events: exact, and summed across days.
 * - `event_daily_users`, `event_daily_sessions`: HyperLogLogs of the event's users and sessions, as the
 *   pages' users.
 *
 * Per call (target and name):
 * - `call_daily`: the calls and the failed ones: exact, and summed across days.
 * - `call_daily_durations`: the durations in the same bins (keyed with callKeySql), for the median and
 *   the 95th percentile.
 *
 * Per web vital (LCP, INP, CLS, FCP, TTFB) and landing page:
 * - `vital_daily`: the values, the good ones and the poor ones (by vitals.ts's thresholds): exact, and
 *   summed across days.
 * - `vital_daily_bins`: the values in the same bins (CLS in thousandths), for the 75th percentile.
 *
 * Per page name, the user flows around it (ADR 0075), within each session's named page views of one UTC day:
 * - `flow_daily`: the views of the page by the one and two pages after them (`forward`, `a` then `b`;
 *   NULL where the session's day ends: an exit) and by the one and two before them (`a` then `b` going
 *   back; NULL where it begins: an entry); exact, and summed across days. A load changes the neighbours
 *   of the views already stored for the sessions it brings views of (one that arrives late goes between
 *   two), so a load does not add its own rows: it adds the difference it makes to those sessions' days,
 *   minus what they counted before and plus what they count now (flowLoadSql).
 *
 * Kept as the hourly rollup is (rollup.ts): each load adds its rows (a day's page and register may
 * appear in several: every read sums or takes the max, which repeats do not change), a day's
 * compaction writes its rows again from its items (compact.ts), an erasure recomputes the days the
 * user viewed a page, sent an event or made a call on, and a prune drops the days before its bound and recomputes the day it cuts.
 */

export const PAGE_DAILY = 'page_daily';
export const PAGE_DAILY_USERS = 'page_daily_users';
export const PAGE_DAILY_DURATIONS = 'page_daily_durations';
export const CALL_DAILY = 'call_daily';
export const CALL_DAILY_DURATIONS = 'call_daily_durations';
export const EVENT_DAILY = 'event_daily';
export const EVENT_DAILY_USERS = 'event_daily_users';
export const EVENT_DAILY_SESSIONS = 'event_daily_sessions';
export const VITAL_DAILY = 'vital_daily';
export const VITAL_DAILY_BINS = 'vital_daily_bins';
export const FLOW_DAILY = 'flow_daily';
const TABLES = [
  PAGE_DAILY,
  PAGE_DAILY_USERS,
  PAGE_DAILY_DURATIONS,
  CALL_DAILY,
  CALL_DAILY_DURATIONS,
  EVENT_DAILY,
  EVENT_DAILY_USERS,
  EVENT_DAILY_SESSIONS,
  VITAL_DAILY,
  VITAL_DAILY_BINS,
  FLOW_DAILY,
] as const;

/** log2 of the HyperLogLog's registers. */
const P = 11;
const M = 2 ** P;
/** The users' estimate: its relative standard error. */
export const USERS_ERROR = 1.04 / Math.sqrt(M);
/** Each duration bin's upper bound over its lower one. */
const BIN_RATIO = 1.05;
/** The 95th percentile's bound, as a share of the value: half a bin. */
export const DURATION_ERROR = Math.round((Math.sqrt(BIN_RATIO) - 1) * 1000) / 1000;
const hyperLogLogMethod = (per: string) =>
  `HyperLogLog with ${M.toLocaleString('en')} registers per ${per} and day`;
export const USERS_METHOD = hyperLogLogMethod('page');
export const EVENT_DISTINCT_METHOD = hyperLogLogMethod('event');
const binsMethod = (per: string, counted = 'durations') =>
  `${counted} counted in bins ${Math.round((BIN_RATIO - 1) * 100)} % wide per ${per} and day`;
export const DURATION_METHOD = binsMethod('page');
export const VITAL_METHOD = binsMethod('vital, page', 'values');
export const CALL_DURATION_METHOD = binsMethod('call');

/** An estimated distinct count's entry in an answer's `estimates`. */
export const distinctEstimate = <F extends string>(field: F, method: string) => ({
  field,
  kind: 'distinct-count' as const,
  error: USERS_ERROR,
  errorOf: 'value' as const,
  method,
});
/** An estimated percentile's (from the duration bins) entry in an answer's `estimates`. */
export const durationEstimate = <F extends string>(field: F, method: string) => ({
  field,
  kind: 'percentile' as const,
  error: DURATION_ERROR,
  errorOf: 'value' as const,
  method,
});

const tablesSql = [
  `CREATE TABLE IF NOT EXISTS ${PAGE_DAILY} (day TIMESTAMP NOT NULL, name VARCHAR NOT NULL,
    views BIGINT NOT NULL, duration_n BIGINT NOT NULL, duration_sum DOUBLE NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${PAGE_DAILY_USERS} (day TIMESTAMP NOT NULL, page_reg UBIGINT NOT NULL,
    rank UTINYINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${PAGE_DAILY_DURATIONS} (day TIMESTAMP NOT NULL, name VARCHAR NOT NULL,
    bin SMALLINT NOT NULL, n BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${EVENT_DAILY} (day TIMESTAMP NOT NULL, name VARCHAR NOT NULL, n BIGINT NOT NULL)`,
  ...[EVENT_DAILY_USERS, EVENT_DAILY_SESSIONS].map(
    (table) => `CREATE TABLE IF NOT EXISTS ${table} (day TIMESTAMP NOT NULL, reg UBIGINT NOT NULL,
    rank UTINYINT NOT NULL)`,
  ),
  `CREATE TABLE IF NOT EXISTS ${CALL_DAILY} (day TIMESTAMP NOT NULL, target VARCHAR, name VARCHAR,
    n BIGINT NOT NULL, failures BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${CALL_DAILY_DURATIONS} (day TIMESTAMP NOT NULL, call UBIGINT NOT NULL,
    bin SMALLINT NOT NULL, n BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${VITAL_DAILY} (day TIMESTAMP NOT NULL, name VARCHAR NOT NULL,
    page VARCHAR NOT NULL, n BIGINT NOT NULL, good BIGINT NOT NULL, poor BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${VITAL_DAILY_BINS} (day TIMESTAMP NOT NULL, name VARCHAR NOT NULL,
    page VARCHAR NOT NULL, bin SMALLINT NOT NULL, n BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${FLOW_DAILY} (day TIMESTAMP NOT NULL, name VARCHAR NOT NULL,
    forward BOOLEAN NOT NULL, a VARCHAR, b VARCHAR, n BIGINT NOT NULL)`,
];

/** A page view's name as the Pages panel groups it. */
const NAME = `coalesce(name, '')`;
/**
 * A page's register `h` (a user's hash, UBIGINT) sets, as one integer: the page name's hash in the high
 * bits, the register (the user hash's low P bits) in the low ones. One integer key groups two and a half
 * times faster than a (name, register) pair (measured: docs/performance/usage-history.md, section 9).
 */
export const pageRegisterSql = (name: string, h: string) =>
  `(${pageKeySql(name)} << ${P}) | (${h} & ${M - 1})`;
/** A page name's key: its hash's high bits, as pageRegisterSql keeps them (`page_reg >> P`). */
export const pageKeySql = (name: string) => `(hash(${name}) >> ${P})`;
/** The page key of a `page_reg` value (pageRegisterSql). */
export const pageOfRegisterSql = (column: string) => `(${column} >> ${P})`;
/** A call's key (its target and name, either may be NULL) in call_daily_durations. */
export const callKeySql = (target: string, name: string) => `hash(${target}, ${name})`;
/** The rank of the hash `h`: 1 + the trailing zeros of its bits above the register's. */
export const rankSql = (h: string) =>
  `(least(bit_count(((${h} >> ${P}) - 1) & ~(${h} >> ${P})), ${64 - P}) + 1)::UTINYINT`;
/**
 * A user id's hash: DuckDB's string hash hashed again. Its string hash alone biased the estimates
 * upwards (4 % on average); hashing it again (the integer hash mixes every bit) gave estimates as
 * HyperLogLog promises, as md5 did, at a tenth of md5's cost (docs/performance/usage-history.md,
 * section 9).
 */
export const userHashSql = (userId: string) => `hash(hash(${userId}))`;
/**
 * DuckDB's hash of a fixed text: kept with the sketches, so that a DuckDB whose hash differs (a new
 * version may change it) computes them again rather than merge registers of two hashes. The text holds
 * the web vitals' thresholds, so that new thresholds count the good and poor values again too.
 */
const HASH_CANARY_SQL = `SELECT ${userHashSql(`'gatehouse ${JSON.stringify(vitalThresholds)}'`)} AS canary`;
const CANARY_TABLE = 'page_sketch_hash';
/** A duration's bin, and a bin's middle value. */
export const binSql = (ms: string) => `floor(ln(1 + greatest(${ms}, 0)) / ln(${BIN_RATIO}))::SMALLINT`;
export const binValueSql = (bin: string) => `(exp((${bin} + 0.5) * ln(${BIN_RATIO})) - 1)`;

/**
 * Per `key` of `bins` (a SELECT of the key, bin and n, each key and bin once), the bin holding the value
 * at each quantile's rank: one column `q<percent>` per quantile (q50, q95).
 */
export const binQuantilesSql = (bins: string, key: string, quantiles: readonly number[]) => `SELECT ${key},
  ${quantiles.map((q) => `min(bin) FILTER (WHERE below >= ${q} * total) AS q${Math.round(q * 100)}`).join(', ')}
FROM (
  SELECT ${key}, bin, sum(n) OVER (PARTITION BY ${key} ORDER BY bin) AS below,
    sum(n) OVER (PARTITION BY ${key}) AS total
  FROM (${bins})
) GROUP BY ${key}`;

/**
 * Per name key (`key`, as pageKeySql gives it), the estimated number of distinct values (`estimate`):
 * the registers of `table` (its register column `column`, pageRegisterSql's) over the whole days
 * [$1, $2), merged with those of `edge` (a SELECT of name and h, a value's hash) for the parts of a day
 * at the ends; only for the names `names` (a SELECT of one name column) gives. HyperLogLog's estimate,
 * with linear counting while registers are still empty (small counts, where it is nearly exact).
 */
export const distinctEstimateSql = (
  table: string,
  column: string,
  edge: string,
  names: string,
) => `SELECT key,
  CASE WHEN raw <= ${2.5 * M} AND zeros > 0 THEN ${M} * ln(${M} / zeros) ELSE raw END AS estimate
FROM (
  SELECT key, ${(0.7213 / (1 + 1.079 / M)) * M * M}::DOUBLE / (sum(pow(2, -rank::DOUBLE)) + (${M} - count(*))) AS raw,
    ${M} - count(*) AS zeros
  FROM (
    SELECT ${pageOfRegisterSql('reg')} AS key, max(rank) AS rank FROM (
      SELECT ${column} AS reg, rank FROM ${table} WHERE day >= $1 AND day < $2
      UNION ALL SELECT ${pageRegisterSql('name', 'h')}, ${rankSql('h')} FROM (${edge})
    ) WHERE ${pageOfRegisterSql('reg')} IN (SELECT ${pageKeySql('name')} FROM (${names})) GROUP BY reg
  ) GROUP BY key
)`;

/** Per day and name, the highest rank of each register the hashes of `column` set, for `type`'s items. */
const registersInsertSql = (table: string, type: string, column: string, source: string, where: string) =>
  `INSERT INTO ${table} SELECT day, ${pageRegisterSql('name', 'h')}, max(${rankSql('h')}) FROM (
    SELECT date_trunc('day', time) AS day, ${NAME} AS name, ${userHashSql(column)} AS h FROM ${source}
    WHERE type = '${type}' AND ${column} IS NOT NULL ${where}
  ) GROUP BY ALL`;

/** The sketch rows of the page views, events and calls in `source` (a table with the items' columns) matching `where`. */
export const sketchInsertSql = (source: string, where = '') => [
  `INSERT INTO ${PAGE_DAILY} SELECT date_trunc('day', time), ${NAME}, count(*), count(duration_ms),
    coalesce(sum(duration_ms), 0) FROM ${source} WHERE type = 'pageview' ${where} GROUP BY ALL`,
  registersInsertSql(PAGE_DAILY_USERS, 'pageview', 'user_id', source, where),
  `INSERT INTO ${PAGE_DAILY_DURATIONS} SELECT date_trunc('day', time), ${NAME}, ${binSql('duration_ms')},
    count(*) FROM ${source} WHERE type = 'pageview' AND duration_ms IS NOT NULL ${where} GROUP BY ALL`,
  `INSERT INTO ${EVENT_DAILY} SELECT date_trunc('day', time), ${NAME}, count(*) FROM ${source}
    WHERE type = 'event' ${where} GROUP BY ALL`,
  registersInsertSql(EVENT_DAILY_USERS, 'event', 'user_id', source, where),
  registersInsertSql(EVENT_DAILY_SESSIONS, 'event', 'session_id', source, where),
  `INSERT INTO ${CALL_DAILY} SELECT date_trunc('day', time), target, name, count(*),
    count(*) FILTER (WHERE success = false) FROM ${source} WHERE type = 'dependency' ${where} GROUP BY ALL`,
  `INSERT INTO ${CALL_DAILY_DURATIONS} SELECT date_trunc('day', time), ${callKeySql('target', 'name')},
    ${binSql('duration_ms')}, count(*) FROM ${source}
    WHERE type = 'dependency' AND duration_ms IS NOT NULL ${where} GROUP BY ALL`,
  `INSERT INTO ${VITAL_DAILY} SELECT date_trunc('day', time), name, coalesce(metric_page, ''), count(*),
    count(*) FILTER (WHERE metric_value <= t.good), count(*) FILTER (WHERE metric_value > t.poor)
    FROM ${source} JOIN ${vitalThresholdsSql} USING (name)
    WHERE type = 'metric' AND metric_value IS NOT NULL ${where} GROUP BY ALL`,
  `INSERT INTO ${VITAL_DAILY_BINS} SELECT date_trunc('day', time), name, coalesce(metric_page, ''),
    ${binSql(vitalBinnedSql('name', 'metric_value'))}, count(*) FROM ${source} JOIN ${vitalThresholdsSql} USING (name)
    WHERE type = 'metric' AND metric_value IS NOT NULL ${where} GROUP BY ALL`,
];

/**
 * The user flows' contexts of the page views in `rows` (a relation of session_id, time and name, the
 * named page views of sessions): each view's day and name, the two names before it (p2, p1) and the two
 * after (n1, n2) within its session's views of that UTC day, in time order (the name breaking a tie, so
 * the order is the same however the rows are stored). The Flows query reads the items' through this too.
 */
export const flowContextsSql = (rows: string) => `SELECT date_trunc('day', time) AS day, name,
    lag(name, 2) OVER w AS p2, lag(name, 1) OVER w AS p1, lead(name, 1) OVER w AS n1, lead(name, 2) OVER w AS n2
  FROM ${rows} WINDOW w AS (PARTITION BY session_id, date_trunc('day', time) ORDER BY time, name)`;

/** The named page views of sessions in `source` matching `where`, as flowContextsSql takes them. */
export const flowRowsSql = (source: string, where = '') => `SELECT session_id, time, name FROM ${source}
    WHERE type = 'pageview' AND name IS NOT NULL AND session_id IS NOT NULL ${where}`;

/** flow_daily's rows of the contexts `v` (flowContextsSql's), each counted `sign` times. */
const flowCountsSql = (v: string, sign: 1 | -1) =>
  `SELECT day, name, true, n1, n2, ${sign} * count(*) FROM ${v} GROUP BY ALL
   UNION ALL SELECT day, name, false, p1, p2, ${sign} * count(*) FROM ${v} GROUP BY ALL`;

/** The flow_daily rows of the items matching `where`, computed whole (for days no other rows count). */
const flowInsertSql = (where = '') => `INSERT INTO ${FLOW_DAILY}
  WITH v AS MATERIALIZED (${flowContextsSql(`(${flowRowsSql('items', where)})`)})
  ${flowCountsSql('v', 1)}`;

/**
 * A load's change to flow_daily, run before its rows (in `stage`) go into the items: the contexts of
 * every view the items hold of the sessions the load brings page views of, on the days it brings them
 * for, counted out, and counted in again with the load's own; only what differs is written. (A session's
 * views on a day the load has none for count out and in alike, so they write nothing.)
 */
export const flowLoadSql = (stage: string) => `INSERT INTO ${FLOW_DAILY}
  WITH t AS MATERIALIZED (SELECT DISTINCT session_id, date_trunc('day', time) AS day FROM (${flowRowsSql(stage)})),
  old AS MATERIALIZED (${flowRowsSql(
    'items',
    `AND time >= (SELECT min(day) FROM t) AND time < (SELECT max(day) FROM t) + INTERVAL 1 DAY
     AND session_id IN (SELECT session_id FROM t)`,
  )}),
  before AS MATERIALIZED (${flowContextsSql('old')}),
  after AS MATERIALIZED (${flowContextsSql(`(SELECT * FROM old UNION ALL ${flowRowsSql(stage)})`)})
  SELECT day, name, forward, a, b, sum(n) FROM (
    SELECT * FROM (${flowCountsSql('before', -1)}) AS c(day, name, forward, a, b, n)
    UNION ALL SELECT * FROM (${flowCountsSql('after', 1)}) AS c(day, name, forward, a, b, n)
  ) GROUP BY ALL HAVING sum(n) <> 0`;

/** The days marked for recomputing (a temporary table of the connection). */
const MARKED = 'sketch_days';

/**
 * Statements that mark the days `select` gives (a SELECT of one TIMESTAMP column, the days' starts;
 * it may use the statement's parameters) for recomputeMarkedSql.
 */
export const markDaysSql = (select: string) => `CREATE OR REPLACE TEMP TABLE ${MARKED} AS ${select}`;

/** The items of the marked days, as a `where` of sketchInsertSql and flowInsertSql. */
const MARKED_ITEMS = `AND time >= (SELECT min(d) FROM ${MARKED} AS m(d))
     AND time < (SELECT max(d) FROM ${MARKED} AS m(d)) + INTERVAL 1 DAY
     AND date_trunc('day', time) IN (SELECT * FROM ${MARKED})`;

/** Recomputes the marked days' sketch rows from the items they hold now, then forgets the marks. */
export const recomputeMarkedSql = [
  ...TABLES.map((t) => `DELETE FROM ${t} WHERE day IN (SELECT * FROM ${MARKED})`),
  ...sketchInsertSql('items', MARKED_ITEMS),
  flowInsertSql(MARKED_ITEMS),
  `DROP TABLE ${MARKED}`,
];

/**
 * In the prune's transaction, after items before `before` ($1, TIMESTAMP) are deleted: the days
 * before its day go, and its day is recomputed.
 */
export const pruneSketchSql = [
  ...TABLES.map((t) => `DELETE FROM ${t} WHERE day < date_trunc('day', $1::TIMESTAMP)`),
  markDaysSql(`SELECT date_trunc('day', $1::TIMESTAMP)`),
];

/** Before an erasure deletes one user's items ($1): the days of their page views, events, calls and metrics, to recompute after. */
export const markErasedDaysSql = markDaysSql(
  `SELECT DISTINCT date_trunc('day', time) FROM items
   WHERE type IN ('pageview', 'event', 'dependency', 'metric') AND (auth_user_id = $1 OR user_id = $1)`,
);

/**
 * A store made before the sketches (or before some of them: the calls' and events' came after the pages') gets them,
 * computed from the items it holds, in one transaction; so does one whose sketches were made with
 * another hash (CANARY_TABLE). The canary's absence is the mark: a crash leaves either nothing done or all.
 */
export async function addDailySketches(writer: DuckDBConnection): Promise<void> {
  let complete = await canaryHolds(writer, CANARY_TABLE, HASH_CANARY_SQL);
  for (const table of TABLES) complete &&= await tableExists(writer, table);
  if (complete) return;
  await inTransaction(writer, [
    ...[...TABLES, CANARY_TABLE].map((table) => `DROP TABLE IF EXISTS ${table}`),
    ...tablesSql,
    ...sketchInsertSql('items'),
    flowInsertSql(),
    `CREATE TABLE ${CANARY_TABLE} AS ${HASH_CANARY_SQL}`,
  ]);
}
