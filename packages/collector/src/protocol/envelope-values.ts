import type { TelemetryType } from './telemetry-types.js';
import { ownValue } from '../own-property.js';

/**
 * Values of an envelope that the store derives columns from (store/row-layout.ts): each its JSON path, as
 * DuckDB reads it from the stored envelope, and the item types that have it. Where the envelope is
 * parsed anyway (the ingest worker), `readEnvelopeValues` reads them and `packItems` writes them after the
 * row's own columns, so the load does not read the envelope's JSON again: that was a fifth of a load's
 * time (ADR 0139). A row without them (older journal rows, items appended whole, rare envelopes below)
 * gets them from the envelope at load, as before.
 */
const definitions = [
  { path: ['metrics', 0, 'value'], types: ['metric'], number: true },
  { path: ['properties', 'page'], types: ['metric'], number: false },
  { path: ['exceptions', 0, 'stack'], types: ['exception'], number: false },
  { path: ['properties', 'refUri'], types: ['pageview'], number: false },
  { path: ['properties', 'outcome'], types: ['event'], number: false },
  { path: ['properties', 'reason'], types: ['event', 'metric'], number: false },
  { path: ['properties', 'step'], types: ['event'], number: false },
  { path: ['measurements', 'durationMs'], types: ['event'], number: true },
] as const satisfies readonly {
  /** Under the envelope's `data.baseData`: property names and array indexes. */
  path: readonly (string | number)[];
  types: readonly TelemetryType[];
  /** Read as a number (the column casts it to DOUBLE), else as text. */
  number: boolean;
}[];

/** Each value with its JSON path as DuckDB's JSON functions take it (`$.data.baseData.metrics[0].value`). */
export const envelopeValues = definitions.map((v) => ({
  ...v,
  json: `$.data.baseData${v.path.map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`)).join('')}`,
}));

/** The types that have at least one of the values. */
const typesWithValues = new Set<string>(definitions.flatMap((v) => v.types));

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
  if (!typesWithValues.has(type)) return undefined;
  if (text.includes('\\u')) return undefined;
  const data = (envelope as { data?: { baseData?: unknown } }).data?.baseData;
  const values: (string | null)[] = [];
  for (const { types, path, number } of definitions) {
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
    const value = number ? numberText(at) : extracted(at);
    if (value === undefined) return undefined;
    values.push(value);
  }
  return values;
}
