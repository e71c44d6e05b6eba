import { useEndpoint } from '../../../auth/api-client';
import { formatCount } from '../format';
import { NamedRowsPanel } from '../named-rows-panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

export const panel = { section: 'behaviour', order: 20, half: true } satisfies PanelPlacement;

/** The custom events the app tracks, by name: how often, by how many users and sessions. */
export default function EventsPanel({ query, every }: PanelProps) {
  return (
    <NamedRowsPanel
      title="Custom events"
      testId="events-table"
      query={useEndpoint('/usage/events', { query }, every)}
      rows="events"
      nameHeading="Event"
      figures={[
        { key: 'count', heading: 'Count', format: formatCount },
        { key: 'users', heading: 'Users', format: formatCount, estimate: 'Users' },
        { key: 'sessions', heading: 'Sessions', format: formatCount, estimate: 'Sessions' },
      ]}
    />
  );
}
