import { DuckDBTimestampValue, type DuckDBValue } from '@duckdb/node-api';
import { DIRECT, type Pages, type Segment, type UsageRange } from '@gatehouse/api-contract';
import { ownValue } from '../own-property.js';
import type { TelemetryStore } from '../store/store.js';

/**
 * What every dashboard query is built from (usage.ts and the product analytics alike): the periods and
 * their buckets, the segment's condition, and reading DuckDB's values. The queries themselves are in
 * usage.ts, product.ts and the files it gathers.
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

/** Most rows a list answers (pages, exceptions, dependencies). */
export const LIST_LIMIT = 100;

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

export const ts = (ms: number) => new DuckDBTimestampValue(BigInt(Math.round(ms)) * 1000n);
export const iso = (ms: number) => new Date(ms).toISOString();
/*
 * Reading a row's values, the same for both back-ends (DuckDB's rows, and Log Analytics' JSON, which gives
 * an empty string where the store has NULL and may give a long as a string): one answer per question.
 */
export const num = (v: unknown): number =>
  typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : typeof v === 'string' ? Number(v) || 0 : 0;
export const numOrNull = (v: unknown): number | null =>
  v === null || v === undefined || v === '' ? null : num(v);
export const strOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** A time as epoch ms: the store's (epoch ms) or Log Analytics' (a datetime, parsed to a Date or a string). */
export const timeMs = (v: unknown): number =>
  v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : num(v);
/** A figure's change against the previous period's: null when there was nothing before. */
export const change = (value: number, previous: number): number | null =>
  previous === 0 ? null : (value - previous) / previous;

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
