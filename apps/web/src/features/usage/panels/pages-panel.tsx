import { useEndpoint } from '../../../auth/api-client';
import { formatCount, formatMs } from '../format';
import { NamedRowsPanel } from '../named-rows-panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

export const panel = { section: 'behaviour', order: 10, half: true } satisfies PanelPlacement;

/** Page views by page name: views, users, and how long the pages took to load. */
export default function PagesPanel({ query, every }: PanelProps) {
  return (
    <NamedRowsPanel
      title="Pages"
      testId="pages-table"
      query={useEndpoint('/usage/pages', { query }, every)}
      rows="pages"
      nameHeading="Page"
      figures={[
        { key: 'views', heading: 'Views', format: formatCount },
        { key: 'users', heading: 'Users', format: formatCount, estimate: 'Users' },
        { key: 'avgDurationMs', heading: 'Average ms', format: formatMs },
        { key: 'p95DurationMs', heading: 'p95 ms', format: formatMs, estimate: 'p95' },
      ]}
    />
  );
}
