export { createCollector } from './http/collector.js';
export type {
  BreezeResponse,
  Collector,
  CollectorFront,
  CollectorFrontOptions,
  CollectorOptions,
  SinkCollectorOptions,
} from './http/collector.js';
export type { Logger, LogLevel } from './logger.js';
export { SinkFull, SinkUnavailable } from './store/sink.js';
export { openStoreSink } from './analytics/store-sink.js';
export { createStoreHolderApi } from './replicas/store-holder.js';
export type { StoreHolderApiOptions } from './replicas/store-holder.js';
export {
  createForwardingSink,
  createRemoteQueries,
  StoreUnavailable,
} from './replicas/store-holder-client.js';
export type { ForwardingSink, StoreHolderClientOptions } from './replicas/store-holder-client.js';
export { INTERNAL_PREFIX, MIN_TOKEN_LENGTH } from './replicas/internal-api.js';
export type { ItemSink, StoreSinkOptions } from './store/sink.js';
export type { StoreSink } from './analytics/store-sink.js';
export type { PackedItems } from './protocol/packed.js';
export {
  clientAddress,
  compileTrust,
  sourceKey,
  trustedHops,
  withoutPort,
  type ProxyTrust,
  type TrustProxySetting,
} from './http/source-address.js';
export { RateLimits } from './http/rate-limit.js';
export type { Grant, RateLimiter } from './http/rate-limit.js';
export { defaultHttpLimits, httpServerOptions, limitServer } from './http/http-limits.js';
export type { HttpLimits } from './http/http-limits.js';
export { limits, telemetryTypes, validateEnvelope } from './protocol/envelopes.js';
export type { TelemetryItem, TelemetryType, Validation } from './protocol/envelopes.js';
export { openStore, storeFile } from './store/store.js';
export type { Envelope, ExportFilter, OpenStoreOptions, TelemetryStore } from './store/store.js';
export { annotationExportLine } from './store/annotations.js';
export type { AnnotationQueries, StoredAnnotation } from './store/annotations.js';
export { readStoreSettings } from './cli/settings.js';
export type { StoreSettings } from './cli/settings.js';
export { createUsageQueries, SESSION_ID, SESSIONS_LIMIT, USER_ID, usageRanges } from './analytics/usage.js';
export type {
  DependencyRow,
  ExceptionGroup,
  PageRow,
  Tile,
  TimelineItem,
  Timeseries,
  TimeseriesBucket,
  UsageRange,
} from './analytics/usage.js';
export type { Overview, SessionRow, SessionTimeline, UsageQueries } from './analytics/usage-answers.js';
export { rangeSpecs } from './analytics/sql.js';
export type { Period, UsageOptions, UsageReader } from './analytics/sql.js';
export { createAnalyticsQueries } from './analytics/product.js';
export type { AnalyticsQueries } from './analytics/product.js';
export { rateVital, vitalThresholds } from './store/vitals.js';
export { openRelaySink, teeSink } from './relay/relay-sink.js';
export type { RelaySink, RelaySinkOptions } from './relay/relay-sink.js';
export type { RelayStats } from './relay/forwarder.js';

export { createLogAnalyticsQueries } from './log-analytics/log-analytics-queries.js';
export type { Freshness, LogAnalyticsQueries, PortalLinks } from './log-analytics/log-analytics-queries.js';
export { NotAvailableError } from './log-analytics/kql.js';
export { LogAnalyticsError, logAnalyticsRunner } from './log-analytics/client.js';
export type { LogAnalyticsOptions } from './log-analytics/client.js';
export { dashboardQueries } from './dashboard/dashboard-queries.js';
export type { Dashboard, DashboardQueryName } from './dashboard/dashboard-queries.js';
export { runOnLogAnalytics, runOnStore } from './dashboard/dashboard-query.js';
export type {
  AnyDashboardQuery,
  DashboardAnswerOf,
  DashboardQueries,
  DashboardQuery,
  DashboardQueryOf,
  DashboardRunner,
  NotAvailable,
} from './dashboard/dashboard-query.js';
