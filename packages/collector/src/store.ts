import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { TelemetryItem, TelemetryType } from './contracts.js';
import { packItems, RS, unpackRow, type PackedItems } from './packed.js';

export type { PackedItems } from './packed.js';

/**
 * The telemetry store: one DuckDB file (columnar, chosen in docs/decisions/0004-collector-store.md).
 * Each `append` is one transaction whose COMMIT writes and fsyncs DuckDB's write-ahead log on a
 * libuv pool thread, so the event loop keeps parsing requests while the disk works.
 */
export interface TelemetryStore {
  /** Stores items in one transaction; resolves once they are durable. */
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
 * Writer connections, and so group commits that may be in flight at once. Two writers measured slower
 * than one on the 2-core machine: the second group starts small, so there are more fsyncs per item.
 */
export const WRITERS = 1;

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
  FROM (SELECT string_split(r, chr(31)) AS f FROM (SELECT unnest(string_split($1, chr(30))) AS r))`;

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
  /** Open without writing (the export command). Fails while a server holds the store. */
  readonly?: boolean;
  /** When to checkpoint between bursts (see below). Default: idle 2 s, WAL over 16 MiB, looked at every 5 s. */
  idleCheckpoint?: { idleMs: number; minWalBytes: number; everyMs: number };
}

/** Opens (creating on first start) the store in `dataDir`. */
export function openStore(dataDir: string, options: OpenStoreOptions = {}): Promise<TelemetryStore> {
  return openWritableStore(dataDir, options);
}

/** openStore, with the collector's packed appends. */
export async function openWritableStore(
  dataDir: string,
  options: OpenStoreOptions = {},
): Promise<WritableStore> {
  const file = storeFile(dataDir);
  if (!options.readonly) mkdirSync(dataDir, { recursive: true });
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(
      file,
      // DuckDB checkpoints when its WAL passes this size, rewriting the table's last (partial) row group
      // each time; at the default 16 MB that work dominates ingest (11k items/s against 55k at 256 MB).
      options.readonly ? { access_mode: 'READ_ONLY' } : { checkpoint_threshold: '256MB' },
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // DuckDB allows one writing process per file: a running server keeps it locked.
    if (/lock/i.test(message)) {
      throw new Error(`The telemetry store ${file} is in use by another process (a running server?).`, {
        cause: error,
      });
    }
    throw error;
  }
  const connections = new Set<DuckDBConnection>();
  if (!options.readonly) {
    const setup = await instance.connect();
    await setup.run(schema);
    setup.closeSync();
  }
  // Each writer runs one transaction at a time; `append` waits for a free one, so direct callers may
  // overlap calls safely. Appends never conflict in DuckDB's optimistic concurrency.
  const idleWriters: DuckDBConnection[] = options.readonly
    ? []
    : await Promise.all(Array.from({ length: WRITERS }, () => instance.connect()));
  const allWriters = [...idleWriters];
  const inserts = new Map<DuckDBConnection, DuckDBPreparedStatement>();
  for (const writer of allWriters) inserts.set(writer, await writer.prepare(insertPacked));
  const writerFreed: (() => void)[] = [];
  async function takeWriter(): Promise<DuckDBConnection> {
    for (;;) {
      const writer = idleWriters.pop();
      if (writer) return writer;
      await new Promise<void>((resolve) => writerFreed.push(resolve));
    }
  }
  function releaseWriter(writer: DuckDBConnection): void {
    idleWriters.push(writer);
    writerFreed.shift()?.();
  }

  // The 256 MB threshold keeps checkpoints rare under load, but one that does come stalls commits for
  // about a second and a crash leaves that much WAL to replay. So checkpoint in the quiet moments instead:
  // after `idleMs` without writes, once the WAL is worth it. A failure (an export holds a transaction) is
  // simply tried again later; DuckDB's own threshold remains the backstop.
  const idle = options.idleCheckpoint ?? { idleMs: 2000, minWalBytes: 16 * 1024 * 1024, everyMs: 5000 };
  let lastWrite = Date.now();
  const checkpointTimer = options.readonly
    ? undefined
    : setInterval(() => {
        const walBytes = statSync(`${file}.wal`, { throwIfNoEntry: false })?.size ?? 0;
        if (Date.now() - lastWrite < idle.idleMs || walBytes < Math.max(1, idle.minWalBytes)) return;
        void takeWriter().then(async (writer) => {
          try {
            await writer.run('CHECKPOINT');
          } catch {
            // Tried again on the next tick.
          } finally {
            releaseWriter(writer);
          }
        });
      }, idle.everyMs);
  checkpointTimer?.unref();

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

  // Readers are kept for reuse (a connection costs little, but the dashboard asks several queries at
  // once); each runs one query at a time, and never waits behind the writer.
  const idleReaders: DuckDBConnection[] = [];
  async function read(sql: string, values: DuckDBValue[] = []): Promise<Record<string, unknown>[]> {
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

  /** Where a write failed: in its statements (nothing committed) or in its COMMIT. */
  class BeforeCommit extends Error {}

  /** One transaction for the whole batch; `bulk` inserts each run of packed rows with one INSERT. */
  async function write(writer: DuckDBConnection, packed: PackedItems, bulk: boolean): Promise<void> {
    const insert = inserts.get(writer);
    await writer.run('BEGIN TRANSACTION');
    try {
      for (const segment of packed.segments) {
        if (typeof segment === 'string' && bulk && insert) {
          insert.bindVarchar(1, segment);
          try {
            await insert.run();
          } finally {
            insert.clearBindings();
          }
          continue;
        }
        const items = typeof segment === 'string' ? segment.split(RS).map(unpackRow) : segment;
        const appender = await writer.createAppender('items');
        try {
          for (const item of items) appendRow(appender, item);
        } finally {
          // Closing flushes the rows into the open transaction; COMMIT then makes them durable.
          appender.closeSync();
        }
      }
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

  async function appendPacked(packed: PackedItems): Promise<void> {
    if (packed.count === 0) return;
    if (options.readonly) throw new Error('The telemetry store was opened read-only.');
    const writer = await takeWriter();
    try {
      await write(writer, packed, true);
    } catch (error) {
      if (!(error instanceof BeforeCommit)) throw error;
      // DuckDB's JSON check is stricter than JSON.parse in places (lone surrogates are kept out of
      // the packed rows already): rather than fail everyone's request, the batch goes again through
      // the appender, which stores the text as it is. Nothing of the first try was committed.
      if (!packed.segments.some((segment) => typeof segment === 'string')) throw error.cause;
      await write(writer, packed, false).catch((retryError: unknown) => {
        throw retryError instanceof BeforeCommit ? retryError.cause : retryError;
      });
    } finally {
      releaseWriter(writer);
    }
  }

  return {
    read,
    append: (items) => appendPacked(Array.isArray(items) ? packItems(items) : (items as PackedItems)),

    async count(filter) {
      const { sql, values } = where(filter);
      return withConnection(async (c) => {
        const rows = (await c.runAndReadAll(`SELECT count(*) FROM items ${sql}`, values)).getRows();
        return Number(rows[0]?.[0] ?? 0);
      });
    },

    async *export(filter) {
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
      if (options.readonly) throw new Error('The telemetry store was opened read-only.');
      return withConnection(async (c) => {
        const result = await c.run('DELETE FROM items WHERE time < $1', [micros(before)]);
        return result.rowsChanged;
      });
    },

    close() {
      clearInterval(checkpointTimer);
      for (const insert of inserts.values()) insert.destroySync();
      for (const c of [...connections, ...allWriters]) c.closeSync();
      instance.closeSync();
      return Promise.resolve();
    },
  };
}
