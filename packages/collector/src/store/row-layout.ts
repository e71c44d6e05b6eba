import { rowLayout } from '../protocol/item-row.js';

/**
 * Columns the store derives from a row's own `type` and `envelope` when it loads it: neither packed in
 * the journal nor part of TelemetryItem. A metric's value and its `page` property (the web vitals, ADR
 * 0034), read from the envelope once at load, so the Experience query reads no JSON. `try`: an envelope
 * DuckDB's JSON reader refuses (a lone surrogate escape) gets NULL, never a failed load. After the row's
 * columns, in this order; a store made before them gets them at open (`addDerivedColumns`, store.ts).
 */
export const derivedColumns = [
  {
    column: 'metric_value',
    sql: 'DOUBLE',
    type: 'metric',
    json: '$.data.baseData.metrics[0].value',
    cast: 'DOUBLE',
    value: null,
  },
  {
    column: 'metric_page',
    sql: 'VARCHAR',
    type: 'metric',
    json: '$.data.baseData.properties.page',
    cast: null,
    value: null,
  },
  // The same page as an integer (DuckDB's hash of its text, '' for none), for the segmented web vitals,
  // which group millions of vitals by page: reading and grouping the text was a fourth of that query
  // (docs/performance/usage-history.md, section 17). Read through metricPageKeySql; store.ts computes it again if
  // DuckDB's hash changes.
  {
    column: 'metric_page_key',
    sql: 'UBIGINT',
    type: 'metric',
    json: '$.data.baseData.properties.page',
    cast: null,
    value: (text: string) => metricPageKeySql(text),
  },
  // The first exception's stack, the exceptions list's sample: read from the envelope, it cost
  // more than the rest of that query, and more again once the envelope is compressed with zstd.
  {
    column: 'stack',
    sql: 'VARCHAR',
    type: 'exception',
    json: '$.data.baseData.exceptions[0].stack',
    cast: null,
    value: null,
  },
  // The referring site of a page view (ADR 0073): only the host of `refUri` (the browser SDK
  // puts it in the properties), lower-cased; never its path or query, which may carry tokens or personal
  // data. '' when there is none, or it is the page's own host (a move within the site).
  {
    column: 'referrer',
    sql: 'VARCHAR',
    type: 'pageview',
    json: '$.data.baseData.properties.refUri',
    cast: null,
    // (Each host's regular expression once: NULL when none or the page's own, then ''.)
    value: (text: string) => `coalesce(nullif(${hostSql(text)}, coalesce(${hostSql('url')}, '')), '')`,
  },
  // A page view's or custom event's type and name as one integer (DuckDB's hash), so a query for a few
  // named ones (the funnel's steps) filters an integer column instead of comparing text on every row, in a
  // third of the scan's time (docs/performance/usage-history.md, section 15).
  // Read through nameKeySql; store.ts computes it again if DuckDB's hash changes.
  {
    column: 'name_key',
    sql: 'UBIGINT',
    type: null,
    json: null,
    cast: null,
    value: () => NAME_KEY_SQL,
  },
  // A page view's or custom event's anonymous user and session as integers (ADR 0077), for the queries
  // that count distinct users or join sessions over millions of them (the segmented Pages panel, the
  // funnel): an integer groups and joins in less time than its text, a sixth less for 1.9 M distinct
  // pairs (docs/performance/usage-history.md, section 16). Exact but for two ids sharing a 64-bit hash: for a
  // million distinct ids a chance of 3 in 100 million. Only those types, as name_key: random hashes do not
  // compress, and no other query needs them. Read through idKeySql; store.ts computes them again, with
  // name_key, if DuckDB's hash changes.
  {
    column: 'user_key',
    sql: 'UBIGINT',
    type: null,
    json: null,
    cast: null,
    value: () => idKeySql('user', 'user_id'),
  },
  {
    column: 'session_key',
    sql: 'UBIGINT',
    type: null,
    json: null,
    cast: null,
    value: () => idKeySql('session', 'session_id'),
  },
  // Whether a signed-in user sent the item: the auth segment's test, on a boolean instead of whether a
  // text column is NULL, which reads the text (a third of the time: docs/performance/usage-history.md,
  // section 16).
  {
    column: 'signed_in',
    sql: 'BOOLEAN',
    type: null,
    json: null,
    cast: null,
    value: () => SIGNED_IN_SQL,
  },
  // What the sign-in health panel reads of Gatehouse's own events and the server's refusal metric
  // (ADR 0109): a custom event's outcome, reason and step properties and its durationMs measurement, a
  // metric's reason; read from the envelope once at load, so that panel reads no JSON. At most 64
  // characters: these are codes (a longer value is not one of them, and is kept whole in the envelope).
  ...(['outcome', 'reason', 'step'] as const).map((property) => ({
    column: `event_${property}` as const,
    sql: 'VARCHAR',
    type: 'event',
    json: `$.data.baseData.properties.${property}` as const,
    cast: null,
    value: (text: string) => `left(${text}, 64)`,
  })),
  {
    column: 'event_duration_ms',
    sql: 'DOUBLE',
    type: 'event',
    json: '$.data.baseData.measurements.durationMs',
    cast: 'DOUBLE',
    value: null,
  },
  {
    column: 'metric_reason',
    sql: 'VARCHAR',
    type: 'metric',
    json: '$.data.baseData.properties.reason',
    cast: null,
    value: (text: string) => `left(${text}, 64)`,
  },
] as const;

/** The types with a name_key, user_key and session_key. */
const KEYED_TYPES = `type IN ('pageview', 'event')`;

/**
 * The key of the id in `column` of `kind`, 'user' or 'session', from the columns `type` and `column` in
 * scope; NULL for another type or no id.
 */
export const idKeySql = (kind: 'user' | 'session', column: string) =>
  `CASE WHEN ${KEYED_TYPES} AND ${column} IS NOT NULL THEN hash('${kind}', ${column}) END`;

/** signed_in's value, from the column `auth_user_id` in scope (the hourly rollup's too). */
export const SIGNED_IN_SQL = 'auth_user_id IS NOT NULL';

/** A page view's or custom event's key (name_key) of its `type` and `name` (SQL expressions). */
export const nameKeySql = (type: string, name: string) => `hash(${type}, ${name})`;

/** A web vital's page's key (metric_page_key) of its page (an SQL expression, NULL for none). */
export const metricPageKeySql = (page: string) => `hash('page', coalesce(${page}, ''))`;

/** name_key's value, from the columns `type` and `name` in scope. */
export const NAME_KEY_SQL = `CASE WHEN ${KEYED_TYPES} THEN ${nameKeySql('type', 'name')} END`;

/**
 * The lower-cased host of the absolute URL `text` (an SQL expression), without user info or port; NULL
 * when it has none (a relative or empty one). RE2's syntax (DuckDB's regexp_extract).
 */
function hostSql(text: string): string {
  return `nullif(lower(regexp_extract(${text}, '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^\\]/?#]*\\]|[^:/?#]*)', 1)), '')`;
}

/** The text at a JSON path of the envelope (an SQL expression), from the column `envelope` in scope. */
export const fromEnvelope = (json: string) => `try(json_extract_string(envelope, '${json}'))`;

/**
 * A derived column's value, from the columns `type` and `envelope` (or `name`) in scope; `read` gives
 * the text at a JSON path of the envelope for items of a type (the load has most of them packed:
 * load.ts).
 */
export function derivedSql(
  column: (typeof derivedColumns)[number],
  read: (json: string, type: string) => string = fromEnvelope,
): string {
  if (column.json === null) return column.value();
  const text = read(column.json, column.type);
  const value = column.value
    ? column.value(text)
    : column.cast
      ? `TRY_CAST(${text} AS ${column.cast})`
      : text;
  return `CASE WHEN type = '${column.type}' THEN ${value} END`;
}

/** Every column of `items`, in the table's order for a store made now. */
export const itemColumns = [...rowLayout, ...derivedColumns].map((c) => c.column);

/**
 * The `items` table. In a store made now the envelope is compressed with zstd (ADR 0070): a third of the
 * bytes of DuckDB's automatic choice (FSST) for this JSON text. That needs DuckDB's storage format 1.2 or
 * later; a store file made in an older format keeps its table as it was (forcing zstd there would fall
 * back to no compression at all).
 */
export function itemsTableSql(compressEnvelope: boolean): string {
  const columns = [...rowLayout, ...derivedColumns].map(
    (c) =>
      `${c.column} ${c.sql}${compressEnvelope && c.column === 'envelope' ? ' USING COMPRESSION zstd' : ''}`,
  );
  return `CREATE TABLE IF NOT EXISTS items (${columns.join(', ')})`;
}
