import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import FunnelPanel from './funnel-panel';
import { panelProps } from '../test-panel-props';
import type { Funnel } from '../usage-api';

const asked: string[] = [];
const answer: Funnel = {
  range: '24h',
  from: '2026-11-22T00:00:00Z',
  to: '2026-11-23T00:00:00Z',
  steps: [
    { kind: 'page', name: 'Home', users: 4, dropOff: 0, medianMsFromPrevious: null },
    { kind: 'event', name: 'Report, exported', users: 1, dropOff: 0.75, medianMsFromPrevious: 90_000 },
  ],
  estimates: [],
};
vi.mock('../../../auth/use-api', () => ({
  useApiQuery: (path: string) => {
    asked.push(path);
    return { status: 'ready', data: answer, reload: vi.fn() };
  },
}));

describe('FunnelPanel', () => {
  it('asks for the steps as typed, in order, and shows users, drop-off and time per step', () => {
    render(<FunnelPanel {...panelProps({ period: { range: '24h' } })} />);
    expect(asked).toEqual([]);
    fireEvent.change(screen.getByLabelText('Step 1 name'), { target: { value: ' Home ' } });
    fireEvent.change(screen.getByLabelText('Step 2 kind'), { target: { value: 'event' } });
    fireEvent.change(screen.getByLabelText('Step 2 name'), { target: { value: 'Report, exported' } });
    fireEvent.click(screen.getByRole('button', { name: 'Show the funnel' }));
    expect(asked.at(-1)).toBe(
      '/api/usage/funnel?range=24h&step=page%3AHome&step=event%3AReport%2C%20exported',
    );
    const rows = within(screen.getByTestId('funnel-table')).getAllByRole('row');
    expect(rows[1]?.textContent).toBe('1. Page Home4——');
    expect(rows[2]?.textContent).toBe('2. Event Report, exported175%90.00 s');
    expect(screen.queryByText(/Estimated over this period/)).toBeNull();
  });

  it('marks the figures a sample of users gave, and says how close they are', () => {
    const method = 'a sample of 1 user in 4, chosen by a hash of their id';
    answer.estimates = [
      { field: 'users', kind: 'distinct-count', error: 0.012, errorOf: 'value', method },
      { field: 'medianMsFromPrevious', kind: 'percentile', error: 0.02, errorOf: 'rank', method },
    ];
    try {
      render(<FunnelPanel {...panelProps({ period: { range: '30d' } })} />);
      fireEvent.change(screen.getByLabelText('Step 1 name'), { target: { value: 'Home' } });
      fireEvent.change(screen.getByLabelText('Step 2 name'), { target: { value: 'Profile' } });
      fireEvent.click(screen.getByRole('button', { name: 'Show the funnel' }));
      const headings = within(screen.getByTestId('funnel-table')).getAllByRole('columnheader');
      expect(headings.map((h) => h.textContent)).toEqual([
        'Step',
        '≈ Users',
        'Dropped',
        '≈ Median time from previous',
      ]);
      expect(screen.getByText(/Estimated over this period/).textContent).toBe(
        `≈ Estimated over this period: Users by ${method} (standard error 1.2%); Median time from previous by ${method} (within 2% of the ranks).`,
      );
    } finally {
      answer.estimates = [];
    }
  });

  it('takes 2 to 5 steps', () => {
    render(<FunnelPanel {...panelProps({ period: { range: '24h' } })} />);
    const add = screen.getByRole('button', { name: 'Add a step' });
    const remove = screen.getByRole('button', { name: 'Remove the last step' });
    expect((remove as HTMLButtonElement).disabled).toBe(true);
    for (let i = 0; i < 3; i++) fireEvent.click(add);
    expect(screen.getAllByRole('group')).toHaveLength(5);
    expect((add as HTMLButtonElement).disabled).toBe(true);
  });
});
