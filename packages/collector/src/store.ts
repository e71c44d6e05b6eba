import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { TelemetryItem, TelemetryType } from './contracts.js';
import { Journal, RecordKind, type JournalRecord } from './journal.js';
import { mergePacked, packItems, unpackRows, type PackedItems } from './packed.js';

export type { PackedItems } from './packed.js';

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
  /** The stored envelopes (Application Insights shape), in arrival order. */
  export(filter?: ExportFilter): AsyncIterable<Envelope>;
  /** Deletes items whose event time is before `before` (epoch ms); resolves to how many. */
  prune(before: number): Promise<number>;
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
   * process that may open the file); rows as plain JS objects. For the usage queries (queries.ts).
   */
  read(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
  /** Items appended (durable in the journal) and not yet loaded into DuckDB. */
  pending(): number;
  /** Loads everything appended so far into DuckDB. */
  flush(): Promise<void>;
}

export interface ExportFilter {
  /** Only items whose event time is at or after this. */
  since?: Date;
  type?: TelemetryType;
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
/** Packed rows bound per INSERT of a load. */
const LOAD_RUN_BYTES = 16 * 1024 * 1024;
/** How often the store looks whether journaled items are due to be loaded. */
const LOAD_TICK_MS = 50;

/** Reader connections kept open between reads. */
const MAX_IDLE_READERS = 4;

/** Columns in table order; the appender fills them by position. */
const schema = `CREATE TABLE IF NOT EXISTS items (
  time TIMESTAMP NOT NULL,          -- event time (envelope time), UTC
  type VARCHAR NOT NULL,            -- pageview, exception, dependency, event, metric, trace, request, pageviewperformance
  ikey VARCHAR NOT NULL,
  name VARCHAR,                     -- baseData.name; first exception's type; first metric's name
  url VARCHAR,
  session_id VARCHAR,               -- tags ai.session.id
  user_id VARCHAR,                  -- tags ai.user.id
  auth_user_id VARCHAR,             -- tags ai.user.authUserId
  operation_id VARCHAR,             -- tags ai.operation.id
  duration_ms DOUBLE,
  success BOOLEAN,
  result_code VARCHAR,
  target VARCHAR,                   -- dependency target
  message VARCHAR,                  -- trace message; first exception message
  problem_id VARCHAR,
  top_frame VARCHAR,                -- first exception's top stack frame
  envelope JSON NOT NULL            -- the envelope as received
)`;

const orNull = (k: number) => `nullif(f[${k}], chr(0))`;
const insertPacked = `INSERT INTO items SELECT epoch_ms(f[1]::BIGINT), f[2], f[3], ${orNull(4)}, ${orNull(5)},
  ${orNull(6)}, ${orNull(7)}, ${orNull(8)}, ${orNull(9)}, ${orNull(10)}::DOUBLE, ${orNull(11)}::BOOLEAN,
  ${orNull(12)}, ${orNull(13)}, ${orNull(14)}, ${orNull(15)}, ${orNull(16)}, f[17]
  FROM (SELECT string_split(r, chr(31)) AS f FROM (SELECT unnest(string_split(decode($1::BLOB), chr(30))) AS r))`;

/** Which journal segments are in `items` already: loads update it in their own transaction. */
const journalSchema = `CREATE TABLE IF NOT EXISTS journal_state (loaded_through BIGINT NOT NULL);
  INSERT INTO journal_state SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM journal_state)`;

/** Packed items as journal records: rows as they are, odd items in V8's serialisation (exact numbers). */
export const toRecord = (segment: PackedItems['segments'][number]): JournalRecord =>
  segment instanceof Uint8Array
    ? { kind: RecordKind.Rows, payload: segment }
    : { kind: RecordKind.Items, payload: serialize(segment) };

function fromRecord(record: JournalRecord): PackedItems {
  if (record.kind === RecordKind.Rows) {
    let count = 1;
    for (const byte of record.payload) if (byte === 0x1e) count++;
    return { count, segments: [record.payload] };
  }
  const items = deserialize(record.payload) as TelemetryItem[];
  return { count: items.length, segments: [items] };
}

const varchar = (a: DuckDBAppender, v: string | null) => (v === null ? a.appendNull() : a.appendVarchar(v));
const double = (a: DuckDBAppender, v: number | null) => (v === null ? a.appendNull() : a.appendDouble(v));

function appendRow(a: DuckDBAppender, i: TelemetryItem): void {
  a.appendTimestamp(new DuckDBTimestampValue(BigInt(Math.round(i.time)) * 1000n));
  a.appendVarchar(i.type);
  a.appendVarchar(i.iKey);
  varchar(a, i.name);
  varchar(a, i.url);
  varchar(a, i.sessionId);
  varchar(a, i.userId);
  varchar(a, i.authUserId);
  varchar(a, i.operationId);
  double(a, i.durationMs);
  if (i.success === null) a.appendNull();
  else a.appendBoolean(i.success);
  varchar(a, i.resultCode);
  varchar(a, i.target);
  varchar(a, i.message);
  varchar(a, i.problemId);
  varchar(a, i.topFrame);
  a.appendVarchar(i.envelope);
  a.endRow();
}

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
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', values };
}

export interface OpenStoreOptions {
  /** Where the store reports what it recovers or retries. Default: console.warn. */
  warn?: (message: string) => void;
  /**
   * When journaled items are loaded into DuckDB: once `rows` are waiting, after `idleMs` without
   * appends, or when the oldest has waited `maxLagMs`. Default: a row group, 200 ms, 5 s.
   */
  load?: { rows: number; idleMs: number; maxLagMs: number };
  /** When to checkpoint between bursts (see below). Default: idle 2 s, WAL over 16 MiB, looked at every 5 s. */
  idleCheckpoint?: { idleMs: number; minWalBytes: number; everyMs: number };
}

/** Opens (creating on first start) the store in `dataDir`, loading what its journal still holds. */
export function openStore(dataDir: string, options: OpenStoreOptions = {}): Promise<TelemetryStore> {
  return openWritableStore(dataDir, options);
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
  try {
    // DuckDB checkpoints when its WAL passes this size, rewriting the table's last (partial) row group
    // each time; at the default 16 MB that work dominates ingest (11k items/s against 55k at 256 MB).
    instance = await DuckDBInstance.create(file, { checkpoint_threshold: '256MB' });
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
  const connections = new Set<DuckDBConnection>();
  const writer = await instance.connect();
  await writer.run(schema);
  await writer.run(journalSchema);
  const loadedThrough = Number(
    (await writer.runAndReadAll('SELECT loaded_through FROM journal_state')).getRows()[0]?.[0] ?? 0,
  );
  const insert = await writer.prepare(insertPacked);
  // The writer runs one transaction at a time (a load, or a checkpoint); appends never conflict with
  // prune's deletes in DuckDB's optimistic concurrency.
  let writerBusy: Promise<unknown> = Promise.resolve();
  function withWriter<T>(use: () => Promise<T>): Promise<T> {
    const result = writerBusy.then(use);
    writerBusy = result.catch(() => undefined);
    return result;
  }

  // The 256 MB threshold keeps checkpoints rare under load, but one that does come stalls loads for
  // about a second and a crash leaves that much WAL to replay. So checkpoint in the quiet moments instead:
  // after `idleMs` without writes, once the WAL is worth it. A failure (an export holds a transaction) is
  // simply tried again later; DuckDB's own threshold remains the backstop.
  const idle = options.idleCheckpoint ?? { idleMs: 2000, minWalBytes: 16 * 1024 * 1024, everyMs: 5000 };
  let lastWrite = Date.now();
  const checkpointTimer = setInterval(() => {
    const walBytes = statSync(`${file}.wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (Date.now() - lastWrite < idle.idleMs || walBytes < Math.max(1, idle.minWalBytes)) return;
    void withWriter(() => writer.run('CHECKPOINT')).catch(() => undefined); // Tried again on the next tick.
  }, idle.everyMs);
  checkpointTimer.unref();

  /** A connection of its own, so a long export never waits behind (or holds up) the writer. */
  async function withConnection<T>(use: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const c = await instance.connect();
    connections.add(c);
    try {
      return await use(c);
    } finally {
      connections.delete(c);
      c.closeSync();
    }
  }

  /** Where a write failed: in its statements (nothing committed) or in its COMMIT. */
  class BeforeCommit extends Error {}

  /**
   * One transaction: the items, and the journal position they bring the store to. `bulk` inserts each
   * run of packed rows with one INSERT; otherwise everything goes through the appender.
   */
  async function write(packed: PackedItems, through: number, bulk: boolean): Promise<void> {
    await writer.run('BEGIN TRANSACTION');
    try {
      for (const segment of packed.segments) {
        if (segment instanceof Uint8Array && bulk) {
          insert.bindBlob(1, segment);
          try {
            await insert.run();
          } finally {
            insert.clearBindings();
          }
          continue;
        }
        const items = segment instanceof Uint8Array ? unpackRows(segment) : segment;
        const appender = await writer.createAppender('items');
        try {
          for (const item of items) appendRow(appender, item);
        } finally {
          // Closing flushes the rows into the open transaction; COMMIT then makes them durable.
          appender.closeSync();
        }
      }
      await writer.run('UPDATE journal_state SET loaded_through = $1', [through]);
    } catch (error) {
      await writer.run('ROLLBACK').catch(() => undefined);
      throw new BeforeCommit(String(error), { cause: error });
    }
    try {
      await writer.run('COMMIT');
    } catch (error) {
      await writer.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
    lastWrite = Date.now();
  }

  /** Loads items into DuckDB in one transaction, recording that the journal is loaded up to `through`. */
  async function load(packed: PackedItems, through: number): Promise<void> {
    const runs = mergePacked([packed], LOAD_RUN_BYTES);
    await withWriter(async () => {
      try {
        await write(runs, through, true);
      } catch (error) {
        if (!(error instanceof BeforeCommit)) throw error;
        // DuckDB's JSON check is stricter than JSON.parse in places (lone surrogates are kept out of
        // the packed rows already): rather than hold up everyone's items, the load goes again through
        // the appender, which stores the text as it is. Nothing of the first try was committed.
        if (!runs.segments.some((segment) => segment instanceof Uint8Array)) throw error.cause;
        await write(runs, through, false).catch((retryError: unknown) => {
          throw retryError instanceof BeforeCommit ? retryError.cause : retryError;
        });
      }
    });
  }

  // The journal: appends are durable once in it, and loaded into DuckDB in large transactions.
  const journalDir = path.join(dataDir, 'journal');
  const opened = await Journal.open(journalDir, loadedThrough, warn);
  const journal = opened.journal;
  if (opened.segments.length > 0) {
    const replayed = { count: 0, segments: [] as PackedItems['segments'] };
    for (const segment of opened.segments) {
      for (const record of segment.records) {
        const items = fromRecord(record);
        replayed.count += items.count;
        replayed.segments.push(...items.segments);
      }
    }
    const through = opened.segments.at(-1)?.id ?? loadedThrough;
    await load(replayed, through);
    await journal.drop(through);
    if (replayed.count > 0) warn(`journal: loaded ${replayed.count} items a previous run had not loaded`);
  }

  /** Items in the journal, not yet loaded into DuckDB, oldest first. */
  let pending: PackedItems[] = [];
  let pendingCount = 0;
  let oldestPending = 0;
  let lastAppend = 0;
  let loadFailures = 0;
  let retryAt = 0;
  const loadPolicy = options.load ?? { rows: ROW_GROUP_ROWS, idleMs: 200, maxLagMs: 5000 };

  /** The running load, and whether another one is asked for after it. */
  let loading: Promise<void> = Promise.resolve();
  let loadAsked = false;
  function loadPending(): Promise<void> {
    if (loadAsked) return loading;
    loadAsked = true;
    loading = loading.then(async () => {
      loadAsked = false;
      // Waits for appends already under way: their items are then in `pending`, and in the segments up
      // to `through`; later appends go to a new segment.
      const through = await journal.rotate();
      const taken = pending;
      const count = pendingCount;
      pending = [];
      pendingCount = 0;
      if (count === 0) return;
      try {
        await load({ count, segments: taken.flatMap((p) => p.segments) }, through);
        loadFailures = 0;
      } catch (error) {
        // Still in the journal: kept for the next load, which also covers these segments.
        pending = [...taken, ...pending];
        pendingCount += count;
        oldestPending = Math.min(oldestPending, lastAppend);
        retryAt = Date.now() + Math.min(30_000, 1000 * 2 ** loadFailures++);
        warn(`loading ${count} journaled items into the store failed (${String(error)}); will retry`);
        throw error;
      }
      await journal.drop(through).catch((error: unknown) => {
        warn(`journal: could not delete loaded segments (${String(error)}); deleted at next start`);
      });
    });
    return loading;
  }

  const loadTimer = setInterval(() => {
    const now = Date.now();
    if (pendingCount === 0 || now < retryAt) return;
    if (now - lastAppend >= loadPolicy.idleMs || now - oldestPending >= loadPolicy.maxLagMs)
      loadPending().catch(() => undefined); // Reported by loadPending.
  }, LOAD_TICK_MS);
  loadTimer.unref();

  async function appendPacked(packed: PackedItems): Promise<void> {
    if (packed.count === 0) return;
    await journal.append(packed.segments.map(toRecord), () => {
      if (pendingCount === 0) oldestPending = Date.now();
      pending.push(packed);
      pendingCount += packed.count;
      lastAppend = Date.now();
    });
    if (pendingCount >= loadPolicy.rows && Date.now() >= retryAt) loadPending().catch(() => undefined);
  }

  /** Everything appended so far, loaded: what reads see. */
  const flush = () => (pendingCount > 0 ? loadPending() : loading.catch(() => undefined));

  // Readers are kept for reuse (a connection costs little, but the dashboard asks several queries at
  // once); each runs one query at a time, and never waits behind the writer.
  const idleReaders: DuckDBConnection[] = [];
  async function read(sql: string, values: DuckDBValue[] = []): Promise<Record<string, unknown>[]> {
    await flush();
    const c = idleReaders.pop() ?? (await instance.connect());
    connections.add(c);
    let reusable = false;
    try {
      const rows = (await c.runAndReadAll(sql, values)).getRowObjectsJS();
      reusable = true;
      return rows;
    } finally {
      if (reusable && idleReaders.length < MAX_IDLE_READERS) idleReaders.push(c);
      else {
        connections.delete(c);
        c.closeSync();
      }
    }
  }

  return {
    read,
    append: (items) => appendPacked(Array.isArray(items) ? packItems(items) : (items as PackedItems)),

    pending: () => pendingCount,
    flush,

    async count(filter) {
      await flush();
      const { sql, values } = where(filter);
      return withConnection(async (c) => {
        const rows = (await c.runAndReadAll(`SELECT count(*) FROM items ${sql}`, values)).getRows();
        return Number(rows[0]?.[0] ?? 0);
      });
    },

    async *export(filter) {
      await flush();
      const { sql, values } = where(filter);
      const c = await instance.connect();
      connections.add(c);
      try {
        const result = await c.stream(`SELECT envelope FROM items ${sql}`, values);
        for await (const rows of result.yieldRows()) {
          for (const [envelope] of rows) yield JSON.parse(String(envelope)) as Envelope;
        }
      } finally {
        connections.delete(c);
        c.closeSync();
      }
    },

    async prune(before) {
      await flush();
      return withConnection(async (c) => {
        const result = await c.run('DELETE FROM items WHERE time < $1', [micros(before)]);
        return result.rowsChanged;
      });
    },

    async close() {
      clearInterval(checkpointTimer);
      clearInterval(loadTimer);
      // What is still journaled is loaded now; if that fails, the next start loads it.
      await flush().catch(() => undefined);
      await journal.close();
      await writerBusy;
      insert.destroySync();
      for (const c of [...connections, writer]) c.closeSync();
      instance.closeSync();
    },
  };
}
