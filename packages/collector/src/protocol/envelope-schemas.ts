import { z } from 'zod';
import type { TelemetryItem } from './item-row.js';

export type { TelemetryItem } from './item-row.js';

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

import type { TelemetryType } from './telemetry-types.js';

export { telemetryTypes, type TelemetryType } from './telemetry-types.js';

const str = (max: number) => z.string().max(max, `is longer than ${max} characters`);

/** What is wrong with a string-keyed map (tags, properties, measurements), or undefined if nothing. */
export function mapProblem(value: unknown, values: 'string' | 'number'): string | undefined {
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
export const timeSpanPattern = /^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2}(?:\.\d+)?)$/;
const timeSpan = z.string().regex(timeSpanPattern, 'is not a TimeSpan (d.hh:mm:ss.fff)');

export function timeSpanToMs(value: string | undefined): number | null {
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
/** The number of a severity level's name, or undefined if `name` is none. */
export function severityNumber(name: string): number | undefined {
  const n = (severityLevels as readonly string[]).indexOf(name);
  return n < 0 ? undefined : n;
}
const severityLevel = z.union([z.number().int().min(0).max(4), z.enum(severityLevels)], {
  error: `is not a severity level (0-4 or ${severityLevels.join(', ')})`,
});

export const eventData = z.object({
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

export const exceptionData = z.object({
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
export const envelope = z.object({
  ver: z.number().optional(),
  name: str(limits.name),
  time: z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'is not an ISO 8601 date-time'),
  sampleRate: z.number().gt(0).max(100).optional(),
  seq: z.string().optional(),
  iKey: z.string().min(1, 'is required'),
  tags: stringMap<string>('string').optional(),
  data: z.object({ baseType: z.string(), baseData: z.looseObject({}) }),
});

export type Extract = (baseData: unknown) => Partial<TelemetryItem>;

/** One exception of ExceptionDetails.bond, as the schema reads it. */
export type ExceptionDetails = z.infer<typeof exceptionData>['exceptions'][number];

export function topFrameOf(ex: ExceptionDetails): string | null {
  const frame = ex.parsedStack?.[0];
  if (frame) return `${frame.method} (${frame.fileName ?? frame.assembly ?? '?'}:${frame.line ?? 0})`;
  // Without a parsed stack, the first "at ..." line of the raw stack names the same frame.
  const line = ex.stack?.split('\n').find((l) => l.trim().startsWith('at '));
  return line ? line.trim().slice(3) : null;
}

/** baseType (lower-cased: the Node.js SDK writes "PageViewData", the browser "PageviewData") → kind and columns. */
export const baseTypes: Record<string, { type: TelemetryType; extract: Extract }> = {
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
