import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { requestId, traceId } from './log.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('traceId', () => {
  it.each([
    [`00-${TRACE}-00f067aa0ba902b7-01`, TRACE],
    [`01-${TRACE}-00f067aa0ba902b7-01-what-comes-later`, TRACE],
    [`00-${TRACE}-00f067aa0ba902b7-01-extra`, undefined],
    [`ff-${TRACE}-00f067aa0ba902b7-01`, undefined],
    [`00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`, undefined],
    [`00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, undefined],
    [`00-${TRACE}-${'0'.repeat(16)}-01`, undefined],
    ['garbage', undefined],
  ])('%s gives %s', (header, expected) => {
    expect(traceId(request({ traceparent: header }))).toBe(expected);
  });
});

describe('requestId', () => {
  it('keeps a short safe id and makes one otherwise', () => {
    expect(requestId(request({ 'x-request-id': '7f3a-LB:1.2_x' }))).toBe('7f3a-LB:1.2_x');
    for (const unsafe of ['', 'a\nb', 'a"b', 'x'.repeat(65)]) {
      expect(requestId(request({ 'x-request-id': unsafe }))).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
