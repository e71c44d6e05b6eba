import { describe, expect, it } from 'vitest';
import { sdkConfiguration, TELEMETRY_SETTINGS } from './telemetry-settings';

describe('telemetry settings', () => {
  it('are the specified ones: renewal 30 min, expiration 24 h, sampling 100 %, diagnostic log 10 s', () => {
    expect(TELEMETRY_SETTINGS).toEqual({
      sessionRenewalMs: 1_800_000,
      sessionExpirationMs: 86_400_000,
      samplingPercentage: 100,
      diagnosticLogInterval: 10_000,
    });
  });

  it('reach the SDK configuration unchanged', () => {
    const config = sdkConfiguration(
      'InstrumentationKey=k;IngestionEndpoint=http://localhost:3000/',
      'http://localhost:3000',
    );
    expect(config).toMatchObject(TELEMETRY_SETTINGS);
  });

  it('block the CDN configuration fetch, send correlation headers only to this origin, and avoid unload', () => {
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
