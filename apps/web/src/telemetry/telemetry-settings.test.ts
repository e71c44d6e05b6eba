import { ApplicationInsights, type ITelemetryItem } from '@microsoft/applicationinsights-web';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sdkConfiguration } from './telemetry-settings';

const MINUTE = 60_000;

/**
 * The real SDK with our configuration. `sessionOfNextItem()` tracks one event and returns the session id
 * the SDK gave it; items are captured instead of sent.
 */
function startCapturingSdk() {
  const sdk = new ApplicationInsights({
    config: sdkConfiguration('InstrumentationKey=k;IngestionEndpoint=http://localhost/', 'http://localhost'),
  });
  sdk.loadAppInsights();
  let lastSession: string | undefined;
  sdk.addTelemetryInitializer((item: ITelemetryItem) => {
    lastSession = (item.ext?.app as { sesId?: string } | undefined)?.sesId;
    return false;
  });
  const sessionOfNextItem = () => {
    lastSession = undefined;
    sdk.trackEvent({ name: 'tick' });
    return lastSession;
  };
  return { sdk, sessionOfNextItem };
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-11-23T08:00:00Z') });
  localStorage.clear();
  for (const cookie of document.cookie.split(';')) {
    document.cookie = `${cookie.split('=')[0]?.trim()}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
});
afterEach(() => {
  vi.useRealTimers();
});

// The specification's values (renewal 30 min, expiration 24 h) checked as the SDK applies them, not
// as numbers restated from the settings object.
describe('the SDK with our settings', () => {
  it('keeps a session through 29 idle minutes and starts a new one after 31 (renewal 30 min)', () => {
    const { sdk, sessionOfNextItem } = startCapturingSdk();
    const first = sessionOfNextItem();
    vi.setSystemTime(Date.now() + 29 * MINUTE);
    const after29 = sessionOfNextItem();
    vi.setSystemTime(Date.now() + 31 * MINUTE);
    const after31More = sessionOfNextItem();
    void sdk.unload(false);
    expect(first).toMatch(/^\S{10,}$/);
    expect(after29).toBe(first);
    expect(after31More).toMatch(/^\S{10,}$/);
    expect(after31More).not.toBe(first);
  });

  it('ends even an active session after 24 hours (expiration)', () => {
    const { sdk, sessionOfNextItem } = startCapturingSdk();
    const first = sessionOfNextItem();
    // An item every 20 minutes: never idle long enough to renew.
    const sessions: (string | undefined)[] = [];
    for (let elapsed = 20; elapsed <= 24 * 60 + 20; elapsed += 20) {
      vi.setSystemTime(Date.now() + 20 * MINUTE);
      sessions.push(sessionOfNextItem());
    }
    void sdk.unload(false);
    const upTo24Hours = sessions.slice(0, -1);
    expect(upTo24Hours).toHaveLength(72);
    expect(upTo24Hours.every((id) => id === first)).toBe(true);
    expect(sessions.at(-1)).toMatch(/^\S{10,}$/);
    expect(sessions.at(-1)).not.toBe(first);
  });
});

describe('the SDK configuration', () => {
  it('blocks the CDN configuration fetch, send correlation headers only to this origin, and avoid unload', () => {
    const config = sdkConfiguration('InstrumentationKey=k', 'https://app.example.com');
    expect(config.extensionConfig?.AppInsightsCfgSyncPlugin).toEqual({ cfgUrl: '', blkCdnCfg: true });
    expect(config.enableCorsCorrelation).toBe(false);
    expect(config.correlationHeaderDomains).toEqual(['app.example.com']);
    expect(config.disablePageUnloadEvents).toEqual(['unload']);
    expect(config.enableAutoRouteTracking).toBe(false);
    expect(config.enableRequestHeaderTracking).toBe(false);
    // Beacons only on page hide: a beacon's answer is never read, so a refused batch would be lost.
    expect(config.isBeaconApiDisabled).toBe(true);
    expect(config.onunloadDisableBeacon).toBe(false);
  });
});
