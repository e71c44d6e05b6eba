import type { DuckDBValue } from '@duckdb/node-api';
import { DIRECT, type Segment } from '@gatehouse/api-contract';
import { DAY } from '../store/period.js';
import type { TelemetryStore } from '../store/store.js';
import { ts } from '../store/values.js';

/**
 * What every dashboard query is built from (usage.ts and the product analytics alike): the periods and
 * their buckets, the segment's condition, and reading DuckDB's values. The queries themselves are in
 * usage.ts, product.ts and the files it gathers. The periods and values are the store's
 * (store/period.ts, store/values.ts: its annotations read them too), offered here with the rest.
 */
export {
  bucketedPeriod,
  customBucketMs,
  DAY,
  describePeriod,
  HOUR,
  period,
  rangeSpecs,
  type Period,
  type UsageOptions,
} from '../store/period.js';
export { iso, num, numOrNull, strOrNull, timeMs, ts } from '../store/values.js';

/** Most rows a list answers (pages, exceptions, dependencies). */
export const LIST_LIMIT = 100;

/**
 * What the queries need of the store: a parameterised read (WritableStore.read), and one user's
 * export and erasure.
 */
export interface UsageReader extends Pick<TelemetryStore, 'export' | 'erase'> {
  read(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
}

/**
 * The condition selecting a segment's items, as ` AND …` (or nothing), on the columns of `alias` (a
 * table alias with its dot, or none). Its values are bound, never written into the SQL: they are
 * appended to `values` (the query's own come first) and named by their positions there. Every usage
 * and analytics query selects its items through this.
 */
export function segmentSql(segment: Segment | undefined, values: DuckDBValue[], alias = ''): string {
  const on = (column: string) => `${alias}${column}`;
  const bind = (value: string) => `$${values.push(value)}::VARCHAR`;
  const parts: string[] = [];
  // (signed_in: whether auth_user_id is set, in the items and the hourly rollup alike.)
  if (segment?.auth) parts.push(`${segment.auth === 'signed-in' ? '' : 'NOT '}${on('signed_in')}`);
  if (segment?.role) parts.push(`contains(',' || ${on('roles')} || ',', ${bind(`,${segment.role},`)})`);
  if (segment?.browser) parts.push(`${on('browser')} = ${bind(segment.browser)}`);
  if (segment?.device) parts.push(`${on('device_type')} = ${bind(segment.device)}`);
  if (segment?.os) parts.push(`${on('os')} = ${bind(segment.os)}`);
  if (segment?.referrer) {
    // A referrer is the session's, not each item's: the items of sessions with a page view from that
    // site (DIRECT: of sessions with none). On session_id, so the hourly rollup (keyed by session)
    // answers it exactly too; from the sessions' sources (store/rollup.ts), a few rows a session.
    const sources = `SELECT session_id FROM session_sources`;
    parts.push(
      segment.referrer === DIRECT
        ? `${on('session_id')} NOT IN (${sources})`
        : `${on('session_id')} IN (${sources} WHERE referrer = ${bind(segment.referrer)})`,
    );
  }
  return parts.map((p) => ` AND ${p}`).join('');
}

/** A figure's change against the previous period's: null when there was nothing before. */
export const change = (value: number, previous: number): number | null =>
  previous === 0 ? null : (value - previous) / previous;

/** The fewest whole days in a period for the Pages, Calls and Custom events panels to read the daily sketches. */
export const SKETCH_MIN_DAYS = 2;

/**
 * The whole UTC days of period `p`, [firstDay, lastDay), when the daily sketches serve it: two or more,
 * and no segment (`seg`, segmentSql's) to narrow it; else null, and the items serve it all.
 */
export function sketchDays(p: { from: number; to: number }, seg: string) {
  const firstDay = Math.ceil(p.from / DAY) * DAY;
  const lastDay = Math.floor(p.to / DAY) * DAY;
  return seg === '' && lastDay - firstDay >= SKETCH_MIN_DAYS * DAY ? { firstDay, lastDay } : null;
}

/**
 * A sketch query's first CTE, `edge`: the `type` items of the parts of a day at either end of the
 * period, [$3, $1) and [$2, $4) (sketchValues' order), their `columns` (a SELECT list, aliased).
 */
export const sketchEdgeSql = (type: string, columns: string) => `edge AS MATERIALIZED (
  SELECT ${columns} FROM items WHERE type = '${type}' AND time >= $3 AND time < $1
  UNION ALL SELECT ${columns} FROM items WHERE type = '${type}' AND time >= $2 AND time < $4
)`;

/**
 * The parameters of a bound on the rows of a period [from, to) from the daily sketches: the first day it
 * touches and its end (as $1, $2). The funnel and the Pages panel size their sample of users by it
 * (sample.ts).
 */
export const sketchBoundValues = (p: { from: number; to: number }) => [
  ts(Math.floor(p.from / DAY) * DAY),
  ts(p.to),
];

/** The parameters of a sketch query (usage.ts, events.ts) over period `p`. */
export const sketchValues = (
  p: { from: number; to: number },
  days: { firstDay: number; lastDay: number },
) => [ts(days.firstDay), ts(days.lastDay), ts(p.from), ts(p.to)];
