import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openReaders } from './readers.js';
import { StoreThreads, threadCountsFor } from './threads.js';

describe("the store's DuckDB threads", () => {
  const instances: DuckDBInstance[] = [];
  afterEach(() => {
    for (const instance of instances.splice(0)) instance.closeSync();
  });

  /** An in-memory instance, its threads shared by readers, and a way to read its setting from outside. */
  async function setUp(lingerMs = 0) {
    const instance = await DuckDBInstance.create(':memory:', { threads: '4' });
    instances.push(instance);
    const threads = new StoreThreads(instance, lingerMs);
    const readers = openReaders(instance, threads);
    const outside = await instance.connect();
    const setting = async () =>
      Number((await outside.runAndReadAll("SELECT current_setting('threads')")).getRows()[0]?.[0]);
    const close = () => {
      readers.closeAll();
      threads.close();
      outside.closeSync();
    };
    return { threads, readers, setting, close };
  }

  it('leaves two cores to the ingest while loading, keeping one at least, and reads with them all', () => {
    expect(threadCountsFor(2)).toEqual({ loads: 1, reads: 2 });
    expect(threadCountsFor(1)).toEqual({ loads: 1, reads: 1 });
    expect(threadCountsFor(8)).toEqual({ loads: 6, reads: 8 });
  });

  it("keeps DuckDB's own count until started, then the loads' count while nothing reads", async () => {
    const { threads, readers, setting, close } = await setUp();
    try {
      expect(await readers.read("SELECT current_setting('threads') AS n")).toEqual([{ n: 4n }]);
      expect(await setting()).toBe(4);
      await threads.start({ loads: 1, reads: 3 });
      expect(await setting()).toBe(1);
    } finally {
      close();
    }
  });

  it("runs each read with the reads' count, and goes back to the loads' once the last read ends", async () => {
    const { threads, readers, setting, close } = await setUp();
    try {
      await threads.start({ loads: 1, reads: 3 });
      expect(await readers.read("SELECT current_setting('threads') AS n")).toEqual([{ n: 3n }]);
      await threads.settled();
      expect(await setting()).toBe(1);

      // A stream holds the reads' count while it is read, across other reads that end meanwhile.
      const stream = readers.stream('SELECT range FROM range(3)', []);
      expect((await stream.next()).value).toEqual([0n]);
      await readers.with(async (c) => {
        await c.run('SELECT 1');
      });
      await threads.settled();
      expect(await setting()).toBe(3);
      for await (const row of stream) expect(row).toHaveLength(1);
      await threads.settled();
      expect(await setting()).toBe(1);

      // A read that fails ends too.
      await expect(readers.read('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
      await threads.settled();
      expect(await setting()).toBe(1);
    } finally {
      close();
    }
  });

  it("keeps the reads' count for a moment after the last read, and for every read that begins meanwhile", async () => {
    const { threads, readers, setting, close } = await setUp(300);
    try {
      await threads.start({ loads: 1, reads: 3 });
      await readers.read('SELECT 1');
      await threads.settled();
      expect(await setting()).toBe(3);
      await readers.read('SELECT 2');
      const lastRead = Date.now();
      await vi.waitFor(async () => expect(await setting()).toBe(1), { timeout: 3000, interval: 20 });
      expect(Date.now() - lastRead).toBeGreaterThanOrEqual(250);
    } finally {
      close();
    }
  });
});
