import { useEndpoint } from '../../../auth/api-client';
import { DownloadCsv } from '../download-csv';
import { EstimatesNote, estimatedHeading } from '../estimates-note';
import { formatCount, formatMs, formatRate } from '../format';
import { LineChart } from '../line-chart';
import { LongText } from '../long-text';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';
import type { Experience, Vital, VitalRating, VitalSummary } from '../usage-api';

const VITAL_LABELS: Record<Vital, string> = {
  LCP: 'Largest Contentful Paint (LCP)',
  INP: 'Interaction to Next Paint (INP)',
  CLS: 'Cumulative Layout Shift (CLS)',
  FCP: 'First Contentful Paint (FCP)',
  TTFB: 'Time to First Byte (TTFB)',
};
/** In the order shown; a vital the API adds is a type error in the labels above. */
const VITALS = Object.keys(VITAL_LABELS) as Vital[];
const RATING_LABELS: Record<VitalRating, string> = {
  good: 'good',
  'needs-improvement': 'needs improvement',
  poor: 'poor',
};

/** CLS is a score; the others are durations. */
const formatVital = (vital: Vital, value: number | null) =>
  value === null ? '—' : vital === 'CLS' ? value.toFixed(2) : formatMs(value);

function Rating({ rating }: { rating: VitalRating | null }) {
  if (!rating) return null;
  return <span className={`rating ${rating}`}>{RATING_LABELS[rating]}</span>;
}

function Shares({ summary }: { summary: VitalSummary }) {
  return (
    <span className="muted shares">
      {formatRate(summary.good)} good, {formatRate(summary.needsImprovement)} needs improvement,{' '}
      {formatRate(summary.poor)} poor
    </span>
  );
}

const isEmpty = (data: Experience) => data.pages.length === 0;

export const panel = { section: 'experience', order: 10 } satisfies PanelPlacement;

/**
 * How fast the app feels to its users: the web vitals the browser reports, rated by Google's thresholds
 * at the 75th percentile (how Google rates a page), overall, per landing page, and over time.
 */
export default function ExperiencePanel({ query, every, marks }: PanelProps) {
  const answer = useEndpoint('/usage/experience', { query }, every);
  return (
    <Panel title="Experience" query={answer} isEmpty={isEmpty}>
      {(data) => {
        const points = data.trend.map((b) => ({ start: b.start, ...b.p75 }));
        return (
          <>
            <table data-testid="vitals-table">
              <caption className="muted">75th percentile of each web vital over the period</caption>
              <thead>
                <tr>
                  <th scope="col">Vital</th>
                  <th scope="col">{estimatedHeading('p75', 'p75', data.estimates)}</th>
                  <th scope="col">Page loads rated</th>
                </tr>
              </thead>
              <tbody>
                {VITALS.map((vital) => {
                  const summary = data.overall[vital];
                  return (
                    <tr key={vital}>
                      <th scope="row">{VITAL_LABELS[vital]}</th>
                      <td>
                        {formatVital(vital, summary?.p75 ?? null)} <Rating rating={summary?.rating ?? null} />
                      </td>
                      <td>
                        {summary ? (
                          <>
                            {formatCount(summary.count)}: <Shares summary={summary} />
                          </>
                        ) : (
                          'none'
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            <DownloadCsv
              table="Web vitals"
              period={data}
              header={['Vital', 'p75', 'Rating', 'Page loads rated', 'Good', 'Needs improvement', 'Poor']}
              rows={() =>
                VITALS.map((vital) => {
                  const v = data.overall[vital];
                  return [vital, v?.p75, v?.rating, v?.count, v?.good, v?.needsImprovement, v?.poor];
                })
              }
            />
            <h3>Per landing page</h3>
            <div className="table-scroll" role="region" aria-label="Web vitals per landing page" tabIndex={0}>
              <table data-testid="vitals-pages-table">
                <thead>
                  <tr>
                    <th scope="col">Page</th>
                    {VITALS.map((vital) => (
                      <th key={vital} scope="col">
                        <abbr title={VITAL_LABELS[vital]}>{vital}</abbr>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {data.pages.map((row) => (
                    <tr key={row.page}>
                      <th scope="row">
                        <LongText text={row.page || '(unnamed)'} />
                      </th>
                      {VITALS.map((vital) => {
                        const summary = row.vitals[vital];
                        return (
                          <td key={vital}>
                            {formatVital(vital, summary?.p75 ?? null)}{' '}
                            <Rating rating={summary?.rating ?? null} />
                            {summary && <Shares summary={summary} />}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <EstimatesNote estimates={data.estimates} headings={{ p75: 'p75' }} />
            <DownloadCsv
              table="Web vitals per landing page"
              period={data}
              header={['Page', ...VITALS.flatMap((vital) => [`${vital} p75`, `${vital} rating`])]}
              rows={() =>
                data.pages.map((row) => [
                  row.page,
                  ...VITALS.flatMap((vital) => [row.vitals[vital]?.p75, row.vitals[vital]?.rating]),
                ])
              }
            />
            <div className="charts">
              <LineChart
                title={estimatedHeading('p75 of LCP, FCP, TTFB and INP', 'p75', data.estimates)}
                points={points}
                marks={marks}
                format={formatMs}
                download={{ table: 'p75 of LCP, FCP, TTFB and INP over time', period: data }}
                series={[
                  { key: 'LCP', label: 'LCP', className: 's1' },
                  { key: 'FCP', label: 'FCP', className: 's2' },
                  { key: 'TTFB', label: 'TTFB', className: 's4' },
                  { key: 'INP', label: 'INP', className: 's3' },
                ]}
              />
              <LineChart
                title={estimatedHeading('p75 of CLS', 'p75', data.estimates)}
                points={points}
                marks={marks}
                format={(value) => value.toFixed(2)}
                download={{ table: 'p75 of CLS over time', period: data }}
                series={[{ key: 'CLS', label: 'CLS', className: 's1' }]}
              />
            </div>
          </>
        );
      }}
    </Panel>
  );
}
