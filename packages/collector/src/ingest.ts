import { BodyError, decode, splitItems } from './body.js';
import { validateEnvelope, type TelemetryItem, type TimeWindow } from './contracts.js';
import { packItems, type PackedItems } from './packed.js';

export interface IngestOptions {
  /** Accepted instrumentation keys, lower-cased, or 'any'. */
  instrumentationKeys: string[] | 'any';
  maxDecompressedBytes: number;
  /** The event times accepted, judged against the clock when each body arrives. Default: none checked. */
  timeWindow?: Omit<TimeWindow, 'now'>;
}

export interface ItemError {
  index: number;
  statusCode: number;
  message: string;
}

/** A body turned into items: those to store (packed for the store) and, by index, those refused. */
export type IngestResult =
  | { ok: true; received: number; accepted: PackedItems; errors: ItemError[] }
  | { ok: false; statusCode: 400 | 413 | 415; message: string };

export type Ingest = (body: Uint8Array, encoding?: string, contentType?: string) => Promise<IngestResult>;

/**
 * Decodes, splits and validates one request body. Pure and self-contained, so it runs the same on the
 * request's thread or in the ingest worker (ingest-worker.ts).
 */
export function createIngest(options: IngestOptions): Ingest {
  const keys = options.instrumentationKeys;
  const known = new Set(keys === 'any' ? [] : keys.map((k) => k.toLowerCase()));
  const acceptsKey = (iKey: string) => keys === 'any' || known.has(iKey.toLowerCase());
  return async (body, encoding, contentType) => {
    try {
      const raw = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      const items = splitItems(await decode(raw, encoding, options.maxDecompressedBytes), contentType);
      const accepted: TelemetryItem[] = [];
      const errors: ItemError[] = [];
      const window = options.timeWindow && { ...options.timeWindow, now: Date.now() };
      items.forEach((parsed, index) => {
        const result = parsed.ok ? validateEnvelope(parsed.value, acceptsKey, parsed.source, window) : parsed;
        if (result.ok) accepted.push(result.item);
        else errors.push({ index, statusCode: 400, message: result.message });
      });
      return { ok: true, received: items.length, accepted: packItems(accepted, true), errors };
    } catch (error) {
      if (error instanceof BodyError)
        return { ok: false, statusCode: error.statusCode, message: error.message };
      throw error;
    }
  };
}
