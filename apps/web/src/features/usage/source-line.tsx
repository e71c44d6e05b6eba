import { formatTime } from './format';
import type { Overview } from './usage-api';

/** Where the figures come from, and for Azure Monitor Logs how late they may be. */
export function SourceLine({ source }: { source: Overview['source'] }) {
  if (!source) return null;
  if (source.kind === 'local') {
    return (
      <p className="muted" data-testid="usage-source">
        Source: this server&apos;s own store, up to the second.
      </p>
    );
  }
  const delay = source.ingestionDelayMs;
  return (
    <p className="muted" data-testid="usage-source">
      Source: Azure Monitor Logs (the Log Analytics workspace).{' '}
      {source.latestItem
        ? `Newest item of the last hour: ${formatTime(source.latestItem)}. `
        : 'No item in the last hour. '}
      {delay === null || delay === undefined
        ? ''
        : `Items take about ${Math.max(1, Math.round(delay / 60_000))} min to appear here.`}
    </p>
  );
}
