import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import FlowsPanel from './flows-panel';
import { panelProps } from '../test-panel-props';
import type { UserFlows } from '../usage-api';

const asked: string[] = [];
const answer: UserFlows = {
  range: '24h',
  from: '2026-11-22T00:00:00Z',
  to: '2026-11-23T00:00:00Z',
  page: 'Profile & more',
  views: 5,
  entries: 1,
  exits: 2,
  next1: [
    { pages: ['Usage'], count: 2 },
    { pages: ['Home'], count: 1 },
  ],
  next2: [{ pages: ['Usage', 'Profile & more'], count: 1 }],
  previous1: [{ pages: ['Home'], count: 3 }],
  previous2: [],
};
vi.mock('../../../auth/use-api', () => ({
  useApiQuery: (path: string) => {
    asked.push(path);
    return { status: 'ready', data: answer, reload: vi.fn() };
  },
}));

describe('FlowsPanel', () => {
  it('asks for the page typed and shows the paths before and after it, in the order visited', () => {
    render(<FlowsPanel {...panelProps({ period: { range: '24h' } })} />);
    expect(asked).toEqual([]);
    fireEvent.change(screen.getByLabelText('Page'), { target: { value: ' Profile & more ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Show the flows' }));
    expect(asked.at(-1)).toBe('/api/usage/flows?range=24h&page=Profile%20%26%20more');
    expect(screen.getByTestId('flows-summary').textContent).toBe(
      '5 views: 1 began a session\u2019s day, 2 ended one.',
    );
    expect(screen.getByTestId('flows-scope').textContent).toContain('one UTC day');
    const rows = (id: string) =>
      within(screen.getByTestId(id))
        .getAllByRole('row')
        .slice(1)
        .map((r) => r.textContent);
    expect(rows('flows-next1')).toEqual(['Usage2', 'Home1']);
    expect(rows('flows-next2')).toEqual(['Usage → Profile & more1']);
    expect(rows('flows-previous1')).toEqual(['Home3']);
    expect(rows('flows-previous2')).toEqual(['None']);
  });
});
