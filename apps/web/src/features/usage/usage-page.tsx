import { useState } from 'react';
import { Link, useSearchParams } from 'wouter';
import { useEndpoint } from '../../auth/api-client';
import { formatChange, formatCount, formatMs, formatRate, formatTime } from './format';
import { ExperiencePanel } from './experience-panel';
import { FlowsPanel } from './flows-panel';
import { FunnelPanel } from './funnel-panel';
import { LineChart } from './line-chart';
import { LongText } from './long-text';
import { NamedRowsTable } from './named-rows-table';
import { RetentionPanel } from './retention-panel';
import { SegmentFilter, segmentOf, segmentParams, segmentQuery } from './segment-filter';
import { SegmentedChoice } from './segmented-choice';
import { StoreFullBanner } from './store-full-banner';
import { UserLabel } from './user-label';
import { Panel } from './panel';
import { RANGE_LABELS, TILES, type Overview, type Range } from './usage-api';

const REFRESH_MS = 30_000;

/** Who uses Gatehouse and how, for admins. Loaded as a chunk of its own, only on this route. */
export default function UsagePage() {
  const [range, setRange] = useState<Range>('24h');
  const [autoRefresh, setAutoRefresh] = useState(true);
  const every = autoRefresh ? REFRESH_MS : undefined;
  // The segment lives in the address, so a filtered view can be reloaded and shared.
  const [params, setParams] = useSearchParams();
  const segment = segmentOf(params);
  const filter = segmentQuery(segment);
  const query = { range, ...segment };
  const overview = useEndpoint('/usage/overview', { query }, every);
  const timeseries = useEndpoint('/usage/timeseries', { query }, every);
  const pages = useEndpoint('/usage/pages', { query }, every);
  const exceptions = useEndpoint('/usage/exceptions', { query }, every);
  const dependencies = useEndpoint('/usage/dependencies', { query }, every);
  const sessions = useEndpoint('/usage/sessions', { query: { ...query, limit: '20' } }, every);
  const experience = useEndpoint('/usage/experience', { query }, every);
  const events = useEndpoint('/usage/events', { query }, every);

  return (
    <section className="page wide">
      <h1>Usage</h1>
      {overview.status === 'ready' && <StoreFullBanner storeFull={overview.data.storeFull} />}
      <div className="toolbar">
        <SegmentedChoice
          legend="Time range"
          name="range"
          labels={RANGE_LABELS}
          value={range}
          onChange={setRange}
        />
        <label>
          <input
            type="checkbox"
            checked={autoRefresh}
            onChange={(event) => setAutoRefresh(event.target.checked)}
          />{' '}
          Refresh every 30 seconds
        </label>
      </div>
      <SegmentFilter
        key={filter}
        segment={segment}
        onChange={(next) => setParams(segmentParams(next), { replace: true })}
      />

      <Panel title="At a glance" query={overview} isEmpty={() => false}>
        {(data) => (
          <>
            <SourceLine source={data.source} />
            <ul className="tiles">
              {TILES.map(([key, label]) => (
                <li key={key} className="tile" data-testid={`tile-${key}`}>
                  <span className="tile-label">{label}</span>
                  <span className="tile-value">{formatCount(data.tiles[key].value)}</span>
                  <span className="tile-change">
                    {formatChange(data.tiles[key].change)} vs previous period
                  </span>
                </li>
              ))}
            </ul>
          </>
        )}
      </Panel>

      <Panel title="Over time" query={timeseries} isEmpty={(data) => data.buckets.length === 0}>
        {({ buckets: points }) => (
          <div className="charts">
            <LineChart
              title="Users and sessions"
              points={points}
              series={[
                { key: 'users', label: 'Users', className: 's1' },
                { key: 'sessions', label: 'Sessions', className: 's2' },
              ]}
            />
            <LineChart
              title="Page views"
              points={points}
              series={[{ key: 'pageViews', label: 'Page views', className: 's1' }]}
            />
            <LineChart
              title="Exceptions and failed calls"
              points={points}
              series={[
                { key: 'exceptions', label: 'Exceptions', className: 's3' },
                { key: 'failedCalls', label: 'Failed calls', className: 's4' },
              ]}
            />
          </div>
        )}
      </Panel>

      <ExperiencePanel query={experience} />

      <Panel title="Pages" query={pages} isEmpty={(data) => data.pages.length === 0}>
        {({ pages: rows }) => (
          <NamedRowsTable
            testId="pages-table"
            columns={['Page', 'Views', 'Users', 'Average', 'p95']}
            rows={rows}
            cells={(row) => [
              formatCount(row.views),
              formatCount(row.users),
              formatMs(row.avgDurationMs),
              formatMs(row.p95DurationMs),
            ]}
          />
        )}
      </Panel>

      <Panel title="Custom events" query={events} isEmpty={(data) => data.events.length === 0}>
        {({ events: rows }) => (
          <NamedRowsTable
            testId="events-table"
            columns={['Event', 'Count', 'Users', 'Sessions']}
            rows={rows}
            cells={(row) => [formatCount(row.count), formatCount(row.users), formatCount(row.sessions)]}
          />
        )}
      </Panel>

      <section className="panel" aria-labelledby="funnels-heading">
        <h2 id="funnels-heading">Funnels</h2>
        <FunnelPanel range={range} segment={segment} every={every} />
      </section>

      <section className="panel" aria-labelledby="retention-heading">
        <h2 id="retention-heading">Retention</h2>
        <RetentionPanel range={range} segment={segment} every={every} />
      </section>

      <section className="panel" aria-labelledby="flows-heading">
        <h2 id="flows-heading">User flows</h2>
        <FlowsPanel range={range} segment={segment} every={every} />
      </section>

      <Panel title="Exceptions" query={exceptions} isEmpty={(data) => data.exceptions.length === 0}>
        {({ exceptions: groups }) => (
          <ul className="problems" data-testid="exceptions-list">
            {groups.map((group) => (
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
        )}
      </Panel>

      <Panel title="Calls" query={dependencies} isEmpty={(data) => data.dependencies.length === 0}>
        {({ dependencies: rows }) => (
          <table data-testid="calls-table">
            <thead>
              <tr>
                <th scope="col">Target</th>
                <th scope="col">Call</th>
                <th scope="col">Count</th>
                <th scope="col">Failed</th>
                <th scope="col">p50</th>
                <th scope="col">p95</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
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
        )}
      </Panel>

      <Panel title="Recent sessions" query={sessions} isEmpty={(data) => data.sessions.length === 0}>
        {({ sessions: rows }) => (
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
              {rows.map((row) => (
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
        )}
      </Panel>
    </section>
  );
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
