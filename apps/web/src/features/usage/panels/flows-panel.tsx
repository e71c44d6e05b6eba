import { useState, type FormEvent } from 'react';
import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { formatCount } from '../format';
import { LongText } from '../long-text';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';
import type { UserFlows } from '../usage-api';

type FlowPaths = UserFlows['next1'];

function PathsTable({
  caption,
  paths,
  testId,
  period,
}: {
  caption: string;
  paths: FlowPaths;
  testId: string;
  period: { from: string; to: string };
}) {
  return (
    <div>
      <table data-testid={testId}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Pages, in the order visited</th>
            <th scope="col">Views</th>
          </tr>
        </thead>
        <tbody>
          {paths.length === 0 ? (
            <tr>
              <td colSpan={2} className="muted">
                None
              </td>
            </tr>
          ) : (
            paths.map((path) => (
              <tr key={path.pages.join('\n')}>
                <th scope="row">
                  <LongText text={path.pages.join(' → ')} />
                </th>
                <td>{formatCount(path.count)}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      <DownloadCsv
        table={`Flows, ${caption}`}
        period={period}
        header={['Pages, in the order visited', 'Views']}
        rows={() => paths.map((path) => [path.pages.join(' → '), path.count])}
      />
    </div>
  );
}

function FlowsResult({ query, page, every }: Pick<PanelProps, 'query' | 'every'> & { page: string }) {
  const answer = useEndpoint('/usage/flows', { query: { ...query, page } }, every);
  return (
    <Panel title={`Around ${page}`} query={answer} isEmpty={(data) => data.views === 0}>
      {(data) => (
        <>
          <p data-testid="flows-summary">
            {formatCount(data.views)} views: {formatCount(data.entries)} began a session&rsquo;s day,{' '}
            {formatCount(data.exits)} ended one.
          </p>
          <p className="muted" data-testid="flows-scope">
            Paths within each session&rsquo;s page views of one UTC day: a session still open at midnight UTC
            counts as two.
          </p>
          <div className="flows">
            <PathsTable
              caption="Two pages before"
              paths={data.previous2}
              testId="flows-previous2"
              period={data}
            />
            <PathsTable
              caption="The page before"
              paths={data.previous1}
              testId="flows-previous1"
              period={data}
            />
            <PathsTable caption="The page after" paths={data.next1} testId="flows-next1" period={data} />
            <PathsTable caption="Two pages after" paths={data.next2} testId="flows-next2" period={data} />
          </div>
        </>
      )}
    </Panel>
  );
}

export const panel = { section: 'behaviour', order: 40, half: true } satisfies PanelPlacement;

/** User flows: from a page the admin names, the most common pages one and two steps before and after it. */
export default function FlowsPanel({ query, every }: PanelProps) {
  const [draft, setDraft] = useState('');
  const [asked, setAsked] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAsked(draft.trim() || null);
  };
  return (
    <section className="panel" aria-labelledby="flows-heading">
      <h3 id="flows-heading">User flows</h3>
      <form className="actions wrap" onSubmit={submit} aria-label="User flows">
        <label>
          Page <input required maxLength={512} value={draft} onChange={(e) => setDraft(e.target.value)} />
        </label>{' '}
        <button type="submit" className="button">
          Show the flows
        </button>
      </form>
      {asked && <FlowsResult query={query} page={asked} every={every} />}
    </section>
  );
}
