import { z } from 'zod';
import { baseTypes, envelope, limits, severityNumber, type TelemetryItem } from './envelope-schemas.js';
import { fast, fastEnvelope, isObject, type Obj } from './envelope-fast-path.js';
import type { Client } from './client.js';
import { ownValue } from '../own-property.js';

/*
 * Validation of one envelope: the Application Insights data contracts (envelope-schemas.ts: the zod
 * schemas, the one definition of what is valid), the fast path that saves zod's cost on valid items
 * (envelope-fast-path.ts), the ingestion service's limits and its time window.
 */

export {
  limits,
  severityLevels,
  telemetryTypes,
  type TelemetryItem,
  type TelemetryType,
} from './envelope-schemas.js';

const MAX_DEPTH = 32;

/** Whether the object `value` nests objects and arrays more than `levels` deep (itself being the first). */
function deeperThan(value: object, levels: number): boolean {
  if (levels === 0) return true;
  // Arrays by index (for...in names each index as a string, several times slower); no calls for leaves.
  if (Array.isArray(value)) {
    for (const v of value as unknown[])
      if (typeof v === 'object' && v !== null && deeperThan(v, levels - 1)) return true;
  } else {
    for (const key in value) {
      const v = (value as Record<string, unknown>)[key];
      if (typeof v === 'object' && v !== null && deeperThan(v, levels - 1)) return true;
    }
  }
  return false;
}

/**
 * For a valid envelope whose `severityLevel` is a name: that field made its number, and the envelope
 * re-serialised (never longer than before). Undefined when the severity is a number or absent.
 */
function severityAsNumber(value: Obj): string | undefined {
  const baseData = (value.data as { baseData: Obj }).baseData;
  const level = baseData.severityLevel;
  if (typeof level !== 'string') return undefined;
  // Copies along the path rather than an assignment, so the caller's value stays as it was parsed; the
  // spread keeps every key in its place. (A replacer function cost ~6 µs an item: bench/collector.mjs.)
  const data = value.data as Obj;
  return JSON.stringify({
    ...value,
    data: { ...data, baseData: { ...baseData, severityLevel: severityNumber(level) } },
  });
}

export type Validation = { ok: true; item: TelemetryItem } | { ok: false; message: string };

/** Names the first problem zod found as `field.path message`, the way the service's errors read. */
function describe(error: z.ZodError, prefix: string, input: unknown): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid item.';
  const field = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
  let message = issue.message;
  if (issue.code === 'invalid_type') {
    const article = /^[aeiou]/.test(issue.expected) ? 'an' : 'a';
    // zod leaves the offending value out of its issues; look it up to tell "missing" from "wrong type".
    const value = issue.path.reduce<unknown>(
      (v, key) => (v as Record<PropertyKey, unknown> | undefined)?.[key],
      input,
    );
    message = value === undefined ? 'is required' : `is not ${article} ${issue.expected}`;
  }
  return `Field '${field}' ${message}.`;
}

/**
 * The text an envelope was parsed from, when the caller has it (body.ts splits batches into their
 * items' texts): stored as received instead of re-serialised, and a cheap bound on size and nesting.
 */
export interface EnvelopeSource {
  /** Exactly the JSON text of this one value (surrounding whitespace allowed). */
  text: string;
  /**
   * If known, at least the deepest nesting of objects and arrays in `text`, the envelope itself being 1:
   * that depth, or a cheaper bound such as the number of `{` and `[` in the text.
   */
  depth?: number;
}

/**
 * The window of event times the collector accepts, as the ingestion service has one: older items would
 * rewrite periods already reported (and could be back-dated at will), later ones would sit in the
 * future (an item dated 9999 would never expire).
 */
export interface TimeWindow {
  /** The time to judge by (epoch ms); the caller's clock, read once per batch. */
  now: number;
  /** How far back an item may be dated, in ms. Default 48 hours. */
  pastMs?: number;
  /** How far ahead an item may be dated, in ms (clocks drift). Default 5 minutes. */
  futureMs?: number;
  /** Items older than this many days are deleted by retention: refused too. 0 or absent: no retention. */
  retentionDays?: number;
}

export const DEFAULT_PAST_MS = 48 * 3_600_000;
export const DEFAULT_FUTURE_MS = 5 * 60_000;

/** Why `time` is outside `window`, in the service's words, or undefined when it is inside. */
export function outsideWindow(time: number, window: TimeWindow): string | undefined {
  const retentionMs = window.retentionDays ? window.retentionDays * 86_400_000 : Infinity;
  const pastMs = window.pastMs ?? DEFAULT_PAST_MS;
  const min = window.now - Math.min(pastMs, retentionMs);
  const max = window.now + (window.futureMs ?? DEFAULT_FUTURE_MS);
  if (time >= min && time <= max) return undefined;
  // Only a refused item's time is written out: toISOString on every item cost ~1.5 µs (--cpu-prof).
  const actual = new Date(time).toISOString();
  if (time < min) {
    const why =
      retentionMs < pastMs ? `the retention period (${window.retentionDays} days)` : 'the allowed min date';
    return `Field 'time' on type 'Envelope' is older than ${why}. Expected: time >= ${new Date(min).toISOString()}, Actual: ${actual}.`;
  }
  return `Field 'time' on type 'Envelope' is later than the allowed max date. Expected: time <= ${new Date(max).toISOString()}, Actual: ${actual}.`;
}

/**
 * Validates one parsed envelope against the contracts and limits, and extracts its columns.
 * `acceptsKey` decides which instrumentation keys are known. With `source` (the text `value` was
 * parsed from) the stored envelope is that text, as received; without it, `value` re-serialised.
 */
export function validateEnvelope(
  value: unknown,
  acceptsKey: (iKey: string) => boolean,
  source?: EnvelopeSource,
  window?: TimeWindow,
  client?: Client,
): Validation {
  return validate(value, acceptsKey, source, true, window, client);
}

/** validateEnvelope with zod alone, the reference the fast path is tested against. */
export function validateEnvelopeWithZod(value: unknown, acceptsKey: (iKey: string) => boolean): Validation {
  return validate(value, acceptsKey, undefined, false);
}

function validate(
  value: unknown,
  acceptsKey: (iKey: string) => boolean,
  source: EnvelopeSource | undefined,
  useFast: boolean,
  window?: TimeWindow,
  client?: Client,
): Validation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'Item is not a JSON object.' };
  }
  // Envelopes are about six levels deep; unknown fields are kept as sent, so bound them here (which
  // also keeps JSON.stringify, which recurses, far from the stack limit). The text's nesting is never
  // less than the value's, so only a deep text needs the walk.
  if (!(source?.depth !== undefined && source.depth <= MAX_DEPTH) && deeperThan(value, MAX_DEPTH))
    return { ok: false, message: 'Item is nested too deeply.' };
  // What is stored is what is measured against the limit: the text as received when it is within it
  // (nearly always), else the value re-serialised (padding and whitespace gone), which must be.
  let json = source?.text.trim();
  if (
    json === undefined ||
    !(json.length * 3 <= limits.itemBytes || Buffer.byteLength(json) <= limits.itemBytes)
  )
    json = JSON.stringify(value);
  if (json.length * 3 > limits.itemBytes && Buffer.byteLength(json) > limits.itemBytes)
    return { ok: false, message: `Item is larger than ${limits.itemBytes} bytes.` };
  let e: z.infer<typeof envelope>;
  let time = useFast ? fastEnvelope(value as Obj) : undefined;
  if (time !== undefined) {
    e = value as z.infer<typeof envelope>;
  } else {
    const env = envelope.safeParse(value);
    if (!env.success) return { ok: false, message: describe(env.error, '', value) };
    e = env.data;
    time = Date.parse(e.time);
  }
  if (!acceptsKey(e.iKey)) return { ok: false, message: 'Invalid instrumentation key' };
  const late = window && outsideWindow(time, window);
  if (late) return { ok: false, message: late };
  const baseType = e.data.baseType.toLowerCase();
  const kind = ownValue(baseTypes, baseType);
  if (!kind) return { ok: false, message: `Field 'data.baseType' '${e.data.baseType}' is not supported.` };
  let columns = useFast ? fast[baseType]?.(e.data.baseData) : undefined;
  if (!columns) {
    try {
      columns = kind.extract(e.data.baseData);
    } catch (error) {
      if (error instanceof z.ZodError)
        return { ok: false, message: describe(error, 'data.baseData', e.data.baseData) };
      throw error;
    }
  }
  if (kind.type === 'trace' || kind.type === 'exception') json = severityAsNumber(value as Obj) ?? json;
  const tags = e.tags ?? {};
  const properties = (e.data.baseData as { properties?: unknown }).properties;
  const roles = isObject(properties) && typeof properties.roles === 'string' ? properties.roles : null;
  return {
    ok: true,
    item: {
      time,
      type: kind.type,
      iKey: e.iKey,
      name: null,
      url: null,
      sessionId: tags['ai.session.id'] ?? null,
      userId: tags['ai.user.id'] ?? null,
      authUserId: tags['ai.user.authUserId'] ?? null,
      operationId: tags['ai.operation.id'] ?? null,
      durationMs: null,
      success: null,
      resultCode: null,
      target: null,
      message: null,
      problemId: null,
      topFrame: null,
      ...columns,
      envelope: json,
      browser: tags['ai.device.browser'] ?? client?.browser ?? null,
      deviceType: client?.deviceType ?? null,
      roles,
      os: client?.os ?? null,
    },
  };
}
