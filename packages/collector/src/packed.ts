import type { TelemetryItem, TelemetryType } from './contracts.js';

/**
 * Accepted items packed for the store (`packItems`): what the ingest worker hands the event loop, one
 * string per run of ordinary items instead of an object per item, in arrival order.
 */
export interface PackedItems {
  count: number;
  /** Bytes are rows packed by `packRow`, joined by RS, in UTF-8; an array holds items that cannot be packed. */
  segments: (Uint8Array | TelemetryItem[])[];
}

/*
 * Packed rows. The appender costs the event loop about 10 µs an item (a call per value, and its flush),
 * which made it the collector's bottleneck. Instead, the ingest worker packs each item's columns into
 * one string, fields separated by US and rows by RS, with NUL for SQL NULL, encoded as UTF-8; the
 * event loop writes those bytes to the journal as they are, and the store binds them as one value per
 * load, which one INSERT splits on DuckDB's side (a pool thread). Items whose text could hold one of those characters (any \u
 * escape in the envelope: control characters, and lone surrogates, which DuckDB's JSON check refuses)
 * or a non-finite number take the appender.
 */
const US = '\u001f';
export const RS = '\u001e';
const RS_BYTE = new Uint8Array([0x1e]);
const encoder = new TextEncoder();
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

/** Packed rows back as items, for the appender fallback. */
export function unpackRows(rows: Uint8Array): TelemetryItem[] {
  return Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength).toString('utf8').split(RS).map(unpackRow);
}

/** The inverse of packRow. */
function unpackRow(row: string): TelemetryItem {
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

/**
 * Packs items for the store, keeping their order. Each run of rows is a Uint8Array of its own (not a
 * slice of Buffer's shared pool), so it can be transferred from the ingest worker without a copy.
 */
export function packItems(items: readonly TelemetryItem[]): PackedItems {
  const segments: (Uint8Array | TelemetryItem[])[] = [];
  let rows: string[] = [];
  let odd: TelemetryItem[] = [];
  for (const item of items) {
    if (packable(item)) {
      if (odd.length > 0) segments.push(odd);
      odd = [];
      rows.push(packRow(item));
    } else {
      if (rows.length > 0) segments.push(encoder.encode(rows.join(RS)));
      rows = [];
      odd.push(item);
    }
  }
  if (rows.length > 0) segments.push(encoder.encode(rows.join(RS)));
  if (odd.length > 0) segments.push(odd);
  return { count: items.length, segments };
}

/**
 * Several packed batches as one, in order, joining adjacent runs of rows (RS between them) into runs of
 * up to `maxRunBytes` each, and adjacent arrays of odd items into one.
 */
export function mergePacked(batches: readonly PackedItems[], maxRunBytes = Infinity): PackedItems {
  const segments: (Uint8Array | TelemetryItem[])[] = [];
  let run: Uint8Array[] = [];
  let runBytes = 0;
  let count = 0;
  const endRun = () => {
    if (run.length === 1 && run[0]) segments.push(run[0]);
    else if (run.length > 1)
      segments.push(Buffer.concat(run.flatMap((r, i) => (i === 0 ? [r] : [RS_BYTE, r]))));
    run = [];
    runBytes = 0;
  };
  for (const batch of batches) {
    count += batch.count;
    for (const segment of batch.segments) {
      if (segment instanceof Uint8Array) {
        if (run.length > 0 && runBytes + segment.byteLength > maxRunBytes) endRun();
        run.push(segment);
        runBytes += segment.byteLength + 1;
        continue;
      }
      endRun();
      const last = segments.at(-1);
      if (Array.isArray(last)) segments[segments.length - 1] = [...last, ...segment];
      else segments.push(segment);
    }
  }
  endRun();
  return { count, segments };
}

/** Several packed batches as one, in order, sharing their bytes (no copy). */
export function listPacked(batches: readonly PackedItems[]): PackedItems {
  return { count: batches.reduce((n, b) => n + b.count, 0), segments: batches.flatMap((b) => b.segments) };
}

/** The transferable parts of packed items (for postMessage's transfer list). */
export function packedBuffers(packed: PackedItems): ArrayBuffer[] {
  return packed.segments.flatMap((s) => (s instanceof Uint8Array ? [s.buffer as ArrayBuffer] : []));
}
