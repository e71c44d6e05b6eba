import type { AnalyticsQueries } from '../analytics/product.js';
import { openStoreSink, type StoreSink } from '../analytics/store-sink.js';
import type { StoreUsageQueries } from '../analytics/usage-answers.js';
import { dashboardQueries, type Dashboard } from '../dashboard/dashboard-queries.js';
import { runOnStore } from '../dashboard/dashboard-query.js';
import type { AnnotationQueries } from '../store/annotations.js';
import type { ItemSink, StoreSinkOptions } from '../store/sink.js';
import type { TelemetryStore } from '../store/store.js';
import { consoleLogger } from './front-log.js';
import type { CollectorFront, CollectorFrontOptions } from './front-options.js';
import { createFront } from './ingestion-front.js';

/*
 * The collector: its front (ingestion-front.ts) and, unless given another sink, the embedded store it
 * hands items to, with the store's queries (the store's facade for the server and the store holder).
 */

export type { BreezeResponse } from './breeze-answers.js';
export type { CollectorFront, CollectorFrontOptions } from './front-options.js';

/** A collector over the embedded store in `dataDir` (the default sink). */
export interface CollectorOptions
  extends CollectorFrontOptions, Omit<StoreSinkOptions, 'log' | 'retentionDays'> {
  sink?: undefined;
}

/** A collector whose accepted items go to `sink` (another process's store, a relay, ...) instead. */
export interface SinkCollectorOptions extends CollectorFrontOptions {
  sink: ItemSink;
}

/** A collector holding the embedded store, with the store's queries. */
export interface Collector extends CollectorFront {
  store: TelemetryStore;
  /** The store's sink, which a store holder's internal API also appends to (store-holder.ts). */
  sink: StoreSink;
  /** The usage dashboard's queries, on the store's own connection (the file admits one process). */
  usage: StoreUsageQueries;
  /** The dashboard's product analytics (web vitals, events, funnels, ...), on the same connection. */
  analytics: AnalyticsQueries;
  /** The panels' registered queries (dashboard/dashboard-queries.ts) on this store. */
  dashboard: Dashboard;
  /** The admins' annotations, in the same store. */
  annotations: AnnotationQueries;
}

/** The collector over the embedded store, or, given a `sink`, the front alone handing items to it. */
export async function createCollector(options: CollectorOptions): Promise<Collector>;
export async function createCollector(options: SinkCollectorOptions): Promise<CollectorFront>;
export async function createCollector(
  options: CollectorOptions | SinkCollectorOptions,
): Promise<Collector | CollectorFront> {
  const log = options.log ?? consoleLogger;
  if (options.sink) return createFront(options, options.sink);
  const sink = await openStoreSink({ ...options, log });
  const { store, usage, analytics, annotations } = sink;
  const dashboard = runOnStore(dashboardQueries, store);
  return { ...createFront(options, sink), sink, store, usage, analytics, dashboard, annotations };
}
