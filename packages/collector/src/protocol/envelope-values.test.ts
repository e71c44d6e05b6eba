import { expect, it } from 'vitest';
import { envelopeValues, readEnvelopeValues } from './envelope-values.js';

const envelope = (baseData: Record<string, unknown>) => ({ data: { baseData } });
/** readEnvelopeValues of `baseData` as `type`, by JSON path, the envelope's text being its JSON. */
function read(type: Parameters<typeof readEnvelopeValues>[2], baseData: Record<string, unknown>) {
  const value = envelope(baseData);
  const values = readEnvelopeValues(value, JSON.stringify(value), type);
  return values && Object.fromEntries(envelopeValues.map((v, j) => [v.json, values[j]]));
}

it("reads a metric's value, page and reason, and nothing else of it", () => {
  expect(
    read('metric', {
      metrics: [{ name: 'LCP', value: 1234.5 }],
      properties: { page: 'Home', reason: 'slow', outcome: 'not read for a metric' },
    }),
  ).toEqual({
    '$.data.baseData.metrics[0].value': '1234.5',
    '$.data.baseData.properties.page': 'Home',
    '$.data.baseData.exceptions[0].stack': null,
    '$.data.baseData.properties.refUri': null,
    '$.data.baseData.properties.outcome': null,
    '$.data.baseData.properties.reason': 'slow',
    '$.data.baseData.properties.step': null,
    '$.data.baseData.measurements.durationMs': null,
  });
});

it("reads an event's outcome, reason, step and duration; a page view's referrer; an exception's stack", () => {
  expect(
    read('event', {
      name: 'sign-in',
      properties: { outcome: 'failure', reason: 'state_mismatch', step: 'return' },
      measurements: { durationMs: -0 },
    }),
  ).toMatchObject({
    '$.data.baseData.properties.outcome': 'failure',
    '$.data.baseData.properties.reason': 'state_mismatch',
    '$.data.baseData.properties.step': 'return',
    '$.data.baseData.measurements.durationMs': '-0',
  });
  expect(
    read('pageview', { name: 'Home', properties: { refUri: 'https://news.example/a?b' } }),
  ).toMatchObject({ '$.data.baseData.properties.refUri': 'https://news.example/a?b' });
  expect(
    read('exception', { exceptions: [{ typeName: 'Error', message: 'm', stack: 'Error: m\n    at f' }] }),
  ).toMatchObject({ '$.data.baseData.exceptions[0].stack': 'Error: m\n    at f' });
  // Missing, or JSON null: NULL, as DuckDB reads them.
  expect(read('event', { name: 'x', properties: { outcome: null } })).toMatchObject({
    '$.data.baseData.properties.outcome': null,
    '$.data.baseData.properties.step': null,
    '$.data.baseData.measurements.durationMs': null,
  });
});

it('leaves to the load what it might read otherwise than DuckDB, and the types that have none', () => {
  // A number where text is read: DuckDB writes it as the JSON text had it (1.0, 1e3), not as JavaScript.
  expect(read('event', { name: 'x', properties: { outcome: 1 } })).toBeUndefined();
  expect(
    read('metric', { metrics: [{ name: 'n', value: 1 }], properties: { page: { a: 1 } } }),
  ).toBeUndefined();
  // A \u escape may be a lone surrogate, which makes DuckDB refuse the whole envelope.
  const value = envelope({ name: 'x', properties: { outcome: '\u00e9' } });
  expect(
    readEnvelopeValues(value, '{"data":{"baseData":{"properties":{"outcome":"\\u00e9"}}}}', 'event'),
  ).toBe(undefined);
  expect(readEnvelopeValues(value, JSON.stringify(value), 'event')).toBeDefined();
  expect(read('trace', { message: 'm', properties: { page: 'Home' } })).toBeUndefined();
  expect(read('dependency', { name: 'GET /api/me' })).toBeUndefined();
});

it('reads an element of an array only, as the JSON path does', () => {
  expect(read('metric', { metrics: { 0: { value: 2 } } })).toMatchObject({
    '$.data.baseData.metrics[0].value': null,
  });
});
