import { formatCount, formatTime } from './format';

export interface Series<T> {
  key: keyof T & string;
  label: string;
  className: string;
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
}: {
  title: string;
  points: T[];
  series: Series<T>[];
}) {
  const values = points.flatMap((point) => series.map((s) => Number(point[s.key])));
  const max = Math.max(1, ...values);
  const x = (i: number) => PAD + (points.length < 2 ? 0 : (i * (WIDTH - 2 * PAD)) / (points.length - 1));
  const y = (v: number) => HEIGHT - PAD - (v / max) * (HEIGHT - 2 * PAD);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} aria-hidden="true" focusable="false">
        <line x1={PAD} y1={HEIGHT - PAD} x2={WIDTH - PAD} y2={HEIGHT - PAD} className="axis" />
        <text x={4} y={PAD} className="tick">
          {formatCount(max)}
        </text>
        <text x={4} y={HEIGHT - PAD} className="tick">
          0
        </text>
        {series.map((s) => (
          <polyline
            key={s.key}
            className={`line ${s.className}`}
            points={points.map((point, i) => `${x(i)},${y(Number(point[s.key]))}`).join(' ')}
          />
        ))}
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
                  <td key={s.key}>{formatCount(Number(point[s.key]))}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
