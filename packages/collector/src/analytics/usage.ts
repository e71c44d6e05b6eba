import { listValue, type DuckDBValue } from '@duckdb/node-api';
import { SESSION_ID, USER_ID, type Dependencies, type Pages } from '@gatehouse/api-contract';
import {
  CALL_DURATION_METHOD,
  distinctEstimate,
  DURATION_METHOD,
  durationEstimate,
  USERS_METHOD,
} from '../store/daily-sketch.js';
import {
  bucketedPeriod,
  describePeriod,
  HOUR,
  num,
  period,
  segmentSql,
  sketchDays,
  sketchBoundValues,
  sketchValues,
  ts,
  type UsageReader,
} from './sql.js';
import { sampledCountEstimate, sampleShift, type Sampling } from './sample.js';
import {
  rollupRows,
  periodTotals,
  timeseriesRollupSql,
  timeseriesSql,
  pagesSql,
  pagesByNameSql,
  pagesPlanSql,
  pagesSketchSql,
  dependenciesSketchSql,
  exceptionsSql,
  dependenciesSql,
  signedInIdsSql,
  latestSessionsSql,
  sessionsSql,
  timelineSql,
} from './usage-sql.js';
import {
  type StoreUsageQueries,
  shapeOverview,
  shapeTimeseries,
  shapePages,
  shapeExceptions,
  shapeDependencies,
  shapeSessions,
  shapeTimeline,
  sessionsLimit,
} from './usage-answers.js';

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

const quantiles = (r: Record<string, unknown>): unknown[] => (Array.isArray(r.quantiles) ? r.quantiles : []);

/** A page list reads every user's page views up to three million in the period, a sample past that (ADR 0079). */
export const PAGES_SAMPLING: Sampling = { rowBudget: 3_000_000, minUsers: 2_000 };

/** What the Pages panel estimates when it reads the sketches, and how closely. */
export const PAGE_ESTIMATES: Pages['estimates'] = [
  distinctEstimate('users', USERS_METHOD),
  durationEstimate('p95DurationMs', DURATION_METHOD),
];

/** What the Calls panel estimates when it reads the sketches, and how closely. */
export const CALL_ESTIMATES: Dependencies['estimates'] = [
  durationEstimate('p50DurationMs', CALL_DURATION_METHOD),
  durationEstimate('p95DurationMs', CALL_DURATION_METHOD),
];

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
): StoreUsageQueries {
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
