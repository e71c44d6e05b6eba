import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';

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

export function openReaders(instance: DuckDBInstance): Readers {
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
    async with(use) {
      const c = await connect();
      try {
        return await use(c);
      } finally {
        close(c);
      }
    },

    async read(sql, values = []) {
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
    },

    async *stream(sql, values) {
      const c = await connect();
      try {
        const result = await c.stream(sql, values);
        for await (const rows of result.yieldRows()) yield* rows;
      } finally {
        close(c);
      }
    },

    closeAll() {
      for (const c of connections) c.closeSync();
      connections.clear();
      idle.length = 0;
    },
  };
}
