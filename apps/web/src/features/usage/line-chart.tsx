import { useCallback, useState } from 'react';
import { DownloadCsv } from './download-csv';
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

/** The picture's width before it is measured (and in tests): it is drawn at its element's width after. */
const DEFAULT_WIDTH = 640;
const PAD = 28;

/**
 * The width of the element in CSS pixels, kept up to date: the chart is drawn at 1:1, so its height is
 * what it is given on any screen (a viewBox of fixed proportions would make it short on a phone and tall
 * on a laptop) and its text is never scaled.
 */
function useWidth(): [(element: Element | null) => void, number] {
  const [width, setWidth] = useState(DEFAULT_WIDTH);
  const ref = useCallback((element: Element | null) => {
    if (!element || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(([entry]) => {
      const measured = Math.round(entry?.contentRect.width ?? 0);
      if (measured > 0) setWidth(measured);
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/** A moment to mark on the chart (an annotation: a release, an incident), drawn as a vertical line. */
export interface ChartMark {
  at: string;
  label: string;
}

/**
 * The marks within the points' buckets (each point starts a bucket as wide as the first step; the last
 * one too), oldest first, each with the index of the point whose bucket holds it.
 */
export function marksOnPoints(
  marks: readonly ChartMark[],
  starts: readonly string[],
): (ChartMark & { point: number })[] {
  const times = starts.map((start) => Date.parse(start));
  const first = times[0];
  const last = times.at(-1);
  if (first === undefined || last === undefined) return [];
  const width = times.length > 1 ? (times[1] ?? first) - first : Infinity;
  return marks
    .map((mark) => ({ mark, t: Date.parse(mark.at) }))
    .filter(({ t }) => t >= first && t < last + width)
    .sort((a, b) => a.t - b.t)
    .map(({ mark, t }) => ({ ...mark, point: times.findLastIndex((start) => start <= t) }));
}

/**
 * A line chart in SVG, with the same numbers as a table (and its CSV) for keyboard and screen-reader
 * users. The picture is an image named by its title and extent, focusable: the arrow keys step through
 * its points, each read out below it.
 */
export function LineChart<T extends { start: string }>({
  title,
  points,
  series,
  format = formatCount,
  height = 180,
  marks = [],
  download,
}: {
  title: string;
  points: T[];
  series: Series<T>[];
  /** How values read (ticks and table); default a count. */
  format?: (value: number) => string;
  /** The picture's height in CSS pixels. */
  height?: number;
  /** Moments to mark (annotations); those outside the points' buckets are left out. */
  marks?: readonly ChartMark[];
  /** The table's CSV download: its name and the period it covers. */
  download?: { table: string; period: { from: string; to: string } } | undefined;
}) {
  const [active, setActive] = useState<number | null>(null);
  const [measure, WIDTH] = useWidth();
  // Never taller than half its width (a phone's chart stays a chart, not a column).
  const HEIGHT = Math.min(height, Math.max(120, Math.round(WIDTH / 2)));
  const values = points.flatMap((point) => series.flatMap((s) => valueOf(point, s.key) ?? []));
  const max = Math.max(1, ...values);
  const x = (i: number) => PAD + (points.length < 2 ? 0 : (i * (WIDTH - 2 * PAD)) / (points.length - 1));
  const y = (v: number) => HEIGHT - PAD - (v / max) * (HEIGHT - 2 * PAD);
  const first = points[0]?.start;
  const last = points.at(-1)?.start;
  const span = first && last ? Date.parse(last) - Date.parse(first) : 0;
  // A mark in the last bucket (after its point) stays at the right edge.
  const xAt = (iso: string) =>
    first && span > 0
      ? Math.min(WIDTH - PAD, PAD + ((Date.parse(iso) - Date.parse(first)) / span) * (WIDTH - 2 * PAD))
      : PAD;
  const shownMarks = marksOnPoints(
    marks,
    points.map((point) => point.start),
  );
  /** The notes of the marks in a point's bucket, as a screen reader reads them and the table shows them. */
  const notesAt = (i: number) =>
    shownMarks
      .filter((mark) => mark.point === i)
      .map((mark) => `${mark.label} (${formatTime(mark.at)})`)
      .join('; ');
  const describe = (point: T, i: number) => {
    const notes = notesAt(i);
    return `${formatTime(point.start)}: ${series
      .map(
        (s) => `${s.label} ${valueOf(point, s.key) === null ? 'none' : format(valueOf(point, s.key) ?? 0)}`,
      )
      .join(', ')}${notes ? `. Annotation: ${notes}` : ''}`;
  };
  const annotated =
    shownMarks.length === 0
      ? ''
      : ` ${shownMarks.length === 1 ? '1 annotation' : `${shownMarks.length} annotations`}, read at ${shownMarks.length === 1 ? 'its point' : 'their points'}.`;
  const name = `${title}, ${points.length} points${
    first && last ? ` from ${formatTime(first)} to ${formatTime(last)}` : ''
  }, highest ${format(Math.max(0, ...values))}. Arrow keys read each point.${annotated}`;
  const step = (key: string) => {
    if (points.length === 0) return false;
    const moves: Record<string, number> = {
      ArrowRight: (active ?? -1) + 1,
      ArrowLeft: (active ?? points.length) - 1,
      Home: 0,
      End: points.length - 1,
    };
    const next = moves[key];
    if (next === undefined) return false;
    setActive(Math.min(points.length - 1, Math.max(0, next)));
    return true;
  };
  const activePoint = active === null ? undefined : points[active];
  return (
    <figure className="chart" ref={measure}>
      <figcaption>{title}</figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={name}
        tabIndex={0}
        onKeyDown={(event) => {
          if (step(event.key)) event.preventDefault();
        }}
        onBlur={() => setActive(null)}
      >
        <line x1={PAD} y1={HEIGHT - PAD} x2={WIDTH - PAD} y2={HEIGHT - PAD} className="axis" />
        <text x={4} y={PAD} className="tick">
          {format(max)}
        </text>
        <text x={4} y={HEIGHT - PAD} className="tick">
          0
        </text>
        {first && last && (
          <>
            <text x={PAD} y={HEIGHT - 8} className="tick">
              {formatTime(first)}
            </text>
            <text x={WIDTH - PAD} y={HEIGHT - 8} className="tick end">
              {formatTime(last)}
            </text>
          </>
        )}
        {shownMarks.map((mark) => (
          <line
            key={`${mark.at}-${mark.label}`}
            x1={xAt(mark.at)}
            x2={xAt(mark.at)}
            y1={PAD}
            y2={HEIGHT - PAD}
            className="mark"
          >
            <title>{mark.label}</title>
          </line>
        ))}
        {series.flatMap((s) =>
          runs(points, s.key).map((run) => (
            <polyline
              key={`${s.key}-${run[0]?.[0] ?? 0}`}
              className={`line ${s.className}`}
              points={run.map(([i, v]) => `${x(i)},${y(v)}`).join(' ')}
            />
          )),
        )}
        {active !== null && (
          <line x1={x(active)} x2={x(active)} y1={PAD} y2={HEIGHT - PAD} className="cursor" />
        )}
      </svg>
      <p className="chart-readout muted" aria-live="polite">
        {activePoint && active !== null ? describe(activePoint, active) : '\u00a0'}
      </p>
      {shownMarks.length > 0 && (
        // The notes as text for everyone (a line's tooltip needs a mouse); React renders them as text only.
        <ol className="chart-marks muted" aria-label={`Annotations on ${title}`}>
          {shownMarks.map((mark) => (
            <li key={`${mark.at}-${mark.label}`}>
              <time dateTime={mark.at}>{formatTime(mark.at)}</time> {mark.label}
            </li>
          ))}
        </ol>
      )}
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
              {shownMarks.length > 0 && <th scope="col">Annotations</th>}
            </tr>
          </thead>
          <tbody>
            {points.map((point, i) => (
              <tr key={point.start}>
                <th scope="row">{formatTime(point.start)}</th>
                {series.map((s) => (
                  <td key={s.key}>
                    {valueOf(point, s.key) === null ? '—' : format(valueOf(point, s.key) ?? 0)}
                  </td>
                ))}
                {shownMarks.length > 0 && <td>{notesAt(i)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
        {download && (
          <DownloadCsv
            table={download.table}
            period={download.period}
            header={['From', ...series.map((s) => s.label)]}
            rows={() => points.map((point) => [point.start, ...series.map((s) => valueOf(point, s.key))])}
          />
        )}
      </details>
    </figure>
  );
}
