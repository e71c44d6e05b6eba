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

/**
 * Per session, each step is the first matching item after the previous step's (greedy, as the usual
 * funnel); a session stops at the first step it never reaches. Typed columns only. Parameters: $1, $2 the
 * period, then each step's name.
 */
function funnelSql(steps: FunnelStep[], seg: string): string {
  const match = (step: FunnelStep, i: number) =>
    `type = '${step.kind === 'page' ? 'pageview' : 'event'}' AND name = $${i + 3}`;
  const ctes = steps.map((step, i) =>
    i === 0
      ? `s0 AS (SELECT session_id, arg_min(user_id, time) AS user_id, min(time) AS t FROM m
  WHERE ${match(step, i)} GROUP BY session_id)`
      : `s${i} AS (SELECT m.session_id, min(m.time) AS t, any_value(p.t) AS before FROM m
  JOIN s${i - 1} p ON m.session_id = p.session_id AND m.time > p.t
  WHERE ${match(step, i).replaceAll('type', 'm.type').replaceAll('name =', 'm.name =')} GROUP BY m.session_id)`,
  );
  const selects = steps.map((_, i) =>
    i === 0
      ? `SELECT 0 AS step, count(DISTINCT user_id)::DOUBLE AS users, NULL::DOUBLE AS median_ms FROM s0`
      : `SELECT ${i}, count(DISTINCT s0.user_id)::DOUBLE,
  median(epoch_ms(s${i}.t) - epoch_ms(s${i}.before))::DOUBLE FROM s${i} JOIN s0 USING (session_id)`,
  );
  return `WITH m AS (
  SELECT session_id, user_id, type, name, time FROM items
  WHERE time >= $1 AND time < $2 AND session_id IS NOT NULL AND type IN ('pageview', 'event')${seg}
    AND name IN (${steps.map((_, i) => `$${i + 3}`).join(', ')})
),
${ctes.join(',\n')}
${selects.join('\nUNION ALL ')}`;
}

/** How many users went through `steps` in order within a session, over the period. */
export async function queryFunnel(
  reader: Pick<UsageReader, 'read'>,
  steps: FunnelStep[],
  options: UsageOptions = {},
): Promise<Period & { steps: FunnelStepResult[] }> {
  checkSteps(steps);
  const p = period(options);
  const values: DuckDBValue[] = [ts(p.from), ts(p.to), ...steps.map((s) => s.name)];
  const rows = await reader.read(funnelSql(steps, segmentSql(options, values)), values);
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
