/**
 * Envelopes exactly as the browser SDK (@microsoft/applicationinsights-web) serialises them, and the
 * request bodies it sends: a JSON array from XHR/fetch (`Content-Type: application/json`) and the same
 * array as `text/plain;charset=UTF-8` from sendBeacon on page unload. Shapes follow
 * https://github.com/microsoft/ApplicationInsights-JS/blob/main/channels/applicationinsights-channel-js/src/EnvelopeCreator.ts
 * and SenderPostManager.ts. Used by the tests and by bench/collector.mjs.
 */
import { randomUUID } from 'node:crypto';
import { createIngest } from '../protocol/ingest.js';

export const BROWSER_IKEY = '8c0c7b2f-4a4e-4c1e-9d7a-0f5b8d6e3a21';

export type BrowserKind =
  'pageview' | 'pageviewperformance' | 'event' | 'exception' | 'trace' | 'metric' | 'dependency';

export const browserKinds: readonly BrowserKind[] = [
  'pageview',
  'pageviewperformance',
  'event',
  'exception',
  'trace',
  'metric',
  'dependency',
];

export interface BrowserContext {
  iKey: string;
  sessionId: string;
  userId: string;
  authUserId?: string;
  operationId: string;
  page: string;
}

export function browserContext(overrides: Partial<BrowserContext> = {}): BrowserContext {
  return {
    iKey: BROWSER_IKEY,
    sessionId: randomUUID().slice(0, 22),
    userId: randomUUID().slice(0, 22),
    operationId: randomUUID().replaceAll('-', ''),
    page: '/profile',
    ...overrides,
  };
}

/** `msToTimeSpan` of the SDKs: `[d.]hh:mm:ss.fff`. */
export function timeSpan(ms: number): string {
  const pad = (n: number, w = 2) => String(Math.floor(n)).padStart(w, '0');
  const days = Math.floor(ms / 86_400_000);
  const body = `${pad((ms / 3_600_000) % 24)}:${pad((ms / 60_000) % 60)}:${pad((ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
  return days > 0 ? `${days}.${body}` : body;
}

const envelopeNames: Record<BrowserKind, [string, string]> = {
  pageview: ['Pageview', 'PageviewData'],
  pageviewperformance: ['PageviewPerformance', 'PageviewPerformanceData'],
  event: ['Event', 'EventData'],
  exception: ['Exception', 'ExceptionData'],
  trace: ['Message', 'MessageData'],
  metric: ['Metric', 'MetricData'],
  dependency: ['RemoteDependency', 'RemoteDependencyData'],
};

function baseData(kind: BrowserKind, ctx: BrowserContext, n: number): Record<string, unknown> {
  const url = `https://gatehouse.example${ctx.page}`;
  // What the SDK's web extension adds to every item's properties.
  const properties = {
    domain: 'gatehouse.example',
    screenRes: '1920x1080',
    refUri: 'https://gatehouse.example/',
  };
  switch (kind) {
    case 'pageview':
      return {
        ver: 2,
        name: 'Profile - Gatehouse',
        url,
        duration: timeSpan(120 + n),
        properties,
        measurements: {},
        id: ctx.operationId,
      };
    case 'pageviewperformance':
      return {
        ver: 2,
        name: 'Profile - Gatehouse',
        url,
        duration: timeSpan(480),
        perfTotal: timeSpan(480),
        networkConnect: timeSpan(12),
        sentRequest: timeSpan(40),
        receivedResponse: timeSpan(25),
        domProcessing: timeSpan(300),
        properties,
        measurements: {},
      };
    case 'event':
      return {
        ver: 2,
        name: 'profile-saved',
        properties: { ...properties, section: 'contact' },
        measurements: { fields: 3 },
      };
    case 'exception':
      return {
        ver: 2,
        exceptions: [
          {
            typeName: 'TypeError',
            message: "TypeError: Cannot read properties of undefined (reading 'email')",
            hasFullStack: true,
            stack:
              "TypeError: Cannot read properties of undefined (reading 'email')\n    at ProfileForm (https://gatehouse.example/assets/index.js:41:7)\n    at renderWithHooks (https://gatehouse.example/assets/index.js:9:12)",
            parsedStack: [
              {
                level: 0,
                method: 'ProfileForm',
                assembly: 'at ProfileForm (https://gatehouse.example/assets/index.js:41:7)',
                fileName: 'https://gatehouse.example/assets/index.js',
                line: 41,
                sizeInBytes: 120,
              },
              {
                level: 1,
                method: 'renderWithHooks',
                assembly: 'at renderWithHooks (https://gatehouse.example/assets/index.js:9:12)',
                fileName: 'https://gatehouse.example/assets/index.js',
                line: 9,
                sizeInBytes: 124,
              },
            ],
          },
        ],
        severityLevel: 3,
        properties,
        measurements: {},
      };
    case 'trace':
      return { ver: 2, message: `signed in after ${n} ms`, severityLevel: 1, properties };
    case 'metric':
      return {
        ver: 2,
        metrics: [{ name: 'profile-load-ms', kind: 0, value: 35 + n, count: 1, min: 35, max: 35, stdDev: 0 }],
        properties,
      };
    case 'dependency':
      return {
        ver: 2,
        id: `|${ctx.operationId}.${n}`,
        name: 'GET /api/me',
        resultCode: n % 10 === 0 ? '500' : '200',
        duration: timeSpan(45 + (n % 100)),
        success: n % 10 !== 0,
        data: 'GET https://gatehouse.example/api/me',
        target: 'gatehouse.example',
        type: 'Fetch',
        properties: { ...properties, HttpMethod: 'GET' },
        measurements: {},
      };
  }
}

/**
 * Envelopes made so far: each gets its own `seq`, as two items a real SDK sends differ (in their
 * time, ids or content), so the store, which keeps each item once, keeps every one of them. Fixed
 * width, so a benchmark can write fresh numbers into a prepared body in place.
 */
let made = 0;
export const SEQ_DIGITS = 12;

/** One envelope of `kind`, as the browser SDK puts it in a batch. */
export function browserEnvelope(
  kind: BrowserKind,
  ctx: BrowserContext = browserContext(),
  n = 0,
): Record<string, unknown> {
  const [suffix, baseType] = envelopeNames[kind];
  return {
    time: new Date().toISOString(),
    iKey: ctx.iKey,
    name: `Microsoft.ApplicationInsights.${ctx.iKey.replaceAll('-', '')}.${suffix}`,
    tags: {
      'ai.user.id': ctx.userId,
      ...(ctx.authUserId ? { 'ai.user.authUserId': ctx.authUserId } : {}),
      'ai.session.id': ctx.sessionId,
      'ai.device.id': 'browser',
      'ai.device.type': 'Browser',
      'ai.device.locale': 'en-US',
      'ai.device.osVersion': 'Linux x86_64',
      'ai.device.browser': 'Chrome',
      'ai.operation.name': ctx.page,
      'ai.operation.id': ctx.operationId,
      'ai.internal.sdkVersion': 'javascript:3.3.4',
    },
    data: { baseType, baseData: baseData(kind, ctx, n) },
    ver: 1,
    sampleRate: 100,
    seq: String(made++).padStart(SEQ_DIGITS, '0'),
  };
}

/** A batch of `count` mixed envelopes (each kind in turn), as one JSON array body. */
export function browserBatch(
  count: number,
  ctx: BrowserContext = browserContext(),
): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, n) =>
    browserEnvelope(browserKinds[n % browserKinds.length] ?? 'event', ctx, n),
  );
}

/**
 * `count` new envelopes of browserBatch packed for the store as the collector's ingest packs them (with
 * their envelope values, envelope-values.ts): what bench/collector.mjs measures the store alone with.
 */
export async function packedBrowserBatch(count: number, ctx: BrowserContext = browserContext()) {
  const ingest = createIngest({ instrumentationKeys: 'any', maxItemsPerRequest: count, maxRefusedItems: 1 });
  const result = await ingest(Buffer.from(JSON.stringify(browserBatch(count, ctx))), 'application/json');
  if (!result.ok || result.errors.length > 0) throw new Error('the ingest refused a browser envelope');
  return result.accepted;
}

/** The request the browser SDK's XHR/fetch sender makes. */
export function browserRequest(envelopes: unknown[]): { body: string; headers: Record<string, string> } {
  return { body: JSON.stringify(envelopes), headers: { 'Content-Type': 'application/json' } };
}

/** The request sendBeacon makes on unload: the same array, typed text/plain so no preflight is needed. */
export function beaconRequest(envelopes: unknown[]): { body: string; headers: Record<string, string> } {
  return { body: JSON.stringify(envelopes), headers: { 'Content-Type': 'text/plain;charset=UTF-8' } };
}
