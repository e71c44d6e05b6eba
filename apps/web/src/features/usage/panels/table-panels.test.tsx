import { render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { formatCount } from '../format';
import { panelProps } from '../test-panel-props';
import type { CustomEvents, Pages } from '../usage-api';
import EventsPanel from './events-panel';
import PagesPanel from './pages-panel';

const period = { range: '24h', from: '2026-11-22T00:00:00Z', to: '2026-11-23T00:00:00Z' } as const;
const pages: Pages = {
  ...period,
  pages: [
    { name: 'Home', views: 1234, users: 56, avgDurationMs: 120.4, p95DurationMs: 1500 },
    { name: 'Profile', views: 3, users: 2, avgDurationMs: 80, p95DurationMs: 95 },
  ],
  estimates: [
    { field: 'users', kind: 'distinct-count', error: 0.02, errorOf: 'value', method: 'HyperLogLog' },
    { field: 'p95DurationMs', kind: 'percentile', error: 0.01, errorOf: 'rank', method: 't-digest' },
  ],
};
const events: CustomEvents = {
  ...period,
  events: [{ name: 'report exported', count: 7, users: 3, sessions: 4 }],
  estimates: [],
};
const answers = new Map<string, unknown>();
const asked: string[] = [];
vi.mock('../../../auth/use-api', () => ({
  useApiQuery: (path: string) => {
    asked.push(path);
    const data = answers.get(path.replace(/\?.*/, ''));
    return data ? { status: 'ready', data, reload: vi.fn() } : { status: 'loading', reload: vi.fn() };
  },
}));

/** The table's header and body, each row as its cells' texts. */
const table = (testId: string) =>
  within(screen.getByTestId(testId))
    .getAllByRole('row')
    .map((row) => [...row.children].map((cell) => cell.textContent));

describe('the Pages panel', () => {
  it('asks for its period, and shows each page with its figures, the estimated columns marked and explained', () => {
    answers.set('/api/usage/pages', pages);
    render(<PagesPanel {...panelProps({ period: { range: '7d' } })} />);
    expect(asked.at(-1)).toBe('/api/usage/pages?range=7d');
    const region = screen.getByRole('region', { name: 'Pages' });
    expect(region.querySelector('h3')?.textContent).toBe('Pages');
    expect(table('pages-table')).toEqual([
      ['Page', 'Views', '≈ Users', 'Average ms', '≈ p95 ms'],
      ['Home', formatCount(1234), '56', '120 ms', '1.50 s'],
      ['Profile', '3', '2', '80 ms', '95 ms'],
    ]);
    expect(region.querySelector('.estimates-note')?.textContent).toBe(
      '≈ Estimated over this period: Users by HyperLogLog (standard error 2%); p95 by t-digest (within 1% of the ranks).',
    );
    expect(within(region).getByRole('button', { name: /CSV/ })).toBeTruthy();
  });

  it('says when no page was viewed', () => {
    answers.set('/api/usage/pages', { ...pages, pages: [] });
    render(<PagesPanel {...panelProps()} />);
    expect(screen.getByRole('region', { name: 'Pages' }).textContent).toBe(
      'PagesNothing recorded in this period.',
    );
  });
});

describe('the Custom events panel', () => {
  it('shows each event with how often, by how many users and sessions; no note when all are exact', () => {
    answers.set('/api/usage/events', events);
    render(<EventsPanel {...panelProps({ segment: { browser: 'Firefox' } })} />);
    expect(asked.at(-1)).toBe('/api/usage/events?range=24h&browser=Firefox');
    const region = screen.getByRole('region', { name: 'Custom events' });
    expect(region.querySelector('h3')?.textContent).toBe('Custom events');
    expect(table('events-table')).toEqual([
      ['Event', 'Count', 'Users', 'Sessions'],
      ['report exported', '7', '3', '4'],
    ]);
    expect(region.querySelector('.estimates-note')).toBeNull();
  });

  it('marks the users and sessions when the answer says they are estimates', () => {
    answers.set('/api/usage/events', {
      ...events,
      estimates: [
        { field: 'sessions', kind: 'distinct-count', error: 0.02, errorOf: 'value', method: 'HyperLogLog' },
      ],
    });
    render(<EventsPanel {...panelProps()} />);
    expect(table('events-table')[0]).toEqual(['Event', 'Count', 'Users', '≈ Sessions']);
    expect(
      screen.getByRole('region', { name: 'Custom events' }).querySelector('.estimates-note')?.textContent,
    ).toBe('≈ Estimated over this period: Sessions by HyperLogLog (standard error 2%).');
  });

  it('says when no event was tracked', () => {
    answers.set('/api/usage/events', { ...events, events: [] });
    render(<EventsPanel {...panelProps()} />);
    expect(screen.getByRole('region', { name: 'Custom events' }).textContent).toBe(
      'Custom eventsNothing recorded in this period.',
    );
  });
});
