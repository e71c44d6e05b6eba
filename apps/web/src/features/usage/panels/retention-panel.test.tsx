import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import RetentionPanel from './retention-panel';
import { panelProps } from '../test-panel-props';
import type { Retention } from '../usage-api';

const asked: string[] = [];
const answer: Retention = {
  range: '7d',
  from: '2026-11-16T12:00:00Z',
  to: '2026-11-23T12:00:00Z',
  unit: 'day',
  cohorts: [
    { start: '2026-11-21T00:00:00.000Z', users: 4, returning: [3, 1] },
    { start: '2026-11-22T00:00:00.000Z', users: 0, returning: [0] },
    { start: '2026-11-23T00:00:00.000Z', users: 2, returning: [] },
  ],
};
vi.mock('../../../auth/use-api', () => ({
  useApiQuery: (path: string) => {
    asked.push(path);
    return { status: 'ready', data: answer, reload: vi.fn() };
  },
}));

describe('RetentionPanel', () => {
  it('shows each cohort’s size and the share seen again in each following period, shaded by share', () => {
    render(<RetentionPanel {...panelProps({ period: { range: '7d' } })} />);
    expect(asked.at(-1)).toBe('/api/usage/retention?range=7d&unit=day');
    const table = screen.getByTestId('retention-table');
    const [head, first, empty, last] = within(table).getAllByRole('row');
    expect(
      within(head!)
        .getAllByRole('columnheader')
        .map((h) => h.textContent),
    ).toEqual(['First seen (day, UTC)', 'Users', 'Day 1', 'Day 2']);
    const cells = within(first!).getAllByRole('cell');
    expect(cells.map((c) => c.textContent)).toEqual(['4', '75%', '25%']);
    expect(cells[1]?.className).toContain('share-3');
    expect(cells[2]?.className).toContain('share-1');
    // A cohort of nobody has no shares; the last cohort has no following period yet.
    expect(
      within(empty!)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['0', '', '']);
    expect(
      within(last!)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['2', '', '']);
    // The triangle scrolls in its own region, which a keyboard can reach.
    expect(screen.getByRole('region', { name: 'Retention by cohort' }).tabIndex).toBe(0);
  });

  it('asks for weekly cohorts when chosen', () => {
    render(<RetentionPanel {...panelProps({ period: { range: '30d' } })} />);
    fireEvent.click(screen.getByLabelText('By week'));
    expect(asked.at(-1)).toBe('/api/usage/retention?range=30d&unit=week');
  });
});
