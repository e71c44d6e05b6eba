import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { FunnelPanel } from './funnel-panel';
import type { Funnel } from './usage-api';

const asked: string[] = [];
const answer: Funnel = {
  range: '24h',
  from: '2026-11-22T00:00:00Z',
  to: '2026-11-23T00:00:00Z',
  steps: [
    { kind: 'page', name: 'Home', users: 4, dropOff: 0, medianMsFromPrevious: null },
    { kind: 'event', name: 'Report, exported', users: 1, dropOff: 0.75, medianMsFromPrevious: 90_000 },
  ],
};
vi.mock('../../auth/use-api', () => ({
  useApiQuery: (path: string) => {
    asked.push(path);
    return { status: 'ready', data: answer, reload: vi.fn() };
  },
}));

describe('FunnelPanel', () => {
  it('asks for the steps as typed, in order, and shows users, drop-off and time per step', () => {
    render(<FunnelPanel period={{ range: '24h' }} />);
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
  });

  it('takes 2 to 5 steps', () => {
    render(<FunnelPanel period={{ range: '24h' }} />);
    const add = screen.getByRole('button', { name: 'Add a step' });
    const remove = screen.getByRole('button', { name: 'Remove the last step' });
    expect((remove as HTMLButtonElement).disabled).toBe(true);
    for (let i = 0; i < 3; i++) fireEvent.click(add);
    expect(screen.getAllByRole('group')).toHaveLength(5);
    expect((add as HTMLButtonElement).disabled).toBe(true);
  });
});
