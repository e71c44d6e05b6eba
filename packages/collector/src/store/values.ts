import { DuckDBTimestampValue } from '@duckdb/node-api';

/*
 * Times and row values as every query reads them: the store's own (annotations.ts) and the dashboard's
 * (analytics/), which take them from here through analytics/sql.ts.
 */

export const ts = (ms: number) => new DuckDBTimestampValue(BigInt(Math.round(ms)) * 1000n);
export const iso = (ms: number) => new Date(ms).toISOString();
/*
 * Reading a row's values, the same for both back-ends (DuckDB's rows, and Log Analytics' JSON, which gives
 * an empty string where the store has NULL and may give a long as a string): one answer per question.
 */
export const num = (v: unknown): number =>
  typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : typeof v === 'string' ? Number(v) || 0 : 0;
export const numOrNull = (v: unknown): number | null =>
  v === null || v === undefined || v === '' ? null : num(v);
export const strOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** A time as epoch ms: the store's (epoch ms) or Log Analytics' (a datetime, parsed to a Date or a string). */
export const timeMs = (v: unknown): number =>
  v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : num(v);
