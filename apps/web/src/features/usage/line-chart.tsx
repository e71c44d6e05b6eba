import { formatCount, formatTime } from './format';

export interface Series<T> {
  key: keyof T & string;
  label: string;
  className: string;
}

/** A point's value of a series: a number, or null where nothing was measured (a gap in the line). */
const valueOf = <T,>(point: T, key: keyof T): number | null =>
  point[key] === null ? null : Number(point[key]);

/** The runs of consecutive measured points: one polyline each, so a gap is not drawn as a zero. */
function runs<T>(points: T[], key: keyof T): [number, number][][] {
  const out: [number, number][][] = [];
  let run: [number, number][] = [];
  points.forEach((point, i) => {
    const v = valueOf(point, key);
    if (v === null) {
      if (run.length) out.push(run);
      run = [];
    } else run.push([i, v]);
  });
  if (run.length) out.push(run);
  return out;
}

const WIDTH = 640;
const HEIGHT = 180;
const PAD = 28;

/**
 * A small line chart in SVG, with the same numbers as a table for keyboard and screen-reader users
 * (the picture itself is hidden from assistive technology).
 */
export function LineChart<T extends { start: string }>({
  title,
  points,
  series,
  format = formatCount,
}: {
  title: string;
  points: T[];
  series: Series<T>[];
  /** How values read (ticks and table); default a count. */
  format?: (value: number) => string;
}) {
  const values = points.flatMap((point) => series.flatMap((s) => valueOf(point, s.key) ?? []));
  const max = Math.max(1, ...values);
  const x = (i: number) => PAD + (points.length < 2 ? 0 : (i * (WIDTH - 2 * PAD)) / (points.length - 1));
  const y = (v: number) => HEIGHT - PAD - (v / max) * (HEIGHT - 2 * PAD);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} aria-hidden="true" focusable="false">
        <line x1={PAD} y1={HEIGHT - PAD} x2={WIDTH - PAD} y2={HEIGHT - PAD} className="axis" />
        <text x={4} y={PAD} className="tick">
          {format(max)}
        </text>
        <text x={4} y={HEIGHT - PAD} className="tick">
          0
        </text>
        {series.flatMap((s) =>
          runs(points, s.key).map((run) => (
            <polyline
              key={`${s.key}-${run[0]?.[0] ?? 0}`}
              className={`line ${s.className}`}
              points={run.map(([i, v]) => `${x(i)},${y(v)}`).join(' ')}
            />
          )),
        )}
      </svg>
      <ul className="legend">
        {series.map((s) => (
          <li key={s.key} className={s.className}>
            {s.label}
          </li>
        ))}
      </ul>
      <details>
        <summary>{title}: as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">From</th>
              {series.map((s) => (
                <th key={s.key} scope="col">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {points.map((point) => (
              <tr key={point.start}>
                <th scope="row">{formatTime(point.start)}</th>
                {series.map((s) => (
                  <td key={s.key}>
                    {valueOf(point, s.key) === null ? '—' : format(valueOf(point, s.key) ?? 0)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
