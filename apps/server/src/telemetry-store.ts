import {
  createCollector,
  createForwardingSink,
  createRemoteQueries,
  createStoreHolderApi,
  dashboardQueries,
  runOnStore,
  openRelaySink,
  openStoreSink,
  teeSink,
  type Dashboard,
  type AnnotationQueries,
  type CollectorFront,
  type CollectorFrontOptions,
  type ItemSink,
  type Logger,
  type RateLimiter,
  type StoreSink,
  type UsageQueries,
} from '@gatehouse/collector';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerConfig } from './config.js';

type Handler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** The collector as this process runs it: holding the store, or forwarding to the process that does. */
export interface TelemetryStoreRole {
  role: 'store' | 'store holder' | 'forwarding';
  /** The ingestion endpoints (POST /v2/track, /v2.1/track). */
  collector: { handle: Handler; close(): Promise<void> };
  /**
   * The dashboard's queries: on the local store, or answered by the store holder; undefined when no
   * store keeps the items (the relay to Azure without a local copy).
   */
  usage: UsageQueries | undefined;
  dashboard: Dashboard | undefined;
  /** The admins' annotations, in the same store (held here, or by the store holder). */
  annotations: AnnotationQueries | undefined;
  /** The store holder's internal API (/internal/…), when this process holds the store for others. */
  internalApi: Handler | undefined;
  /**
   * For readiness: the local store takes items; on a forwarding replica, the store holder has answered
   * (with this token) once since the start. Not whether it answers now: every replica failing readiness
   * while the store holder restarts would take sign-in and the API down with the telemetry.
   */
  ready(): Promise<boolean>;
}

/**
 * Starts the collector for this process's place among the replicas (docs/decisions/0041): without
 * COLLECTOR_URL it opens the store in GATEHOUSE_DATA_DIR (and, with COLLECTOR_TOKEN, serves it to the
 * other replicas); with COLLECTOR_URL it opens nothing and forwards to the store holder. With the relay
 * (TELEMETRY_RELAY), the process that would hold the store sends what it accepts to Azure Monitor through
 * an on-disk outbox instead, keeping a local copy when asked (docs/azure.md).
 */
export async function startTelemetryStore(
  config: ServerConfig,
  log: Logger,
  /** Buckets shared by every replica (Redis); default this process's, at the configured rates. */
  rateLimiter?: RateLimiter,
  /** The byte budget's buckets, shared the same way. */
  byteRateLimiter?: RateLimiter,
): Promise<TelemetryStoreRole> {
  const { collector: c } = config;
  const front: CollectorFrontOptions = {
    instrumentationKeys: c.instrumentationKeys,
    allowedOrigins: [config.publicOrigin],
    retentionDays: c.retentionDays,
    ...(c.maxItemsPerSecond ? { maxItemsPerSecond: c.maxItemsPerSecond } : {}),
    ...(c.maxItemsPerSecondPerSource ? { maxItemsPerSecondPerSource: c.maxItemsPerSecondPerSource } : {}),
    ...(rateLimiter ? { rateLimiter } : {}),
    ...(byteRateLimiter ? { byteRateLimiter } : {}),
    maxItemsPerRequest: c.maxItemsPerRequest,
    ...(c.maxBytesPerSecondPerSource ? { maxBytesPerSecondPerSource: c.maxBytesPerSecondPerSource } : {}),
    maxBytesBurstPerSource: c.maxBytesBurstPerSource,
    maxBytesInFlight: c.maxBytesInFlight,
    ...(c.maxBytesInFlightPerSource === undefined
      ? {}
      : { maxBytesInFlightPerSource: c.maxBytesInFlightPerSource }),
    minBodyBytesPerSecond: c.minBodyBytesPerSecond,
    minBodyRateGraceMs: c.minBodyRateGraceMs,
    // The same client address Express's `trust proxy` gives the rest of the app.
    trustProxy: config.trustProxy,
    log,
  };
  if (c.forwardTo !== undefined && c.token !== undefined) {
    const remote = { url: c.forwardTo, token: c.token };
    const sink = createForwardingSink({ ...remote, waitForStoreHolderMs: c.waitForStoreHolderMs });
    const collector = await createCollector({ ...front, sink });
    let reached = false;
    return {
      role: 'forwarding',
      collector,
      ...createRemoteQueries(remote),
      internalApi: undefined,
      ready: async () => (reached ||= await sink.ping()),
    };
  }
  const relay = config.telemetry.relay;
  if (relay) {
    const relaySink = await openRelaySink({
      connectionString: relay.connectionString,
      dataDir: c.dataDir,
      maxBytes: relay.maxBytes,
      maxRetryMs: relay.maxRetryMs,
      log,
    });
    const copy = relay.localCopy ? await openLocalStore(config, log) : undefined;
    const sink = copy ? teeSink(relaySink, copy) : relaySink;
    return holding(config, log, await createCollector({ ...front, sink }), sink, copy);
  }
  const collector = await createCollector({
    ...front,
    dataDir: c.dataDir,
    maxStoreBytes: c.maxStoreBytes,
    memoryLimitMb: c.storeMemoryMb,
  });
  return holding(config, log, collector, collector.sink, collector.sink);
}

function openLocalStore(config: ServerConfig, log: Logger): Promise<StoreSink> {
  const { dataDir, maxStoreBytes, retentionDays, storeMemoryMb } = config.collector;
  return openStoreSink({ dataDir, maxStoreBytes, retentionDays, memoryLimitMb: storeMemoryMb, log });
}

/** The role of the process whose collector keeps what it accepts (in a store, the relay's outbox, or both). */
function holding(
  config: ServerConfig,
  log: Logger,
  collector: CollectorFront,
  sink: ItemSink,
  store: StoreSink | undefined,
): TelemetryStoreRole {
  const { token } = config.collector;
  return {
    role: token === undefined ? 'store' : 'store holder',
    collector,
    usage: store?.usage,
    dashboard: store && runOnStore(dashboardQueries, store.store),
    annotations: store?.annotations,
    internalApi:
      token === undefined
        ? undefined
        : createStoreHolderApi({
            token,
            sink,
            ...(store ? { queries: store } : {}),
            log,
          }),
    ready: () => collector.ready(),
  };
}
