import type { DuckDBValue } from '@duckdb/node-api';
import { funnelStepsProblem, type FunnelStep } from '@gatehouse/api-contract';
import {
  describePeriod,
  num,
  numOrNull,
  period,
  segmentSql,
  ts,
  type Period,
  type UsageOptions,
  type UsageReader,
} from './sql.js';
import { EVENT_DAILY, PAGE_DAILY } from '../store/daily-sketch.js';
import { nameKeySql } from '../store/row-layout.js';

export interface FunnelStepResult extends FunnelStep {
  /** Distinct users with a session that reached this step after the ones before it, in order. */
  users: number;
  /** Share of the previous step's users who did not reach this one (0 for the first step). */
  dropOff: number;
  /** Median time from the previous step, over the sessions that reached this one; null for the first. */
  medianMsFromPrevious: number | null;
}

/** A funnel's steps are checked by the contract's rules before any SQL is built: RangeError otherwise. */
function checkSteps(steps: FunnelStep[]): void {
  const problem = funnelStepsProblem(steps);
  if (problem) throw new RangeError(problem);
}

const stepType = (step: FunnelStep) => (step.kind === 'page' ? 'pageview' : 'event');

/**
 * Per session, each step is the first matching item after the previous step's (greedy, as the usual
 * funnel); a session stops at the first step it never reaches. Typed columns only: the steps' items are
 * found by their name_key (row-layout.ts), an integer, unless `byName` (two names share a key); sessions
 * and users by their integer keys (session_key, user_key: ADR 0077). Each step reads the items on its
 * own, with one equality on the key that the scan applies as it reads: one scan with every step's key
 * in an IN list filtered each row again after the scan, and the three steps of the bench's funnel took a
 * fourth more time (ADR 0078). Each step carries its session's user, so the counts need no join back to
 * the first step. Parameters: $1, $2 the period, then each step's name.
 */
function funnelSql(steps: FunnelStep[], seg: string, byName: boolean): string {
  const match = (step: FunnelStep, i: number) =>
    byName
      ? `m.type = '${stepType(step)}' AND m.name = $${i + 3}`
      : `m.name_key = ${nameKeySql(`'${stepType(step)}'`, `$${i + 3}::VARCHAR`)}`;
  const where = (step: FunnelStep, i: number) =>
    `WHERE m.time >= $1 AND m.time < $2 AND m.session_key IS NOT NULL AND ${match(step, i)}${seg}`;
  const ctes = steps.map((step, i) =>
    i === 0
      ? `s0 AS (SELECT m.session_key, arg_min(m.user_key, m.time) AS user_key, min(m.time) AS t FROM items m
  ${where(step, i)} GROUP BY m.session_key)`
      : `s${i} AS (SELECT m.session_key, any_value(p.user_key) AS user_key, min(m.time) AS t, any_value(p.t) AS before
  FROM items m JOIN s${i - 1} p ON m.session_key = p.session_key AND m.time > p.t
  ${where(step, i)} GROUP BY m.session_key)`,
  );
  const selects = steps.map((_, i) =>
    i === 0
      ? `SELECT 0 AS step, count(DISTINCT user_key)::DOUBLE AS users, NULL::DOUBLE AS median_ms FROM s0`
      : `SELECT ${i}, count(DISTINCT user_key)::DOUBLE, median(epoch_ms(t) - epoch_ms(before))::DOUBLE FROM s${i}`,
  );
  return `WITH ${ctes.join(',\n')}
${selects.join('\nUNION ALL ')}`;
}

/**
 * Whether another page or event name has the key of one of the steps (a hash collision: never seen, but
 * possible), from every name the store holds (the daily sketches list them; a missing name is NULL in
 * items and '' there, so both are tried). Parameters: each step's name.
 */
function sharedKeySql(steps: FunnelStep[]): string {
  const names = `SELECT 'pageview' AS type, name FROM ${PAGE_DAILY} UNION ALL SELECT 'event', name FROM ${EVENT_DAILY}
    UNION ALL SELECT * FROM (VALUES ('pageview', NULL), ('event', NULL))`;
  const keys = steps.map((step, i) => nameKeySql(`'${stepType(step)}'`, `$${i + 1}::VARCHAR`));
  const own = steps.map((step, i) => `(type = '${stepType(step)}' AND name IS NOT DISTINCT FROM $${i + 1})`);
  return `SELECT count(*) AS n FROM (${names}) AS all_names(type, name)
    WHERE ${nameKeySql('type', 'name')} IN (${keys.join(', ')}) AND NOT (${own.join(' OR ')})`;
}

/** How many users went through `steps` in order within a session, over the period. */
export async function queryFunnel(
  reader: Pick<UsageReader, 'read'>,
  steps: FunnelStep[],
  options: UsageOptions = {},
): Promise<Period & { steps: FunnelStepResult[] }> {
  checkSteps(steps);
  const p = period(options);
  const names = steps.map((s) => s.name);
  const [shared] = await reader.read(sharedKeySql(steps), names);
  const values: DuckDBValue[] = [ts(p.from), ts(p.to), ...names];
  const rows = await reader.read(
    funnelSql(steps, segmentSql(options, values, 'm.'), num(shared?.n) > 0),
    values,
  );
  const byStep = new Map(rows.map((r) => [num(r.step), r]));
  let previous = 0;
  return {
    ...describePeriod(p),
    steps: steps.map((step, i) => {
      const r = byStep.get(i) ?? {};
      const users = num(r.users);
      const dropOff = i === 0 || previous === 0 ? 0 : (previous - users) / previous;
      previous = users;
      return { ...step, users, dropOff, medianMsFromPrevious: i === 0 ? null : numOrNull(r.median_ms) };
    }),
  };
}
