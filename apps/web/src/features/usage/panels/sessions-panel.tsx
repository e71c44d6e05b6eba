import { Link } from 'wouter';
import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { formatCount, formatMs, formatTime } from '../format';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';
import { UserLabel } from '../user-label';

export const panel = { section: 'sessions', order: 10 } satisfies PanelPlacement;

/** The period's most recent sessions, each a link to its timeline (session-page.tsx). */
export default function SessionsPanel({ query, every }: PanelProps) {
  const answer = useEndpoint('/usage/sessions', { query: { ...query, limit: '20' } }, every);
  return (
    <Panel title="Sessions" query={answer} isEmpty={(data) => data.sessions.length === 0}>
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
  );
}
