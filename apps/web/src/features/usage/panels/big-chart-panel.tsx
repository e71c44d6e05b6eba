import { useEndpoint } from '../../../auth/api-client';
import { LineChart } from '../line-chart';
import { Panel } from '../panel';
import type { PanelPlacement, PanelProps } from '../panel-props';
import { FIGURE_LABELS } from '../view-state';

export const panel = { section: 'overview', order: 20 } satisfies PanelPlacement;

/** The one large chart: the figure its tile chose, over the period, with the period's annotations. */
export default function BigChartPanel({ view, query, every, marks }: PanelProps) {
  const answer = useEndpoint('/usage/timeseries', { query }, every);
  const label = FIGURE_LABELS[view.figure];
  return (
    <Panel
      title="Over time"
      titleHidden
      level={3}
      query={answer}
      isEmpty={(data) => data.buckets.length === 0}
    >
      {(data) => (
        <div className="big-chart" data-testid="big-chart">
          <LineChart
            title={`${label} over time`}
            points={data.buckets}
            height={220}
            marks={marks}
            series={[{ key: view.figure, label, className: 's1' }]}
            download={{ table: `${label} over time`, period: data }}
          />
        </div>
      )}
    </Panel>
  );
}
