import type { TelemetryType } from './telemetry-types.js';

/**
 * The row of the store's `items` table, defined once: each item field, its column and SQL type, and
 * what kind of value it holds. TelemetryItem, the packed rows of the journal (packed.ts), the CREATE
 * TABLE (store/row-layout.ts) and the INSERT that loads them (store/load.ts) are all derived from this
 * list, in order. It sits below the store because validation (envelopes.ts) makes these items and the
 * ingest packs them.
 */
export const rowLayout = [
  { field: 'time', column: 'time', kind: 'time', sql: 'TIMESTAMP NOT NULL' }, // envelope time, UTC
  { field: 'type', column: 'type', kind: 'type', sql: 'VARCHAR NOT NULL' }, // one of telemetryTypes
  { field: 'iKey', column: 'ikey', kind: 'string', sql: 'VARCHAR NOT NULL' },
  { field: 'name', column: 'name', kind: 'text', sql: 'VARCHAR' }, // baseData.name; first exception's type; first metric's name
  { field: 'url', column: 'url', kind: 'text', sql: 'VARCHAR' },
  { field: 'sessionId', column: 'session_id', kind: 'text', sql: 'VARCHAR' }, // tags ai.session.id
  { field: 'userId', column: 'user_id', kind: 'text', sql: 'VARCHAR' }, // tags ai.user.id
  { field: 'authUserId', column: 'auth_user_id', kind: 'text', sql: 'VARCHAR' }, // tags ai.user.authUserId
  { field: 'operationId', column: 'operation_id', kind: 'text', sql: 'VARCHAR' }, // tags ai.operation.id
  { field: 'durationMs', column: 'duration_ms', kind: 'number', sql: 'DOUBLE' },
  { field: 'success', column: 'success', kind: 'boolean', sql: 'BOOLEAN' },
  { field: 'resultCode', column: 'result_code', kind: 'text', sql: 'VARCHAR' },
  { field: 'target', column: 'target', kind: 'text', sql: 'VARCHAR' }, // dependency target
  { field: 'message', column: 'message', kind: 'text', sql: 'VARCHAR' }, // trace message; first exception's message
  { field: 'problemId', column: 'problem_id', kind: 'text', sql: 'VARCHAR' },
  { field: 'topFrame', column: 'top_frame', kind: 'text', sql: 'VARCHAR' }, // first exception's top stack frame
  // The envelope's JSON text as received, or its compact form when that is over 64 KB (ADR 0015).
  { field: 'envelope', column: 'envelope', kind: 'string', sql: 'VARCHAR NOT NULL' },
  // Segments (added after the envelope, so journal rows written before them load with NULLs here):
  { field: 'browser', column: 'browser', kind: 'text', sql: 'VARCHAR' }, // tags ai.device.browser, else the request's User-Agent
  { field: 'deviceType', column: 'device_type', kind: 'text', sql: 'VARCHAR' }, // desktop, mobile or tablet, from the request
  { field: 'roles', column: 'roles', kind: 'text', sql: 'VARCHAR' }, // the app's `roles` property: comma-separated
  { field: 'os', column: 'os', kind: 'text', sql: 'VARCHAR' }, // operating system, from the request (ADR 0073)
] as const;

export type RowColumn = (typeof rowLayout)[number];

/** What each kind holds in JS: `text` columns may be NULL, `string` ones may not. */
interface KindValue {
  time: number;
  type: TelemetryType;
  string: string;
  text: string | null;
  number: number | null;
  boolean: boolean | null;
}

/**
 * One accepted envelope: the columns the dashboard queries, and the envelope itself as JSON (anything
 * else, such as severity or the operation name, is read from it with DuckDB's JSON functions). `time`
 * is epoch milliseconds.
 */
export type TelemetryItem = { [C in RowColumn as C['field']]: KindValue[C['kind']] };
