import { useEndpoint } from '../../../auth/api-client';
import { formatCount, formatRate } from '../format';
import { NamedRowsTable } from '../named-rows-table';
import { Panel } from '../panel';
import { DEVICES, referrerLabel } from '../segment-filter';
import type { PanelPlacement, PanelProps } from '../panel-props';
import type { BreakdownRow, Breakdowns, Segment } from '../usage-api';

/** The four lists, each with the segment key its entries set. */
const LISTS = [
  { list: 'referrers', key: 'referrer', title: 'Referring sites', column: 'Site' },
  { list: 'browsers', key: 'browser', title: 'Browsers', column: 'Browser' },
  { list: 'operatingSystems', key: 'os', title: 'Operating systems', column: 'System' },
  { list: 'devices', key: 'device', title: 'Devices', column: 'Device' },
] as const satisfies readonly {
  list: keyof Breakdowns;
  key: keyof Segment;
  title: string;
  column: string;
}[];

const label = (key: (typeof LISTS)[number]['key'], value: string) =>
  key === 'referrer'
    ? referrerLabel(value)
    : key === 'device'
      ? (DEVICES[value as keyof typeof DEVICES] ?? value)
      : value;

export const panel = { section: 'sources', order: 10 } satisfies PanelPlacement;

/**
 * Where visitors come from and what they use (ADR 0073): visitors by referring site, browser,
 * operating system and device class, ranked, with their share of the period's visitors. Pressing an
 * entry applies it as a segment, as Plausible's and PostHog's breakdowns do.
 */
export default function BreakdownsPanel({ view, query, every, setView }: PanelProps) {
  const answer = useEndpoint('/usage/breakdowns', { query }, every);
  const { segment } = view;
  const choose = (change: Segment) => setView({ segment: { ...segment, ...change } });
  return (
    <div className="usage-grid">
      {LISTS.map(({ list, key, title, column }) => (
        <Panel key={list} title={title} level={3} query={answer} isEmpty={(data) => data[list].length === 0}>
          {(data) => (
            <NamedRowsTable
              testId={`breakdown-${key}`}
              title={title}
              period={data}
              columns={[column, 'Visitors', 'Share']}
              rows={data[list].map((row: BreakdownRow) => ({ ...row, name: row.value }))}
              name={(row) => (
                <button
                  type="button"
                  className="link-button"
                  aria-pressed={segment[key] === row.value}
                  onClick={() => choose({ [key]: row.value })}
                >
                  {label(key, row.value)}
                </button>
              )}
              cells={(row) => [formatCount(row.visitors), formatRate(row.share)]}
              csv={(row) => [row.visitors, row.share]}
            />
          )}
        </Panel>
      ))}
    </div>
  );
}
