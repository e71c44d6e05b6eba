/**
 * A sample of users for the queries no daily sketch can answer (a funnel; a segment's page list), once
 * the period holds more rows than they count exactly in time (ADR 0079). One user in 2^shift is read,
 * chosen by a hash of their key, so every item of a chosen user is in and every item of the others out:
 * a session and a user are whole, as in GA4's explorations past 10 M events and ClickHouse's SAMPLE BY.
 * The distinct users counted are then multiplied by 2^shift; each answer says so, with its error.
 */
export interface Sampling {
  /** The rows (an upper bound, from the daily sketches) a query still reads all of. */
  rowBudget: number;
  /** The fewest users a figure may rest on in the sample; a figure on fewer is counted on all users. */
  minUsers: number;
}

/** Most a sample thins: one user in 2^MAX_SHIFT. */
const MAX_SHIFT = 8;

/** The smallest shift that brings `rows` within the budget (0: every user, exact). */
export function sampleShift(rows: number, sampling: Sampling): number {
  let shift = 0;
  while (shift < MAX_SHIFT && rows / 2 ** shift > sampling.rowBudget) shift++;
  return shift;
}

/**
 * The shift to count again with when the smallest figure rested on `fewest` sampled users: one that
 * should bring it to `minUsers` (each halving of the shift doubles the users), or 0.
 */
export function widerShift(shift: number, fewest: number, sampling: Sampling): number {
  if (shift === 0 || fewest >= sampling.minUsers) return shift;
  return Math.max(0, shift - Math.ceil(Math.log2(sampling.minUsers / Math.max(fewest, 1))));
}

/**
 * Whether the row of `alias` (a table alias with its dot, or none) is in the sample of 1 user in
 * 2^`shift` (shift ≥ 1): its user key's hash (hashed again: the key is DuckDB's hash of a text, whose
 * low bits need not be spread) has its `shift` low bits zero. Rows without a user are out.
 */
export const inSampleSql = (shift: number, alias = '') =>
  `(${alias}user_key IS NOT NULL AND (hash(${alias}user_key) & ${2 ** shift - 1}) = 0)`;

const sampleMethod = (shift: number) => `a sample of 1 user in ${2 ** shift}, chosen by a hash of their id`;

/**
 * A distinct count's estimate from the sample: the relative standard error of a count of `fewest` (the
 * smallest figure's) sampled users, each user in with probability f = 2^-shift: √((1 − f) / fewest).
 */
export function sampledCountEstimate<F extends string>(field: F, shift: number, fewest: number) {
  const f = 2 ** -shift;
  return {
    field,
    kind: 'distinct-count' as const,
    error: Math.min(1, Math.sqrt((1 - f) / Math.max(fewest, 1))),
    errorOf: 'value' as const,
    method: sampleMethod(shift),
  };
}

/**
 * A percentile's estimate from the sample (of at least `fewest` users' values): three standard errors of
 * the sample median's rank, 3 · √(0.5 · 0.5 / n), with n the users (each user's sessions move together,
 * so the users, not the values, are the independent draws).
 */
export function sampledMedianEstimate<F extends string>(field: F, shift: number, fewest: number) {
  return {
    field,
    kind: 'percentile' as const,
    error: Math.min(1, 1.5 / Math.sqrt(Math.max(fewest, 1))),
    errorOf: 'rank' as const,
    method: sampleMethod(shift),
  };
}
