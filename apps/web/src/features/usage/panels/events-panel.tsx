import { useEndpoint } from '../../../auth/api-client';
import { EstimatesNote, estimatedHeading } from '../estimates-note';
import { formatCount } from '../format';
import { NamedRowsTable } from '../named-rows-table';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';

export const panel = { section: 'behaviour', order: 20, half: true } satisfies PanelPlacement;

/** The custom events the app tracks, by name: how often, by how many users and sessions. */
export default function EventsPanel({ query, every }: PanelProps) {
  const answer = useEndpoint('/usage/events', { query }, every);
  return (
    <Panel title="Custom events" level={3} query={answer} isEmpty={(data) => data.events.length === 0}>
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
          <EstimatesNote estimates={data.estimates} headings={{ users: 'Users', sessions: 'Sessions' }} />
        </>
      )}
    </Panel>
  );
}
