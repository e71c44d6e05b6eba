import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { useEndpoint } from '../../auth/api-client';
import { AnnotationsPanel } from './annotations-panel';
import { BreakdownsPanel } from './breakdowns-panel';
import { DownloadCsv } from './download-csv';
import { formatCount, formatMs, formatPeriod, formatRate, formatTileChange, formatTime } from './format';
import { ExperiencePanel } from './experience-panel';
import { FlowsPanel } from './flows-panel';
import { FunnelPanel } from './funnel-panel';
import { LineChart } from './line-chart';
import { LongText } from './long-text';
import { EstimatesNote, estimatedHeading } from './estimates-note';
import { NamedRowsTable } from './named-rows-table';
import { PeriodPicker } from './period-picker';
import { RetentionPanel } from './retention-panel';
import { referrerLabel, SegmentFilter, segmentQuery } from './segment-filter';
import { StoreFullBanner } from './store-full-banner';
import { UserLabel } from './user-label';
import { Panel } from './panel';
import { TILES, type Overview, type TileKey } from './usage-api';
import { FIGURE_LABELS, viewOf, viewParams, type Figure, type View } from './view-state';
import type { PageRoute } from '../../shared/page-route';

const REFRESH_MS = 30_000;

/** The page's sections, in order: each has an id to link to (`/usage#errors`) and a link in the bar. */
const SECTIONS = [
  ['overview', 'Overview'],
  ['experience', 'Experience'],
  ['behaviour', 'Behaviour'],
  ['sources', 'Sources'],
  ['errors', 'Errors'],
  ['calls', 'Calls'],
  ['sessions', 'Sessions'],
  ['annotations', 'Annotations'],
] as const;

const isFigure = (key: TileKey): key is TileKey & Figure => Object.hasOwn(FIGURE_LABELS, key);

export const route = {
  path: '/usage',
  name: 'Usage',
  access: 'admin',
  nav: { label: 'Usage', order: 30 },
} satisfies PageRoute;

/**
 * Who uses Gatehouse and how, for admins: the headline figures and one large chart first, then the
 * sections (docs/decisions/0081-usage-dashboard-layout.md). Loaded as a chunk of its own, only on this route.
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
  const { period, figure, segment } = view;
  // Open at first when the address names a segment; then as the admin leaves it.
  const [segmentOpen] = useState(() => Object.keys(segment).length > 0);
  const filter = segmentQuery(segment);
  const query = { ...period, ...segment };
  const overview = useEndpoint('/usage/overview', { query }, every);
  const timeseries = useEndpoint('/usage/timeseries', { query }, every);
  const pages = useEndpoint('/usage/pages', { query }, every);
  const exceptions = useEndpoint('/usage/exceptions', { query }, every);
  const dependencies = useEndpoint('/usage/dependencies', { query }, every);
  const sessions = useEndpoint('/usage/sessions', { query: { ...query, limit: '20' } }, every);
  const experience = useEndpoint('/usage/experience', { query }, every);
  const events = useEndpoint('/usage/events', { query }, every);
  // Of the period only (not the segment): a release happened to everyone. Drawn on every time chart.
  const annotations = useEndpoint('/usage/annotations', { query: period }, every);
  const marks =
    annotations.status === 'ready'
      ? annotations.data.annotations.map((a) => ({ at: a.time, label: a.note }))
      : [];
  useScrollToSectionOnLoad(
    [overview, timeseries, pages, exceptions, dependencies, sessions, experience, events].every(
      (q) => q.status !== 'loading',
    ),
  );

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
          {SECTIONS.map(([id, label]) => (
            <li key={id}>
              <a href={`#${id}`}>{label}</a>
            </li>
          ))}
        </ul>
      </nav>

      <section id="overview" className="usage-section" aria-labelledby="overview-heading">
        <h2 id="overview-heading" className="visually-hidden">
          Overview
        </h2>
        <Panel title="Headline figures" titleHidden level={3} query={overview} isEmpty={() => false}>
          {(data) => (
            <>
              <ul className="tiles">
                {TILES.map(([key, label]) => {
                  const tile = data.tiles[key];
                  const content = (
                    <>
                      <span className="tile-label">{label}</span>
                      <span className="tile-value">{formatCount(tile.value)}</span>
                      <span className="tile-change">
                        {formatTileChange(tile)}
                        <span className="visually-hidden"> against the previous period</span>
                      </span>
                    </>
                  );
                  return (
                    <li key={key} className="tile" data-testid={`tile-${key}`}>
                      {isFigure(key) ? (
                        // A toggle: pressed is the figure the large chart shows.
                        <button
                          type="button"
                          className="tile-button"
                          aria-pressed={figure === key}
                          onClick={() => setView({ figure: key })}
                        >
                          {content}
                        </button>
                      ) : (
                        <div className="tile-button static">{content}</div>
                      )}
                    </li>
                  );
                })}
              </ul>
            </>
          )}
        </Panel>
        <Panel
          title="Over time"
          titleHidden
          level={3}
          query={timeseries}
          isEmpty={(data) => data.buckets.length === 0}
        >
          {(data) => (
            <div className="big-chart" data-testid="big-chart">
              <LineChart
                title={`${FIGURE_LABELS[figure]} over time`}
                points={data.buckets}
                height={220}
                marks={marks}
                series={[{ key: figure, label: FIGURE_LABELS[figure], className: 's1' }]}
                download={{ table: `${FIGURE_LABELS[figure]} over time`, period: data }}
              />
            </div>
          )}
        </Panel>
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
      </section>

      <ExperiencePanel id="experience" query={experience} marks={marks} />

      <section id="behaviour" className="usage-section" aria-labelledby="behaviour-heading">
        <h2 id="behaviour-heading">Behaviour</h2>
        <div className="usage-grid">
          <Panel title="Pages" level={3} query={pages} isEmpty={(data) => data.pages.length === 0}>
            {(data) => (
              <>
                <NamedRowsTable
                  testId="pages-table"
                  title="Pages"
                  period={data}
                  columns={[
                    'Page',
                    'Views',
                    estimatedHeading('Users', 'users', data.estimates),
                    'Average ms',
                    estimatedHeading('p95 ms', 'p95DurationMs', data.estimates),
                  ]}
                  rows={data.pages}
                  cells={(row) => [
                    formatCount(row.views),
                    formatCount(row.users),
                    formatMs(row.avgDurationMs),
                    formatMs(row.p95DurationMs),
                  ]}
                  csv={(row) => [row.views, row.users, row.avgDurationMs, row.p95DurationMs]}
                />
                <EstimatesNote
                  estimates={data.estimates}
                  headings={{ users: 'Users', p95DurationMs: 'p95' }}
                />
              </>
            )}
          </Panel>
          <Panel title="Custom events" level={3} query={events} isEmpty={(data) => data.events.length === 0}>
            {(data) => (
              <>
                <NamedRowsTable
                  testId="events-table"
                  title="Custom events"
                  period={data}
                  columns={[
                    'Event',
                    'Count',
                    estimatedHeading('Users', 'users', data.estimates),
                    estimatedHeading('Sessions', 'sessions', data.estimates),
                  ]}
                  rows={data.events}
                  cells={(row) => [formatCount(row.count), formatCount(row.users), formatCount(row.sessions)]}
                  csv={(row) => [row.count, row.users, row.sessions]}
                />
                <EstimatesNote
                  estimates={data.estimates}
                  headings={{ users: 'Users', sessions: 'Sessions' }}
                />
              </>
            )}
          </Panel>
        </div>
        <div className="usage-grid">
          <section className="panel" aria-labelledby="funnels-heading">
            <h3 id="funnels-heading">Funnels</h3>
            <FunnelPanel period={period} segment={segment} every={every} />
          </section>
          <section className="panel" aria-labelledby="flows-heading">
            <h3 id="flows-heading">User flows</h3>
            <FlowsPanel period={period} segment={segment} every={every} />
          </section>
        </div>
        <section className="panel" aria-labelledby="retention-heading">
          <h3 id="retention-heading">Retention</h3>
          <RetentionPanel period={period} segment={segment} every={every} />
        </section>
      </section>

      <section id="sources" className="usage-section" aria-labelledby="sources-heading">
        <h2 id="sources-heading">Sources</h2>
        <p className="muted">
          Visitors by where they came from and what they use; choose one to see only them.
        </p>
        <BreakdownsPanel
          period={period}
          segment={segment}
          every={every}
          onChoose={(change) => setView({ segment: { ...segment, ...change } })}
        />
      </section>

      <div className="usage-grid">
        <Panel id="errors" title="Errors" query={exceptions} isEmpty={(data) => data.exceptions.length === 0}>
          {(data) => (
            <>
              <p className="muted">Exceptions, grouped by type, message and top frame.</p>
              <ul className="problems" data-testid="exceptions-list">
                {data.exceptions.map((group) => (
                  <li key={`${group.type ?? ''}|${group.message ?? ''}|${group.topFrame ?? ''}`}>
                    <strong>
                      <LongText text={`${group.type ?? 'Error'}: ${group.message ?? '(no message)'}`} />
                    </strong>
                    {group.topFrame && (
                      <span className="muted">
                        {' '}
                        at <LongText text={group.topFrame} />
                      </span>
                    )}
                    <span className="muted">
                      {' '}
                      {formatCount(group.count)} times, {formatCount(group.usersAffected)} users, first{' '}
                      {formatTime(group.firstSeen)}, last {formatTime(group.lastSeen)}
                    </span>
                    {group.sampleStack && (
                      <details>
                        <summary>Sample stack</summary>
                        <pre>{group.sampleStack}</pre>
                      </details>
                    )}
                  </li>
                ))}
              </ul>
              <DownloadCsv
                table="Exceptions"
                period={data}
                header={[
                  'Type',
                  'Message',
                  'Top frame',
                  'Problem id',
                  'Count',
                  'Users affected',
                  'First seen',
                  'Last seen',
                ]}
                rows={() =>
                  data.exceptions.map((g) => [
                    g.type,
                    g.message,
                    g.topFrame,
                    g.problemId,
                    g.count,
                    g.usersAffected,
                    g.firstSeen,
                    g.lastSeen,
                  ])
                }
              />
            </>
          )}
        </Panel>

        <Panel
          id="calls"
          title="Calls"
          query={dependencies}
          isEmpty={(data) => data.dependencies.length === 0}
        >
          {(data) => (
            <>
              <div className="table-scroll" role="region" aria-label="Calls by target" tabIndex={0}>
                <table data-testid="calls-table">
                  <thead>
                    <tr>
                      <th scope="col">Target</th>
                      <th scope="col">Call</th>
                      <th scope="col">Count</th>
                      <th scope="col">Failed</th>
                      <th scope="col">{estimatedHeading('p50', 'p50DurationMs', data.estimates)}</th>
                      <th scope="col">{estimatedHeading('p95', 'p95DurationMs', data.estimates)}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.dependencies.map((row) => (
                      <tr key={`${row.target ?? ''}|${row.name ?? ''}`}>
                        <td>
                          <LongText text={row.target ?? '—'} />
                        </td>
                        <th scope="row">
                          <LongText text={row.name ?? '—'} />
                        </th>
                        <td>{formatCount(row.count)}</td>
                        <td>{formatRate(row.failureRate)}</td>
                        <td>{formatMs(row.p50DurationMs)}</td>
                        <td>{formatMs(row.p95DurationMs)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <DownloadCsv
                table="Calls"
                period={data}
                header={[
                  'Target',
                  'Call',
                  'Count',
                  'Failed',
                  'Failure rate',
                  estimatedHeading('p50 ms', 'p50DurationMs', data.estimates),
                  estimatedHeading('p95 ms', 'p95DurationMs', data.estimates),
                ]}
                rows={() =>
                  data.dependencies.map((row) => [
                    row.target,
                    row.name,
                    row.count,
                    row.failures,
                    row.failureRate,
                    row.p50DurationMs,
                    row.p95DurationMs,
                  ])
                }
              />
              <EstimatesNote
                estimates={data.estimates}
                headings={{ p50DurationMs: 'p50', p95DurationMs: 'p95' }}
              />
            </>
          )}
        </Panel>
      </div>

      <Panel id="sessions" title="Sessions" query={sessions} isEmpty={(data) => data.sessions.length === 0}>
        {(data) => (
          <>
            <p className="muted">The most recent sessions of the period.</p>
            <div className="table-scroll" role="region" aria-label="Recent sessions" tabIndex={0}>
              <table data-testid="sessions-table">
                <thead>
                  <tr>
                    <th scope="col">Session</th>
                    <th scope="col">User</th>
                    <th scope="col">Started</th>
                    <th scope="col">Length</th>
                    <th scope="col">Pages</th>
                    <th scope="col">Errors</th>
                  </tr>
                </thead>
                <tbody>
                  {data.sessions.map((row) => (
                    <tr key={row.sessionId}>
                      <th scope="row">
                        <Link href={`/usage/sessions/${encodeURIComponent(row.sessionId)}`}>
                          {row.sessionId.slice(0, 8)}
                        </Link>
                      </th>
                      <td>
                        <UserLabel {...row} />
                      </td>
                      <td>{formatTime(row.start)}</td>
                      <td>{formatMs(row.lengthMs)}</td>
                      <td>{formatCount(row.pages)}</td>
                      <td>{formatCount(row.errors)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <DownloadCsv
              table="Sessions"
              period={data}
              header={['Session', 'User', 'Signed in', 'Verified', 'Started', 'Length ms', 'Pages', 'Errors']}
              rows={() =>
                data.sessions.map((row) => [
                  row.sessionId,
                  row.user,
                  row.authenticated,
                  row.verified,
                  row.start,
                  row.lengthMs,
                  row.pages,
                  row.errors,
                ])
              }
            />
          </>
        )}
      </Panel>

      <AnnotationsPanel id="annotations" query={annotations} />
    </section>
  );
}

const SEGMENT_WORDS: Record<string, string> = { 'signed-in': 'signed in', anonymous: 'anonymous' };
/** The segment in words, for the folded filter: "everyone", or its values ("mobile, role admin"). */
function describeSegment(segment: View['segment']): string {
  const parts = [
    segment.auth && SEGMENT_WORDS[segment.auth],
    segment.role && `role ${segment.role}`,
    segment.browser,
    segment.device,
    segment.os,
    segment.referrer && `from ${referrerLabel(segment.referrer)}`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'everyone';
}

/** "24 hours", "7 days": a period's length, for the comparison with the one before it. */
function formatDuration(from: string, to: string): string {
  const hours = Math.round((Date.parse(to) - Date.parse(from)) / 3_600_000);
  if (hours < 1) return `${Math.round((Date.parse(to) - Date.parse(from)) / 60_000)} minutes`;
  if (hours === 1) return 'hour';
  return hours % 24 === 0 ? `${hours / 24 === 1 ? '24 hours' : `${hours / 24} days`}` : `${hours} hours`;
}

/**
 * A link to a section (`/usage#errors`) scrolls to it once the panels above it have their content: the
 * browser's own scroll on load happens before this chunk has rendered, and loading content moves it.
 */
function useScrollToSectionOnLoad(settled: boolean) {
  const done = useRef(false);
  useEffect(() => {
    if (!settled || done.current) return;
    done.current = true;
    const id = window.location.hash.slice(1);
    if (id) document.getElementById(id)?.scrollIntoView();
  }, [settled]);
}

/** Where the figures come from, and for Azure Monitor Logs how late they may be. */
function SourceLine({ source }: { source: Overview['source'] }) {
  if (!source) return null;
  if (source.kind === 'local') {
    return (
      <p className="muted" data-testid="usage-source">
        Source: this server&apos;s own store, up to the second.
      </p>
    );
  }
  const delay = source.ingestionDelayMs;
  return (
    <p className="muted" data-testid="usage-source">
      Source: Azure Monitor Logs (the Log Analytics workspace).{' '}
      {source.latestItem
        ? `Newest item of the last hour: ${formatTime(source.latestItem)}. `
        : 'No item in the last hour. '}
      {delay === null || delay === undefined
        ? ''
        : `Items take about ${Math.max(1, Math.round(delay / 60_000))} min to appear here.`}
    </p>
  );
}
