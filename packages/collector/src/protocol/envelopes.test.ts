import { describe, expect, it } from 'vitest';
import { splitItems, splitItemsExactly } from './body.js';
import { limits, validateEnvelope, validateEnvelopeWithZod, type TelemetryItem } from './envelopes.js';
import {
  BROWSER_IKEY,
  browserContext,
  browserEnvelope,
  browserKinds,
} from '../test-support/browser-envelopes.js';

const any = () => true;

function accepted(value: unknown): TelemetryItem {
  const result = validateEnvelope(value, any);
  if (!result.ok) throw new Error(`refused: ${result.message}`);
  return result.item;
}

function refusal(value: unknown, acceptsKey: (iKey: string) => boolean = any): string {
  const result = validateEnvelope(value, acceptsKey);
  if (result.ok) throw new Error('accepted');
  return result.message;
}

/** A browser envelope with `patch` applied to its baseData. */
function withBaseData(kind: Parameters<typeof browserEnvelope>[0], patch: Record<string, unknown>) {
  const envelope = browserEnvelope(kind) as { data: { baseData: Record<string, unknown> } };
  Object.assign(envelope.data.baseData, patch);
  for (const [key, value] of Object.entries(patch))
    if (value === undefined) delete envelope.data.baseData[key];
  return envelope;
}

/** AvailabilityData as the Node.js SDKs send it (AvailabilityData.bond). */
const availabilityData = () => ({
  ver: 2,
  id: 'run-1',
  name: 'sign-in probe',
  duration: '00:00:01.500',
  success: false,
  runLocation: 'eu-west',
  message: 'token endpoint timed out',
  properties: { step: 'token' },
  measurements: { attempts: 2 },
});

describe('validateEnvelope', () => {
  it('accepts every kind the browser SDK sends and keeps the envelope as sent', () => {
    for (const kind of browserKinds) {
      const envelope = browserEnvelope(kind);
      const item = accepted(envelope);
      expect(item.type).toBe(kind);
      expect(JSON.parse(item.envelope)).toEqual(envelope);
    }
  });

  it('extracts the columns the dashboard queries', () => {
    const ctx = browserContext({ authUserId: 'alice@example.org' });
    const view = accepted(browserEnvelope('pageview', ctx, 5));
    expect(view).toMatchObject({
      iKey: BROWSER_IKEY,
      name: 'Profile - Gatehouse',
      url: 'https://gatehouse.example/profile',
      durationMs: 125,
      sessionId: ctx.sessionId,
      userId: ctx.userId,
      authUserId: 'alice@example.org',
      operationId: ctx.operationId,
    });
    expect(accepted(browserEnvelope('exception', ctx))).toMatchObject({
      name: 'TypeError',
      message: "TypeError: Cannot read properties of undefined (reading 'email')",
      topFrame: 'ProfileForm (https://gatehouse.example/assets/index.js:41)',
    });
    expect(accepted(browserEnvelope('dependency', ctx, 10))).toMatchObject({
      name: 'GET /api/me',
      target: 'gatehouse.example',
      resultCode: '500',
      success: false,
      durationMs: 55,
    });
    expect(accepted(browserEnvelope('pageviewperformance', ctx)).durationMs).toBe(480);
    expect(accepted(browserEnvelope('metric', ctx)).name).toBe('profile-load-ms');
    expect(accepted(browserEnvelope('trace', ctx, 7)).message).toBe('signed in after 7 ms');
  });

  it('reads the Node.js SDK spelling of baseTypes and its request telemetry', () => {
    const request = {
      name: 'Microsoft.ApplicationInsights.key.Request',
      time: '2026-01-02T03:04:05.678Z',
      iKey: 'key',
      tags: { 'ai.operation.id': 'op1' },
      data: {
        baseType: 'RequestData',
        baseData: {
          ver: 2,
          id: 'r1',
          name: 'GET /',
          duration: '1.02:03:04.500',
          responseCode: '503',
          success: false,
        },
      },
    };
    expect(accepted(request)).toMatchObject({
      type: 'request',
      time: Date.parse('2026-01-02T03:04:05.678Z'),
      durationMs: ((24 + 2) * 3600 + 3 * 60 + 4.5) * 1000,
      resultCode: '503',
      success: false,
      operationId: 'op1',
    });
    const view = browserEnvelope('pageview') as { data: { baseType: string } };
    view.data.baseType = 'PageViewData';
    expect(accepted(view).type).toBe('pageview');
  });

  it('takes severityLevel by name, as the 3.x SDK sends it, and stores its number', () => {
    const names = ['Verbose', 'Information', 'Warning', 'Error', 'Critical'];
    for (const kind of ['trace', 'exception'] as const) {
      names.forEach((name, level) => {
        const envelope = withBaseData(kind, { severityLevel: name });
        const sent = JSON.stringify(envelope);
        const item = validateEnvelope(envelope, any, { text: sent });
        if (!item.ok) throw new Error(item.message);
        const expected = JSON.parse(sent) as { data: { baseData: Record<string, unknown> } };
        expected.data.baseData.severityLevel = level;
        expect(JSON.parse(item.item.envelope)).toEqual(expected);
        // The caller's parsed value is left as it was.
        expect(JSON.stringify(envelope)).toBe(sent);
      });
      expect(refusal(withBaseData(kind, { severityLevel: 'warning' }))).toBe(
        "Field 'data.baseData.severityLevel' is not a severity level (0-4 or Verbose, Information, Warning, Error, Critical).",
      );
    }
    // Numbers are stored as received.
    const numeric = withBaseData('trace', { severityLevel: 2 });
    expect(accepted(numeric).envelope).toBe(JSON.stringify(numeric));
  });

  it('accepts AvailabilityData (trackAvailability) with its columns and limits', () => {
    const availability = {
      name: 'Microsoft.ApplicationInsights.key.Availability',
      time: '2026-01-02T03:04:05.678Z',
      iKey: 'key',
      data: { baseType: 'AvailabilityData', baseData: availabilityData() },
    };
    expect(accepted(availability)).toMatchObject({
      type: 'availability',
      name: 'sign-in probe',
      durationMs: 1500,
      success: false,
      message: 'token endpoint timed out',
    });
    const patched = (patch: Record<string, unknown>) => ({
      ...availability,
      data: { baseType: 'AvailabilityData', baseData: { ...availabilityData(), ...patch } },
    });
    expect(refusal(patched({ success: undefined }))).toBe("Field 'data.baseData.success' is required.");
    expect(refusal(patched({ id: 'x'.repeat(65) }))).toBe(
      "Field 'data.baseData.id' is longer than 64 characters.",
    );
    expect(refusal(patched({ duration: '1.5 s' }))).toBe(
      "Field 'data.baseData.duration' is not a TimeSpan (d.hh:mm:ss.fff).",
    );
  });

  it('names the missing field', () => {
    const noTime = { ...browserEnvelope('event') };
    delete noTime.time;
    expect(refusal(noTime)).toBe("Field 'time' is required.");
    expect(refusal(withBaseData('event', { name: undefined }))).toBe(
      "Field 'data.baseData.name' is required.",
    );
    expect(refusal(withBaseData('dependency', { duration: undefined }))).toBe(
      "Field 'data.baseData.duration' is required.",
    );
    expect(refusal(withBaseData('exception', { exceptions: [] }))).toBe(
      "Field 'data.baseData.exceptions' must hold at least one exception.",
    );
    expect(refusal(withBaseData('metric', { metrics: [{ name: 'm' }] }))).toBe(
      "Field 'data.baseData.metrics.0.value' is required.",
    );
    expect(refusal({ ...browserEnvelope('event'), data: { baseType: 'EventData' } })).toBe(
      "Field 'data.baseData' is required.",
    );
  });

  it('refuses wrong types', () => {
    expect(refusal([browserEnvelope('event')])).toBe('Item is not a JSON object.');
    expect(refusal('event')).toBe('Item is not a JSON object.');
    expect(refusal({ ...browserEnvelope('event'), time: 'yesterday' })).toBe(
      "Field 'time' is not an ISO 8601 date-time.",
    );
    expect(refusal({ ...browserEnvelope('event'), tags: { 'ai.session.id': 42 } })).toBe(
      "Field 'tags' ['ai.session.id'] is not a string.",
    );
    const request = {
      ...browserEnvelope('event'),
      data: {
        baseType: 'RequestData',
        baseData: { id: 'r', duration: '00:00:01', responseCode: 200, success: true },
      },
    };
    expect(refusal(request)).toMatch(/^Field 'data.baseData.responseCode' /);
    expect(refusal(withBaseData('dependency', { duration: 45 }))).toMatch(/^Field 'data.baseData.duration' /);
    expect(refusal(withBaseData('dependency', { success: 'yes' }))).toMatch(
      /^Field 'data.baseData.success' /,
    );
    expect(refusal(withBaseData('event', { measurements: { n: '3' } }))).toBe(
      "Field 'data.baseData.measurements' ['n'] is not a number.",
    );
    const unknown = browserEnvelope('event') as { data: { baseType: string } };
    unknown.data.baseType = 'SessionStateData';
    expect(refusal(unknown)).toBe("Field 'data.baseType' 'SessionStateData' is not supported.");
  });

  it("applies the service's limits", () => {
    const long = (n: number) => 'x'.repeat(n);
    expect(accepted(withBaseData('event', { name: long(limits.name) })).name).toHaveLength(limits.name);
    expect(refusal(withBaseData('event', { name: long(limits.name + 1) }))).toBe(
      "Field 'data.baseData.name' is longer than 1024 characters.",
    );
    expect(refusal(withBaseData('pageview', { url: long(limits.url + 1) }))).toBe(
      "Field 'data.baseData.url' is longer than 2048 characters.",
    );
    expect(refusal(withBaseData('trace', { message: long(limits.message + 1) }))).toBe(
      "Field 'data.baseData.message' is longer than 32768 characters.",
    );
    expect(refusal(withBaseData('event', { properties: { [long(limits.propertyKey + 1)]: 'v' } }))).toBe(
      "Field 'data.baseData.properties' has a key longer than 150 characters.",
    );
    expect(refusal(withBaseData('event', { properties: { k: long(limits.propertyValue + 1) } }))).toBe(
      "Field 'data.baseData.properties' ['k'] is longer than 8192 characters.",
    );
    // Many properties within their own limits still make an item over 64 KB.
    const properties = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, long(8000)]));
    expect(refusal(withBaseData('event', { properties }))).toBe('Item is larger than 65536 bytes.');
  });

  it('refuses deep nesting without overflowing the stack', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(refusal({ ...browserEnvelope('event'), extra: deep })).toBe('Item is nested too deeply.');
    expect(refusal(withBaseData('event', { properties: { k: [[['v']]] } }))).toBe(
      "Field 'data.baseData.properties' ['k'] is not a string.",
    );
  });

  it('holds envelopes to the same nesting limit with a text of known depth, a bound on it, or none', () => {
    const nested = (levels: number) => {
      let value: unknown = 'bottom';
      for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { value };
      return value;
    };
    // The envelope is the first level; the limit is 32.
    for (const levels of [20, 30, 31, 32, 40]) {
      const envelope = { ...browserEnvelope('event'), extra: nested(levels) };
      const expected = validateEnvelope(envelope, any);
      expect(expected.ok, String(levels)).toBe(levels < 32);
      const text = JSON.stringify([envelope, envelope]);
      for (const split of [splitItems, splitItemsExactly]) {
        for (const item of split(text, 'application/json')) {
          if (!item.ok) throw new Error(item.message);
          expect(validateEnvelope(item.value, any, item.source), String(levels)).toEqual(expected);
        }
      }
    }
  });

  it('refuses unknown instrumentation keys, case-insensitively known ones pass', () => {
    const known = (iKey: string) => iKey.toLowerCase() === BROWSER_IKEY;
    expect(refusal({ ...browserEnvelope('event'), iKey: 'someone-else' }, known)).toBe(
      'Invalid instrumentation key',
    );
    expect(
      validateEnvelope({ ...browserEnvelope('event'), iKey: BROWSER_IKEY.toUpperCase() }, known).ok,
    ).toBe(true);
  });
});

describe('the fast path of validateEnvelope', () => {
  const requestEnvelope = () => ({
    name: 'Microsoft.ApplicationInsights.key.Request',
    time: '2026-01-02T03:04:05.678Z',
    iKey: 'key',
    seq: '1',
    tags: { 'ai.operation.id': 'op1' },
    data: {
      baseType: 'RequestData',
      baseData: {
        ver: 2,
        id: 'r1',
        name: 'GET /',
        source: 's',
        duration: '1.02:03:04.500',
        responseCode: '503',
        success: false,
        url: 'https://gatehouse.example/',
        properties: { a: 'b' },
        measurements: { m: 1 },
      },
    },
  });
  const odd: unknown[] = [
    undefined, // deletes the field
    null,
    '',
    'x',
    'x'.repeat(limits.name + 1),
    'x'.repeat(limits.url + 1),
    '00:00:01.5',
    '1.00:00:00',
    '2026-01-02T03:04:05Z',
    '1969-12-31T23:59:59.999Z',
    0,
    -1,
    1.5,
    4,
    5,
    'Warning',
    'Critical',
    100,
    101,
    2 ** 53,
    Infinity,
    true,
    false,
    [],
    [{}],
    {},
    { k: 'v' },
    { k: 1 },
    { [`${'k'.repeat(151)}`]: 'v' },
  ];

  /** Every path to a field of `value` (objects and arrays), depth first. */
  function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
    if (typeof value !== 'object' || value === null) return [];
    const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
    return keys.flatMap((k) => [
      [...prefix, k],
      ...paths((value as Record<string | number, unknown>)[k], [...prefix, k]),
    ]);
  }

  function mutated(base: unknown, path: (string | number)[], replacement: unknown): unknown {
    const copy = structuredClone(base) as Record<string | number, unknown>;
    let parent = copy;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = path[path.length - 1] as string | number;
    if (replacement === undefined && !Array.isArray(parent)) delete parent[last];
    else parent[last] = structuredClone(replacement);
    return copy;
  }

  it('decides and extracts exactly as zod alone, on every field of every kind set to odd values', () => {
    const availability = {
      ...requestEnvelope(),
      data: { baseType: 'AvailabilityData', baseData: availabilityData() },
    };
    const bases: unknown[] = [
      ...browserKinds.map((k) => browserEnvelope(k)),
      requestEnvelope(),
      availability,
    ];
    let compared = 0;
    for (const base of bases) {
      expect(validateEnvelope(base, any)).toEqual(validateEnvelopeWithZod(base, any));
      for (const path of paths(base)) {
        for (const replacement of odd) {
          const value = mutated(base, path, replacement);
          expect(validateEnvelope(value, any), JSON.stringify(path)).toEqual(
            validateEnvelopeWithZod(value, any),
          );
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(5000);
  });

  it('stores the text an envelope was parsed from, and bounds size and depth on it exactly', () => {
    const envelope = browserEnvelope('event');
    const text = ` ${JSON.stringify(envelope, null, 2)}\n`;
    const item = accepted(envelope);
    const fromText = validateEnvelope(envelope, any, { text, depth: 3 });
    expect(fromText).toEqual({ ok: true, item: { ...item, envelope: text.trim() } });
    // What is stored is what is measured: a short text is stored as it is, even where its value would
    // re-serialise past 64 KB (1e20 writes 21 digits).
    const numbers = Array.from({ length: 3200 }, () => 1e20);
    const big = { ...browserEnvelope('event'), extra: numbers };
    const bigText = JSON.stringify({ ...big, extra: '@' }).replace(
      '"@"',
      `[${numbers.map(() => '1e20').join(',')}]`,
    );
    expect(Buffer.byteLength(bigText)).toBeLessThan(limits.itemBytes);
    expect(validateEnvelope(big, any, { text: bigText })).toMatchObject({
      ok: true,
      item: { envelope: bigText },
    });
    // A text padded past the limit (8 MiB of whitespace inside) is stored compact, as re-serialised.
    const padded = JSON.stringify(envelope).replace('"name":', `"name":${' '.repeat(8 * 1024 * 1024)}`);
    const compact = validateEnvelope(envelope, any, { text: padded });
    expect(compact).toEqual({ ok: true, item: { ...item, envelope: JSON.stringify(envelope) } });
    // Past the limit either way: refused.
    const huge = { ...envelope, extra: 'x'.repeat(limits.itemBytes) };
    expect(validateEnvelope(huge, any, { text: ` ${JSON.stringify(huge)} ` })).toEqual({
      ok: false,
      message: 'Item is larger than 65536 bytes.',
    });
    // A wrong (too small) depth is never trusted past the value's own nesting? It is trusted only as
    // an upper bound: a deep text is walked.
    let deep: unknown = 'bottom';
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(validateEnvelope({ ...envelope, extra: deep }, any, { text: '{}', depth: 41 })).toEqual({
      ok: false,
      message: 'Item is nested too deeply.',
    });
  });

  it('refuses a baseType named like an Object.prototype member as unsupported', () => {
    for (const baseType of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const envelope = browserEnvelope('event') as { data: { baseType: string } };
      envelope.data.baseType = baseType;
      expect(refusal(envelope)).toBe(`Field 'data.baseType' '${baseType}' is not supported.`);
    }
  });
});
