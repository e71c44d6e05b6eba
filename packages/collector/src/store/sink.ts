import type { StoreFull } from '@gatehouse/api-contract';
import { COLLECTOR_DEFAULTS } from '@gatehouse/config';
import type { Logger } from '../logger.js';
import { GroupCommit } from './group-commit.js';
import { listPacked, type PackedItems } from '../protocol/packed.js';
import { StoreQuota } from './quota.js';
import type { AnnotationQueries } from './annotations.js';
import { openWritableStore, ROW_GROUP_ROWS, type WritableStore } from './store.js';

/**
 * Where the collector's front (collector.ts: limits, validation, rate limits) hands the items it
 * accepted (docs/decisions/0041): the embedded store here, another process's store, or a relay. The
 * front answers the sender only once `append` has resolved, so a sink resolves only when the items are
 * durable where it keeps them.
 */
export interface ItemSink {
  /**
   * Resolves once the items are durable. A rejection is answered 503 (the sender resends them), or 507
   * for SinkFull.
   */
  append(items: PackedItems): Promise<void>;
  /** Whether `count` more items may be appended now; when not, the front sheds load with 503 and Retry-After. */
  hasRoom(count: number): boolean;
  /** Items appended and not yet where they are going for good: said in the log when shedding. */
  backlog(): number;
  /** Why the sink takes nothing at all (its disk quota is reached: answered 507), or undefined. */
  full(): string | undefined;
  /** Whether the sink can take items now, beyond `full()` (e.g. a store holder answers); for readiness. */
  ready?(): Promise<boolean>;
  /** Waits for what was appended, then lets go of what the sink holds. */
  close(): Promise<void>;
}

/**
 * The sink cannot take items now (the store holder is restarting, unreachable or busy): the front
 * answers 503 with Retry-After, and the SDKs send the items again.
 */
export class SinkUnavailable extends Error {
  override readonly name = 'SinkUnavailable';
  readonly code = 'sink_unavailable';
  constructor(
    message: string,
    /** Seconds the sender is asked to wait; undefined: the collector's default. */
    readonly retryAfterSeconds?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The store behind the sink has reached its disk quota: answered 507, and not resent. */
export class SinkFull extends Error {
  override readonly name = 'SinkFull';
  readonly code = 'sink_full';
}

export interface StoreSinkOptions {
  /** Folder of the embedded database; created when missing. */
  dataDir: string;
  /** Bytes the data folder may hold; past it requests are answered 507 and nothing is stored. Default 5 GiB; 0: no quota. */
  maxStoreBytes?: number;
  /** How often the data folder is measured against `maxStoreBytes`. Default 10 s. */
  storeCheckIntervalMs?: number;
  /** Items older than this many days are deleted at start and hourly. Default 90; 0 keeps everything. */
  retentionDays?: number;
  /** MiB the embedded database may use (OpenStoreOptions.memoryLimitMb). Default: DuckDB's own. */
  memoryLimitMb?: number | undefined;
  log: Logger;
}

/**
 * The sink of a process that holds the store, without the dashboard's queries: those are above the
 * store, and analytics/store-sink.ts puts them beside it (StoreSink).
 */
export interface EmbeddedSink extends ItemSink {
  store: WritableStore;
  /** The admins' annotations (annotations.ts), in the same file. */
  annotations: AnnotationQueries;
  /** Since when the store has been at its disk quota, and its figures; null while it takes items. */
  storeFull(): StoreFull | null;
}

const DAY_MS = 86_400_000;
/** Items allowed to wait for the journal before the collector answers 503. */
const MAX_QUEUED_ITEMS = 100_000;
/** Items allowed in the journal, not yet loaded into DuckDB, before the collector answers 503. */
const MAX_PENDING_ITEMS = 2 * ROW_GROUP_ROWS;

/**
 * The embedded store as a sink: group commit into the journal (one fdatasync for the batches of many
 * requests), the disk quota, and retention pruning.
 */
export async function openEmbeddedSink(options: StoreSinkOptions): Promise<EmbeddedSink> {
  const { dataDir, log } = options;
  const retentionDays = options.retentionDays ?? COLLECTOR_DEFAULTS.TELEMETRY_RETENTION_DAYS;
  const maxStoreBytes = options.maxStoreBytes ?? COLLECTOR_DEFAULTS.TELEMETRY_MAX_STORE_MB * 1024 ** 2;
  const store = await openWritableStore(dataDir, {
    warn: (message) => log('warn', message),
    memoryLimitMb: options.memoryLimitMb,
  });
  const quota =
    maxStoreBytes > 0
      ? await StoreQuota.start(dataDir, maxStoreBytes, options.storeCheckIntervalMs ?? 10_000)
      : undefined;
  // One journal write (one fdatasync) at a time; batches arriving meanwhile share the next one.
  const commits = new GroupCommit<PackedItems>(
    (batches) => store.append(listPacked(batches)),
    MAX_QUEUED_ITEMS,
    1,
  );

  async function prune(): Promise<void> {
    if (!(retentionDays > 0)) return;
    try {
      const removed = await store.prune(Date.now() - retentionDays * DAY_MS);
      if (removed > 0) log('info', `retention: removed ${removed} items older than ${retentionDays} days`);
    } catch (error) {
      log('error', `retention: pruning failed: ${String(error)}`);
    }
  }
  await prune();
  const pruneTimer = setInterval(() => void prune(), 3_600_000);
  pruneTimer.unref();

  return {
    store,
    annotations: store.annotations,
    storeFull() {
      const since = quota?.fullSince;
      return quota && since !== undefined
        ? { since: new Date(since).toISOString(), usedBytes: quota.usedBytes, maxBytes: maxStoreBytes }
        : null;
    },
    async append(items) {
      await commits.add(items, items.count);
      quota?.add(items.chunks.reduce((bytes, chunk) => bytes + chunk.length, 0));
    },
    hasRoom: (count) =>
      commits.hasRoom(count) && store.pending() + commits.queued + count <= MAX_PENDING_ITEMS,
    backlog: () => commits.queued + store.pending(),
    full: () =>
      quota?.full ? `${dataDir} holds ${quota.usedBytes} bytes, its quota is ${maxStoreBytes}` : undefined,
    async close() {
      clearInterval(pruneTimer);
      quota?.stop();
      await commits.drain();
      await store.close();
    },
  };
}
