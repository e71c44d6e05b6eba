import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BodyError, decode, splitItems } from './body.js';

const values = (text: string, contentType?: string) =>
  splitItems(text, contentType).map((i) => (i.ok ? i.value : i.message));

function bodyError(run: () => unknown): BodyError {
  try {
    run();
  } catch (error) {
    if (error instanceof BodyError) return error;
    throw error;
  }
  throw new Error('no BodyError');
}

describe('splitItems', () => {
  it('reads a JSON array, one envelope, and newline-delimited JSON', () => {
    expect(values('[{"a":1},{"b":2}]', 'application/json')).toEqual([{ a: 1 }, { b: 2 }]);
    expect(values('[{"a":1}]', 'text/plain;charset=UTF-8')).toEqual([{ a: 1 }]);
    expect(values('{"a":1}', 'application/json')).toEqual([{ a: 1 }]);
    expect(values('{"a":1}\n{"b":2}\r\n\n{"c":3}', 'application/x-json-stream')).toEqual([
      { a: 1 },
      { b: 2 },
      { c: 3 },
    ]);
    // The browser's emitLineDelimitedJson still says application/json.
    expect(values('{"a":1}\n{"b":2}', 'application/json')).toEqual([{ a: 1 }, { b: 2 }]);
    expect(values('\ufeff[{"a":1}]')).toEqual([{ a: 1 }]);
  });

  it('refuses the bad lines of a stream one by one', () => {
    expect(values('{"a":1}\n{oops\n{"c":3}', 'application/x-json-stream')).toEqual([
      { a: 1 },
      'Item is not valid JSON.',
      { c: 3 },
    ]);
  });

  it('refuses a body with nothing to read', () => {
    expect(bodyError(() => splitItems('', 'application/json')).message).toBe('Body is empty.');
    expect(bodyError(() => splitItems('  \n ', 'application/json')).message).toBe('Body is empty.');
    expect(bodyError(() => splitItems('[]', 'application/json')).message).toBe('Body holds no items.');
    expect(bodyError(() => splitItems('[{"a":1}', 'application/json')).message).toBe(
      'Body is not valid JSON.',
    );
    expect(bodyError(() => splitItems('{x\n{y', 'application/x-json-stream')).statusCode).toBe(400);
  });
});

describe('splitItems on JSON arrays', () => {
  const tricky = [
    '',
    '"',
    '\\',
    '\\"',
    '[',
    ']',
    '{',
    '}',
    ',',
    '\\\\',
    'a"b\\"c',
    '\u2028',
    'é',
    '\ud83d\ude00',
  ];
  function randomValue(depth: number, seed: { n: number }): unknown {
    const r = () => (seed.n = (seed.n * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = r();
    if (depth > 3 || pick < 0.3) return tricky[Math.floor(r() * tricky.length)];
    if (pick < 0.4) return Math.round(r() * 1e6) / 100;
    if (pick < 0.45) return [true, false, null][Math.floor(r() * 3)];
    if (pick < 0.7) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(depth + 1, seed));
    return Object.fromEntries(
      Array.from({ length: Math.floor(r() * 4) }, (_, i) => [
        `${tricky[i % tricky.length] ?? ''}${i}`,
        randomValue(depth + 1, seed),
      ]),
    );
  }

  it('gives each element the value JSON.parse gives, with its own text', () => {
    const seed = { n: 7 };
    for (let run = 0; run < 300; run++) {
      const array = Array.from({ length: 1 + (run % 5) }, () => randomValue(0, seed));
      for (const text of [JSON.stringify(array), JSON.stringify(array, null, run % 3)]) {
        const items = splitItems(` ${text}\n`, 'application/json');
        expect(items.map((i) => (i.ok ? i.value : i.message))).toEqual(array);
        for (const [index, item] of items.entries()) {
          if (!item.ok) throw new Error('refused');
          expect(JSON.parse(item.source?.text ?? 'null')).toEqual(array[index]);
        }
      }
    }
  });

  it('measures how deeply each element nests', () => {
    const items = splitItems('[{"a":[1,{"b":"]]]"}]}, 2, [[]]]', 'application/json');
    expect(items.map((i) => (i.ok ? i.source?.depth : i.message))).toEqual([3, 0, 2]);
  });

  it('still refuses what JSON.parse refuses', () => {
    for (const text of [
      '[{"a":1},]',
      '[,{"a":1}]',
      '[{"a":1}}',
      '[{"a":1}] x',
      '[\u00a0]',
      '[{"a":"1}]',
      '["\\"]',
    ]) {
      expect(bodyError(() => splitItems(text, 'application/json')).message, text).toBe(
        'Body is not valid JSON.',
      );
    }
  });
});

describe('decode', () => {
  it('gunzips, and passes identity bodies through', async () => {
    expect(await decode(gzipSync('[1]'), 'gzip', 100)).toBe('[1]');
    expect(await decode(Buffer.from('[1]'), undefined, 100)).toBe('[1]');
  });

  it('refuses invalid gzip, bombs and unknown codings', async () => {
    await expect(decode(Buffer.from('not gzip'), 'gzip', 100)).rejects.toMatchObject({
      statusCode: 400,
      message: 'Body is not valid gzip.',
    });
    await expect(decode(gzipSync(Buffer.alloc(10_000)), 'gzip', 1000)).rejects.toMatchObject({
      statusCode: 413,
      message: 'Decompressed body is larger than 1000 bytes.',
    });
    await expect(decode(Buffer.from('x'), 'br', 100)).rejects.toMatchObject({ statusCode: 415 });
  });
});
