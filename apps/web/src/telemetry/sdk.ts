import { ApplicationInsights, type ITelemetryItem } from '@microsoft/applicationinsights-web';
import { VisitReferrer } from './referrer';
import { scrubDeep } from './scrub';
import { sdkConfiguration } from './telemetry-settings';

/** The parts of the SDK the facade drives. Lives in its own chunk, loaded after consent and first paint. */
export interface TelemetrySdk {
  trackPageView(name: string, uri: string, durationMs: number | undefined): void;
  trackException(error: Error, properties: Record<string, string>): void;
  trackEvent(name: string, properties: Record<string, string>, measurements: Record<string, number>): void;
  trackMetric(name: string, value: number, properties: Record<string, string>): void;
  trackTrace(message: string, properties: Record<string, string>): void;
  /** `roles`: the user's roles, comma-separated, sent with every item as the `roles` property (segments). */
  setAuthenticatedUser(id: string, roles: string): void;
  clearAuthenticatedUser(): void;
  flush(): void;
  unload(): void;
}

/** `providerHosts`: the identity provider's hosts, never a referrer (the set may grow later). */
export function startSdk(
  connectionString: string,
  appOrigin: string,
  providerHosts: ReadonlySet<string> = new Set(),
): TelemetrySdk {
  const appInsights = new ApplicationInsights({ config: sdkConfiguration(connectionString, appOrigin) });
  appInsights.loadAppInsights();
  const referrer = new VisitReferrer(appOrigin, window.sessionStorage, providerHosts);
  let roles = '';
  // Every item passes here before it is sent: nothing secret leaves, whatever produced it.
  appInsights.addTelemetryInitializer((item: ITelemetryItem) => {
    // The SDK sends `data` as the item's properties: the dashboard segments by role (never a name).
    if (roles) item.data = { ...item.data, roles };
    referrer.apply(item);
    scrubDeep(item.baseData);
    scrubDeep(item.data);
    scrubDeep(item.tags);
    scrubDeep(item.ext);
  });
  return {
    // Without a duration the SDK measures the first page view from the navigation timing itself.
    trackPageView: (name, uri, durationMs) =>
      appInsights.trackPageView(
        durationMs === undefined ? { name, uri } : { name, uri, properties: { duration: durationMs } },
      ),
    trackException: (error, properties) => appInsights.trackException({ exception: error, properties }),
    trackEvent: (name, properties, measurements) =>
      appInsights.trackEvent({ name, properties, measurements }),
    trackMetric: (name, average, properties) => appInsights.trackMetric({ name, average }, properties),
    trackTrace: (message, properties) => appInsights.trackTrace({ message, properties }),
    setAuthenticatedUser: (id, userRoles) => {
      roles = userRoles;
      appInsights.setAuthenticatedUserContext(id, undefined, false);
    },
    clearAuthenticatedUser: () => {
      roles = '';
      appInsights.clearAuthenticatedUserContext();
    },
    flush: () => void appInsights.flush(),
    unload: () => void appInsights.unload(false),
  };
}
