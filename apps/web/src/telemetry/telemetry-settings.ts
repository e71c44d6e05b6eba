import type { IConfig, IConfiguration } from '@microsoft/applicationinsights-web';

/**
 * The usage-reporting settings in effect, set explicitly in this one place (the product's
 * specification: session renewal 30 minutes, expiration 24 hours, sampling 100 %, diagnostic log
 * interval 10 seconds).
 */
export const TELEMETRY_SETTINGS = {
  sessionRenewalMs: 30 * 60 * 1000,
  sessionExpirationMs: 24 * 60 * 60 * 1000,
  samplingPercentage: 100,
  diagnosticLogInterval: 10 * 1000,
} as const;

/** The id of the SDK's configuration-sync plugin, whose CDN fetch we block. */
const CFG_SYNC_PLUGIN = 'AppInsightsCfgSyncPlugin';

/**
 * The whole SDK configuration. Page views are tracked by the router (not the SDK's history patching),
 * fetch calls by the facade (fetch-tracking.ts: the same dependency, reported off the caller's path),
 * correlation headers go to this origin only, nothing is fetched from a CDN, and the deprecated
 * `unload` event is not used (pending items leave on `pagehide`/`visibilitychange` with a beacon).
 */
export function sdkConfiguration(connectionString: string, appOrigin: string): IConfiguration & IConfig {
  const appHost = new URL(appOrigin).host;
  return {
    connectionString,
    ...TELEMETRY_SETTINGS,
    enableAutoRouteTracking: false,
    autoTrackPageVisitTime: false,
    disableExceptionTracking: false,
    enableUnhandledPromiseRejectionTracking: true,
    disableAjaxTracking: false,
    // The page's fetch calls are tracked by fetch-tracking.ts, which reports after the caller has its answer.
    disableFetchTracking: true,
    enableCorsCorrelation: false,
    correlationHeaderDomains: [appHost],
    distributedTracingMode: 2, // DistributedTracingModes.W3C: `traceparent` only
    enableRequestHeaderTracking: false,
    enableResponseHeaderTracking: false,
    enableAjaxErrorStatusText: false,
    enableSessionStorageBuffer: true,
    // Normal sends use fetch/XHR, whose answers the SDK reads (so a 503 is retried); only the page-hide
    // flush uses a beacon, which outlives the page.
    isBeaconApiDisabled: true,
    onunloadDisableBeacon: false,
    disablePageUnloadEvents: ['unload'],
    loggingLevelConsole: 0,
    loggingLevelTelemetry: 1,
    disableTelemetry: false,
    extensionConfig: { [CFG_SYNC_PLUGIN]: { cfgUrl: '', blkCdnCfg: true } },
  };
}
