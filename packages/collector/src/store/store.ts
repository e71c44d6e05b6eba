import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import {
  DEFAULT_FUTURE_MS,
  DEFAULT_PAST_MS,
  type TelemetryItem,
  type TelemetryType,
} from '../protocol/envelopes.js';
import { ITEM_KEY_SQL, RecentKeys } from '../protocol/item-identity.js';
import { Journal } from './journal.js';
import { packItems, packedTimes, selectPacked, type PackedItems } from '../protocol/packed.js';
import { rowLayout } from '../protocol/item-row.js';
import { derivedColumns, derivedSql, itemsTableSql, nameKeySql } from './row-layout.js';
import { DEFAULT_IDLE_CHECKPOINT, startIdleCheckpoints, type IdleCheckpointPolicy } from './checkpoints.js';
import { openJournalLoader } from './load.js';
import { LoadSchedule, type LoadPolicy } from './load-schedule.js';
import { openReaders } from './readers.js';
import { StoreThreads, threadCountsFor, type ThreadCounts } from './threads.js';
import { compactNextDay, startOfDay } from './compact.js';
import {
  addMissingColumns,
  addRollup,
  canaryHolds,
  eraseRollupSql,
  inTransaction,
  pruneRollupSql,
  type AddedColumn,
} from './rollup.js';
import { addDailySketches, markErasedDaysSql, pruneSketchSql, recomputeMarkedSql } from './daily-sketch.js';
import {
  annotationsTableSql,
  createAnnotationQueries,
  eraseAuthorSql,
  type AnnotationQueries,
} from './annotations.js';

export { rejectedFile } from './load.js';
export type { PackedItems } from '../protocol/packed.js';

/**
 * The telemetry store: one DuckDB file (columnar, chosen in docs/decisions/0004-collector-store.md)
 * and a journal beside it (journal.ts). `append` resolves once its items are in the journal on disk;
 * the store loads journaled items into DuckDB in large transactions (a row group at a time under load,
 * which DuckDB writes straight to its file), and every read first loads what is still journaled, so
 * reads see every append that has resolved.
 */
export interface TelemetryStore {
  /** Stores items; resolves once they are durable (a crash after that loses none of them). */
  append(items: readonly TelemetryItem[]): Promise<void>;
  /** Items stored (matching the filter). */
  count(filter?: ExportFilter): Promise<number>;
  /** The stored envelopes (Application Insights shape), in the order stored (the order they arrived in). */
  export(filter?: ExportFilter): AsyncIterable<Envelope>;
  /** Deletes items whose event time is before `before` (epoch ms); resolves to how many. */
  prune(before: number): Promise<number>;
  /**
   * Deletes every item of one user (`ai.user.authUserId` or `ai.user.id` equal to `user`), those still
   * in the journal included, and leaves no copy in the journal's files or DuckDB's WAL; resolves to how
   * many. The annotations they wrote stay, without their author (annotations.ts).
   */
  erase(user: string): Promise<number>;
  /** The admins' annotations, kept in the same file (annotations.ts). */
  annotations: AnnotationQueries;
  close(): Promise<void>;
}

/**
 * The store as the collector uses it: `append` also takes packed items (from the ingest worker), so
 * the collector still writes through `append`, whatever wraps or replaces it.
 */
export interface WritableStore extends TelemetryStore {
  append(items: readonly TelemetryItem[] | PackedItems): Promise<void>;
  /**
   * Runs one parameterised read on a reader connection of the store's own DuckDB instance (the only
   * process that may open the file); rows as plain JS objects. For the usage queries (analytics/usage.ts).
   */
  read(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
  /** Items appended (durable in the journal) and not yet loaded into DuckDB. */
  pending(): number;
  /** Loads everything appended so far into DuckDB. */
  flush(): Promise<void>;
  /**
   * Rewrites every whole UTC day before today not yet rewritten, sorted by type (compact.ts; the store
   * also does it by itself, at most a day a minute); resolves to how many days.
   */
  compact(): Promise<number>;
}

export interface ExportFilter {
  /** Only items whose event time is at or after this. */
  since?: Date;
  type?: TelemetryType;
  /** Only one user's items: `ai.user.authUserId` (the pseudonymous id of a signed-in user) or `ai.user.id`. */
  user?: string;
}

/** An envelope as stored: https://github.com/microsoft/ApplicationInsights-JS/blob/main/shared/AppInsightsCommon/src/Interfaces/Contracts/Generated/Envelope.ts */
export interface Envelope {
  ver?: number;
  name: string;
  time: string;
  sampleRate?: number;
  seq?: string;
  iKey: string;
  tags?: Record<string, string>;
  data: { baseType: string; baseData: Record<string, unknown> };
}

export function storeFile(dataDir: string): string {
  return path.join(dataDir, 'telemetry.duckdb');
}

/**
 * DuckDB's row group: a transaction inserting at least this many rows has DuckDB write them straight
 * to the database file, compressed, instead of into its WAL and again at the next checkpoint (measured:
 * about 12 µs of CPU an item instead of 19). Loads under load wait for this many items.
 */
export const ROW_GROUP_ROWS = 122_880;
/** The storage format new store files are written in: the first with zstd for text columns. */
export const STORAGE_VERSION = 'v1.2.0';
/** How often the store looks whether journaled items are due to be loaded. */

const micros = (ms: number) => new DuckDBTimestampValue(BigInt(Math.round(ms)) * 1000n);

function where(filter: ExportFilter = {}): { sql: string; values: DuckDBValue[] } {
  const clauses: string[] = [];
  const values: DuckDBValue[] = [];
  if (filter.since) {
    values.push(micros(filter.since.getTime()));
    clauses.push(`time >= $${values.length}`);
  }
  if (filter.type) {
    values.push(filter.type);
    clauses.push(`type = $${values.length}`);
  }
  if (filter.user !== undefined) {
    values.push(filter.user);
    clauses.push(`(auth_user_id = $${values.length} OR user_id = $${values.length})`);
  }
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', values };
}

export interface OpenStoreOptions {
  /** Where the store reports what it recovers or retries. Default: console.warn. */
  warn?: (message: string) => void;
  /**
   * When journaled items are loaded into DuckDB: once `rows` are waiting, after `idleMs` without
   * appends, or when the oldest has waited `maxLagMs`. Default: a row group, 200 ms, 5 s.
   */
  load?: LoadPolicy;
  /** When to checkpoint between bursts (checkpoints.ts). Default: idle 2 s, WAL over 16 MiB, every 5 s. */
  idleCheckpoint?: IdleCheckpointPolicy;
  /**
   * How many of the latest items' identities are kept to store each item once (item-identity.ts).
   * Default RECENT_ITEMS; 0 stores every item appended.
   */
  recentItems?: number;
  /** How often the store rewrites the next past day sorted by type, if one waits (compact.ts). Default 60 s; 0: never. */
  compactEveryMs?: number;
  /**
   * MiB DuckDB may use for its buffers (its `memory_limit`); a query that needs more spills to the data
   * folder's temporary files. Default: DuckDB's own, 80 % of the RAM it sees.
   */
  memoryLimitMb?: number | undefined;
  /**
   * DuckDB's threads for the loads, and while a read runs (threads.ts, ADR 0140). Default: reads DuckDB's
   * own count, the loads two fewer (at least one).
   */
  threads?: ThreadCounts;
}

/**
 * Identities kept in memory to drop items sent again: about 20 MB. At the rate of a busy site (hundreds
 * of items a second) that spans hours, far longer than the SDKs take to resend; a copy of an item older
 * than they span (under a flood) is looked for in DuckDB instead (ADR 0095).
 */
export const RECENT_ITEMS = 500_000;

/** Opens (creating on first start) the store in `dataDir`, loading what its journal still holds. */
export function openStore(dataDir: string, options: OpenStoreOptions = {}): Promise<TelemetryStore> {
  return openWritableStore(dataDir, options);
}

/**
 * Columns added since a store was made, and what each holds for the rows it has then: the segments'
 * tags and properties, read from the envelope (a device type came from the request, which is gone); the
 * derived ones (row-layout.ts) as the load computes them.
 */
const segmentFills: Record<string, string | null> = {
  browser: `try(json_extract_string(envelope, '$.tags."ai.device.browser"'))`,
  device_type: null,
  os: null,
  roles: `try(json_extract_string(envelope, '$.data.baseData.properties.roles'))`,
};
const addedColumns: AddedColumn[] = [
  ...rowLayout.flatMap((c) =>
    c.column in segmentFills ? [{ column: c.column, sql: c.sql, fill: segmentFills[c.column] ?? null }] : [],
  ),
  ...derivedColumns.map((c) => ({ column: c.column, sql: c.sql, fill: derivedSql(c) })),
];

/** The hash of a fixed text as the keys compute it: a DuckDB whose hash differs leaves another. */
const KEYS_CANARY_SQL = `SELECT ${nameKeySql("'pageview'", "'gatehouse'")} AS canary`;

/** The derived columns keyed by DuckDB's hash of two texts (row-layout.ts). */
const hashedColumns = derivedColumns.filter((c) =>
  ['name_key', 'user_key', 'session_key', 'metric_page_key'].includes(c.column),
);

/**
 * name_key, user_key, session_key and metric_page_key (row-layout.ts) are DuckDB's hash, which a new
 * DuckDB may compute otherwise; the queries hash their names as they run, and new rows get the new
 * DuckDB's keys. So the store keeps the hash of a fixed text, and when the DuckDB opening it hashes that
 * otherwise, the keys are computed again (one transaction).
 */
async function checkKeys(writer: DuckDBConnection): Promise<void> {
  // A store without it had its keys computed by this DuckDB (addMissingColumns, just before).
  await writer.run(`CREATE TABLE IF NOT EXISTS name_key_hash AS ${KEYS_CANARY_SQL}`);
  if (await canaryHolds(writer, 'name_key_hash', KEYS_CANARY_SQL)) return;
  await inTransaction(writer, [
    `UPDATE items SET ${hashedColumns.map((c) => `${c.column} = ${derivedSql(c)}`).join(', ')}`,
    `DELETE FROM name_key_hash`,
    `INSERT INTO name_key_hash ${KEYS_CANARY_SQL}`,
  ]);
}

/** openStore, with the collector's packed appends. */
export async function openWritableStore(
  dataDir: string,
  options: OpenStoreOptions = {},
): Promise<WritableStore> {
  const file = storeFile(dataDir);
  const warn = options.warn ?? ((message: string) => console.warn(`[collector] ${message}`));
  mkdirSync(dataDir, { recursive: true });
  let instance: DuckDBInstance;
  // A new store file is written in DuckDB's storage format 1.2, which has zstd for text (the envelope,
  // ADR 0070); a file made before keeps the format it was made in, and opens as before.
  const newFile = !existsSync(file);
  try {
    // DuckDB checkpoints when its WAL passes this size, rewriting the table's last (partial) row group
    // each time; at the default 16 MB that work dominates ingest (11k items/s against 55k at 256 MB).
    instance = await DuckDBInstance.create(file, {
      checkpoint_threshold: '256MB',
      storage_compatibility_version: STORAGE_VERSION,
      ...(options.memoryLimitMb === undefined ? {} : { memory_limit: `${options.memoryLimitMb}MB` }),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // DuckDB allows one process per file: a running server keeps it locked.
    if (/lock/i.test(message)) {
      throw new Error(`The telemetry store ${file} is in use by another process (a running server?).`, {
        cause: error,
      });
    }
    throw error;
  }
  const threads = new StoreThreads(instance);
  const readers = openReaders(instance, threads);
  const writer = await instance.connect();
  await writer.run(itemsTableSql(newFile));
  // Stores made before the journal kept `envelope` as JSON, whose check refuses some texts JSON.parse
  // accepts (lone surrogate escapes): such a load would fail again and again.
  const envelopeType = (
    await writer.runAndReadAll(
      "SELECT data_type FROM information_schema.columns WHERE table_name = 'items' AND column_name = 'envelope'",
    )
  ).getRows()[0]?.[0];
  if (envelopeType === 'JSON') await writer.run('ALTER TABLE items ALTER envelope TYPE VARCHAR');
  await addMissingColumns(writer, 'items', addedColumns);
  await checkKeys(writer);
  await addRollup(writer);
  await addDailySketches(writer);
  await writer.run(annotationsTableSql);
  const loader = await openJournalLoader(writer, dataDir, warn);
  // The writer runs one transaction at a time (a load, or a checkpoint); appends never conflict with
  // prune's deletes in DuckDB's optimistic concurrency.
  let writerBusy: Promise<unknown> = Promise.resolve();
  function withWriter<T>(use: () => Promise<T>): Promise<T> {
    const result = writerBusy.then(use);
    writerBusy = result.catch(() => undefined);
    return result;
  }

  let lastWrite = Date.now();
  const stopCheckpoints = startIdleCheckpoints(
    file,
    options.idleCheckpoint ?? DEFAULT_IDLE_CHECKPOINT,
    () => lastWrite,
    () => withWriter(() => writer.run('CHECKPOINT')),
  );

  /**
   * Loads up to `limit` journaled items into DuckDB, each transaction also moving the journal position,
   * so no item is loaded twice; a record DuckDB refuses is moved aside (setAside). Resolves to how many.
   */
  function load(limit: number): Promise<number> {
    return withWriter(async () => {
      const rows = await loader.load(journal, limit);
      lastWrite = Date.now();
      await journal.drop(loader.loaded.segment).catch((error: unknown) => {
        warn(`journal: could not delete loaded segments (${String(error)}); deleted at next start`);
      });
      return rows;
    });
  }

  // The journal: appends are durable once in it, and loaded into DuckDB in large transactions.
  const journal = await Journal.open(path.join(dataDir, 'journal'), loader.loaded, warn);
  const recovered = await load(Infinity);
  if (recovered > 0) warn(`journal: loaded ${recovered} items a previous run had not loaded`);

  // The identities of the latest items, so an item sent again (the SDKs deliver at least once) is
  // stored once; only items inside the time window can be accepted, so only those need remembering.
  const capacity = options.recentItems ?? RECENT_ITEMS;
  const recent = capacity > 0 ? new RecentKeys(capacity) : undefined;
  if (recent) {
    const since = Date.now() - DEFAULT_PAST_MS - DEFAULT_FUTURE_MS;
    const rows = (
      await writer.runAndReadAll(
        `SELECT ${ITEM_KEY_SQL}, epoch_ms(time)::DOUBLE
         FROM (SELECT envelope, time FROM items WHERE time >= $1 ORDER BY time DESC LIMIT $2)`,
        [micros(since), capacity],
      )
    ).getRows();
    // What is older than the items remembered is in DuckDB only (a wider window than the default too).
    recent.forget(rows.length === capacity ? Number(rows[rows.length - 1]?.[1]) : since);
    for (const [key, time] of rows.reverse()) recent.add(parseInt(String(key), 16), Number(time));
  }

  // Opened (its journal loaded with every thread): from now on the loads leave cores to the ingest.
  const duckdbThreads = Number(
    (await writer.runAndReadAll("SELECT current_setting('threads')")).getRows()[0]?.[0],
  );
  await threads.start(options.threads ?? threadCountsFor(duckdbThreads));

  const schedule = new LoadSchedule(
    load,
    options.load ?? { rows: ROW_GROUP_ROWS, idleMs: 200, maxLagMs: 5000 },
    warn,
  );

  /**
   * Day compaction (compact.ts, ADR 0072): at most one day a minute, on the writer, unless loads are
   * behind (a row group or more waiting); a busy site has no quiet moments, so it does not wait for one.
   * Then a checkpoint, so the day's deleted rows are given back and its WAL does not wait. A failure (a
   * prune's delete of the same rows) is tried again at the next turn.
   */
  let closed = false;
  let compacting = false;
  function compactDay(): Promise<number | null> {
    return withWriter(async () => {
      if (closed) return null;
      const day = await compactNextDay(writer, startOfDay(Date.now()));
      if (day !== null) await writer.run('CHECKPOINT').catch(() => undefined); // The idle checkpoint retries.
      return day;
    });
  }
  const compactEveryMs = options.compactEveryMs ?? 60_000;
  const compactTimer = compactEveryMs > 0 ? setInterval(compactTurn, compactEveryMs) : undefined;
  compactTimer?.unref();
  function compactTurn() {
    if (closed || compacting || schedule.behind) return;
    compacting = true;
    compactDay()
      .catch((error: unknown) => {
        if (!closed) warn(`compacting a day of items failed (${String(error)}); will retry`);
      })
      .finally(() => (compacting = false));
  }

  /** Journal writes under way: an item found to be a copy of one of theirs is stored once they are. */
  const writing = new Set<Promise<void>>();
  let writingItems = 0;

  /**
   * The keys of those items of `packed` that the recent keys may have let go and DuckDB holds: the
   * items dated no later than the newest key let go, which the window of identities no longer vouches
   * for (ADR 0095). None looked for in the usual case, where nothing that old is sent again.
   */
  async function storedCopies(packed: PackedItems, times: number[]): Promise<Set<number>> {
    const found = new Set<number>();
    if (!recent) return found;
    for (;;) {
      const drops = recent.drops;
      const doubtful = packed.keys.flatMap((key, i) => {
        const time = times[i] ?? Infinity;
        return recent.mayHaveForgotten(time) && !recent.has(key) && !found.has(key) ? [time] : [];
      });
      if (doubtful.length === 0) return found;
      // A key let go while its item is still being written, or waits in the journal: at least half the
      // capacity was added after it, so this many are pending or being written. Loaded, DuckDB has it.
      if (schedule.pending + writingItems >= recent.capacity / 2) {
        await Promise.allSettled([...writing]);
        await flush();
      }
      const instants = [...new Set(doubtful)].filter(Number.isSafeInteger);
      if (instants.length > 0) {
        const rows = await readers.read(
          `SELECT DISTINCT ${ITEM_KEY_SQL} AS key FROM items
           WHERE time IN (${instants.map((t) => `epoch_ms(${t}::BIGINT)`).join(', ')})`,
        );
        for (const { key } of rows) found.add(parseInt(String(key), 16));
      }
      // Keys let go while the lookup ran may be of items it did not look for: look again.
      if (recent.drops === drops) return found;
    }
  }

  /** The items of `packed` not stored yet (their keys now taken), and whether any were copies. */
  function unseen(
    packed: PackedItems,
    times: number[],
    stored: Set<number>,
  ): { fresh: PackedItems; copies: boolean } {
    if (!recent) return { fresh: packed, copies: false };
    let copies = 0;
    const isCopy = packed.keys.map((key, i) => {
      if (recent.has(key) || stored.has(key)) return ++copies > 0;
      recent.add(key, times[i]);
      return false;
    });
    return { fresh: copies ? selectPacked(packed, (i) => !isCopy[i]) : packed, copies: copies > 0 };
  }

  async function appendPacked(packed: PackedItems): Promise<void> {
    if (packed.count === 0) return;
    const times = recent ? packedTimes(packed) : [];
    const stored =
      recent && times.some((time) => recent.mayHaveForgotten(time))
        ? await storedCopies(packed, times)
        : new Set<number>();
    // From here to the journal write, nothing waits: a copy arriving meanwhile finds these keys taken.
    const { fresh, copies } = unseen(packed, times, stored);
    const originals = copies ? [...writing] : [];
    if (fresh.count > 0) {
      const write = journal.append(fresh.chunks, () => schedule.appended(fresh.count));
      writing.add(write);
      writingItems += fresh.count;
      try {
        await write;
      } catch (error) {
        // Not stored: a resend must not be taken for a copy.
        for (const key of fresh.keys) recent?.delete(key);
        throw error;
      } finally {
        writing.delete(write);
        writingItems -= fresh.count;
      }
    }
    // A copy is durable once its original is; if that write failed, this sender should resend too.
    await Promise.all(originals);
    schedule.loadFull();
  }

  /** Everything appended so far, loaded: what reads see. */
  const flush = () => schedule.flush();

  // Readers are kept for reuse (a connection costs little, but the dashboard asks several queries at
  // once); each runs one query at a time, and never waits behind the writer.
  async function read(sql: string, values: DuckDBValue[] = []): Promise<Record<string, unknown>[]> {
    await flush();
    return readers.read(sql, values);
  }

  const annotations = createAnnotationQueries({
    read: (sql, values = []) => readers.read(sql, values),
    // On the one writer, between loads: nothing else writes the file at the same moment.
    write: (sql, values = []) =>
      withWriter(async () => {
        lastWrite = Date.now();
        return (await writer.runAndReadAll(sql, values)).getRowObjectsJS();
      }),
  });

  return {
    read,
    annotations,
    // Async, so an item packItems refuses rejects the append (and nothing of it is written).
    async append(items) {
      await appendPacked(Array.isArray(items) ? packItems(items) : (items as PackedItems));
    },

    pending: () => schedule.pending,
    flush,

    async count(filter) {
      await flush();
      const { sql, values } = where(filter);
      return readers.with(async (c) => {
        const rows = (await c.runAndReadAll(`SELECT count(*) FROM items ${sql}`, values)).getRows();
        return Number(rows[0]?.[0] ?? 0);
      });
    },

    async *export(filter) {
      await flush();
      const { sql, values } = where(filter);
      for await (const [envelope] of readers.stream(`SELECT envelope FROM items ${sql}`, values))
        yield JSON.parse(String(envelope)) as Envelope;
    },

    async prune(before) {
      await flush();
      return readers.with(async (c) => {
        // The rollup in the same transaction: a reader sees both or neither.
        await c.run('BEGIN TRANSACTION');
        try {
          const result = await c.run('DELETE FROM items WHERE time < $1', [micros(before)]);
          for (const sql of [...pruneRollupSql, ...pruneSketchSql]) await c.run(sql, [micros(before)]);
          for (const sql of recomputeMarkedSql) await c.run(sql);
          await c.run('COMMIT');
          return result.rowsChanged;
        } catch (error) {
          await c.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
      });
    },

    async erase(user) {
      // End the journal's segment first: once loaded, it is deleted, and no copy is left in its file.
      await journal.seal();
      await schedule.loadPending(true);
      const erased = await withWriter(async () => {
        await writer.run('BEGIN TRANSACTION');
        let result;
        try {
          // The days of their page views, whose sketches are computed again once their items are gone.
          await writer.run(markErasedDaysSql, [user]);
          result = await writer.run('DELETE FROM items WHERE auth_user_id = $1 OR user_id = $1', [user]);
          for (const sql of eraseRollupSql) await writer.run(sql, [user]);
          for (const sql of recomputeMarkedSql) await writer.run(sql);
          await writer.run(eraseAuthorSql, [user]);
          await writer.run('COMMIT');
        } catch (error) {
          await writer.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
        // Nor in the WAL; if a long export holds it off, the idle checkpoint does it shortly after.
        await writer.run('CHECKPOINT').catch((error: unknown) => {
          warn(`erasure: checkpoint deferred (${String(error)})`);
        });
        return Number(result.rowsChanged);
      });
      await journal.drop(loader.loaded.segment);
      return erased;
    },

    async compact() {
      await flush();
      let days = 0;
      while ((await compactDay()) !== null) days++;
      return days;
    },

    async close() {
      stopCheckpoints();
      schedule.stop();
      clearInterval(compactTimer);
      closed = true;
      // What is still journaled is loaded now; if that fails, the next start loads it.
      await flush().catch(() => undefined);
      await journal.close();
      // The segment just closed is loaded to its end: moving past it lets it go, leaving no journal.
      if (schedule.pending === 0) await load(Infinity).catch(() => undefined);
      await writerBusy;
      loader.close();
      readers.closeAll();
      threads.close();
      writer.closeSync();
      instance.closeSync();
    },
  };
}
