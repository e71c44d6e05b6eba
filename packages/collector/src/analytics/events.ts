import type { DuckDBValue } from '@duckdb/node-api';
import type { CustomEvents } from '@gatehouse/api-contract';
import {
  describePeriod,
  LIST_LIMIT,
  num,
  period,
  segmentSql,
  ts,
  type UsageOptions,
  type UsageReader,
} from './sql.js';

// Typed columns only (name, user_id, session_id), so the envelope is never read.
const eventsSql = (seg: string) => `SELECT coalesce(name, '') AS name,
  count(*)::DOUBLE AS n,
  count(DISTINCT user_id)::DOUBLE AS users,
  count(DISTINCT session_id)::DOUBLE AS sessions
FROM items WHERE type = 'event' AND time >= $1 AND time < $2${seg}
GROUP BY 1 ORDER BY n DESC, name LIMIT ${LIST_LIMIT}`;

/** The custom events (`telemetry.trackEvent`) of the period: count, users and sessions per name. */
export async function queryCustomEvents(
  reader: Pick<UsageReader, 'read'>,
  options: UsageOptions = {},
): Promise<CustomEvents> {
  const p = period(options);
  const values: DuckDBValue[] = [ts(p.from), ts(p.to)];
  const rows = await reader.read(eventsSql(segmentSql(options, values)), values);
  return {
    ...describePeriod(p),
    events: rows.map((r) => ({
      name: String(r.name),
      count: num(r.n),
      users: num(r.users),
      sessions: num(r.sessions),
    })),
  };
}
