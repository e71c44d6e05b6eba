import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { EstimatesNote, estimatedHeading } from '../estimates-note';
import { formatCount, formatMs, formatRate } from '../format';
import { LongText } from '../long-text';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

export const panel = { section: 'calls', order: 10 } satisfies PanelPlacement;

/** The app's outgoing calls (dependencies) by target and name: how many, how many failed, how long. */
export default function CallsPanel({ query, every }: PanelProps) {
  const answer = useEndpoint('/usage/dependencies', { query }, every);
  return (
    <Panel title="Calls" query={answer} isEmpty={(data) => data.dependencies.length === 0}>
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
  );
}
