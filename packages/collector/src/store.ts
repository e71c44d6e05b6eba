import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { TelemetryItem, TelemetryType } from './contracts.js';

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
export async function openStore(dataDir: string, options: OpenStoreOptions = {}): Promise<TelemetryStore> {
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

  return {
    async append(items) {
      if (items.length === 0) return;
      if (options.readonly) throw new Error('The telemetry store was opened read-only.');
      const writer = await takeWriter();
      try {
        await writer.run('BEGIN TRANSACTION');
        try {
          const appender = await writer.createAppender('items');
          try {
            for (const item of items) appendRow(appender, item);
          } finally {
            // Closing flushes the rows into the open transaction; COMMIT then makes them durable.
            appender.closeSync();
          }
          await writer.run('COMMIT');
          lastWrite = Date.now();
        } catch (error) {
          await writer.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
      } finally {
        releaseWriter(writer);
      }
    },

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
      for (const c of [...connections, ...allWriters]) c.closeSync();
      instance.closeSync();
      return Promise.resolve();
    },
  };
}
