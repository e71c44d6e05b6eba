import { useEndpoint } from '../../../auth/api-client';
import { EstimatesNote, estimatedHeading } from '../estimates-note';
import { formatCount, formatMs } from '../format';
import { NamedRowsTable } from '../named-rows-table';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

export const panel = { section: 'behaviour', order: 10, half: true } satisfies PanelPlacement;

/** Page views by page name: views, users, and how long the pages took to load. */
export default function PagesPanel({ query, every }: PanelProps) {
  const answer = useEndpoint('/usage/pages', { query }, every);
  return (
    <Panel title="Pages" level={3} query={answer} isEmpty={(data) => data.pages.length === 0}>
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
          <EstimatesNote estimates={data.estimates} headings={{ users: 'Users', p95DurationMs: 'p95' }} />
        </>
      )}
    </Panel>
  );
}
