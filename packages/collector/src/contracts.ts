import { z } from 'zod';

/**
 * The Application Insights data contracts that the collector accepts, with the ingestion service's limits.
 * Field names and required fields follow the Bond schemas the SDKs are generated from:
 * https://github.com/microsoft/ApplicationInsights-JS/tree/main/shared/AppInsightsCommon/src/Interfaces/Contracts/Generated
 * and https://github.com/microsoft/ApplicationInsights-node.js/tree/main/Declarations/Contracts/Generated
 */

/** The service's limits (https://learn.microsoft.com/azure/azure-monitor/app/api-custom-events-metrics#limits). */
export const limits = {
  itemBytes: 64 * 1024,
  propertyKey: 150,
  propertyValue: 8192,
  message: 32768,
  url: 2048,
  name: 1024,
  /** AvailabilityData.id (MaxStringLength 64 in AvailabilityData.bond). */
  availabilityId: 64,
} as const;

/** The telemetry kinds, as stored and as `--type` of the export command names them. */
export const telemetryTypes = [
  'pageview',
  'exception',
  'dependency',
  'event',
  'metric',
  'trace',
  'request',
  'pageviewperformance',
  'availability',
] as const;
export type TelemetryType = (typeof telemetryTypes)[number];

/**
 * One accepted envelope: the columns the dashboard queries, and the envelope itself as JSON (anything
 * else, such as severity or the operation name, is read from it with DuckDB's JSON functions).
 */
export interface TelemetryItem {
  /** Event time, epoch milliseconds. */
  time: number;
  type: TelemetryType;
  iKey: string;
  name: string | null;
  url: string | null;
  sessionId: string | null;
  userId: string | null;
  authUserId: string | null;
  operationId: string | null;
  durationMs: number | null;
  success: boolean | null;
  resultCode: string | null;
  target: string | null;
  /** Trace message, or the first exception's message. */
  message: string | null;
  problemId: string | null;
  /** The first exception's top stack frame, for grouping exceptions by type + message + frame. */
  topFrame: string | null;
  envelope: string;
}

const str = (max: number) => z.string().max(max, `is longer than ${max} characters`);

/** What is wrong with a string-keyed map (tags, properties, measurements), or undefined if nothing. */
function mapProblem(value: unknown, values: 'string' | 'number'): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not an object';
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (key.length > limits.propertyKey) return `has a key longer than ${limits.propertyKey} characters`;
    if (typeof v !== values) return `['${key}'] is not a ${values}`;
    if (values === 'string' && (v as string).length > limits.propertyValue) {
      return `['${key}'] is longer than ${limits.propertyValue} characters`;
    }
  }
  return undefined;
}

// A hand-written check rather than z.record: maps are on every item and z.record is several times slower.
const stringMap = <T>(values: 'string' | 'number') =>
  z.custom<Record<string, T>>((v) => mapProblem(v, values) === undefined, {
    error: (issue) => mapProblem(issue.input, values),
  });
const properties = stringMap<string>('string');
const measurements = stringMap<number>('number');

/** TimeSpan as the SDKs write it: `[d.]hh:mm:ss[.fffffff]`. */
const timeSpanPattern = /^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2}(?:\.\d+)?)$/;
const timeSpan = z.string().regex(timeSpanPattern, 'is not a TimeSpan (d.hh:mm:ss.fff)');

function timeSpanToMs(value: string | undefined): number | null {
  const m = value === undefined ? null : timeSpanPattern.exec(value);
  if (!m) return null;
  const [, days = '0', hours = '0', minutes = '0', seconds = '0'] = m;
  return ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1000;
}

/**
 * SeverityLevel (ContractsSchemas SeverityLevel.bond): the 2.x SDKs and the browser send the number, the
 * 3.x SDK and the Azure Monitor exporter its name, and the service takes both. Stored as the number,
 * so queries and the export read one form.
 */
export const severityLevels = ['Verbose', 'Information', 'Warning', 'Error', 'Critical'] as const;
const severityLevel = z.union([z.number().int().min(0).max(4), z.enum(severityLevels)], {
  error: `is not a severity level (0-4 or ${severityLevels.join(', ')})`,
});

const eventData = z.object({
  ver: z.number().optional(),
  name: str(limits.name),
  properties: properties.optional(),
  measurements: measurements.optional(),
});

const stackFrame = z.object({
  level: z.number().int(),
  method: z.string(),
  assembly: z.string().optional(),
  fileName: z.string().optional(),
  line: z.number().optional(),
});

const exceptionData = z.object({
  ver: z.number().optional(),
  exceptions: z
    .array(
      z.object({
        typeName: str(limits.name),
        message: str(limits.message),
        hasFullStack: z.boolean().optional(),
        stack: str(limits.message).optional(),
        parsedStack: z.array(stackFrame).optional(),
      }),
    )
    .min(1, 'must hold at least one exception'),
  severityLevel: severityLevel.optional(),
  problemId: str(limits.name).optional(),
  properties: properties.optional(),
  measurements: measurements.optional(),
});

const messageData = z.object({
  ver: z.number().optional(),
  message: str(limits.message),
  severityLevel: severityLevel.optional(),
  properties: properties.optional(),
});

const metricData = z.object({
  ver: z.number().optional(),
  metrics: z
    .array(
      z.object({
        name: str(limits.name),
        ns: str(limits.name).optional(),
        value: z.number(),
        count: z.number().optional(),
        min: z.number().optional(),
        max: z.number().optional(),
        stdDev: z.number().optional(),
      }),
    )
    .min(1, 'must hold at least one data point'),
  properties: properties.optional(),
});

const pageviewData = eventData.extend({
  url: str(limits.url).optional(),
  duration: timeSpan.optional(),
  id: str(limits.name).optional(),
});

const pageviewPerformanceData = pageviewData.extend({
  perfTotal: timeSpan.optional(),
  networkConnect: timeSpan.optional(),
  sentRequest: timeSpan.optional(),
  receivedResponse: timeSpan.optional(),
  domProcessing: timeSpan.optional(),
});

const remoteDependencyData = z.object({
  ver: z.number().optional(),
  name: str(limits.name),
  id: str(limits.name).optional(),
  resultCode: str(limits.name).optional(),
  duration: timeSpan,
  success: z.boolean().optional(),
  data: str(limits.propertyValue).optional(),
  target: str(limits.name).optional(),
  type: str(limits.name).optional(),
  properties: properties.optional(),
  measurements: measurements.optional(),
});

const requestData = z.object({
  ver: z.number().optional(),
  id: str(limits.name),
  name: str(limits.name).optional(),
  source: str(limits.name).optional(),
  duration: timeSpan,
  responseCode: str(limits.name),
  success: z.boolean(),
  url: str(limits.url).optional(),
  properties: properties.optional(),
  measurements: measurements.optional(),
});

/** AvailabilityData.bond: the result of an availability test (`trackAvailability`). */
const availabilityData = z.object({
  ver: z.number().optional(),
  id: str(limits.availabilityId),
  name: str(limits.name),
  duration: timeSpan,
  success: z.boolean(),
  runLocation: str(limits.name).optional(),
  message: str(limits.propertyValue).optional(),
  properties: properties.optional(),
  measurements: measurements.optional(),
});

/** Envelope (Part A). `ver`, `sampleRate` and `seq` are optional in the contract and kept as sent. */
const envelope = z.object({
  ver: z.number().optional(),
  name: str(limits.name),
  time: z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'is not an ISO 8601 date-time'),
  sampleRate: z.number().gt(0).max(100).optional(),
  seq: z.string().optional(),
  iKey: z.string().min(1, 'is required'),
  tags: stringMap<string>('string').optional(),
  data: z.object({ baseType: z.string(), baseData: z.looseObject({}) }),
});

type Extract = (baseData: unknown) => Partial<TelemetryItem>;

/*
 * The fast path: plain checks that accept only what the zod schemas above accept, and extract the same
 * columns. Anything they are not sure of (including every invalid item) goes through zod, which then
 * decides and words the refusal; so zod stays the one definition of what is valid, and these functions
 * only save its cost (about two thirds of an item's validation) on the common, valid items.
 * contracts.test.ts compares both paths on many mutated envelopes.
 */
type Fast = (baseData: Record<string, unknown>) => Partial<TelemetryItem> | undefined;
type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const optNumber = (v: unknown) => v === undefined || isNumber(v);
const isStr = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const optStr = (v: unknown, max: number) => v === undefined || isStr(v, max);
const optString = (v: unknown) => v === undefined || typeof v === 'string';
const optBoolean = (v: unknown) => v === undefined || typeof v === 'boolean';
const isTimeSpan = (v: unknown): v is string => typeof v === 'string' && timeSpanPattern.test(v);
const optTimeSpan = (v: unknown) => v === undefined || isTimeSpan(v);
const optSeverity = (v: unknown) =>
  v === undefined ||
  (Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 4) ||
  (typeof v === 'string' && severityNumber(v) !== undefined);

/** The number of a severity level's name, or undefined if `name` is none. */
function severityNumber(name: string): number | undefined {
  const n = (severityLevels as readonly string[]).indexOf(name);
  return n < 0 ? undefined : n;
}
const optMap = (v: unknown, values: 'string' | 'number') =>
  v === undefined || mapProblem(v, values) === undefined;

/** properties and measurements, which most kinds have. */
const optCustomFields = (d: Obj) => optMap(d.properties, 'string') && optMap(d.measurements, 'number');

/** eventData's fields (pageviews extend it). */
const fastEventFields = (d: Obj) =>
  optNumber(d.ver) &&
  isStr(d.name, limits.name) &&
  optMap(d.properties, 'string') &&
  optMap(d.measurements, 'number');

const fastPageviewFields = (d: Obj) =>
  fastEventFields(d) && optStr(d.url, limits.url) && optTimeSpan(d.duration) && optStr(d.id, limits.name);

function fastStackFrames(v: unknown): boolean {
  if (v === undefined) return true;
  if (!Array.isArray(v)) return false;
  for (const f of v as unknown[]) {
    if (
      !isObject(f) ||
      !Number.isSafeInteger(f.level) ||
      typeof f.method !== 'string' ||
      !optString(f.assembly) ||
      !optString(f.fileName) ||
      !optNumber(f.line)
    )
      return false;
  }
  return true;
}

const fast: Record<string, Fast> = {
  eventdata: (d) => (fastEventFields(d) ? { name: d.name as string } : undefined),
  exceptiondata: (d) => {
    const list = d.exceptions;
    if (!Array.isArray(list) || list.length === 0) return undefined;
    for (const ex of list as unknown[]) {
      if (
        !isObject(ex) ||
        !isStr(ex.typeName, limits.name) ||
        !isStr(ex.message, limits.message) ||
        !optBoolean(ex.hasFullStack) ||
        !optStr(ex.stack, limits.message) ||
        !fastStackFrames(ex.parsedStack)
      )
        return undefined;
    }
    if (
      !optNumber(d.ver) ||
      !optSeverity(d.severityLevel) ||
      !optStr(d.problemId, limits.name) ||
      !optMap(d.properties, 'string') ||
      !optMap(d.measurements, 'number')
    )
      return undefined;
    const first = list[0] as z.infer<typeof exceptionData>['exceptions'][number];
    return {
      name: first.typeName,
      message: first.message,
      topFrame: topFrameOf(first),
      problemId: d.problemId ?? null,
    };
  },
  messagedata: (d) =>
    optNumber(d.ver) &&
    isStr(d.message, limits.message) &&
    optSeverity(d.severityLevel) &&
    optMap(d.properties, 'string')
      ? { message: d.message }
      : undefined,
  metricdata: (d) => {
    const list = d.metrics;
    if (!Array.isArray(list) || list.length === 0) return undefined;
    for (const m of list as unknown[]) {
      if (
        !isObject(m) ||
        !isStr(m.name, limits.name) ||
        !optStr(m.ns, limits.name) ||
        !isNumber(m.value) ||
        !optNumber(m.count) ||
        !optNumber(m.min) ||
        !optNumber(m.max) ||
        !optNumber(m.stdDev)
      )
        return undefined;
    }
    if (!optNumber(d.ver) || !optMap(d.properties, 'string')) return undefined;
    return { name: (list[0] as { name: string }).name };
  },
  availabilitydata: (d) =>
    optNumber(d.ver) &&
    isStr(d.id, limits.availabilityId) &&
    isStr(d.name, limits.name) &&
    isTimeSpan(d.duration) &&
    typeof d.success === 'boolean' &&
    optStr(d.runLocation, limits.name) &&
    optStr(d.message, limits.propertyValue) &&
    optCustomFields(d)
      ? {
          name: d.name,
          durationMs: timeSpanToMs(d.duration),
          success: d.success,
          message: d.message ?? null,
        }
      : undefined,
  pageviewdata: (d) =>
    fastPageviewFields(d)
      ? {
          name: d.name as string,
          url: (d.url as string | undefined) ?? null,
          durationMs: timeSpanToMs(d.duration as string | undefined),
        }
      : undefined,
  pageviewperformancedata: (d) =>
    fastPageviewFields(d) &&
    optTimeSpan(d.perfTotal) &&
    optTimeSpan(d.networkConnect) &&
    optTimeSpan(d.sentRequest) &&
    optTimeSpan(d.receivedResponse) &&
    optTimeSpan(d.domProcessing)
      ? {
          name: d.name as string,
          url: (d.url as string | undefined) ?? null,
          durationMs: timeSpanToMs((d.perfTotal ?? d.duration) as string | undefined),
        }
      : undefined,
  remotedependencydata: (d) =>
    optNumber(d.ver) &&
    isStr(d.name, limits.name) &&
    optStr(d.id, limits.name) &&
    optStr(d.resultCode, limits.name) &&
    isTimeSpan(d.duration) &&
    optBoolean(d.success) &&
    optStr(d.data, limits.propertyValue) &&
    optStr(d.target, limits.name) &&
    optStr(d.type, limits.name) &&
    optCustomFields(d)
      ? {
          name: d.name,
          durationMs: timeSpanToMs(d.duration),
          success: d.success ?? true,
          resultCode: d.resultCode ?? null,
          target: d.target ?? null,
        }
      : undefined,
  requestdata: (d) =>
    optNumber(d.ver) &&
    isStr(d.id, limits.name) &&
    optStr(d.name, limits.name) &&
    optStr(d.source, limits.name) &&
    isTimeSpan(d.duration) &&
    isStr(d.responseCode, limits.name) &&
    typeof d.success === 'boolean' &&
    optStr(d.url, limits.url) &&
    optCustomFields(d)
      ? {
          name: d.name ?? null,
          url: d.url ?? null,
          durationMs: timeSpanToMs(d.duration),
          success: d.success,
          resultCode: d.responseCode,
        }
      : undefined,
};

/**
 * The envelope (Part A) checks of the fast path: the envelope's time (epoch ms), only where
 * `envelope.safeParse` succeeds.
 */
function fastEnvelope(e: Obj): number | undefined {
  const data = e.data;
  if (
    !optNumber(e.ver) ||
    !isStr(e.name, limits.name) ||
    typeof e.time !== 'string' ||
    !(e.sampleRate === undefined || (isNumber(e.sampleRate) && e.sampleRate > 0 && e.sampleRate <= 100)) ||
    !optString(e.seq) ||
    typeof e.iKey !== 'string' ||
    e.iKey.length < 1 ||
    !optMap(e.tags, 'string') ||
    !isObject(data) ||
    typeof data.baseType !== 'string' ||
    !isObject(data.baseData)
  )
    return undefined;
  // Date.parse is among the costlier checks, and its result is the item's time: parsed once, here.
  const time = Date.parse(e.time);
  return Number.isNaN(time) ? undefined : time;
}

function topFrameOf(ex: z.infer<typeof exceptionData>['exceptions'][number]): string | null {
  const frame = ex.parsedStack?.[0];
  if (frame) return `${frame.method} (${frame.fileName ?? frame.assembly ?? '?'}:${frame.line ?? 0})`;
  // Without a parsed stack, the first "at ..." line of the raw stack names the same frame.
  const line = ex.stack?.split('\n').find((l) => l.trim().startsWith('at '));
  return line ? line.trim().slice(3) : null;
}

/** baseType (lower-cased: the Node.js SDK writes "PageViewData", the browser "PageviewData") → kind and columns. */
const baseTypes: Record<string, { type: TelemetryType; extract: Extract }> = {
  eventdata: { type: 'event', extract: (d) => ({ name: eventData.parse(d).name }) },
  exceptiondata: {
    type: 'exception',
    extract: (d) => {
      const e = exceptionData.parse(d);
      const first = e.exceptions[0];
      return {
        name: first?.typeName ?? null,
        message: first?.message ?? null,
        topFrame: first ? topFrameOf(first) : null,
        problemId: e.problemId ?? null,
      };
    },
  },
  messagedata: {
    type: 'trace',
    extract: (d) => {
      return { message: messageData.parse(d).message };
    },
  },
  metricdata: {
    type: 'metric',
    extract: (d) => {
      const first = metricData.parse(d).metrics[0];
      return { name: first?.name ?? null };
    },
  },
  availabilitydata: {
    type: 'availability',
    extract: (d) => {
      const a = availabilityData.parse(d);
      return {
        name: a.name,
        durationMs: timeSpanToMs(a.duration),
        success: a.success,
        message: a.message ?? null,
      };
    },
  },
  pageviewdata: {
    type: 'pageview',
    extract: (d) => {
      const p = pageviewData.parse(d);
      return { name: p.name, url: p.url ?? null, durationMs: timeSpanToMs(p.duration) };
    },
  },
  pageviewperformancedata: {
    type: 'pageviewperformance',
    extract: (d) => {
      const p = pageviewPerformanceData.parse(d);
      return { name: p.name, url: p.url ?? null, durationMs: timeSpanToMs(p.perfTotal ?? p.duration) };
    },
  },
  remotedependencydata: {
    type: 'dependency',
    extract: (d) => {
      const r = remoteDependencyData.parse(d);
      return {
        name: r.name,
        durationMs: timeSpanToMs(r.duration),
        // The contract's default for success is true.
        success: r.success ?? true,
        resultCode: r.resultCode ?? null,
        target: r.target ?? null,
      };
    },
  },
  requestdata: {
    type: 'request',
    extract: (d) => {
      const r = requestData.parse(d);
      return {
        name: r.name ?? null,
        url: r.url ?? null,
        durationMs: timeSpanToMs(r.duration),
        success: r.success,
        resultCode: r.responseCode,
      };
    },
  },
};

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
  const actual = new Date(time).toISOString();
  if (time < min) {
    const why =
      retentionMs < pastMs ? `the retention period (${window.retentionDays} days)` : 'the allowed min date';
    return `Field 'time' on type 'Envelope' is older than ${why}. Expected: time >= ${new Date(min).toISOString()}, Actual: ${actual}.`;
  }
  if (time > max)
    return `Field 'time' on type 'Envelope' is later than the allowed max date. Expected: time <= ${new Date(max).toISOString()}, Actual: ${actual}.`;
  return undefined;
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
): Validation {
  return validate(value, acceptsKey, source, true, window);
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
  const kind = Object.hasOwn(baseTypes, baseType) ? baseTypes[baseType] : undefined;
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
    },
  };
}
