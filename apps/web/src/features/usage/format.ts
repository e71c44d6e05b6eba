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
