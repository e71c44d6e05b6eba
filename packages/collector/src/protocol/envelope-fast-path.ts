import {
  limits,
  topFrameOf,
  type ExceptionDetails,
  mapProblem,
  severityNumber,
  timeSpanPattern,
  timeSpanToMs,
  type TelemetryItem,
} from './envelope-schemas.js';

/*
 * The fast path: plain checks that accept only what the zod schemas above accept, and extract the same
 * columns. Anything they are not sure of (including every invalid item) goes through zod, which then
 * decides and words the refusal; so zod stays the one definition of what is valid, and these functions
 * only save its cost (about two thirds of an item's validation) on the common, valid items.
 * contracts.test.ts compares both paths on many mutated envelopes.
 */
type Fast = (baseData: Record<string, unknown>) => Partial<TelemetryItem> | undefined;
export type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
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

export const fast: Record<string, Fast> = {
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
    const first = list[0] as ExceptionDetails;
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
export function fastEnvelope(e: Obj): number | undefined {
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
