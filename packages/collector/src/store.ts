import { mkdirSync, statSync } from 'node:fs';
import { appendFile, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import { DEFAULT_FUTURE_MS, DEFAULT_PAST_MS, type TelemetryItem, type TelemetryType } from './contracts.js';
import { itemsTableSql, rowLayout } from './row-layout.js';
import { ITEM_KEY_SQL, RecentKeys } from './item-identity.js';
import { Journal, type JournalPosition } from './journal.js';
import {
  FS_BYTE,
  GS_BYTE,
  packItems,
  RS_BYTE,
  selectPacked,
  unescapeSql,
  type PackedItems,
} from './packed.js';

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
  /**
   * Deletes every item of one user (`ai.user.authUserId` or `ai.user.id` equal to `user`), those still
   * in the journal included, and leaves no copy in the journal's files or DuckDB's WAL; resolves to how many.
   */
  erase(user: string): Promise<number>;
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

/** Where journal records DuckDB cannot load are moved aside (appended, each ending with RS). */
export function rejectedFile(dataDir: string): string {
  return path.join(dataDir, 'journal-rejected.log');
}

/**
 * DuckDB's row group: a transaction inserting at least this many rows has DuckDB write them straight
 * to the database file, compressed, instead of into its WAL and again at the next checkpoint (measured:
 * about 12 µs of CPU an item instead of 19). Loads under load wait for this many items.
 */
export const ROW_GROUP_ROWS = 122_880;
/** Journal rows bound per INSERT of a load. */
const LOAD_RUN_BYTES = 8 * 1024 * 1024;
/** How often the store looks whether journaled items are due to be loaded. */
const LOAD_TICK_MS = 50;

/** Reader connections kept open between reads. */
const MAX_IDLE_READERS = 4;

/**
 * Inserts a run of whole journal rows (a BLOB of UTF-8), skipping the trailers. A run is all plain rows
 * or all escaped ones (which begin with FS); in those, escapes are undone. Plain runs are nearly all,
 * and their SQL has no such work (undoing it in every row, under a CASE, cost 15 % of a load).
 */
function insertRows(escaped: boolean): string {
  // Each column's cell, f[k], as its SQL type (rowLayout); chr(0) is NULL.
  const cells = rowLayout.map(({ kind }, i) => {
    const f = `f[${i + 1}]`;
    if (kind === 'time') return `epoch_ms(${f}::BIGINT)`;
    if (kind === 'number') return `nullif(${f}, chr(0))::DOUBLE`;
    if (kind === 'boolean') return `nullif(${f}, chr(0))::BOOLEAN`;
    return escaped ? `CASE WHEN ${f} = chr(0) THEN NULL ELSE ${unescapeSql(f)} END` : `nullif(${f}, chr(0))`;
  });
  return `INSERT INTO items SELECT ${cells.join(', ')}
    FROM (
      SELECT string_split(${escaped ? 'r[2:]' : 'r'}, chr(31)) AS f
      FROM (SELECT unnest(string_split(decode($1::BLOB), chr(30))) AS r)
      WHERE r <> '' AND ascii(r) <> 29
    )`;
}

/** How far the journal is in `items` already: each load moves it in its own transaction. */
const journalSchema = `CREATE TABLE IF NOT EXISTS journal_position (segment BIGINT NOT NULL, byte_offset BIGINT NOT NULL);
  INSERT INTO journal_position SELECT 0, 0 WHERE NOT EXISTS (SELECT 1 FROM journal_position)`;

/**
 * The run of whole rows at the start of `bytes`: at most `max` item rows (trailers, after GS, are not
 * items), all plain or all escaped (after FS), and where it ends.
 */
function wholeRows(bytes: Buffer, max: number): { end: number; items: number; escaped: boolean } {
  let end = 0;
  let items = 0;
  let escaped: boolean | undefined;
  while (items < max) {
    const next = bytes.indexOf(RS_BYTE, end);
    if (next < 0) break;
    const first = bytes[end];
    if (first !== GS_BYTE) {
      if (escaped === undefined) escaped = first === FS_BYTE;
      else if (escaped !== (first === FS_BYTE)) break;
      items++;
    }
    end = next + 1;
  }
  return { end, items, escaped: escaped ?? false };
}

/** The row that starts at byte `at` of a journal segment, its RS included. */
async function readRow(handle: FileHandle, at: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let offset = at; ;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
    if (bytesRead === 0) throw new Error(`the journal row at byte ${at} has no end`);
    const end = chunk.subarray(0, bytesRead).indexOf(RS_BYTE);
    if (end >= 0) {
      parts.push(chunk.subarray(0, end + 1));
      return Buffer.concat(parts);
    }
    parts.push(chunk.subarray(0, bytesRead));
    offset += bytesRead;
  }
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
  load?: { rows: number; idleMs: number; maxLagMs: number };
  /** When to checkpoint between bursts (see below). Default: idle 2 s, WAL over 16 MiB, looked at every 5 s. */
  idleCheckpoint?: { idleMs: number; minWalBytes: number; everyMs: number };
  /**
   * How many of the latest items' identities are kept to store each item once (item-identity.ts).
   * Default RECENT_ITEMS; 0 stores every item appended.
   */
  recentItems?: number;
}

/**
 * Identities kept to drop items sent again: about 20 MB. At the rate of a busy site (hundreds of items
 * a second) that spans hours, far longer than the SDKs take to resend; under a flood it spans less.
 */
export const RECENT_ITEMS = 500_000;

/** DuckDB errors that a record's own content causes (anything else, such as a full disk, is retried). */
const RECORD_ERROR = /^(Conversion|Invalid Input|Constraint|Out of Range) Error/;

/** A run of journal rows that DuckDB would not load, from `at`, `bytes` long (unknown: longer than a load run). */
class UnloadableRun extends Error {
  readonly code = 'UNLOADABLE_RUN';
  constructor(
    readonly at: JournalPosition,
    readonly bytes: number | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
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
  await writer.run(itemsTableSql);
  // Stores made before the journal kept `envelope` as JSON, whose check refuses some texts JSON.parse
  // accepts (lone surrogate escapes): such a load would fail again and again.
  const envelopeType = (
    await writer.runAndReadAll(
      "SELECT data_type FROM information_schema.columns WHERE table_name = 'items' AND column_name = 'envelope'",
    )
  ).getRows()[0]?.[0];
  if (envelopeType === 'JSON') await writer.run('ALTER TABLE items ALTER envelope TYPE VARCHAR');
  await writer.run(journalSchema);
  const [segment, offset] = (
    await writer.runAndReadAll('SELECT segment, byte_offset FROM journal_position')
  ).getRows()[0] ?? [0, 0];
  /** Where the journal is loaded up to (kept in DuckDB, and moved in each load's own transaction). */
  let loaded: JournalPosition = { segment: Number(segment), offset: Number(offset) };
  const inserts = {
    plain: await writer.prepare(insertRows(false)),
    escaped: await writer.prepare(insertRows(true)),
  };
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

  /**
   * Inserts the journal's rows from `from` on, at most `limit` items, in runs of up to LOAD_RUN_BYTES
   * (DuckDB splits ten values of 8 MB far faster than one of 80) read into one reused buffer and cut
   * after a row; resolves to the position reached and the items inserted.
   */
  const run = Buffer.allocUnsafeSlow(LOAD_RUN_BYTES);
  async function insertFrom(from: JournalPosition, limit: number, stopAt?: JournalPosition) {
    const position = { ...from };
    let rows = 0;
    for (const segment of journal.segments()) {
      const { id, open: appending } = segment;
      if (id < position.segment || rows >= limit || (stopAt && id > stopAt.segment)) continue;
      const size = stopAt?.segment === id ? Math.min(stopAt.offset, segment.size) : segment.size;
      if (id > position.segment) Object.assign(position, { segment: id, offset: 0 });
      const handle = await open(journal.file(id), 'r');
      try {
        while (position.offset < size && rows < limit) {
          const want = Math.min(run.length, size - position.offset);
          const { bytesRead } = await handle.read(run, 0, want, position.offset);
          if (bytesRead < want) throw new Error(`${journal.file(id)} is shorter than its appends`);
          const { end, items, escaped } = wholeRows(run.subarray(0, bytesRead), limit - rows);
          if (end === 0)
            throw new UnloadableRun({ ...position }, undefined, `a row longer than ${run.length} bytes`);
          if (items > 0) {
            try {
              rows += await insertRun(run.subarray(0, end), escaped);
            } catch (error) {
              if (!RECORD_ERROR.test(String((error as Error).message))) throw error;
              const firstLine = (error as Error).message.split('\n', 1)[0] ?? '';
              throw new UnloadableRun({ ...position }, end, firstLine, { cause: error });
            }
          }
          position.offset += end;
        }
      } finally {
        await handle.close();
      }
      // A segment read to its end that takes no more appends is done: the next load may delete it.
      if (position.offset === segment.size && !appending)
        Object.assign(position, { segment: id + 1, offset: 0 });
    }
    return { position, rows };
  }

  /** Inserts whole journal rows, all plain or all escaped; resolves to how many. */
  async function insertRun(rows: Buffer, escaped: boolean): Promise<number> {
    const insert = escaped ? inserts.escaped : inserts.plain;
    insert.bindBlob(1, rows);
    try {
      return Number((await insert.run()).rowsChanged);
    } finally {
      insert.clearBindings();
    }
  }

  /** Runs `work` and moves the journal position to what it resolves to, in one transaction. */
  async function transaction(work: () => Promise<JournalPosition>): Promise<void> {
    await writer.run('BEGIN TRANSACTION');
    try {
      const position = await work();
      await writer.run('UPDATE journal_position SET segment = $1, byte_offset = $2', [
        position.segment,
        position.offset,
      ]);
      await writer.run('COMMIT');
      loaded = position;
    } catch (error) {
      await writer.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /** Up to `limit` journaled items (before `stopAt`, if given) into DuckDB in one transaction. */
  async function loadOnce(limit: number, stopAt?: JournalPosition): Promise<number> {
    let rows = 0;
    await transaction(async () => {
      const reached = await insertFrom(loaded, limit, stopAt);
      rows = reached.rows;
      return reached.position;
    });
    return rows;
  }

  /**
   * Loads, one row per transaction, the run DuckDB refused as a whole, moving each row it refuses
   * aside (to rejectedFile, with a log line): one bad record never holds back the others.
   */
  async function setAside(failed: UnloadableRun): Promise<number> {
    const file = journal.file(failed.at.segment);
    const handle = await open(file, 'r');
    let rows = 0;
    try {
      let at = failed.at.offset;
      const end = failed.bytes === undefined ? undefined : at + failed.bytes;
      while (end === undefined ? at === failed.at.offset : at < end) {
        const row = await readRow(handle, at);
        const next = { segment: failed.at.segment, offset: at + row.length };
        if (row[0] !== GS_BYTE && row.length <= run.length) {
          try {
            await transaction(async () => {
              rows += await insertRun(row, row[0] === FS_BYTE);
              return next;
            });
            at = next.offset;
            continue;
          } catch (error) {
            if (!RECORD_ERROR.test(String((error as Error).message))) throw error;
          }
        }
        if (row[0] !== GS_BYTE) {
          const aside = rejectedFile(dataDir);
          const where = statSync(aside, { throwIfNoEntry: false })?.size ?? 0;
          await appendFile(aside, row, { flush: true });
          warn(
            `journal: a record of ${row.length} bytes at byte ${at} of ${path.basename(file)} could not be ` +
              `loaded (${failed.message}); moved aside to ${aside} at byte ${where}`,
          );
        }
        await transaction(() => Promise.resolve(next));
        at = next.offset;
      }
    } finally {
      await handle.close();
    }
    return rows;
  }

  /**
   * Loads up to `limit` journaled items into DuckDB, each transaction also moving the journal position,
   * so no item is loaded twice; a record DuckDB refuses is moved aside (setAside). Resolves to how many.
   */
  function load(limit: number): Promise<number> {
    return withWriter(async () => {
      let rows = 0;
      for (;;) {
        try {
          rows += await loadOnce(limit - rows);
          break;
        } catch (error) {
          if (!(error instanceof UnloadableRun)) throw error;
          rows += await loadOnce(limit - rows, error.at);
          rows += await setAside(error);
        }
      }
      lastWrite = Date.now();
      await journal.drop(loaded.segment).catch((error: unknown) => {
        warn(`journal: could not delete loaded segments (${String(error)}); deleted at next start`);
      });
      return rows;
    });
  }

  // The journal: appends are durable once in it, and loaded into DuckDB in large transactions.
  const journal = await Journal.open(path.join(dataDir, 'journal'), loaded, warn);
  const recovered = await load(Infinity);
  if (recovered > 0) warn(`journal: loaded ${recovered} items a previous run had not loaded`);

  // The identities of the latest items, so an item sent again (the SDKs deliver at least once) is
  // stored once; only items inside the time window can be accepted, so only those need remembering.
  const capacity = options.recentItems ?? RECENT_ITEMS;
  const recent = capacity > 0 ? new RecentKeys(capacity) : undefined;
  if (recent) {
    const since = Date.now() - DEFAULT_PAST_MS - DEFAULT_FUTURE_MS;
    const keys = await writer.runAndReadAll(
      `SELECT ${ITEM_KEY_SQL} FROM (SELECT envelope FROM items WHERE time >= $1 ORDER BY time DESC LIMIT $2)`,
      [micros(since), capacity],
    );
    for (const [key] of keys.getRows().reverse()) recent.add(parseInt(String(key), 16));
  }

  /** Items in the journal, not yet loaded into DuckDB. */
  let pendingCount = 0;
  let oldestPending = 0;
  let lastAppend = 0;
  let loadFailures = 0;
  let retryAt = 0;
  const loadPolicy = options.load ?? { rows: ROW_GROUP_ROWS, idleMs: 200, maxLagMs: 5000 };

  /**
   * Loads run one after another. Under load a load takes whole row groups (`loadPolicy.rows` at a
   * time), so DuckDB writes them straight to its file and its checkpoints have no partial row groups
   * to merge (which measured as costly as the load itself); a pause, the time limit and reads take all.
   */
  let loading: Promise<void> = Promise.resolve();
  let queued: { all: boolean; done: Promise<void> } | undefined;
  function loadPending(all: boolean): Promise<void> {
    if (queued) {
      queued.all ||= all;
      return queued.done;
    }
    const next: { all: boolean; done: Promise<void> } = { all, done: Promise.resolve() };
    next.done = loading.then(async () => {
      queued = undefined;
      const limit = next.all ? Infinity : Math.floor(pendingCount / loadPolicy.rows) * loadPolicy.rows;
      // (With nothing pending, a load still moves past a sealed segment, so that it can be deleted.)
      if (limit === 0) return;
      const started = Date.now();
      try {
        const rows = await load(limit); // (Not `pendingCount -= await …`: appends go on meanwhile.)
        pendingCount -= rows;
        loadFailures = 0;
      } catch (error) {
        // Still in the journal, from the same position: the next load tries again.
        retryAt = Date.now() + Math.min(30_000, 1000 * 2 ** loadFailures++);
        warn(`loading journaled items into the store failed (${String(error)}); will retry`);
        throw error;
      }
      // What is left arrived about while this load ran.
      if (pendingCount > 0) oldestPending = started;
    });
    queued = next;
    loading = next.done.catch(() => undefined);
    return next.done;
  }

  const loadTimer = setInterval(() => {
    const now = Date.now();
    if (pendingCount === 0 || now < retryAt) return;
    if (pendingCount >= loadPolicy.rows)
      loadPending(false).catch(() => undefined); // Reported by loadPending.
    else if (now - lastAppend >= loadPolicy.idleMs || now - oldestPending >= loadPolicy.maxLagMs)
      loadPending(true).catch(() => undefined);
  }, LOAD_TICK_MS);
  loadTimer.unref();

  /** Journal writes under way: an item found to be a copy of one of theirs is stored once they are. */
  const writing = new Set<Promise<void>>();

  /** The items of `packed` not stored yet (their keys now taken), and whether any were copies. */
  function unseen(packed: PackedItems): { fresh: PackedItems; copies: boolean } {
    if (!recent) return { fresh: packed, copies: false };
    let copies = 0;
    const isCopy = packed.keys.map((key) => {
      if (recent.has(key)) return ++copies > 0;
      recent.add(key);
      return false;
    });
    return { fresh: copies ? selectPacked(packed, (i) => !isCopy[i]) : packed, copies: copies > 0 };
  }

  async function appendPacked(packed: PackedItems): Promise<void> {
    if (packed.count === 0) return;
    const { fresh, copies } = unseen(packed);
    const originals = copies ? [...writing] : [];
    if (fresh.count > 0) {
      const write = journal.append(fresh.chunks, () => {
        if (pendingCount === 0) oldestPending = Date.now();
        pendingCount += fresh.count;
        lastAppend = Date.now();
      });
      writing.add(write);
      try {
        await write;
      } catch (error) {
        // Not stored: a resend must not be taken for a copy.
        for (const key of fresh.keys) recent?.delete(key);
        throw error;
      } finally {
        writing.delete(write);
      }
    }
    // A copy is durable once its original is; if that write failed, this sender should resend too.
    await Promise.all(originals);
    if (pendingCount >= loadPolicy.rows && Date.now() >= retryAt) loadPending(false).catch(() => undefined);
  }

  /** Everything appended so far, loaded: what reads see. */
  const flush = () => (pendingCount > 0 ? loadPending(true) : loading);

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
    // Async, so an item packItems refuses rejects the append (and nothing of it is written).
    async append(items) {
      await appendPacked(Array.isArray(items) ? packItems(items) : (items as PackedItems));
    },

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

    async erase(user) {
      // End the journal's segment first: once loaded, it is deleted, and no copy is left in its file.
      await journal.seal();
      await loadPending(true);
      const erased = await withWriter(async () => {
        const result = await writer.run('DELETE FROM items WHERE auth_user_id = $1 OR user_id = $1', [user]);
        // Nor in the WAL; if a long export holds it off, the idle checkpoint does it shortly after.
        await writer.run('CHECKPOINT').catch((error: unknown) => {
          warn(`erasure: checkpoint deferred (${String(error)})`);
        });
        return Number(result.rowsChanged);
      });
      await journal.drop(loaded.segment);
      return erased;
    },

    async close() {
      clearInterval(checkpointTimer);
      clearInterval(loadTimer);
      // What is still journaled is loaded now; if that fails, the next start loads it.
      await flush().catch(() => undefined);
      await journal.close();
      // The segment just closed is loaded to its end: moving past it lets it go, leaving no journal.
      if (pendingCount === 0) await load(Infinity).catch(() => undefined);
      await writerBusy;
      inserts.plain.destroySync();
      inserts.escaped.destroySync();
      for (const c of [...connections, writer]) c.closeSync();
      instance.closeSync();
    },
  };
}
