const count = new Intl.NumberFormat(undefined);
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });

export const formatCount = (value: number) => count.format(value);
export const formatTime = (iso: string) => dateTime.format(new Date(iso));
export const formatRate = (value: number) => percent.format(value);
export const formatMs = (value: number | null) =>
  value === null ? '—' : value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
export function formatChange(change: number | null): string {
  if (change === null) return 'new';
  if (change === 0) return 'no change';
  return `${change > 0 ? '+' : ''}${percent.format(change)}`;
}

const changeNumber = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
/**
 * A tile's change against the previous period as a signed percentage ("+12.5 %", "−3 %", "0 %"); "new"
 * when there was nothing before and is something now, "—" when there was nothing either time.
 */
export function formatTileChange({ value, previous }: { value: number; previous: number }): string {
  if (previous === 0) return value === 0 ? '—' : 'new';
  const change = ((value - previous) / previous) * 100;
  const size = changeNumber.format(Math.abs(change));
  if (size === changeNumber.format(0)) return `${size} %`;
  // U+2212, the minus sign, not a hyphen.
  return `${change > 0 ? '+' : '\u2212'}${size} %`;
}

const withZone = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
/** The viewer's time zone, by name (`Europe/Berlin`), in which the page shows every time. */
export const viewerTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
/** A period's bounds in the viewer's time zone, the zone named: "25 Nov 2026, 04:00 – 26 Nov 2026, 04:00 (Europe/Berlin)". */
export const formatPeriod = (from: string, to: string) =>
  `${withZone.format(new Date(from))} – ${withZone.format(new Date(to))} (${viewerTimeZone()})`;

/** "24 hours", "7 days": a period's length, for the comparison with the one before it. */
export function formatDuration(from: string, to: string): string {
  const hours = Math.round((Date.parse(to) - Date.parse(from)) / 3_600_000);
  if (hours < 1) return `${Math.round((Date.parse(to) - Date.parse(from)) / 60_000)} minutes`;
  if (hours === 1) return 'hour';
  return hours % 24 === 0 ? `${hours / 24 === 1 ? '24 hours' : `${hours / 24} days`}` : `${hours} hours`;
}
