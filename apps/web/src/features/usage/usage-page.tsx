import { useState } from 'react';
import { useLocation, useSearch } from 'wouter';
import { useEndpoint } from '../../auth/api-client';
import { collectPanels } from './collect-panels';
import { DashboardSections, PANEL_MODULES } from './dashboard';
import { formatDuration, formatPeriod } from './format';
import type { PanelProps } from './panel-props';
import { PeriodPicker } from './period-picker';
import { SECTIONS } from './sections';
import { describeSegment, SegmentFilter, segmentQuery } from './segment-filter';
import { SettledReports, useScrollToSectionOnLoad } from './settled';
import { SourceLine } from './source-line';
import { StoreFullBanner } from './store-full-banner';
import { viewOf, viewParams, type View } from './view-state';
import type { PageRoute } from '../../shared/page-route';

const REFRESH_MS = 30_000;

/** Checked when the page's chunk loads: a panel file with a bad placement fails here, and in its test. */
const PANELS = collectPanels(PANEL_MODULES);

export const route = {
  path: '/usage',
  name: 'Usage',
  access: 'admin',
  nav: { label: 'Usage', order: 30 },
} satisfies PageRoute;

/**
 * Who uses Gatehouse and how, for admins: the headline figures and one large chart first, then the
 * sections (docs/decisions/0081-usage-dashboard-layout.md), each panel from its own file in panels/
 * (docs/decisions/0103-dashboard-panels-from-their-files.md). Loaded as a chunk of its own, only on this route.
 */
export default function UsagePage() {
  const [autoRefresh, setAutoRefresh] = useState(true);
  const every = autoRefresh ? REFRESH_MS : undefined;
  // The whole view lives in the address, so it can be reloaded and shared; changes replace the entry
  // (the back button leaves the dashboard rather than stepping through its choices) and keep the #section.
  const [location, navigate] = useLocation();
  const view = viewOf(new URLSearchParams(useSearch()));
  const setView = (change: Partial<View>) => {
    const params = viewParams({ ...view, ...change }).toString();
    navigate(`${location}${params ? `?${params}` : ''}${window.location.hash}`, { replace: true });
  };
  const { period, segment } = view;
  // Open at first when the address names a segment; then as the admin leaves it.
  const [segmentOpen] = useState(() => Object.keys(segment).length > 0);
  const filter = segmentQuery(segment);
  const query = { ...period, ...segment };
  // The page's own answer (the banner, the period line), which the tiles show too: asked once.
  const overview = useEndpoint('/usage/overview', { query }, every);
  // Of the period only (not the segment): a release happened to everyone. Drawn on every time chart.
  const annotations = useEndpoint('/usage/annotations', { query: period }, every);
  const marks =
    annotations.status === 'ready'
      ? annotations.data.annotations.map((a) => ({ at: a.time, label: a.note }))
      : [];
  const reportLoading = useScrollToSectionOnLoad();
  const props: PanelProps = { view, query, every, setView, marks, annotations, overview };

  return (
    <section className="page wide usage">
      <div className="usage-head">
        <h1>Usage</h1>
        <PeriodPicker period={period} onChange={(next) => setView({ period: next })} />
      </div>
      {overview.status === 'ready' && <StoreFullBanner storeFull={overview.data.storeFull} />}
      {/* Folded unless a segment is chosen, so the first screen keeps its room for the figures. */}
      <details className="segment-details" open={segmentOpen}>
        <summary>
          Segment: <span data-testid="segment-summary">{describeSegment(segment)}</span>
        </summary>
        <SegmentFilter key={filter} segment={segment} onChange={(next) => setView({ segment: next })} />
      </details>
      <nav className="section-nav" aria-label="Sections of the dashboard">
        <ul>
          {SECTIONS.map(({ id, label }) => (
            <li key={id}>
              <a href={`#${id}`}>{label}</a>
            </li>
          ))}
        </ul>
      </nav>

      <SettledReports value={reportLoading}>
        <DashboardSections
          sections={PANELS}
          props={props}
          after={{
            overview: (
              <>
                {overview.status === 'ready' && (
                  <>
                    <p className="muted period-line" data-testid="usage-period">
                      {formatPeriod(overview.data.from, overview.data.to)}, against the{' '}
                      {formatDuration(overview.data.from, overview.data.to)} before.
                    </p>
                    <SourceLine source={overview.data.source} />
                  </>
                )}
                <label className="refresh">
                  <input
                    type="checkbox"
                    checked={autoRefresh}
                    onChange={(event) => setAutoRefresh(event.target.checked)}
                  />{' '}
                  Refresh every 30 seconds
                </label>
              </>
            ),
          }}
        />
      </SettledReports>
    </section>
  );
}
