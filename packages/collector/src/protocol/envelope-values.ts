import type { TelemetryType } from './telemetry-types.js';
import { ownValue } from '../own-property.js';

/**
 * Values of an envelope that the store derives columns from (store/row-layout.ts): each its JSON path, as
 * DuckDB reads it from the stored envelope, and the item types that have it. Where the envelope is
 * parsed anyway (the ingest worker), `envelopeValues` reads them and `packItems` writes them after the
 * row's own columns, so the load does not read the envelope's JSON again: that was a fifth of a load's
 * time (ADR 0139). A row without them (older journal rows, items appended whole, rare envelopes below)
 * gets them from the envelope at load, as before.
 */
export const envelopeValues = [
  { json: '$.data.baseData.metrics[0].value', types: ['metric'], path: ['metrics', 0, 'value'] },
  { json: '$.data.baseData.properties.page', types: ['metric'], path: ['properties', 'page'] },
  { json: '$.data.baseData.exceptions[0].stack', types: ['exception'], path: ['exceptions', 0, 'stack'] },
  { json: '$.data.baseData.properties.refUri', types: ['pageview'], path: ['properties', 'refUri'] },
  { json: '$.data.baseData.properties.outcome', types: ['event'], path: ['properties', 'outcome'] },
  { json: '$.data.baseData.properties.reason', types: ['event', 'metric'], path: ['properties', 'reason'] },
  { json: '$.data.baseData.properties.step', types: ['event'], path: ['properties', 'step'] },
  {
    json: '$.data.baseData.measurements.durationMs',
    types: ['event'],
    path: ['measurements', 'durationMs'],
  },
] as const satisfies readonly {
  json: string;
  types: readonly TelemetryType[];
  path: readonly (string | number)[];
}[];

/** An item's envelope values, in envelopeValues' order (NULL: none). */
export type EnvelopeValues = readonly (string | null)[];

/**
 * The text DuckDB's `json_extract_string` gives for `value` at one path: a string as it is, NULL for none
 * or JSON null, a boolean as true or false; else undefined: a number (its text may be written otherwise
 * than JavaScript writes it, 1.0 or 1e3), an object or an array.
 */
function extracted(value: unknown): string | null | undefined {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}

/** A number value (metrics[0].value, a measurement) as text DuckDB casts back to the same DOUBLE. */
function numberText(value: unknown): string | null | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Object.is(value, -0) ? '-0' : String(value);
  return extracted(value);
}

/**
 * The values of `envelope` (parsed from `text`, and accepted as `type`), in envelopeValues' order, NULL
 * where the type has none. Undefined, so that the load reads them from the envelope as before, when the
 * type has none at all (the load reads nothing for it either) or when one could differ from what DuckDB
 * reads in `text`: a `\u` escape (a lone surrogate makes DuckDB's JSON reader refuse the envelope), or a
 * value that is not plain text. Of two copies of a key, the last, as every other column of the item
 * (JSON.parse).
 */
export function readEnvelopeValues(
  envelope: unknown,
  text: string,
  type: TelemetryType,
): EnvelopeValues | undefined {
  if (!envelopeValues.some((v) => (v.types as readonly string[]).includes(type))) return undefined;
  if (text.includes('\\u')) return undefined;
  const data = (envelope as { data?: { baseData?: unknown } }).data?.baseData;
  const values: (string | null)[] = [];
  for (const { types, path } of envelopeValues) {
    if (!(types as readonly string[]).includes(type)) {
      values.push(null);
      continue;
    }
    let at: unknown = data;
    for (const step of path) {
      if (typeof step === 'number') at = Array.isArray(at) ? (at as unknown[])[step] : undefined;
      else
        at =
          typeof at === 'object' && at !== null && !Array.isArray(at)
            ? ownValue(at as Record<string, unknown>, step)
            : undefined;
    }
    const value = path[0] === 'metrics' || path[0] === 'measurements' ? numberText(at) : extracted(at);
    if (value === undefined) return undefined;
    values.push(value);
  }
  return values;
}
