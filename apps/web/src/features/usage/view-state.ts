import { segmentOf, segmentParams } from './segment-filter';
import { RANGE_LABELS, type Range, type Segment, type TimeseriesPoint } from './usage-api';

/**
 * What the dashboard shows, all of it in the page's address (docs/decisions/0081-usage-dashboard-layout.md),
 * so a reload or a shared link shows the same view: `?range=7d&figure=pageViews&device=mobile`, or a
 * custom period `?from=…&to=…` (ISO 8601). Defaults are left out of the address; values that are not
 * understood fall back to them.
 */

/** The figures the large chart can show: those the time series has. */
export type Figure = Exclude<keyof TimeseriesPoint, 'start'>;
export const FIGURE_LABELS: Record<Figure, string> = {
  users: 'Users',
  sessions: 'Sessions',
  pageViews: 'Page views',
  exceptions: 'Exceptions',
  failedCalls: 'Failed calls',
};
export const DEFAULT_FIGURE: Figure = 'users';
export const DEFAULT_RANGE: Range = '24h';

/** A preset range, or a custom period [from, to) in ISO 8601. */
export type PeriodChoice = { range: Range } | { from: string; to: string };

export interface View {
  period: PeriodChoice;
  figure: Figure;
  segment: Segment;
}

const isFigure = (value: string | null): value is Figure =>
  value !== null && Object.hasOwn(FIGURE_LABELS, value);
const isRange = (value: string | null): value is Range =>
  value !== null && Object.hasOwn(RANGE_LABELS, value);
const isTime = (value: string | null): value is string =>
  value !== null && /^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value));

export function viewOf(params: URLSearchParams): View {
  const from = params.get('from');
  const to = params.get('to');
  const range = params.get('range');
  const period: PeriodChoice =
    isTime(from) && isTime(to) && Date.parse(from) < Date.parse(to)
      ? { from: new Date(from).toISOString(), to: new Date(to).toISOString() }
      : { range: isRange(range) ? range : DEFAULT_RANGE };
  const figure = params.get('figure');
  return { period, figure: isFigure(figure) ? figure : DEFAULT_FIGURE, segment: segmentOf(params) };
}

/** The view as the page's query parameters, defaults left out, in a stable order. */
export function viewParams(view: View): URLSearchParams {
  const params = new URLSearchParams();
  if ('range' in view.period) {
    if (view.period.range !== DEFAULT_RANGE) params.set('range', view.period.range);
  } else {
    params.set('from', view.period.from);
    params.set('to', view.period.to);
  }
  if (view.figure !== DEFAULT_FIGURE) params.set('figure', view.figure);
  for (const [key, value] of Object.entries(segmentParams(view.segment))) params.set(key, value);
  return params;
}

/**
 * The period from one day to another, both included, in the viewer's time zone (`<input type="date">`
 * values): from the first day's midnight to the midnight after the last. Null when either is not a day,
 * or the last is before the first.
 */
export function daysPeriod(firstDay: string, lastDay: string): { from: string; to: string } | null {
  const day = /^(\d{4})-(\d\d)-(\d\d)$/;
  const a = day.exec(firstDay);
  const b = day.exec(lastDay);
  if (!a || !b) return null;
  const from = new Date(Number(a[1]), Number(a[2]) - 1, Number(a[3]));
  // The next day's midnight by the calendar, not 24 hours on: a day with a clock change is 23 or 25 hours.
  const to = new Date(Number(b[1]), Number(b[2]) - 1, Number(b[3]) + 1);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || to <= from) return null;
  return { from: from.toISOString(), to: to.toISOString() };
}

/** A time as the viewer's local day (`2026-11-25`), for a date input. */
export function localDay(iso: string): string {
  const d = new Date(iso);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}
