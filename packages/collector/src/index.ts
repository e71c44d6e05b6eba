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
export { openStoreSink } from './store-sink.js';
export type { ItemSink, StoreSink, StoreSinkOptions } from './store-sink.js';
export type { PackedItems } from './packed.js';
export { clientAddress } from './source-address.js';
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
