import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { AuthProvider } from '../../auth/auth-context';
import { fakeSession } from '../../auth/fake-session';
import { ApiError } from '../../auth/use-api';
import { LineChart } from './line-chart';
import { Panel } from './panel';

const rows = (data: number[]) => <p>{data.join(',')}</p>;

describe('Panel', () => {
  it('shows loading, then the data', () => {
    const { rerender } = render(
      <Panel
        title="Pages"
        query={{ status: 'loading', reload: vi.fn() }}
        isEmpty={(d: number[]) => d.length === 0}
      >
        {rows}
      </Panel>,
    );
    const region = screen.getByRole('region', { name: 'Pages' });
    // The whole section, so a state that shows its neighbour's text as well fails too.
    expect(region.textContent).toBe('PagesLoading…');
    expect(region.getAttribute('aria-busy')).toBe('true');
    rerender(
      <Panel
        title="Pages"
        query={{ status: 'ready', data: [1, 2], reload: vi.fn() }}
        isEmpty={(d) => d.length === 0}
      >
        {rows}
      </Panel>,
    );
    expect(region.textContent).toBe('Pages1,2');
    expect(region.getAttribute('aria-busy')).toBe('false');
  });

  it('says a panel is not available with this source, links to the portal, and offers no retry', () => {
    const error = new ApiError(
      501,
      'not_available',
      'The server answered 501: Funnels are not available with Azure Monitor as the source.',
      false,
      { link: 'https://portal.azure.com/#@/resource/x/funnels' },
    );
    render(
      <Panel title="Funnel" query={{ status: 'failed', error, reload: vi.fn() }} isEmpty={() => false}>
        {rows}
      </Panel>,
    );
    const region = screen.getByRole('region', { name: 'Funnel' });
    expect(region.textContent).toBe(
      'FunnelNot available with this source. Funnels are not available with Azure Monitor as the source. Open it in the Azure portal',
    );
    expect(
      within(region).getByRole('link', { name: 'Open it in the Azure portal' }).getAttribute('href'),
    ).toBe('https://portal.azure.com/#@/resource/x/funnels');
    expect(within(region).queryByRole('button')).toBeNull();
    expect(within(region).queryByRole('alert')).toBeNull();
  });

  it('is a region named by its title, spaces and all', () => {
    render(
      <Panel title="Custom events" query={{ status: 'loading', reload: vi.fn() }} isEmpty={() => false}>
        {rows}
      </Panel>,
    );
    expect(screen.queryAllByRole('region', { name: 'Custom events' })).toHaveLength(1);
  });

  it('says when nothing was recorded', () => {
    render(
      <Panel
        title="Pages"
        query={{ status: 'ready', data: [], reload: vi.fn() }}
        isEmpty={(d: number[]) => d.length === 0}
      >
        {rows}
      </Panel>,
    );
    expect(screen.getByRole('region', { name: 'Pages' }).textContent).toBe(
      'PagesNothing recorded in this period.',
    );
  });

  it('explains a failure and offers to try again', () => {
    const reload = vi.fn();
    render(
      <Panel
        title="Pages"
        query={{ status: 'failed', error: new Error('The server answered 503.'), reload }}
        isEmpty={(d: number[]) => d.length === 0}
      >
        {rows}
      </Panel>,
    );
    expect(screen.getByRole('alert').textContent).toContain('The server answered 503.');
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it('asks to sign in again, coming back here, when the API refused the renewed session', async () => {
    window.history.replaceState(null, '', '/usage?range=7d');
    const signIn = vi.fn(() => Promise.resolve());
    const session = fakeSession({ status: 'signed-out' }, { signIn });
    const error = new ApiError(401, 'invalid_token', 'The server answered 401. Sign in again.', true);
    render(
      <AuthProvider loadSession={() => Promise.resolve(session)}>
        <Panel
          title="Pages"
          query={{ status: 'failed', error, reload: vi.fn() }}
          isEmpty={(d: number[]) => d.length === 0}
        >
          {rows}
        </Panel>
      </AuthProvider>,
    );
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Sign in again' }));
    await waitFor(() => expect(signIn).toHaveBeenCalledWith('/usage?range=7d', 'expired-session'));
  });
});

describe('LineChart', () => {
  it('has the same numbers as a table, and is a focusable image named by its title and extent', () => {
    const { container } = render(
      <LineChart
        title="Page views"
        points={[
          { start: '2026-11-21T10:00:00Z', pageViews: 3 },
          { start: '2026-11-21T11:00:00Z', pageViews: 1234 },
        ]}
        series={[{ key: 'pageViews', label: 'Page views', className: 's1' }]}
      />,
    );
    const image = screen.getByRole('img');
    expect(image.getAttribute('tabindex')).toBe('0');
    expect(image.getAttribute('aria-label')).toMatch(/^Page views, 2 points from .+ to .+, highest 1,234\./);
    const table = screen.getByRole('table');
    const cells = within(table)
      .getAllByRole('row')
      .map((row) => row.lastElementChild?.textContent);
    expect(cells).toEqual(['Page views', '3', '1,234']);
    expect(container.querySelectorAll('polyline')).toHaveLength(1);
  });

  it('reads its points one by one with the arrow keys, and draws the marks it is given', () => {
    const { container } = render(
      <LineChart
        title="Users"
        points={[
          { start: '2026-11-21T10:00:00Z', users: 3 },
          { start: '2026-11-21T11:00:00Z', users: 5 },
        ]}
        marks={[{ at: '2026-11-21T10:30:00Z', label: 'Release 1.2' }]}
        series={[{ key: 'users', label: 'Users', className: 's1' }]}
      />,
    );
    const image = screen.getByRole('img');
    const readout = container.querySelector('[aria-live="polite"]');
    fireEvent.keyDown(image, { key: 'ArrowRight' });
    expect(readout?.textContent).toMatch(/: Users 3\. Annotation: Release 1\.2 \(.+\)$/);
    fireEvent.keyDown(image, { key: 'ArrowRight' });
    expect(readout?.textContent).toMatch(/: Users 5$/);
    fireEvent.keyDown(image, { key: 'ArrowRight' });
    expect(readout?.textContent).toMatch(/: Users 5$/);
    fireEvent.keyDown(image, { key: 'Home' });
    expect(readout?.textContent).toMatch(/: Users 3\. Annotation: Release 1\.2 \(.+\)$/);
    // The mark sits halfway between the two points.
    const mark = container.querySelector('line.mark');
    expect(mark?.textContent).toBe('Release 1.2');
    expect(mark?.getAttribute('x1')).toBe(String((28 + 640 - 28) / 2));
  });

  it('names its annotations: in its description, at their point with the arrow keys, in a list and in its table', () => {
    const { container } = render(
      <LineChart
        title="Users"
        points={[
          { start: '2026-11-21T10:00:00Z', users: 3 },
          { start: '2026-11-21T11:00:00Z', users: 5 },
        ]}
        marks={[
          { at: '2026-11-21T11:40:00Z', label: 'Incident <b>db</b>' },
          { at: '2026-11-21T09:59:00Z', label: 'Before the chart' },
          { at: '2026-11-21T12:00:00Z', label: 'After the last bucket' },
        ]}
        series={[{ key: 'users', label: 'Users', className: 's1' }]}
      />,
    );
    const image = screen.getByRole('img');
    expect(image.getAttribute('aria-label')).toMatch(
      /Arrow keys read each point\. 1 annotation, read at its point\.$/,
    );
    const readout = container.querySelector('[aria-live="polite"]');
    fireEvent.keyDown(image, { key: 'ArrowRight' });
    expect(readout?.textContent).toMatch(/: Users 3$/);
    fireEvent.keyDown(image, { key: 'End' });
    expect(readout?.textContent).toMatch(/: Users 5\. Annotation: Incident <b>db<\/b> \(.+\)$/);
    expect(screen.getByRole('list', { name: 'Annotations on Users' }).textContent).toMatch(
      /Incident <b>db<\/b>$/,
    );
    expect(container.querySelector('b')).toBeNull();
    // In the last bucket, after its point: drawn at the right edge, not beyond it.
    const marks = container.querySelectorAll('line.mark');
    expect(marks).toHaveLength(1);
    expect(marks[0]?.getAttribute('x1')).toBe(String(640 - 28));
    const rows = within(screen.getByRole('table')).getAllByRole('row');
    expect(rows.map((row) => row.lastElementChild?.textContent)).toEqual([
      'Annotations',
      '',
      expect.stringMatching(/^Incident <b>db<\/b> \(/),
    ]);
  });

  it('leaves a gap where nothing was measured, rather than drawing a zero', () => {
    const { container } = render(
      <LineChart
        title="LCP"
        points={[
          { start: '2026-11-21T10:00:00Z', lcp: 1200 },
          { start: '2026-11-21T11:00:00Z', lcp: 1300 },
          { start: '2026-11-21T12:00:00Z', lcp: null },
          { start: '2026-11-21T13:00:00Z', lcp: 1100 },
        ]}
        format={(v) => `${v} ms`}
        series={[{ key: 'lcp', label: 'LCP', className: 's1' }]}
      />,
    );
    const lines = [...container.querySelectorAll('polyline')].map((l) => l.getAttribute('points'));
    expect(lines.map((points) => points?.split(' ').length)).toEqual([2, 1]);
    const cells = [...container.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells).toEqual(['1200 ms', '1300 ms', '—', '1100 ms']);
  });
});
