import { DuckDBTimestampValue, type DuckDBConnection } from '@duckdb/node-api';
import { markDaysSql, recomputeMarkedSql } from './daily-sketch.js';

/*
 * Day compaction (ADR 0072): each whole UTC day of items, once it is over, is written again sorted by
 * type and then time, as ClickHouse's MergeTree merges its parts by their sorting key. Loads write rows in
 * the order they arrive, nearly time order (ADR 0071), so a row group holds a narrow span of time but every type mixed: a query for one
 * type (the exceptions, 2 % of the items; the web vitals; the calls) then decompresses every vector of
 * its other columns, for the few rows of its type in each. Sorted by type within the day, a type's rows
 * are contiguous, and DuckDB skips the vectors of a scan where its filter selected none: a type's 30-day
 * list two to six times faster at 10 M items (docs/performance/usage-history.md, section 6).
 *
 * Nothing is lost or changed but the rows' order: the rollup (rollup.ts) and every answer stay as they
 * were; within a type the order is the time, then the order they arrived in (their rowid). The day's
 * daily sketches (daily-sketch.ts), a row per load and register until then, are written again once.
 */

/** One row: every day before it has been rewritten (a store made before has none until its first). */
export const COMPACTED_TABLE = 'items_compacted';
const compactedTableSql = `CREATE TABLE IF NOT EXISTS ${COMPACTED_TABLE} (compacted_before TIMESTAMP NOT NULL)`;
const STAGE = 'compact_stage';
const DAY_MS = 86_400_000;

const micros = (ms: number) => new DuckDBTimestampValue(BigInt(ms) * 1000n);
const epochMs = (v: unknown) => (typeof v === 'bigint' ? Number(v) : Number(v ?? NaN));

/**
 * On the writer `c`, outside any transaction: rewrites the oldest day not yet rewritten that ended at or
 * before `before` (epoch ms), in one transaction (a reader sees the day as it was or as it is). Resolves
 * to that day's start (epoch ms), or null when no such day holds items. A day with items that arrive
 * after it was rewritten keeps them where they were loaded (the answers do not mind the order).
 */
export async function compactNextDay(c: DuckDBConnection, before: number): Promise<number | null> {
  await c.run(compactedTableSql);
  const [row] = (
    await c.runAndReadAll(
      `SELECT epoch_ms(date_trunc('day', min(time)))::DOUBLE FROM items
       WHERE time >= coalesce((SELECT max(compacted_before) FROM ${COMPACTED_TABLE}), '-infinity'::TIMESTAMP)`,
    )
  ).getRows();
  const day = epochMs(row?.[0]);
  if (!Number.isFinite(day) || day + DAY_MS > before) return null;
  const end = micros(day + DAY_MS);
  const range = [micros(day), end];
  await c.run('BEGIN TRANSACTION');
  try {
    // A temporary table of the writer's connection (DuckDB spills it to disk if it must).
    await c.run(
      `CREATE OR REPLACE TEMP TABLE ${STAGE} AS SELECT * FROM items WHERE time >= $1 AND time < $2
       ORDER BY type, time, rowid`,
      range,
    );
    await c.run('DELETE FROM items WHERE time >= $1 AND time < $2', range);
    await c.run(`INSERT INTO items SELECT * FROM ${STAGE}`);
    await c.run(`DROP TABLE ${STAGE}`);
    // The day's page sketches in as few rows as they can be (each load had added its own).
    await c.run(markDaysSql('SELECT $1::TIMESTAMP'), [micros(day)]);
    for (const sql of recomputeMarkedSql) await c.run(sql);
    await c.run(`DELETE FROM ${COMPACTED_TABLE}`);
    await c.run(`INSERT INTO ${COMPACTED_TABLE} VALUES ($1)`, [end]);
    await c.run('COMMIT');
  } catch (error) {
    await c.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return day;
}

/** The start of the UTC day of `now` (epoch ms): the days before it are over. */
export const startOfDay = (now: number) => Math.floor(now / DAY_MS) * DAY_MS;
