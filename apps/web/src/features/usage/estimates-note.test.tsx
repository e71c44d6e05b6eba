import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Estimate } from '@gatehouse/api-contract';
import { EstimatesNote, estimatedHeading, estimateBound } from './estimates-note';

const estimates: Estimate[] = [
  { field: 'users', kind: 'distinct-count', error: 0.023, errorOf: 'value', method: 'HyperLogLog' },
  { field: 'p95DurationMs', kind: 'percentile', error: 0.01, errorOf: 'rank', method: 'a t-digest' },
];

describe('estimates', () => {
  it('marks the headings of estimated columns only', () => {
    expect(estimatedHeading('Users', 'users', estimates)).toBe('≈ Users');
    expect(estimatedHeading('Views', 'views', estimates)).toBe('Views');
    expect(estimatedHeading('Users', 'users', [])).toBe('Users');
  });

  it('says how close each estimate is, by its kind', () => {
    expect(estimateBound(estimates[0]!)).toMatch(/^standard error 2\.3\s?%$/);
    expect(estimateBound(estimates[1]!)).toMatch(/^within 1\s?% of the ranks$/);
    expect(estimateBound({ kind: 'percentile', error: 0.025, errorOf: 'value' })).toMatch(
      /^within 2\.5\s?% of the value$/,
    );
  });

  it('explains the marked columns below the table, and says nothing when all is exact', () => {
    const { container, rerender } = render(
      <EstimatesNote estimates={estimates} headings={{ users: 'Users', p95DurationMs: 'p95' }} />,
    );
    expect(screen.getByText(/Estimated over this period/).textContent).toMatch(
      /^≈ Estimated over this period: Users by HyperLogLog \(standard error 2\.3\s?%\); p95 by a t-digest \(within 1\s?% of the ranks\)\.$/,
    );
    rerender(<EstimatesNote estimates={[]} headings={{}} />);
    expect(container.textContent).toBe('');
  });
});
