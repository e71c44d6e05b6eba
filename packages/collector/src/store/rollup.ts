import type { DuckDBConnection } from '@duckdb/node-api';
import { SIGNED_IN_SQL } from './row-layout.js';

/*
 * The hourly rollup (ADR 0071): beside the items, one row per loaded (hour, user, signed-in user,
 * session, browser, device type, roles) group with its counts, so the overview and the hourly, 6-hour
 * and daily charts read a few hundred thousand rows instead of every item of 30 days. Every key the
 * dashboard counts distinct values of, or filters segments on, is a key here, so the answers from it are
 * exact: a distinct count over the groups is the distinct count over the items, and sums add up.
 *
 * A group may appear in several rows (each load adds its own; a session spans loads): every query sums
 * and counts distinct values, which such repeats do not change, so no load ever updates a row.
 * Deletes keep it exact: an erasure deletes the user's rows here too (keyed by both ids); a prune deletes
 * the hours before its bound and recomputes the hour it cuts, in the same transaction.
 */

export const ROLLUP_TABLE = 'usage_hourly';

/** A failed call, as the rollup counts it and the usage queries over the items do (analytics/usage.ts). */
export const FAILED_CALL = `type = 'dependency' AND success = false`;

/**
 * The columns the rollup groups by, besides the hour; the segment's columns among them (segmentSql: the
 * referrer's condition is on session_id). `os` came later (ADR 0073): a rollup made before it gets the
 * column at open, NULL in its rows, as the items of then have (their User-Agent is gone).
 */
const KEYS = ['user_id', 'auth_user_id', 'session_id', 'browser', 'device_type', 'roles', 'os'] as const;
const COUNTS = ['items', 'page_views', 'exceptions', 'failed_calls'] as const;

/**
 * `signed_in` (ADR 0077): whether `auth_user_id` is set, as the items have it (row-layout.ts), so the
 * auth segment's condition (segmentSql) reads the same boolean here. A rollup made before it gets it at
 * open, from its auth_user_id.
 */
export const rollupTableSql = `CREATE TABLE IF NOT EXISTS ${ROLLUP_TABLE} (hour TIMESTAMP NOT NULL, ${KEYS.map(
  (k) => `${k} VARCHAR`,
).join(', ')}, items BIGINT NOT NULL, page_views BIGINT NOT NULL, exceptions BIGINT NOT NULL,
  failed_calls BIGINT NOT NULL, signed_in BOOLEAN)`;

/** Adds the rollup rows of the items in `source` (a table with the items' columns) matching `where`. */
export const rollupInsertSql = (source: string, where = '') => `INSERT INTO ${ROLLUP_TABLE}
  (hour, ${KEYS.join(', ')}, signed_in, ${COUNTS.join(', ')})
SELECT date_trunc('hour', time) AS hour, ${KEYS.join(', ')}, ${SIGNED_IN_SQL},
  count(*), count(*) FILTER (WHERE type = 'pageview'), count(*) FILTER (WHERE type = 'exception'),
  count(*) FILTER (WHERE ${FAILED_CALL})
FROM ${source} ${where} GROUP BY ALL`;

/*
 * The sessions' sources (ADR 0073): beside the rollup, the page views that came from another
 * site (a `referrer` host), about one a session, so a referrer segment (segmentSql) finds its sessions
 * among a few thousand rows instead of every page view: measured 75-100 ms a look-up over the items of
 * 1,000,000, several times per query (docs/performance/usage-history.md, section 7). Kept as the rollup is: added by each
 * load, an erasure deletes a user's, a prune the ones before its bound.
 */
export const SOURCES_TABLE = 'session_sources';
const sourcesTableSql = `CREATE TABLE IF NOT EXISTS ${SOURCES_TABLE} (time TIMESTAMP NOT NULL,
  session_id VARCHAR NOT NULL, user_id VARCHAR, auth_user_id VARCHAR, referrer VARCHAR NOT NULL)`;
/** Adds the sources among the items in `source` (a table with the items' columns). */
export const sourcesInsertSql = (source: string) => `INSERT INTO ${SOURCES_TABLE}
SELECT time, session_id, user_id, auth_user_id, referrer FROM ${source}
WHERE type = 'pageview' AND referrer <> '' AND session_id IS NOT NULL`;

/** Whether the store has `table`. */
export const tableExists = async (writer: DuckDBConnection, table: string) =>
  Number(
    (
      await writer.runAndReadAll(
        `SELECT count(*) FROM information_schema.tables WHERE table_name = '${table}'`,
      )
    ).getRows()[0]?.[0],
  ) > 0;

/**
 * Whether the store's one-row `table` holds what `canarySql` (a SELECT of one `canary` column: DuckDB's
 * hash of a fixed text) gives now: false when the table is missing or a DuckDB that hashes otherwise
 * wrote it. What the store keeps by DuckDB's hash (the daily sketches, the items' name_key) checks it.
 */
export const canaryHolds = async (writer: DuckDBConnection, table: string, canarySql: string) =>
  (await tableExists(writer, table)) &&
  Number(
    (
      await writer.runAndReadAll(`SELECT count(*) FROM ${table} WHERE canary = (${canarySql})`)
    ).getRows()[0]?.[0],
  ) > 0;

/** Runs `statements` in one transaction on `writer`: all of them, or (on an error) none. */
export async function inTransaction(writer: DuckDBConnection, statements: readonly string[]): Promise<void> {
  await writer.run('BEGIN TRANSACTION');
  try {
    for (const sql of statements) await writer.run(sql);
    await writer.run('COMMIT');
  } catch (error) {
    await writer.run('ROLLBACK');
    throw error;
  }
}

/** A column a table may lack in a store made before it: its SQL type, and what its rows then get (or NULL). */
export interface AddedColumn {
  column: string;
  sql: string;
  fill: string | null;
}

/**
 * A store's `table` made before some of `columns` gets them, filled from the rows it holds, once: the
 * column's absence is the mark. One transaction, so a crash leaves either nothing or all of it.
 */
export async function addMissingColumns(
  writer: DuckDBConnection,
  table: string,
  columns: readonly AddedColumn[],
): Promise<void> {
  const existing = new Set(
    (
      await writer.runAndReadAll(
        `SELECT column_name FROM information_schema.columns WHERE table_name = '${table}'`,
      )
    )
      .getRows()
      .map(([name]) => String(name)),
  );
  const missing = columns.filter((c) => !existing.has(c.column));
  if (missing.length === 0) return;
  const fills = missing.filter((c) => c.fill !== null);
  await inTransaction(writer, [
    ...missing.map((c) => `ALTER TABLE ${table} ADD COLUMN ${c.column} ${c.sql}`),
    ...(fills.length > 0
      ? [`UPDATE ${table} SET ${fills.map((c) => `${c.column} = ${c.fill}`).join(', ')}`]
      : []),
  ]);
}

/**
 * A store made before the rollup gets it, computed from the items it holds, in one transaction: the
 * table's absence is the mark, so a crash leaves either nothing (done again at the next open) or all.
 */
export async function addRollup(writer: DuckDBConnection): Promise<void> {
  if (!(await tableExists(writer, SOURCES_TABLE)))
    await inTransaction(writer, [sourcesTableSql, sourcesInsertSql('items')]);
  if (await tableExists(writer, ROLLUP_TABLE)) {
    // A key added later (os) is NULL in the rows of then, as in their items; signed_in follows auth_user_id.
    await addMissingColumns(writer, ROLLUP_TABLE, [
      ...KEYS.map((column) => ({ column, sql: 'VARCHAR', fill: null })),
      { column: 'signed_in', sql: 'BOOLEAN', fill: SIGNED_IN_SQL },
    ]);
    return;
  }
  await inTransaction(writer, [rollupTableSql, rollupInsertSql('items')]);
}

/**
 * In a transaction on `c`, after items before `before` (a bound parameter $1, TIMESTAMP) are deleted:
 * the rollup's hours before it go, and the hour it cuts is recomputed from the items it still holds.
 */
export const pruneRollupSql = [
  `DELETE FROM ${SOURCES_TABLE} WHERE time < $1::TIMESTAMP`,
  `DELETE FROM ${ROLLUP_TABLE} WHERE hour <= date_trunc('hour', $1::TIMESTAMP)`,
  rollupInsertSql(
    'items',
    `WHERE time >= date_trunc('hour', $1::TIMESTAMP) AND time < date_trunc('hour', $1::TIMESTAMP) + INTERVAL 1 HOUR`,
  ),
];

/** Deletes one user's rollup rows and sources, as an erasure deletes their items (bound parameter $1). */
export const eraseRollupSql = [ROLLUP_TABLE, SOURCES_TABLE].map(
  (table) => `DELETE FROM ${table} WHERE auth_user_id = $1 OR user_id = $1`,
);
