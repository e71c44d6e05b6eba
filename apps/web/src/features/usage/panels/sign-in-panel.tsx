import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { EstimatesNote, estimatedHeading } from '../estimates-note';
import { formatCount, formatMs, formatRate } from '../format';
import { LineChart } from '../line-chart';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';
import { SignInAlert } from '../sign-in-alert';

export const panel = { section: 'sign-in', order: 10 } satisfies PanelPlacement;

/** "+5 points", "−12.5 points": a change of a share, in percentage points. */
const formatPoints = (change: number | null) =>
  change === null
    ? 'new'
    : change === 0
      ? 'no change'
      : `${change > 0 ? '+' : '\u2212'}${formatCount(Math.round(Math.abs(change) * 1000) / 10)} points`;

/**
 * Whether signing in works (ADR 0109): the journey as a funnel with its success rate and change, the time
 * to sign in, failures by reason and step, renewals over time, how sessions ended and the API's refusals.
 */
export default function SignInPanel({ query, every, marks }: PanelProps) {
  const answer = useEndpoint('/usage/sign-in', { query }, every);
  return (
    <Panel
      title="Sign-in health"
      titleHidden
      level={3}
      query={answer}
      isEmpty={(data) => data.funnel.started + data.funnel.failed + data.refusals.length === 0}
    >
      {(data) => (
        <>
          <SignInAlert alert={data.alert} />
          <ul className="tiles" data-testid="sign-in-figures">
            <li className="tile">
              <div className="tile-button static">
                <span className="tile-label">Success rate</span>
                <span className="tile-value">
                  {data.successRate === null ? '—' : formatRate(data.successRate)}
                </span>
                <span className="tile-change">
                  {formatPoints(data.change)}
                  <span className="visually-hidden"> against the previous period</span>
                </span>
              </div>
            </li>
            <li className="tile">
              <div className="tile-button static">
                <span className="tile-label">
                  {estimatedHeading('Time to sign in, median', 'p50Ms', data.estimates)}
                </span>
                <span className="tile-value">{formatMs(data.timeToSignIn.p50Ms)}</span>
                <span className="tile-change">p95 {formatMs(data.timeToSignIn.p95Ms)}</span>
              </div>
            </li>
          </ul>
          <h4>The journey</h4>
          <ol className="funnel-steps" data-testid="sign-in-funnel">
            {(
              [
                ['Started', data.funnel.started],
                ['Returned from the provider', data.funnel.returned],
                ['Signed in', data.funnel.signedIn],
                ['Failed', data.funnel.failed],
              ] as const
            ).map(([label, n]) => (
              <li key={label}>
                {label}: <strong>{formatCount(n)}</strong>
              </li>
            ))}
          </ol>
          <h4>Failures by reason and step</h4>
          {data.failures.length === 0 ? (
            <p className="muted">No failed sign-in in the period.</p>
          ) : (
            <CountTable
              testId="sign-in-failures"
              label="Failed sign-ins"
              headings={['Reason', 'Step']}
              rows={data.failures.map((row) => ({
                key: `${row.reason}|${row.step}`,
                cells: [row.reason, row.step],
                count: row.count,
              }))}
            />
          )}
          <DownloadCsv
            table="Failed sign-ins"
            period={data}
            header={['Reason', 'Step', 'Count']}
            rows={() => data.failures.map((row) => [row.reason, row.step, row.count])}
          />
          <LineChart
            title="Renewals"
            points={data.renewals}
            marks={marks}
            series={[
              { key: 'succeeded', label: 'Renewed', className: 's1' },
              { key: 'failed', label: 'Failed', className: 's2' },
              { key: 'forcedSignIn', label: 'Sent back to sign in', className: 's3' },
            ]}
            download={{ table: 'Renewals', period: data }}
          />
          <h4>How sessions ended, and the API&apos;s refusals</h4>
          <CountTable
            testId="sign-in-refusals"
            label="Session ends and refusals"
            headings={['What', 'Reason']}
            rows={[
              ...data.sessionEnds.map((row) => ({
                key: `end|${row.reason}`,
                cells: ['Session ended', row.reason] as const,
                count: row.count,
              })),
              ...data.refusals.map((row) => ({
                key: `refused|${row.reason}`,
                cells: ['API request refused', row.reason] as const,
                count: row.count,
              })),
            ]}
          />
          <DownloadCsv
            table="Session ends and API refusals"
            period={data}
            header={['What', 'Reason', 'Count']}
            rows={() => [
              ...data.sessionEnds.map((row) => ['session ended', row.reason, row.count]),
              ...data.refusals.map((row) => ['API request refused', row.reason, row.count]),
            ]}
          />
          <p className="muted">
            The API&apos;s refusals are every request&apos;s: the server&apos;s counts have no segment.
          </p>
          <EstimatesNote estimates={data.estimates} headings={{ p50Ms: 'Median', p95Ms: 'p95' }} />
        </>
      )}
    </Panel>
  );
}

/** A table of codes and how often each came: the first cell heads its row, the count ends it. */
function CountTable({
  testId,
  label,
  headings,
  rows,
}: {
  testId: string;
  label: string;
  headings: readonly [string, string];
  rows: readonly { key: string; cells: readonly [string, string]; count: number }[];
}) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      <table data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">{headings[0]}</th>
            <th scope="col">{headings[1]}</th>
            <th scope="col">Count</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.cells[0]}</th>
              <td>{row.cells[1]}</td>
              <td>{formatCount(row.count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
