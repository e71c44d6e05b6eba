import { useState } from 'react';
import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { formatCount, formatRate } from '../format';
import { Panel } from '../panel';
import { SegmentedChoice } from '../segmented-choice';
import type { PanelPlacement, PanelProps } from '../panel-props';
import type { RetentionUnit } from '../usage-api';

const UNIT_LABELS: Record<RetentionUnit, string> = { day: 'By day', week: 'By week' };
const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** A share's shade: five steps, as classes (the CSP allows no inline style attributes). */
const shade = (share: number) => `share-${Math.min(4, Math.floor(share * 5))}`;

export const panel = { section: 'behaviour', order: 50 } satisfies PanelPlacement;

/**
 * The retention triangle: one row per cohort (the users first seen in that day or week), one column per
 * period after it, each cell the share of the cohort seen again then. The table is the chart: its cells
 * are shaded by share, and it scrolls inside its own region when it is wider than the screen.
 */
export default function RetentionPanel({ query, every }: PanelProps) {
  const [unit, setUnit] = useState<RetentionUnit>('day');
  const answer = useEndpoint('/usage/retention', { query: { ...query, unit } }, every);
  const periods = answer.status === 'ready' ? Math.max(0, answer.data.cohorts.length - 1) : 0;
  return (
    <section className="panel" aria-labelledby="retention-heading">
      <h3 id="retention-heading">Retention</h3>
      <SegmentedChoice
        legend="Cohort period"
        name="retention-unit"
        labels={UNIT_LABELS}
        value={unit}
        onChange={setUnit}
      />
      <Panel
        title="Cohorts"
        query={answer}
        isEmpty={(data) => data.cohorts.every((cohort) => cohort.users === 0)}
      >
        {(data) => (
          <>
            <div className="table-scroll" role="region" aria-label="Retention by cohort" tabIndex={0}>
              <table data-testid="retention-table">
                <thead>
                  <tr>
                    <th scope="col">First seen ({data.unit === 'day' ? 'day' : 'week of'}, UTC)</th>
                    <th scope="col">Users</th>
                    {Array.from({ length: periods }, (_, k) => (
                      <th key={k} scope="col">
                        {data.unit === 'day' ? 'Day' : 'Week'} {k + 1}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {data.cohorts.map((cohort) => (
                    <tr key={cohort.start}>
                      <th scope="row">{dayFormat.format(new Date(cohort.start))}</th>
                      <td>{formatCount(cohort.users)}</td>
                      {Array.from({ length: periods }, (_, k) => {
                        const back = cohort.returning[k];
                        if (back === undefined || cohort.users === 0) return <td key={k} />;
                        const share = back / cohort.users;
                        return (
                          <td key={k} className={`retention-cell ${shade(share)}`}>
                            {formatRate(share)}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <DownloadCsv
              table={`Retention by ${data.unit}`}
              period={data}
              header={[
                'First seen (UTC)',
                'Users',
                ...Array.from(
                  { length: periods },
                  (_, k) => `${data.unit === 'day' ? 'Day' : 'Week'} ${k + 1} returning`,
                ),
              ]}
              rows={() =>
                data.cohorts.map((cohort) => [
                  cohort.start,
                  cohort.users,
                  ...Array.from({ length: periods }, (_, k) => cohort.returning[k]),
                ])
              }
            />
          </>
        )}
      </Panel>
    </section>
  );
}
