import type { DuckDBValue } from '@duckdb/node-api';
import { funnelStepsProblem, type Funnel, type FunnelStep } from '@gatehouse/api-contract';
import {
  describePeriod,
  num,
  numOrNull,
  period,
  segmentSql,
  sketchBoundValues,
  ts,
  type UsageOptions,
  type UsageReader,
} from './sql.js';
import { EVENT_DAILY, PAGE_DAILY } from '../store/daily-sketch.js';
import { nameKeySql } from '../store/row-layout.js';
import {
  inSampleSql,
  sampledCountEstimate,
  sampledMedianEstimate,
  sampleShift,
  widerShift,
  type Sampling,
} from './sample.js';

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
function funnelSql(steps: FunnelStep[], seg: string, byName: boolean, shift: number): string {
  const match = (step: FunnelStep, i: number) =>
    byName
      ? `m.type = '${stepType(step)}' AND m.name = $${i + 3}`
      : `m.name_key = ${nameKeySql(`'${stepType(step)}'`, `$${i + 3}::VARCHAR`)}`;
  const sample = shift === 0 ? '' : ` AND ${inSampleSql(shift, 'm.')}`;
  const where = (step: FunnelStep, i: number) =>
    `WHERE m.time >= $1 AND m.time < $2 AND m.session_key IS NOT NULL AND ${match(step, i)}${seg}${sample}`;
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

/**
 * Rows the steps can read over the period (an upper bound): each step's page views or events on the
 * days the period touches, from the daily sketches. Parameters: $1 the period's first day, $2 its end,
 * then each step's name.
 */
function stepRowsSql(steps: FunnelStep[]): string {
  const rows = steps.map((step, i) =>
    step.kind === 'page'
      ? `SELECT views AS n FROM ${PAGE_DAILY} WHERE day >= $1 AND day < $2 AND name = $${i + 3}`
      : `SELECT n FROM ${EVENT_DAILY} WHERE day >= $1 AND day < $2 AND name = $${i + 3}`,
  );
  return `SELECT coalesce(sum(n), 0)::DOUBLE AS n FROM (${rows.join(' UNION ALL ')})`;
}

/** A funnel reads every user's items up to a million rows of its steps, a sample past that (ADR 0079). */
export const FUNNEL_SAMPLING: Sampling = { rowBudget: 1_000_000, minUsers: 2_000 };

/**
 * How many users went through `steps` in order within a session, over the period. Past
 * `sampling.rowBudget` rows of the steps, over a sample of users (sample.ts): the users counted are then
 * multiplied by the sample's inverse, and the answer's estimates say so. When a step has fewer than
 * `sampling.minUsers` users in the sample, the funnel is counted again over more of them (all, if need
 * be), so that every estimate rests on that many.
 */
export async function queryFunnel(
  reader: Pick<UsageReader, 'read'>,
  steps: FunnelStep[],
  options: UsageOptions = {},
  sampling: Sampling = FUNNEL_SAMPLING,
): Promise<Omit<Funnel, 'steps'> & { steps: FunnelStepResult[] }> {
  checkSteps(steps);
  const p = period(options);
  const names = steps.map((s) => s.name);
  const [shared] = await reader.read(sharedKeySql(steps), names);
  const [stepRows] = await reader.read(stepRowsSql(steps), [...sketchBoundValues(p), ...names]);
  const values: DuckDBValue[] = [ts(p.from), ts(p.to), ...names];
  const seg = segmentSql(options, values, 'm.');
  let shift = sampleShift(num(stepRows?.n), sampling);
  for (;;) {
    const rows = await reader.read(funnelSql(steps, seg, num(shared?.n) > 0, shift), values);
    const byStep = new Map(rows.map((r) => [num(r.step), r]));
    const sampled = steps.map((_, i) => num(byStep.get(i)?.users));
    const fewest = Math.min(...sampled);
    const wider = widerShift(shift, fewest, sampling);
    if (wider !== shift) {
      shift = wider;
      continue;
    }
    let previous = 0;
    return {
      ...describePeriod(p),
      steps: steps.map((step, i) => {
        const users = sampled[i]! * 2 ** shift;
        const dropOff = i === 0 || previous === 0 ? 0 : (previous - users) / previous;
        previous = users;
        const median = i === 0 ? null : numOrNull(byStep.get(i)?.median_ms);
        return { ...step, users, dropOff, medianMsFromPrevious: median };
      }),
      estimates:
        shift === 0
          ? []
          : [
              sampledCountEstimate('users', shift, fewest),
              sampledMedianEstimate('medianMsFromPrevious', shift, Math.min(...sampled.slice(1))),
            ],
    };
  }
}
