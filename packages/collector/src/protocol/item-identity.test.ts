import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { itemKey, RecentKeys } from './item-identity.js';

it('keys an envelope by its text, as a number exact in JS', () => {
  const text = '{"time":"2026-01-02T03:04:05.678Z","iKey":"k"}';
  expect(itemKey(text)).toBe(itemKey(text));
  expect(itemKey(text)).not.toBe(itemKey(text.replace('678', '679')));
  expect(Number.isSafeInteger(itemKey(text))).toBe(true);
});

it('remembers at most its capacity, forgetting the oldest first', () => {
  const recent = new RecentKeys(4);
  for (let key = 1; key <= 10; key++) {
    recent.add(key);
    expect(recent.size).toBeLessThanOrEqual(4);
  }
  expect([7, 8, 9, 10].every((key) => recent.has(key))).toBe(true);
  expect([1, 2, 3, 4, 5, 6].some((key) => recent.has(key))).toBe(false);
  recent.delete(9);
  expect(recent.has(9)).toBe(false);
});

it("keys an envelope as DuckDB's ITEM_KEY_SQL does: the SHA-256's first 13 hex digits", () => {
  for (const text of ['{"a":1}', '{"time":"2026-01-02T03:04:05.678Z"}', 'é'.repeat(100)]) {
    const hex = createHash('sha256').update(text).digest('hex');
    expect(itemKey(text)).toBe(parseInt(hex.slice(0, 13), 16));
  }
});

it('tells apart keys that share a slot, and finds one past a deleted key', () => {
  const recent = new RecentKeys(1000);
  // The same low 32 bits (the slot), different high bits: a chain of three in one table.
  const [a, b, c] = [7, 7 + 2 ** 32, 7 + 2 ** 40];
  recent.add(a);
  recent.add(b);
  expect(recent.has(c)).toBe(false);
  recent.add(c);
  recent.delete(b);
  expect([recent.has(a), recent.has(b), recent.has(c)]).toEqual([true, false, true]);
  expect(recent.size).toBe(2);
  expect(recent.has(2 ** 52 - 1)).toBe(false);
  recent.add(2 ** 52 - 1);
  expect(recent.has(2 ** 52 - 1)).toBe(true);
});

it('says up to which event time it may have let keys go', () => {
  const recent = new RecentKeys(4);
  expect(recent.mayHaveForgotten(0)).toBe(false);
  // Two generations of two: the first generation (times 10 and 30) goes when the fifth key comes.
  [10, 30, 20, 40].forEach((time, key) => recent.add(key, time));
  expect(recent.drops).toBe(0);
  recent.add(4, 50);
  expect([recent.forgottenUpTo, recent.drops]).toEqual([30, 1]);
  expect([recent.mayHaveForgotten(30), recent.mayHaveForgotten(31)]).toEqual([true, false]);
  // A generation whose keys were all deleted (their writes failed) held nothing stored.
  recent.delete(2);
  recent.delete(3);
  recent.add(5, 60);
  recent.add(6, 70);
  expect([recent.forgottenUpTo, recent.drops]).toEqual([30, 1]);
});
