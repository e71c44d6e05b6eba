import { describe, expect, it } from 'vitest';
import { splitItems } from './body.js';
import { countItems } from './count-items.js';
import { browserBatch, browserEnvelope } from '../test-support/browser-envelopes.js';

describe('countItems', () => {
  const tricky = { ...browserEnvelope('event'), note: 'a "quoted" ],[ {x}, \\\\', list: [1, [2, 3], {}] };
  const bodies: [string, string, string][] = [
    ['browser array', JSON.stringify(browserBatch(100)), 'application/json'],
    ['array, pretty-printed', JSON.stringify(browserBatch(3), null, 2), 'application/json'],
    [
      'array with strings holding brackets and commas',
      JSON.stringify([tricky, tricky, tricky]),
      'text/plain',
    ],
    ['one envelope', JSON.stringify(tricky), 'application/json'],
    ['array of one, with a BOM', `\ufeff [${JSON.stringify(tricky)}] `, 'application/json'],
    ['array of strings with escaped quotes', JSON.stringify(['a"b', 'c,d', 'e\\', ',']), 'application/json'],
    ['array of invalid elements', '[1, "a,b", null, [[]], {}]', 'application/json'],
    [
      'NDJSON',
      browserBatch(250)
        .map((e) => JSON.stringify(e))
        .join('\n'),
      'application/x-json-stream',
    ],
    [
      'NDJSON with blank lines and CRLF',
      `\n${JSON.stringify(tricky)}\r\n\r\n  \n[1,2]\r\n`,
      'application/x-json-stream',
    ],
    [
      'lines sent as application/json',
      `${JSON.stringify(tricky)}\n${JSON.stringify(tricky)}`,
      'application/json',
    ],
    ['two arrays on two lines', '[1,2]\n[3]', 'application/json'],
  ];

  it.each(bodies)('counts what splitItems splits: %s', (_, text, contentType) => {
    expect(countItems(text, contentType)).toBe(splitItems(text, contentType).length);
  });

  it('counts a malformed body as lines, and at least one item in a body that holds none', () => {
    expect(countItems('[{"a":1},\n{"b":2', 'application/json')).toBe(2);
    expect(countItems('[]', 'application/json')).toBe(1);
    expect(countItems('', undefined)).toBe(1);
  });
});
