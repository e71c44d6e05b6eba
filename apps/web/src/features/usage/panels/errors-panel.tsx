import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { formatCount, formatTime } from '../format';
import { LongText } from '../long-text';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

export const panel = { section: 'errors', order: 10 } satisfies PanelPlacement;

/** Exceptions grouped as problems (type, message, top frame), with how often and whom they hit. */
export default function ErrorsPanel({ query, every }: PanelProps) {
  const answer = useEndpoint('/usage/exceptions', { query }, every);
  return (
    <Panel title="Errors" query={answer} isEmpty={(data) => data.exceptions.length === 0}>
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
  );
}
