import { BodyError, splitItems, type ParsedItem } from './body.js';
import type { Client } from './client.js';
import { validateEnvelope, type TelemetryItem, type TimeWindow } from './envelopes.js';
import { packItems, type PackedItems } from './packed.js';
import { readEnvelopeValues, type EnvelopeValues } from './envelope-values.js';

export interface IngestOptions {
  /** Accepted instrumentation keys, lower-cased, or 'any'. */
  instrumentationKeys: string[] | 'any';
  /** Items one body may hold; a body with more is refused whole (413). */
  maxItemsPerRequest: number;
  /** Refused items after which the rest of a body is not checked, and answers name no more. */
  maxRefusedItems: number;
  /** The event times accepted, judged against the clock when each body arrives. Default: none checked. */
  timeWindow?: Omit<TimeWindow, 'now'>;
}

export interface ItemError {
  index: number;
  statusCode: number;
  message: string;
}

/**
 * A body turned into items: those to store (packed for the store) and, by index, those refused.
 * `checked` items were validated; when validation stopped early (maxRefusedItems), the last error
 * names the first unchecked index and how many items were left unchecked, none of them stored.
 */
export type IngestResult =
  | { ok: true; received: number; checked: number; accepted: PackedItems; errors: ItemError[] }
  | { ok: false; statusCode: 400 | 413 | 415; message: string };

/**
 * `body`: the request's text as UTF-8 bytes, already inflated (the collector inflates on the request's
 * thread, counting each chunk against the bytes in flight); `client`: who sent it (client.ts), told for
 * each of its items.
 */
export type Ingest = (body: Uint8Array, contentType?: string, client?: Client) => Promise<IngestResult>;

/**
 * Splits and validates one request body. Pure and self-contained, so it runs the same on the
 * request's thread or in the ingest worker (ingest-worker.ts).
 */
export function createIngest(options: IngestOptions): Ingest {
  const keys = options.instrumentationKeys;
  const known = new Set(keys === 'any' ? [] : keys.map((k) => k.toLowerCase()));
  const acceptsKey = (iKey: string) => keys === 'any' || known.has(iKey.toLowerCase());
  const ingestNow = (body: Uint8Array, contentType?: string, client?: Client): IngestResult => {
    try {
      const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
      const items = splitItems(text, contentType, options.maxItemsPerRequest);
      const accepted: TelemetryItem[] = [];
      const values: (EnvelopeValues | undefined)[] = [];
      const errors: ItemError[] = [];
      const window = options.timeWindow && { ...options.timeWindow, now: Date.now() };
      let checked = 0;
      // A body of refused items costs as much to check and to answer as it has items: after a few
      // refusals the sender is not an SDK with a stray bad item, so the rest is not worth checking.
      for (; checked < items.length && errors.length < options.maxRefusedItems; checked++) {
        const parsed = items[checked] as ParsedItem;
        if (!parsed.ok) {
          errors.push({ index: checked, statusCode: 400, message: parsed.message });
          continue;
        }
        const result = validateEnvelope(parsed.value, acceptsKey, parsed.source, window, client);
        if (result.ok) {
          accepted.push(result.item);
          // Read here, where the envelope is parsed, rather than from its JSON at load (ADR 0139).
          values.push(readEnvelopeValues(parsed.value, result.item.envelope, result.item.type));
        } else errors.push({ index: checked, statusCode: 400, message: result.message });
      }
      if (checked < items.length) {
        const left = items.length - checked;
        errors.push({
          index: checked,
          statusCode: 400,
          message: `Checking stopped after ${errors.length} refused items; this item and the ${left - 1} after it were not checked.`,
        });
      }
      return {
        ok: true,
        received: items.length,
        checked,
        accepted: packItems(accepted, true, values),
        errors,
      };
    } catch (error) {
      if (error instanceof BodyError)
        return { ok: false, statusCode: error.statusCode, message: error.message };
      throw error;
    }
  };
  // A promise either way: what throws (not a BodyError) rejects, as the worker's answer would.
  return (body, contentType, client) => Promise.resolve().then(() => ingestNow(body, contentType, client));
}
