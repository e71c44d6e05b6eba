import { render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type * as UseApi from '../../auth/use-api';
import { useEndpoint } from '../../auth/api-client';
import { collectPanels, PanelPlacementError } from './collect-panels';
import { DashboardSections, PANEL_MODULES } from './dashboard';
import type { PanelModule, PanelPlacement, PanelProps } from './panel-props';
import { Panel } from './panel';
import { SECTIONS } from './sections';
import type { Pages } from './usage-api';

const pages: Pages = {
  range: '24h',
  from: '2026-11-22T00:00:00Z',
  to: '2026-11-23T00:00:00Z',
  pages: [{ name: 'Home', views: 3, users: 2, avgDurationMs: 120, p95DurationMs: 300 }],
  estimates: [],
};
const asked: string[] = [];
// Only the pages endpoint answers; every other panel stays loading, which is all this test needs of them.
vi.mock('../../auth/use-api', async (importOriginal) => ({
  ...(await importOriginal<typeof UseApi>()),
  useApi: () => () => Promise.resolve({}),
  useApiQuery: (path: string) => {
    asked.push(path);
    return path.startsWith('/api/usage/pages?')
      ? { status: 'ready', data: pages, reload: vi.fn() }
      : { status: 'loading', reload: vi.fn() };
  },
}));

const loading = { status: 'loading' as const, reload: vi.fn() };
const props: PanelProps = {
  view: { period: { range: '24h' }, figure: 'users', segment: {} },
  query: { range: '24h' },
  every: undefined,
  setView: vi.fn(),
  marks: [],
  annotations: loading,
  overview: loading,
};

/** A panel made by the recipe: its placement and its component, which asks for its own data. */
function fixture(panel: PanelPlacement): PanelModule {
  return {
    panel,
    default: function BusiestPagePanel({ query, every }: PanelProps) {
      const answer = useEndpoint('/usage/pages', { query }, every);
      return (
        <Panel title="Busiest page" level={3} query={answer} isEmpty={(data) => data.pages.length === 0}>
          {(data) => <p data-testid="busiest-page">{data.pages[0]?.name}</p>}
        </Panel>
      );
    },
  };
}
const FIXTURE = './panels/busiest-page-panel.tsx';

describe('the dashboard’s panels', () => {
  it('are each a file of panels/, valid, and every section has one', () => {
    const sections = collectPanels(PANEL_MODULES);
    expect(sections.map(({ section, panels }) => [section.id, panels.length > 0])).toEqual([
      ['overview', true],
      ['experience', true],
      ['behaviour', true],
      ['sign-in', true],
      ['sources', true],
      ['errors', true],
      ['calls', true],
      ['sessions', true],
      ['annotations', true],
    ]);
  });

  it('take a panel added by its file alone: in its section, at its order, showing its own data', () => {
    const sections = collectPanels({
      ...PANEL_MODULES,
      [FIXTURE]: fixture({ section: 'behaviour', order: 45 }),
    });
    render(<DashboardSections sections={sections} props={props} />);
    const behaviour = screen.getByRole('region', { name: 'Behaviour' });
    expect(
      within(behaviour)
        .getAllByRole('heading', { level: 3 })
        .map((h) => h.textContent),
    ).toEqual(['Pages', 'Custom events', 'Funnels', 'User flows', 'Busiest page', 'Retention']);
    expect(screen.getByTestId('busiest-page').textContent).toBe('Home');
    expect(asked).toContain('/api/usage/pages?range=24h');
  });

  it('keep the page’s ids, headings and side-by-side rows', () => {
    const { container } = render(<DashboardSections sections={collectPanels(PANEL_MODULES)} props={props} />);
    // Each section's link in the bar (e2e/usage-dashboard.spec.ts names them) leads to an element.
    for (const { id } of SECTIONS) expect(container.querySelector(`#${id}`), id).not.toBeNull();
    expect(within(container.querySelector('#errors') as HTMLElement).getByRole('heading').textContent).toBe(
      'Errors',
    );
    // Pages beside custom events, funnels beside flows, errors beside calls.
    const rows = [...container.querySelectorAll('.usage-grid')].map((grid) =>
      [...grid.children].map((child) => child.querySelector('h2, h3')?.textContent),
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        ['Pages', 'Custom events'],
        ['Funnels', 'User flows'],
        ['Errors', 'Calls'],
      ]),
    );
  });

  it('refuse a placement in a section the page does not have, naming the file', () => {
    const unknown = fixture({ section: 'nowhere' as PanelPlacement['section'], order: 10 });
    expect(() => collectPanels({ ...PANEL_MODULES, [FIXTURE]: unknown })).toThrow(
      new PanelPlacementError(
        'unknown_section',
        `${FIXTURE} places its panel in the section "nowhere", which the dashboard does not have (sections.ts has overview, experience, behaviour, sign-in, sources, errors, calls, sessions, annotations).`,
      ),
    );
  });

  it('refuse two panels at the same order of a section, naming both files', () => {
    const twin = fixture({ section: 'behaviour', order: 10 });
    expect(() => collectPanels({ ...PANEL_MODULES, [FIXTURE]: twin })).toThrow(
      `${FIXTURE} and ./panels/pages-panel.tsx both take order 10 of the section "behaviour": give one another order.`,
    );
  });

  it('refuse a panel file without its placement or its component', () => {
    expect(() => collectPanels({ [FIXTURE]: { default: () => null } })).toThrow(
      `${FIXTURE} exports no placement: add \`export const panel = { section, order } satisfies PanelPlacement\`.`,
    );
    expect(() => collectPanels({ [FIXTURE]: { panel: { section: 'behaviour', order: 1 } } })).toThrow(
      `${FIXTURE} exports no component: export the panel's component as default.`,
    );
  });
});
