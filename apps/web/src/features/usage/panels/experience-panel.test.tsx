import { render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as UseApi from '../../../auth/use-api';
import ExperiencePanel from './experience-panel';
import { panelProps } from '../test-panel-props';
import type { Experience } from '../usage-api';

const lcp = {
  count: 4,
  p75: 3500,
  rating: 'needs-improvement',
  good: 0.5,
  needsImprovement: 0.25,
  poor: 0.25,
} as const;
const data: Experience = {
  range: '24h',
  from: '2026-11-22T00:00:00Z',
  to: '2026-11-23T00:00:00Z',
  overall: { LCP: lcp, CLS: { count: 1, p75: 0.3, rating: 'poor', good: 0, needsImprovement: 0, poor: 1 } },
  pages: [{ page: 'Home', vitals: { LCP: lcp } }],
  bucketMs: 3_600_000,
  trend: [
    { start: '2026-11-22T22:00:00Z', p75: { LCP: 3500, INP: null, CLS: 0.3, FCP: null, TTFB: null } },
    { start: '2026-11-22T23:00:00Z', p75: { LCP: null, INP: null, CLS: null, FCP: null, TTFB: null } },
  ],
  estimates: [],
};
const asked: string[] = [];
let answer = data;
vi.mock('../../../auth/use-api', async (importOriginal) => ({
  ...(await importOriginal<typeof UseApi>()),
  useApiQuery: (path: string) => {
    asked.push(path);
    return { status: 'ready', data: answer, reload: vi.fn() };
  },
}));
beforeEach(() => {
  answer = data;
});

describe('ExperiencePanel', () => {
  it('shows each vital’s p75 with its rating and shares, per page too, and the trend as tables', () => {
    render(<ExperiencePanel {...panelProps()} />);
    expect(asked.at(-1)).toBe('/api/usage/experience?range=24h');
    const overall = within(screen.getByTestId('vitals-table'));
    const lcpRow = overall.getByRole('row', { name: /Largest Contentful Paint/ });
    expect(lcpRow.textContent).toContain('3.50 s');
    expect(lcpRow.textContent).toContain('needs improvement');
    expect(lcpRow.textContent).toContain('4: 50% good, 25% needs improvement, 25% poor');
    expect(overall.getByRole('row', { name: /Cumulative Layout Shift/ }).textContent).toContain('0.30 poor');
    expect(overall.getByRole('row', { name: /Interaction to Next Paint/ }).textContent).toContain('—');
    const home = within(screen.getByTestId('vitals-pages-table')).getByRole('row', { name: /Home/ });
    expect(home.textContent).toContain('3.50 s needs improvement');
    // The trend's tables: a bucket without values reads as a dash, not as zero.
    const details = screen.getByText('p75 of CLS: as a table').closest('details');
    const rows = within(details as HTMLElement).getAllByRole('row');
    expect(rows.map((row) => row.querySelector('td')?.textContent)).toEqual([undefined, '0.30', '—']);
  });

  it('marks the p75 as an estimate, with its bound, when the answer says it is one', () => {
    const { rerender } = render(<ExperiencePanel {...panelProps()} />);
    expect(
      within(screen.getByTestId('vitals-table')).getByRole('columnheader', { name: 'p75' }),
    ).toBeTruthy();
    expect(screen.queryByText(/within .* of the value/)).toBeNull();
    const estimates: Experience['estimates'] = [
      {
        field: 'p75',
        kind: 'percentile',
        error: 0.025,
        errorOf: 'value',
        method: 'values counted in bins 5 % wide per vital, page and day',
      },
    ];
    answer = { ...data, range: '30d', estimates };
    rerender(<ExperiencePanel {...panelProps({ period: { range: '30d' } })} />);
    expect(
      within(screen.getByTestId('vitals-table')).getByRole('columnheader', { name: '≈ p75' }),
    ).toBeTruthy();
    // The trend's charts carry the mark too.
    expect(screen.getByText('≈ p75 of CLS: as a table')).toBeTruthy();
    expect(screen.queryByText('p75 of CLS: as a table')).toBeNull();
    expect(screen.getByText(/values counted in bins 5 % wide per vital, page and day/).textContent).toMatch(
      /p75.*within 2\.5\s?% of the value/,
    );
  });

  it('says when nothing was recorded', () => {
    answer = { ...data, overall: {}, pages: [] };
    render(<ExperiencePanel {...panelProps()} />);
    expect(screen.queryAllByText('Nothing recorded in this period.')).toHaveLength(1);
  });
});
