export { createCollector } from './collector.js';
export type {
  BreezeResponse,
  Collector,
  CollectorFront,
  CollectorFrontOptions,
  CollectorOptions,
  Logger,
  LogLevel,
  SinkCollectorOptions,
} from './collector.js';
export { openStoreSink, SinkFull, SinkUnavailable } from './store-sink.js';
export { createStoreHolderApi } from './store-holder.js';
export type { StoreHolderApiOptions } from './store-holder.js';
export { createForwardingSink, createRemoteQueries, StoreUnavailable } from './store-holder-client.js';
export type { ForwardingSink, StoreHolderClientOptions } from './store-holder-client.js';
export { INTERNAL_PREFIX, MIN_TOKEN_LENGTH } from './internal-api.js';
export type { ItemSink, StoreSink, StoreSinkOptions } from './store-sink.js';
export type { PackedItems } from './packed.js';
export { clientAddress, sourceKey } from './source-address.js';
export { RateLimits } from './rate-limit.js';
export type { Grant, RateLimiter } from './rate-limit.js';
export { defaultHttpLimits, httpServerOptions, limitServer } from './http-limits.js';
export type { HttpLimits } from './http-limits.js';
export { limits, telemetryTypes, validateEnvelope } from './contracts.js';
export type { TelemetryItem, TelemetryType, Validation } from './contracts.js';
export { openStore, storeFile } from './store.js';
export type { Envelope, ExportFilter, OpenStoreOptions, TelemetryStore } from './store.js';
export { readStoreSettings } from './settings.js';
export type { StoreSettings } from './settings.js';
export {
  createUsageQueries,
  rangeSpecs,
  SESSION_ID,
  SESSIONS_LIMIT,
  USER_ID,
  usageRanges,
} from './queries.js';
export type {
  DependencyRow,
  ExceptionGroup,
  Overview,
  PageRow,
  Period,
  SessionRow,
  SessionTimeline,
  Tile,
  TimelineItem,
  Timeseries,
  TimeseriesBucket,
  UsageOptions,
  UsageQueries,
  UsageRange,
  UsageReader,
} from './queries.js';
export { createAnalyticsQueries } from './analytics.js';
export type { AnalyticsQueries } from './analytics.js';
export { rateVital, vitalThresholds } from './analytics-experience.js';
export { openRelaySink, teeSink } from './relay/relay-sink.js';
export type { RelaySink, RelaySinkOptions } from './relay/relay-sink.js';
export type { RelayStats } from './relay/forwarder.js';
export { ingestionTarget, parseConnectionString } from './relay/connection-string.js';
export { createLogAnalyticsQueries } from './log-analytics/log-analytics-queries.js';
export type { Freshness, LogAnalyticsQueries, PortalLinks } from './log-analytics/log-analytics-queries.js';
export { NotAvailableError } from './log-analytics/kql.js';
export { LogAnalyticsError, logAnalyticsRunner } from './log-analytics/client.js';
export type { LogAnalyticsOptions } from './log-analytics/client.js';
