import {
  SESSIONS_LIMIT,
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
import {
  change,
  describePeriod,
  iso,
  num,
  numOrNull,
  strOrNull,
  timeMs,
  type bucketedPeriod,
  type Period,
  type period,
  type UsageOptions,
} from './sql.js';

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

/**
 * The answers' shapes are the API's (@gatehouse/api-contract), less what only the server knows: whether
 * a signed-in user id is one it issued (`verified`, `verifiedUsers`).
 */
export type Overview = Omit<ApiOverview, 'tiles' | 'storeFull'> & {
  tiles: Record<Exclude<TileKey, 'verifiedUsers'>, Tile>;
  /** Set by the store's own queries (analytics/store-sink.ts); the server answers null without it. */
  storeFull?: ApiOverview['storeFull'];
};
export type SessionRow = Omit<ApiSessionRow, 'verified'>;
export type SessionTimeline = Omit<ApiSessionTimeline, 'verified'>;

/**
 * The usage queries the server asks of every back-end (the local store, the store holder over the
 * internal API, Log Analytics): the overview, sessions and one user's data. The panels' queries go
 * through the registry (dashboard/dashboard-queries.ts) instead.
 */
export interface UsageQueries {
  overview(options?: UsageOptions): Promise<Overview>;
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

/** The local store's usage queries: those, and the four panels' that the registry runs on it. */
export interface StoreUsageQueries extends UsageQueries {
  timeseries(options?: UsageOptions): Promise<Timeseries>;
  pages(options?: UsageOptions): Promise<Pages>;
  exceptions(options?: UsageOptions): Promise<Exceptions>;
  dependencies(options?: UsageOptions): Promise<Dependencies>;
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
