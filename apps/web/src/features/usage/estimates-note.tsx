import type { Estimate } from '@gatehouse/api-contract';
import { formatRate } from './format';

/** The mark before an estimated figure's heading ("≈ Users"), explained by EstimatesNote below the table. */
export const ESTIMATE_MARK = '≈';

/** A column's heading, marked when the answer says its figures are estimates. */
export function estimatedHeading(heading: string, field: string, estimates: readonly Estimate[]): string {
  return estimates.some((e) => e.field === field) ? `${ESTIMATE_MARK} ${heading}` : heading;
}

/** How close one estimate is, in words. */
export function estimateBound(estimate: Pick<Estimate, 'kind' | 'error' | 'errorOf'>): string {
  if (estimate.kind === 'distinct-count') return `standard error ${formatRate(estimate.error)}`;
  return estimate.errorOf === 'rank'
    ? `within ${formatRate(estimate.error)} of the ranks`
    : `within ${formatRate(estimate.error)} of the value`;
}

/**
 * Below a table whose answer has estimates (ADR 0074): which columns, how they are
 * estimated and how closely. Nothing when every figure is exact.
 */
export function EstimatesNote({
  estimates,
  headings,
}: {
  estimates: readonly Estimate[];
  /** Each estimated field's column heading, as the table shows it without the mark. */
  headings: Readonly<Record<string, string>>;
}) {
  if (estimates.length === 0) return null;
  return (
    <p className="estimates-note">
      {ESTIMATE_MARK} Estimated over this period:{' '}
      {estimates
        .map((e) => `${headings[e.field] ?? e.field} by ${e.method} (${estimateBound(e)})`)
        .join('; ')}
      .
    </p>
  );
}
