import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import type { StoreThreads } from './threads.js';

/** Reader connections kept open between reads. */
const MAX_IDLE_READERS = 4;

/**
 * The store's reader connections, apart from its one writer: DuckDB lets one process open the file,
 * so every read (usage queries, count, export, prune) runs on a connection of the store's own instance.
 */
export interface Readers {
  /** Runs `use` on a connection of its own, so a long read never waits behind (or holds up) the writer. */
  with<T>(use: (c: DuckDBConnection) => Promise<T>): Promise<T>;
  /** One parameterised read on a pooled connection (up to MAX_IDLE_READERS kept); rows as JS objects. */
  read(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
  /** The rows of `sql`, streamed, on a connection of their own (an export of any size). */
  stream(sql: string, values: DuckDBValue[]): AsyncGenerator<DuckDBValue[]>;
  /** Closes every reader connection, those in use included. */
  closeAll(): void;
}

/** `threads`: where given, each read runs with the reads' thread count (threads.ts). */
export function openReaders(instance: DuckDBInstance, threads?: StoreThreads): Readers {
  const asRead = <T>(read: () => Promise<T>) => (threads ? threads.during(read) : read());
  const connections = new Set<DuckDBConnection>();
  const idle: DuckDBConnection[] = [];
  const connect = async () => {
    const c = await instance.connect();
    connections.add(c);
    return c;
  };
  const close = (c: DuckDBConnection) => {
    connections.delete(c);
    c.closeSync();
  };

  return {
    with(use) {
      return asRead(async () => {
        const c = await connect();
        try {
          return await use(c);
        } finally {
          close(c);
        }
      });
    },

    read(sql, values = []) {
      return asRead(async () => {
        const c = idle.pop() ?? (await connect());
        let reusable = false;
        try {
          const rows = (await c.runAndReadAll(sql, values)).getRowObjectsJS();
          reusable = true;
          return rows;
        } finally {
          if (reusable && idle.length < MAX_IDLE_READERS) idle.push(c);
          else close(c);
        }
      });
    },

    async *stream(sql, values) {
      const end = await threads?.begin();
      const c = await connect().catch((error: unknown) => {
        end?.();
        throw error;
      });
      try {
        const result = await c.stream(sql, values);
        for await (const rows of result.yieldRows()) yield* rows;
      } finally {
        close(c);
        end?.();
      }
    },

    closeAll() {
      for (const c of connections) c.closeSync();
      connections.clear();
      idle.length = 0;
    },
  };
}
