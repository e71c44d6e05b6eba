import { formatTime } from './format';
import type { StoreFull } from './usage-api';

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

/**
 * Said plainly to admins while the telemetry store refuses everything (its disk quota is reached): what
 * is refused, since when, and what to do. Nothing when the store takes telemetry.
 */
export function StoreFullBanner({ storeFull }: { storeFull: StoreFull | null }) {
  if (!storeFull) return null;
  return (
    <div className="notice" role="alert" data-testid="store-full">
      <p>
        <strong>New telemetry is not being stored.</strong> The telemetry store reached its disk quota (
        {gib(storeFull.usedBytes)} of {gib(storeFull.maxBytes)}) on {formatTime(storeFull.since)}. Since then
        the collector has refused every sender&apos;s telemetry (507), and the SDKs do not send it again: what
        happened since is missing from this dashboard.
      </p>
      <p>
        To take telemetry again, free space or raise the quota: lower <code>TELEMETRY_RETENTION_DAYS</code>{' '}
        (older items are deleted at the next start, then hourly), or raise <code>TELEMETRY_MAX_STORE_MB</code>
        , and restart. The collector measures its folder every 10 seconds and takes telemetry again once it is
        below the quota.
      </p>
    </div>
  );
}
