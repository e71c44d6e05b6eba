import { openEmbeddedSink, type EmbeddedSink, type StoreSinkOptions } from '../store/sink.js';
import { createAnalyticsQueries, type AnalyticsQueries } from './product.js';
import { createUsageQueries } from './usage.js';
import type { StoreUsageQueries } from './usage-answers.js';

/** The sink of a process that holds the store, with the store's queries beside it. */
export interface StoreSink extends EmbeddedSink {
  /** The usage dashboard's queries, on the store's own connection (the file admits one process). */
  usage: StoreUsageQueries;
  /** The dashboard's product analytics (web vitals, events, funnels, ...), on the same connection. */
  analytics: AnalyticsQueries;
}

/**
 * The embedded store as a sink (store/sink.ts), and its queries. Composed here rather than in the
 * store, which the queries are built on and never imports them (ADR 0115).
 */
export async function openStoreSink(options: StoreSinkOptions): Promise<StoreSink> {
  const sink = await openEmbeddedSink(options);
  const usage = createUsageQueries(sink.store);
  return {
    ...sink,
    usage: {
      ...usage,
      // The dashboard tells admins when nothing is stored any more (docs/configuration.md, "Limits for operators").
      async overview(options) {
        return { ...(await usage.overview(options)), storeFull: sink.storeFull() };
      },
    },
    analytics: createAnalyticsQueries(sink.store),
  };
}
