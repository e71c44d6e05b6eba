import type { TelemetryItem, TelemetryType } from './contracts.js';

/**
 * Accepted items packed for the store (`packItems`): what the ingest worker hands the event loop, one
 * string per run of ordinary items instead of an object per item, in arrival order.
 */
export interface PackedItems {
  count: number;
  /** A string is rows packed by `packRow` and joined by RS; an array holds items that cannot be packed. */
  segments: (string | TelemetryItem[])[];
}

/*
 * Packed rows. The appender costs the event loop about 10 µs an item (a call per value, and its flush),
 * which made it the collector's bottleneck. Instead, the ingest worker packs each item's columns into
 * one string, fields separated by US and rows by RS, with NUL for SQL NULL; the event loop binds one
 * string per group, and one INSERT splits it on DuckDB's side (a pool thread), in the same
 * transaction and COMMIT as before. Items whose text could hold one of those characters (any \u
 * escape in the envelope: control characters, and lone surrogates, which DuckDB's JSON check refuses)
 * or a non-finite number take the appender.
 */
const US = '\u001f';
export const RS = '\u001e';
const NUL = '\u0000';
const hasSeparator = (v: string) => v.includes(NUL) || v.includes(US) || v.includes(RS);

const text = (v: string | null) => (v === null ? NUL : v);
const packableText = (v: string | null) => v === null || !hasSeparator(v);

function packable(i: TelemetryItem): boolean {
  return (
    Number.isFinite(i.time) &&
    (i.durationMs === null || Number.isFinite(i.durationMs)) &&
    !i.envelope.includes('\\u') &&
    !hasSeparator(i.envelope) &&
    packableText(i.type) &&
    packableText(i.iKey) &&
    packableText(i.name) &&
    packableText(i.url) &&
    packableText(i.sessionId) &&
    packableText(i.userId) &&
    packableText(i.authUserId) &&
    packableText(i.operationId) &&
    packableText(i.resultCode) &&
    packableText(i.target) &&
    packableText(i.message) &&
    packableText(i.problemId) &&
    packableText(i.topFrame)
  );
}

/** One item's columns in table order (time as epoch ms). */
function packRow(i: TelemetryItem): string {
  return (
    `${Math.round(i.time)}${US}${i.type}${US}${i.iKey}${US}${text(i.name)}${US}${text(i.url)}` +
    `${US}${text(i.sessionId)}${US}${text(i.userId)}${US}${text(i.authUserId)}${US}${text(i.operationId)}` +
    `${US}${i.durationMs === null ? NUL : String(i.durationMs)}${US}${i.success === null ? NUL : String(i.success)}` +
    `${US}${text(i.resultCode)}${US}${text(i.target)}${US}${text(i.message)}${US}${text(i.problemId)}` +
    `${US}${text(i.topFrame)}${US}${i.envelope}`
  );
}

/** The inverse of packRow, for the appender fallback. */
export function unpackRow(row: string): TelemetryItem {
  const f = row.split(US);
  const str = (k: number) => (f[k] === NUL ? null : (f[k] ?? null));
  return {
    time: Number(f[0]),
    type: f[1] as TelemetryType,
    iKey: f[2] ?? '',
    name: str(3),
    url: str(4),
    sessionId: str(5),
    userId: str(6),
    authUserId: str(7),
    operationId: str(8),
    durationMs: f[9] === NUL ? null : Number(f[9]),
    success: f[10] === NUL ? null : f[10] === 'true',
    resultCode: str(11),
    target: str(12),
    message: str(13),
    problemId: str(14),
    topFrame: str(15),
    envelope: f.slice(16).join(US),
  };
}

/** Packs items for `appendPacked`, keeping their order. */
export function packItems(items: readonly TelemetryItem[]): PackedItems {
  const segments: (string | TelemetryItem[])[] = [];
  let rows: string[] = [];
  let odd: TelemetryItem[] = [];
  for (const item of items) {
    if (packable(item)) {
      if (odd.length > 0) segments.push(odd);
      odd = [];
      rows.push(packRow(item));
    } else {
      if (rows.length > 0) segments.push(rows.join(RS));
      rows = [];
      odd.push(item);
    }
  }
  if (rows.length > 0) segments.push(rows.join(RS));
  if (odd.length > 0) segments.push(odd);
  return { count: items.length, segments };
}

/** Several packed batches as one, joining adjacent runs of rows. */
export function mergePacked(batches: readonly PackedItems[]): PackedItems {
  const segments: (string | TelemetryItem[])[] = [];
  let rows: string[] = [];
  let count = 0;
  for (const batch of batches) {
    count += batch.count;
    for (const segment of batch.segments) {
      if (typeof segment === 'string') rows.push(segment);
      else {
        if (rows.length > 0) segments.push(rows.join(RS));
        rows = [];
        segments.push(segment);
      }
    }
  }
  if (rows.length > 0) segments.push(rows.join(RS));
  return { count, segments };
}
