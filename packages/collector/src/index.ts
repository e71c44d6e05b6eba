export { createCollector } from './collector.js';
export type { BreezeResponse, Collector, CollectorOptions, Logger, LogLevel } from './collector.js';
export { limits, telemetryTypes, validateEnvelope } from './contracts.js';
export type { TelemetryItem, TelemetryType, Validation } from './contracts.js';
export { openStore, storeFile } from './store.js';
export type { Envelope, ExportFilter, OpenStoreOptions, TelemetryStore } from './store.js';
export { readStoreSettings } from './settings.js';
export type { StoreSettings } from './settings.js';
