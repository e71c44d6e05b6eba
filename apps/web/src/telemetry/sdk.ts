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
  /** `operationId`: the operation the metric belongs to, when not the current one (a page load's vitals). */
  trackMetric(name: string, value: number, properties: Record<string, string>, operationId?: string): void;
  trackTrace(message: string, properties: Record<string, string>): void;
  /** The trace this page's items belong to (W3C trace id: 32 hex digits): the current operation's. */
  traceId(): string;
  /**
   * A new operation, trace `traceId` (32 hex digits) named `name`, for the page the router now shows: its
   * page view, calls and errors belong to it, as with the SDK's own route tracking (which the router's
   * replaces).
   */
  startOperation(name: string, traceId: string): void;
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
  /** The operation of the item being tracked, when not the current one (a call's trace, a load's vitals). */
  let itemOperation: string | undefined;
  /** Tracks one item in `operationId`: the SDK passes the item to the initializers within `track`. */
  const inOperation = (operationId: string | undefined, track: () => void) => {
    itemOperation = operationId;
    try {
      track();
    } finally {
      itemOperation = undefined;
    }
  };
  // Every item passes here before it is sent: nothing secret leaves, whatever produced it.
  appInsights.addTelemetryInitializer((item: ITelemetryItem) => {
    // The SDK sends `data` as the item's properties: the dashboard segments by role (never a name).
    if (roles) item.data = { ...item.data, roles };
    if (itemOperation !== undefined) item.tags = { ...item.tags, 'ai.operation.id': itemOperation };
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
    trackMetric: (name, average, properties, operationId) =>
      inOperation(operationId, () => appInsights.trackMetric({ name, average }, properties)),
    trackTrace: (message, properties) => appInsights.trackTrace({ message, properties }),
    traceId: () => appInsights.context.telemetryTrace.traceID ?? '',
    startOperation: (name, traceId) => {
      // As the SDK's own route tracking does (enableAutoRouteTracking): a new trace id in the context
      // items take theirs from, named after the page (their `ai.operation.name`).
      const trace = appInsights.getTraceCtx();
      if (!trace) return;
      trace.traceId = traceId;
      trace.pageName = name;
      appInsights.setTraceCtx(trace);
    },
    trackDependency: ({ spanId, traceId, method, url, status, durationMs, startTime }) =>
      inOperation(traceId, () =>
        appInsights.trackDependencyData({
          // As the SDK's own fetch tracking writes them: the id names the trace and the span; the
          // target is the absolute URL, of which the SDK sends the host (and the name as the data).
          id: `|${traceId}.${spanId}`,
          name: `${method} ${new URL(url).pathname}`,
          target: url,
          type: 'Fetch',
          duration: durationMs,
          responseCode: status,
          success: status >= 200 && status < 400,
          startTime,
          properties: { HttpMethod: method },
        }),
      ),
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
