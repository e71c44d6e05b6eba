import type { DuckDBConnection } from '@duckdb/node-api';

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

/** The columns the rollup groups by, besides the hour; the segment's columns among them (segmentSql). */
const KEYS = ['user_id', 'auth_user_id', 'session_id', 'browser', 'device_type', 'roles'] as const;

export const rollupTableSql = `CREATE TABLE IF NOT EXISTS ${ROLLUP_TABLE} (hour TIMESTAMP NOT NULL, ${KEYS.map(
  (k) => `${k} VARCHAR`,
).join(', ')}, items BIGINT NOT NULL, page_views BIGINT NOT NULL, exceptions BIGINT NOT NULL,
  failed_calls BIGINT NOT NULL)`;

/** Adds the rollup rows of the items in `source` (a table with the items' columns) matching `where`. */
export const rollupInsertSql = (source: string, where = '') => `INSERT INTO ${ROLLUP_TABLE}
SELECT date_trunc('hour', time) AS hour, ${KEYS.join(', ')},
  count(*), count(*) FILTER (WHERE type = 'pageview'), count(*) FILTER (WHERE type = 'exception'),
  count(*) FILTER (WHERE ${FAILED_CALL})
FROM ${source} ${where} GROUP BY ALL`;

/**
 * A store made before the rollup gets it, computed from the items it holds, in one transaction: the
 * table's absence is the mark, so a crash leaves either nothing (done again at the next open) or all.
 */
export async function addRollup(writer: DuckDBConnection): Promise<void> {
  const exists = (
    await writer.runAndReadAll(
      `SELECT count(*) FROM information_schema.tables WHERE table_name = '${ROLLUP_TABLE}'`,
    )
  ).getRows()[0]?.[0];
  if (Number(exists) > 0) return;
  await writer.run('BEGIN TRANSACTION');
  try {
    await writer.run(rollupTableSql);
    await writer.run(rollupInsertSql('items'));
    await writer.run('COMMIT');
  } catch (error) {
    await writer.run('ROLLBACK');
    throw error;
  }
}

/**
 * In a transaction on `c`, after items before `before` (a bound parameter $1, TIMESTAMP) are deleted:
 * the rollup's hours before it go, and the hour it cuts is recomputed from the items it still holds.
 */
export const pruneRollupSql = [
  `DELETE FROM ${ROLLUP_TABLE} WHERE hour <= date_trunc('hour', $1::TIMESTAMP)`,
  rollupInsertSql(
    'items',
    `WHERE time >= date_trunc('hour', $1::TIMESTAMP) AND time < date_trunc('hour', $1::TIMESTAMP) + INTERVAL 1 HOUR`,
  ),
];

/** Deletes one user's rollup rows, as an erasure deletes their items (bound parameter $1). */
export const eraseRollupSql = `DELETE FROM ${ROLLUP_TABLE} WHERE auth_user_id = $1 OR user_id = $1`;
