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
