import { rowLayout, type TelemetryItem } from './item-row.js';
import { itemKey } from './item-identity.js';
import type { EnvelopeValues } from './envelope-values.js';

/**
 * Accepted items packed for the store (`packItems`): what the ingest worker hands the event loop, one
 * string of rows instead of an object per item, in arrival order.
 */
export interface PackedItems {
  count: number;
  /** Runs of rows packed by `packRow` (each row followed by RS), in order. */
  chunks: string[];
  /** Each item's identity (item-identity.ts), in the same order: what the store deduplicates by. */
  keys: number[];
}

/*
 * Packed rows. Each item's columns in table order, separated by US, with NUL for SQL NULL; each row ends
 * with RS. The event loop writes them to the journal as they are, and DuckDB reads the journal file and
 * splits it with one INSERT (store.ts), so no value of an item crosses into DuckDB one at a time.
 *
 * A row whose text holds one of those control characters (or FS, or GS, which marks the journal's
 * trailers) starts with FS, and in it ESC, NUL, FS, GS, RS and US are written as ESC followed by
 * e, 0, 1, 2, 3 and 4; the INSERT undoes that for such rows only. Items from JSON can hold them only
 * through \u escapes, so nearly every row is written as it is.
 */
export const US = '\u001f';
export const RS = '\u001e';
export const GS = '\u001d';
export const FS = '\u001c';
/** The same, as bytes of the UTF-8 journal. */
export const RS_BYTE = RS.charCodeAt(0);
export const GS_BYTE = GS.charCodeAt(0);
export const FS_BYTE = FS.charCodeAt(0);
const ESC = '\u001b';
const NUL = '\u0000';

const special = (v: string | null) =>
  v !== null && (v.includes(NUL) || v.includes(US) || v.includes(RS) || v.includes(GS) || v.includes(FS));
const escapes: Record<string, string> = {
  [ESC]: `${ESC}e`,
  [NUL]: `${ESC}0`,
  [FS]: `${ESC}1`,
  [GS]: `${ESC}2`,
  [RS]: `${ESC}3`,
  [US]: `${ESC}4`,
};
// eslint-disable-next-line no-control-regex -- these control characters are the point
const escapable = /[\u0000\u001b-\u001f]/g;
const escape = (v: string) => v.replace(escapable, (c) => escapes[c] ?? c);
/** SQL that undoes `escape` for the VARCHAR expression `x`; ESC + e last, so nothing is undone twice. */
export function unescapeSql(x: string): string {
  let sql = x;
  for (const [c, code] of Object.entries(escapes)) {
    if (c !== ESC) sql = `replace(${sql}, chr(27) || '${code.slice(1)}', chr(${c.charCodeAt(0)}))`;
  }
  return `replace(${sql}, chr(27) || 'e', chr(27))`;
}

/** The largest |time| DuckDB's TIMESTAMP holds, in ms (about ±290,000 years). */
const MAX_TIME_MS = 9_000_000_000_000_000;

const fields = rowLayout.map((c) => c.field);
const kinds = rowLayout.map((c) => c.kind);
/** The fields that hold strings, those the packing's characters could be in. */
const stringFields = rowLayout
  .filter((c) => c.kind !== 'time' && c.kind !== 'number' && c.kind !== 'boolean')
  .map((c) => c.field);

/**
 * One item's columns in table order (rowLayout; time as epoch ms), ending with RS. `fromJson`: the
 * item is validateEnvelope's, whose columns are decoded from `envelope`, JSON text (as received, or
 * re-serialised); JSON holds control characters only as \u escapes, so without one in the text no
 * column holds any, and the checks are skipped.
 */
function packRow(i: TelemetryItem, fromJson: boolean, values?: EnvelopeValues): string {
  if (!Number.isFinite(i.time) || Math.abs(i.time) > MAX_TIME_MS) {
    throw new TypeError(`Item time ${i.time} is not a time the store can hold.`);
  }
  const escaped =
    (!fromJson || i.envelope.includes('\\u')) &&
    (stringFields.some((f) => special(i[f])) || (values?.some(special) ?? false));
  let row = escaped ? FS : '';
  for (let k = 0; k < fields.length; k++) {
    const v = i[fields[k] as keyof TelemetryItem];
    if (k > 0) row += US;
    if (v === null) row += NUL;
    else if (kinds[k] === 'time') row += Math.round(v as number);
    else if (typeof v !== 'string') row += Object.is(v, -0) ? '-0' : String(v);
    else row += escaped ? escape(v) : v;
  }
  // The envelope's values after the row's own columns (envelope-values.ts), all of them or none.
  for (const v of values ?? []) row += US + (v === null ? NUL : escaped ? escape(v) : v);
  return row + RS;
}

/**
 * Packs items for the store, keeping their order; `fromJson` for validateEnvelope's items (see packRow),
 * `values` each item's envelope values where they were read (readEnvelopeValues), by index. Throws
 * (before anything is stored) on a time out of range.
 */
export function packItems(
  items: readonly TelemetryItem[],
  fromJson = false,
  values: readonly (EnvelopeValues | undefined)[] = [],
): PackedItems {
  // Joined once rather than built with +=: a string of thousands of concatenated pieces is flattened
  // when the worker posts it, which cost ~3 µs an item (2.x batches of 250, --cpu-prof of the worker).
  const rows: string[] = [];
  const keys: number[] = [];
  for (const [index, item] of items.entries()) {
    rows.push(packRow(item, fromJson, values[index]));
    keys.push(itemKey(item.envelope));
  }
  return { count: items.length, chunks: rows.length > 0 ? [rows.join('')] : [], keys };
}

/**
 * Only the items of `packed` whose index `keep` accepts, in order (their rows split apart at RS, which
 * never occurs inside a packed row).
 */
export function selectPacked(packed: PackedItems, keep: (index: number) => boolean): PackedItems {
  const rows = packed.chunks.join('').split(RS);
  let kept = '';
  const keys: number[] = [];
  packed.keys.forEach((key, index) => {
    if (!keep(index)) return;
    kept += rows[index] + RS;
    keys.push(key);
  });
  return { count: keys.length, chunks: kept ? [kept] : [], keys };
}

/**
 * Each packed item's event time (epoch ms), in order: a row's first column, digits that are never
 * escaped (after the FS of an escaped row).
 */
export function packedTimes(packed: PackedItems): number[] {
  const times: number[] = [];
  for (const chunk of packed.chunks) {
    for (let start = 0, end = chunk.indexOf(RS); end >= 0; start = end + 1, end = chunk.indexOf(RS, start)) {
      const from = chunk.startsWith(FS, start) ? start + 1 : start;
      times.push(Number(chunk.slice(from, chunk.indexOf(US, from))));
    }
  }
  return times;
}

/** UTF-8 bytes of the packed rows, as the journal writes them. */
export function packedBytes(packed: PackedItems): number {
  return packed.chunks.reduce((bytes, chunk) => bytes + Buffer.byteLength(chunk), 0);
}

/** UTF-8 bytes of each packed row (its RS included), in order. */
export function rowBytes(packed: PackedItems): number[] {
  const rows = packed.chunks.join('').split(RS);
  return packed.keys.map((_, index) => Buffer.byteLength(rows[index] ?? '') + 1);
}

/** Several packed batches as one, in order. */
export function listPacked(batches: readonly PackedItems[]): PackedItems {
  return {
    count: batches.reduce((n, b) => n + b.count, 0),
    chunks: batches.flatMap((b) => b.chunks),
    keys: batches.flatMap((b) => b.keys),
  };
}
