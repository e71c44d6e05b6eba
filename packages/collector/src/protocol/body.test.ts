import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BodyError, BodyStopped, inflate, splitItems, splitItemsExactly } from './body.js';
import { browserBatch } from '../test-support/browser-envelopes.js';

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

describe('splitItems guessing where array elements end', () => {
  type Split = typeof splitItems;
  /** Everything splitItems gives back (or the refusal), and how deep each item's text is said to nest. */
  function outcome(split: Split, text: string) {
    try {
      const items = split(text, 'application/json');
      return {
        items: items.map((i) => (i.ok ? { value: i.value, text: i.source?.text } : i.message)),
        depths: items.map((i) => (i.ok ? i.source?.depth : undefined)),
      };
    } catch (error) {
      if (error instanceof BodyError) return { refused: `${error.statusCode} ${error.message}` };
      throw error;
    }
  }

  let guessedDepths = 0;
  /** splitItems gives what splitItemsExactly gives, with depths never below the exact ones. */
  function expectSameAsExact(text: string) {
    const guessed = outcome(splitItems, text);
    const exact = outcome(splitItemsExactly, text);
    expect({ text, ...guessed, depths: undefined }).toEqual({ text, ...exact, depths: undefined });
    for (const [index, depth] of (exact.depths ?? []).entries()) {
      const bound = guessed.depths?.[index];
      if (depth === undefined) expect(bound, text).toBeUndefined();
      else expect(bound, text).toBeGreaterThanOrEqual(depth);
      if (bound !== depth) guessedDepths++;
    }
    // And both agree with JSON.parse of the whole body.
    let whole: unknown;
    try {
      whole = JSON.parse(text.replace(/^\ufeff/, ''));
    } catch {
      return;
    }
    if (Array.isArray(whole) && whole.length > 0)
      expect(
        guessed.items?.map((i) => (typeof i === 'string' ? i : i.value)),
        text,
      ).toEqual(whole);
  }

  const strings = ['},{', '"},{"', '},{"a":1}', '[', ']', ']},{[', '{', '}', '\\', '\\"', '"', ',', ' ', 'é'];
  function random(seed: { n: number }) {
    return () => (seed.n = (seed.n * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  }
  function value(r: () => number, depth: number): unknown {
    const pick = r();
    if (depth > 4 || pick < 0.35) return strings[Math.floor(r() * strings.length)];
    if (pick < 0.45) return Math.round(r() * 1e4) / 100;
    if (pick < 0.5) return [true, false, null][Math.floor(r() * 3)];
    // Arrays of objects, like an exception's parsedStack, write `},{` inside an element.
    if (pick < 0.7) return Array.from({ length: Math.floor(r() * 4) }, () => ({ f: value(r, depth + 1) }));
    return Object.fromEntries(
      Array.from({ length: Math.floor(r() * 4) }, (_, i) => [
        `${strings[i] ?? ''}k${i}`,
        value(r, depth + 1),
      ]),
    );
  }
  const envelope = (r: () => number) => ({
    data: value(r, 1),
    tags: { s: strings[Math.floor(r() * strings.length)] },
  });

  it('guesses the elements of a browser SDK batch, bounding their depth by their brackets', () => {
    const text = JSON.stringify(browserBatch(21));
    const items = splitItems(text, 'text/plain;charset=UTF-8');
    expect(items).toHaveLength(21);
    expect(items.map((i) => (i.ok ? i.source?.text : i.message))).toEqual(
      splitItemsExactly(text, undefined).map((i) => (i.ok ? i.source?.text : i.message)),
    );
    for (const item of items) {
      if (!item.ok) throw new Error('refused');
      expect(item.source?.depth).toBe(item.source?.text.match(/[[{]/g)?.length);
    }
  });

  it('gives exactly what the exact scan gives, on arrays written in many ways', () => {
    const r = random({ n: 11 });
    const separators = [',', ',', ', ', ' ,\n ', '\n,\t'];
    guessedDepths = 0;
    for (let run = 0; run < 400; run++) {
      const elements = Array.from({ length: Math.floor(r() * 6) }, () =>
        r() < 0.9 ? envelope(r) : value(r, 0),
      );
      const texts = elements.map((e) => JSON.stringify(e));
      const separator = separators[run % separators.length] ?? ',';
      expectSameAsExact(`[${texts.join(separator)}]`);
      expectSameAsExact(` \n[ ${texts.join(',')} ]\r\n`);
      expectSameAsExact(JSON.stringify(elements, null, run % 3));
    }
    // Guessed items are told the number of brackets in their text, not always their exact depth.
    expect(guessedDepths).toBeGreaterThan(300);
  });

  it('gives exactly what the exact scan gives, on mutated and adversarial bodies', () => {
    const r = random({ n: 5 });
    const inserts = ['}', '{', ',', '"', '\\', '[', ']', ' ', '},{', '}, {', '"},{"', '1', 'x', '\n'];
    for (let run = 0; run < 1500; run++) {
      let text = JSON.stringify(Array.from({ length: 1 + Math.floor(r() * 4) }, () => envelope(r)));
      for (let edits = 1 + Math.floor(r() * 3); edits > 0; edits--) {
        const at = Math.floor(r() * (text.length + 1));
        const op = r();
        if (op < 0.3) text = text.slice(0, at) + text.slice(at + 1);
        else if (op < 0.9)
          text = text.slice(0, at) + (inserts[Math.floor(r() * inserts.length)] ?? '') + text.slice(at);
        else text = text.slice(0, at);
      }
      expectSameAsExact(text);
    }
    const deep = (n: number) => `${'[{"a":'.repeat(n)}1${'}]'.repeat(n)}`;
    for (const text of [
      '[]',
      '[ ]',
      '[,]',
      '[{}]',
      '[{},]',
      '[{},{}]',
      '[{}{}]',
      '[{},,{}]',
      '[{}] ',
      '[{}]x',
      '[{}],{}]',
      '[{},{}',
      '[1,2,{"a":3},{"b":[4]}]',
      '["},{",{"a":"},{"},{"b":"]"},{"c":"["}]',
      '[{"a":"},{"},{"b":1}]',
      '[{"a":"\\\\"},{"b":"\\"},{"}]',
      '[{"a":[{"b":[{},{}]},{}]},{}]',
      '[{"a":[{},{"b":"]"}]},{"c":[{},{}]}]',
      '[{"a":[{},{}]},{"b":"[x"},{"c":"]"}]',
      `[{},${deep(40)},{}]`,
      `[${deep(32)},${deep(33)}]`,
      `[${Array.from({ length: 40 }, () => '{"a":"},{"}').join(',')}]`,
      `[${Array.from({ length: 40 }, () => '{"a":["},{"]}').join(',')}]`,
      `[{"a":[${Array.from({ length: 40 }, () => '{}').join(',')}]},{}]`,
      '\ufeff[{"a":1},{"b":2}]',
    ]) {
      expectSameAsExact(text);
    }
  });
});

describe('inflate', () => {
  it('gunzips, and passes identity bodies through', async () => {
    expect((await inflate(gzipSync('[1]'), 'gzip', 100)).toString('utf8')).toBe('[1]');
    expect((await inflate(Buffer.from('[1]'), undefined, 100)).toString('utf8')).toBe('[1]');
  });

  it('refuses invalid gzip, bombs and unknown codings', async () => {
    await expect(inflate(Buffer.from('not gzip'), 'gzip', 100)).rejects.toMatchObject({
      statusCode: 400,
      message: 'Body is not valid gzip.',
    });
    await expect(inflate(gzipSync(Buffer.alloc(10_000)), 'gzip', 1000)).rejects.toMatchObject({
      statusCode: 413,
      message: 'Decompressed body is larger than 1000 bytes.',
    });
    await expect(inflate(Buffer.from('x'), 'br', 100)).rejects.toMatchObject({ statusCode: 415 });
  });

  it('charges each inflated chunk as it is made, and stops at the first one refused', async () => {
    const sizes: number[] = [];
    const inflated = await inflate(gzipSync(Buffer.alloc(300_000)), 'gzip', 1_000_000, (bytes) => {
      sizes.push(bytes);
      return true;
    });
    expect(inflated.length).toBe(300_000);
    expect(sizes.length).toBeGreaterThan(1);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(300_000);

    let charged = 0;
    const refused = inflate(gzipSync(Buffer.alloc(300_000)), 'gzip', 1_000_000, (bytes) => {
      if (charged + bytes > 100_000) return false;
      charged += bytes;
      return true;
    });
    await expect(refused).rejects.toBeInstanceOf(BodyStopped);
    expect(charged).toBeLessThanOrEqual(100_000);
  });

  it('refuses an empty gzip body as invalid', async () => {
    await expect(inflate(Buffer.alloc(0), 'gzip', 100)).rejects.toMatchObject({ statusCode: 400 });
  });
});
