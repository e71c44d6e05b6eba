import { ApplicationInsights, type ITelemetryItem } from '@microsoft/applicationinsights-web';
import { VisitReferrer } from './referrer';
import { scrubDeep } from './scrub';
import { sdkConfiguration } from './telemetry-settings';
import { writeBehindStorage } from './write-behind-storage';

/** The parts of the SDK the facade drives. Lives in its own chunk, loaded after consent and first paint. */
export interface TelemetrySdk {
  trackPageView(name: string, uri: string, durationMs: number | undefined): void;
  trackException(error: Error, properties: Record<string, string>): void;
  trackEvent(name: string, properties: Record<string, string>, measurements: Record<string, number>): void;
  trackMetric(name: string, value: number, properties: Record<string, string>): void;
  trackTrace(message: string, properties: Record<string, string>): void;
  /** The trace this page's items belong to (W3C trace id: 32 hex digits). */
  traceId(): string;
  /** A call the page or the token vault made (fetch-tracking.ts, the facade's apiCall), as a Fetch dependency. */
  trackDependency(call: DependencyCall): void;
  /** `roles`: the user's roles, comma-separated, sent with every item as the `roles` property (segments). */
  setAuthenticatedUser(id: string, roles: string): void;
  clearAuthenticatedUser(): void;
  /** The anonymous user and session ids the SDK reports under now. */
  ids(): AnonymousIds;
  flush(): void;
  unload(): void;
}

export interface AnonymousIds {
  user: string;
  session: string;
}

export interface DependencyCall {
  /** The span id sent in the call's `traceparent`. */
  spanId: string;
  traceId: string;
  method: string;
  url: string;
  /** The HTTP status; 0 when no answer came. */
  status: number;
  durationMs: number;
  startTime: Date;
}

/** `providerHosts`: the identity provider's hosts, never a referrer (the set may grow later). */
export function startSdk(
  connectionString: string,
  appOrigin: string,
  providerHosts: ReadonlySet<string> = new Set(),
): TelemetrySdk {
  // The send buffers reach sessionStorage once a second, not at every item (write-behind-storage.ts).
  const buffers = writeBehindStorage(window.sessionStorage, window);
  const appInsights = new ApplicationInsights({
    config: { ...sdkConfiguration(connectionString, appOrigin), bufferOverride: buffers },
  });
  appInsights.loadAppInsights();
  const referrer = new VisitReferrer(appOrigin, window.sessionStorage, providerHosts);
  let roles = '';
  /** The trace of each reported call, by span id, until its item passes the initializer below. */
  const callTraces = new Map<string, string>();
  // Every item passes here before it is sent: nothing secret leaves, whatever produced it.
  appInsights.addTelemetryInitializer((item: ITelemetryItem) => {
    // The SDK sends `data` as the item's properties: the dashboard segments by role (never a name).
    if (roles) item.data = { ...item.data, roles };
    const callTrace = callTraces.get(String(item.baseData?.id));
    if (callTrace !== undefined) {
      callTraces.delete(String(item.baseData?.id));
      item.tags = { ...item.tags, 'ai.operation.id': callTrace };
    }
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
    traceId: () => appInsights.context.telemetryTrace.traceID ?? '',
    trackDependency: ({ spanId, traceId, method, url, status, durationMs, startTime }) => {
      const target = new URL(url);
      // As the SDK's own fetch tracking writes them: the id names the trace and the span.
      const id = `|${traceId}.${spanId}`;
      callTraces.set(id, traceId);
      appInsights.trackDependencyData({
        id,
        name: `${method} ${target.pathname}`,
        target: target.host,
        data: url,
        type: 'Fetch',
        duration: durationMs,
        responseCode: status,
        success: status >= 200 && status < 400,
        startTime,
        properties: { HttpMethod: method },
      });
    },
    setAuthenticatedUser: (id, userRoles) => {
      roles = userRoles;
      appInsights.setAuthenticatedUserContext(id, undefined, false);
    },
    clearAuthenticatedUser: () => {
      roles = '';
      appInsights.clearAuthenticatedUserContext();
    },
    ids: () => ({ user: appInsights.context.user.id, session: appInsights.context.getSessionId() }),
    flush: () => {
      void appInsights.flush();
      buffers.flush();
    },
    unload: () => void appInsights.unload(false),
  };
}
