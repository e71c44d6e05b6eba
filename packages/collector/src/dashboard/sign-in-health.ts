import type { DuckDBValue } from '@duckdb/node-api';
import {
  API_REFUSALS_METRIC,
  RENEWAL_EVENT,
  SESSION_END_EVENT,
  SIGN_IN_EVENT,
  type ResponseOf,
} from '@gatehouse/api-contract';
import {
  bucketedPeriod,
  describePeriod,
  HOUR,
  DAY,
  iso,
  LIST_LIMIT,
  num,
  numOrNull,
  segmentSql,
  strOrNull,
  timeMs,
  ts,
  type UsageOptions,
} from '../analytics/sql.js';
import { datetime, segmentKql, str } from '../log-analytics/kql.js';
import { kustoPercentile, type RunQuery } from '../log-analytics/log-analytics-queries.js';
import { nameKeySql } from '../store/row-layout.js';
import type { DashboardQuery } from './dashboard-query.js';

/**
 * Sign-in health (ADR 0109): the SPA's sign-in, renewal and session-end events and the server's refusal
 * metric (the vocabulary: the contract's sign-in-events.ts), as the dashboard's Sign-in section shows them.
 * Four questions, each asked alike of the store (SQL) and of a workspace (KQL, its columns named as the
 * SQL's), and one shaper of their rows.
 */
type SignInHealth = ResponseOf<'usageSignIn'>;
type Row = Record<string, unknown>;
interface Rows {
  /** Events by name, outcome, reason, step, whether in the period (or the one before) and chart bucket. */
  events: Row[];
  /** The period's p50 and p95 time to sign in. */
  durations: Row[];
  /** The API's refusals by reason. */
  refusals: Row[];
  /** Sign-ins that ended (signed in, failed) in the last hour and the week before it. */
  alert: Row[];
}

const EVENT_NAMES = [SIGN_IN_EVENT, RENEWAL_EVENT, SESSION_END_EVENT];
/** Gatehouse's events by their integer key (filtered before the text, as the funnel's steps are). */
const eventsWhere = (names: readonly string[]) =>
  `type = 'event' AND name_key IN (${names.map((n) => nameKeySql(`'event'`, `'${n}'`)).join(', ')}) AND name IN (${names.map((n) => `'${n}'`).join(', ')})`;

/**
 * The periods every question reads: the chart's period, the one before it, and the alert's hour and week.
 * From one reading of the clock, made once an answer: the answer names the period its questions asked.
 */
function periodsOf(options: UsageOptions) {
  const now = options.now ?? Date.now();
  const b = bucketedPeriod({ ...options, now });
  return { b, before: b.from - (b.to - b.from), hour: now - HOUR, week: now - HOUR - 7 * DAY, now };
}

async function onStore(
  reader: { read(sql: string, values?: DuckDBValue[]): Promise<Row[]> },
  options: UsageOptions,
) {
  const { b, before, hour, week, now } = periodsOf(options);
  const eventValues: DuckDBValue[] = [ts(before), ts(b.to), ts(b.from), b.from, b.bucketMs];
  const events = await reader.read(
    `SELECT name, event_outcome AS outcome, event_reason AS reason, event_step AS step, time >= $3 AS current,
  floor((epoch_ms(time) - $4::DOUBLE) / $5::DOUBLE)::DOUBLE AS bucket, count(*)::DOUBLE AS n
FROM items WHERE ${eventsWhere(EVENT_NAMES)} AND time >= $1 AND time < $2${segmentSql(options, eventValues)}
GROUP BY ALL`,
    eventValues,
  );
  const durationValues: DuckDBValue[] = [ts(b.from), ts(b.to)];
  const durations = await reader.read(
    `SELECT quantile_cont(event_duration_ms, [0.5, 0.95]) AS quantiles
FROM items WHERE ${eventsWhere([SIGN_IN_EVENT])} AND event_outcome = 'signed-in' AND time >= $1 AND time < $2${segmentSql(options, durationValues)}`,
    durationValues,
  );
  // The server's items have no user, session or browser: every request's refusals, whatever the segment.
  const refusals = await reader.read(
    `SELECT metric_reason AS reason, sum(metric_value)::DOUBLE AS n FROM items
WHERE type = 'metric' AND name = '${API_REFUSALS_METRIC}' AND time >= $1 AND time < $2
GROUP BY ALL ORDER BY n DESC, reason LIMIT ${LIST_LIMIT}`,
    [ts(b.from), ts(b.to)],
  );
  // About everyone, now: not the period's, nor the segment's.
  const alert = await reader.read(
    `SELECT time >= $2 AS last_hour, event_outcome AS outcome, count(*)::DOUBLE AS n
FROM items WHERE ${eventsWhere([SIGN_IN_EVENT])} AND event_outcome IN ('signed-in', 'failed') AND time >= $1 AND time < $3
GROUP BY ALL`,
    [ts(week), ts(hour), ts(now)],
  );
  const [q] = durations;
  const quantiles = Array.isArray(q?.quantiles) ? (q.quantiles as unknown[]) : [];
  return shapeSignInHealth(
    b,
    { events, durations: [{ p50_ms: quantiles[0], p95_ms: quantiles[1] }], refusals, alert },
    [],
  );
}

async function onLogAnalytics(run: RunQuery, options: UsageOptions) {
  const { b, before, hour, week, now } = periodsOf(options);
  const between = (from: number, to: number) =>
    `TimeGenerated >= ${datetime(from)} and TimeGenerated < ${datetime(to)}`;
  const named = (names: readonly string[]) => `Name in (${names.map(str).join(', ')})`;
  const seg = segmentKql(options);
  const [events, durations, refusals, alert] = await Promise.all([
    run(
      `AppEvents
| where ${between(before, b.to)} and ${named(EVENT_NAMES)}${seg}
| summarize n = sum(ItemCount) by name = Name, outcome = tostring(Properties.outcome),
    reason = tostring(Properties.reason), step = tostring(Properties.step), current = TimeGenerated >= ${datetime(b.from)},
    bucket = bin_at(TimeGenerated, ${b.bucketMs}ms, ${datetime(b.from)})`,
      before,
      b.to,
    ),
    run(
      `AppEvents
| where ${between(b.from, b.to)} and ${named([SIGN_IN_EVENT])} and tostring(Properties.outcome) == "signed-in"${seg}
| extend duration = todouble(Measurements.durationMs)
| summarize p50_ms = percentile(duration, 50), p95_ms = percentile(duration, 95)`,
      b.from,
      b.to,
    ),
    run(
      `AppMetrics
| where ${between(b.from, b.to)} and Name == ${str(API_REFUSALS_METRIC)}
| summarize n = sum(Sum) by reason = tostring(Properties.reason)
| order by n desc, reason asc
| take ${LIST_LIMIT}`,
      b.from,
      b.to,
    ),
    run(
      `AppEvents
| where ${between(week, now)} and ${named([SIGN_IN_EVENT])}
| extend outcome = tostring(Properties.outcome)
| where outcome in ("signed-in", "failed")
| summarize n = sum(ItemCount) by last_hour = TimeGenerated >= ${datetime(hour)}, outcome`,
      week,
      now,
    ),
  ]);
  // Kusto names a bucket by its start; the shaper by its index.
  const indexed = events.map((r) => ({ ...r, bucket: Math.floor((timeMs(r.bucket) - b.from) / b.bucketMs) }));
  return shapeSignInHealth(b, { events: indexed, durations, refusals, alert }, [
    kustoPercentile('p50Ms'),
    kustoPercentile('p95Ms'),
  ]);
}

/** The smallest number of failed sign-ins in the last hour that may raise the alert. */
export const ALERT_MIN_FAILED = 5;
/** How many standard errors above the week's rate the hour's must be. */
export const ALERT_STANDARD_ERRORS = 3;

/**
 * Whether the last hour's failure rate is far above the week before's: at least ALERT_MIN_FAILED
 * failures, and a rate ALERT_STANDARD_ERRORS standard errors above the week's (a one-sided test of a
 * proportion). The week's rate is taken as if it had 20 more sign-ins, one of them failed (a prior of 5 %):
 * a clean week, or none yet, still has a rate to compare with, and a new deployment's first bad hour alerts.
 */
export function alertOf(
  lastHour: { ended: number; failed: number },
  weekBefore: { ended: number; failed: number },
) {
  const rate = (x: { ended: number; failed: number }) => (x.ended === 0 ? null : x.failed / x.ended);
  const baseline = (weekBefore.failed + 1) / (weekBefore.ended + 20);
  const hourRate = rate(lastHour) ?? 0;
  const standardError = Math.sqrt((baseline * (1 - baseline)) / Math.max(1, lastHour.ended));
  return {
    raised:
      lastHour.failed >= ALERT_MIN_FAILED && hourRate - baseline >= ALERT_STANDARD_ERRORS * standardError,
    lastHour: { ...lastHour, rate: rate(lastHour) },
    weekBefore: { ...weekBefore, rate: rate(weekBefore) },
  };
}

/** The answer from the four questions' rows over the chart's period `b`, whichever back-end gave them. */
export function shapeSignInHealth(
  b: ReturnType<typeof periodsOf>['b'],
  rows: Rows,
  estimates: SignInHealth['estimates'],
): SignInHealth {
  const events = rows.events.map((r) => ({
    name: strOrNull(r.name),
    outcome: strOrNull(r.outcome),
    reason: strOrNull(r.reason),
    step: strOrNull(r.step),
    current: r.current === true || r.current === 'true',
    bucket: num(r.bucket),
    n: num(r.n),
  }));
  const count = (when: boolean, name: string, outcome: string) =>
    events
      .filter((e) => e.current === when && e.name === name && e.outcome === outcome)
      .reduce((sum, e) => sum + e.n, 0);
  const successRate = (when: boolean) => {
    const signedIn = count(when, SIGN_IN_EVENT, 'signed-in');
    const ended = signedIn + count(when, SIGN_IN_EVENT, 'failed');
    return ended === 0 ? null : signedIn / ended;
  };
  const rate = successRate(true);
  const previous = successRate(false);

  const failures = new Map<string, { reason: string; step: string; count: number }>();
  for (const e of events) {
    if (!e.current || e.name !== SIGN_IN_EVENT || e.outcome !== 'failed') continue;
    const reason = e.reason ?? 'other';
    const step = e.step ?? 'unknown';
    const key = `${reason}\u0000${step}`;
    const row = failures.get(key) ?? { reason, step, count: 0 };
    row.count += e.n;
    failures.set(key, row);
  }
  const sessionEnds = new Map<string, number>();
  for (const e of events) {
    if (!e.current || e.name !== SESSION_END_EVENT) continue;
    const reason = e.reason ?? 'other';
    sessionEnds.set(reason, (sessionEnds.get(reason) ?? 0) + e.n);
  }
  const renewals = Array.from({ length: Math.round(b.lengthMs / b.bucketMs) }, (_, i) => {
    const of = (outcome: string) =>
      events
        .filter((e) => e.current && e.name === RENEWAL_EVENT && e.outcome === outcome && e.bucket === i)
        .reduce((sum, e) => sum + e.n, 0);
    return {
      start: iso(b.from + i * b.bucketMs),
      succeeded: of('succeeded'),
      failed: of('failed'),
      forcedSignIn: of('forced-sign-in'),
    };
  });
  const ended = (lastHour: boolean) => {
    const of = (outcome: string) =>
      rows.alert
        .filter((r) => (r.last_hour === true || r.last_hour === 'true') === lastHour && r.outcome === outcome)
        .reduce((sum, r) => sum + num(r.n), 0);
    const failed = of('failed');
    return { ended: failed + of('signed-in'), failed };
  };
  const byCount = <T extends { count: number }>(a: T, z: T) => z.count - a.count;
  const [durations] = rows.durations;
  return {
    ...describePeriod(b),
    bucketMs: b.bucketMs,
    funnel: {
      started: count(true, SIGN_IN_EVENT, 'started'),
      returned: count(true, SIGN_IN_EVENT, 'returned'),
      redeemed: count(true, SIGN_IN_EVENT, 'redeemed'),
      signedIn: count(true, SIGN_IN_EVENT, 'signed-in'),
      failed: count(true, SIGN_IN_EVENT, 'failed'),
    },
    successRate: rate,
    previousSuccessRate: previous,
    change: rate === null || previous === null ? null : rate - previous,
    timeToSignIn: { p50Ms: numOrNull(durations?.p50_ms), p95Ms: numOrNull(durations?.p95_ms) },
    failures: [...failures.values()].sort(byCount).slice(0, LIST_LIMIT),
    renewals,
    sessionEnds: [...sessionEnds].map(([reason, n]) => ({ reason, count: n })).sort(byCount),
    refusals: rows.refusals.map((r) => ({ reason: strOrNull(r.reason) ?? 'other', count: num(r.n) })),
    alert: alertOf(ended(true), ended(false)),
    estimates,
  };
}

export const signInHealth = {
  store: onStore,
  logAnalytics: onLogAnalytics,
} satisfies DashboardQuery<'usageSignIn'>;
