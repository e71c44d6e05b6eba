import { expect, it } from 'vitest';
import { validateEnvelope } from './envelopes.js';
import { browserBatch } from '../test-support/browser-envelopes.js';
import { listPacked, packedTimes, packItems } from './packed.js';

it("reads each packed item's event time, escaped rows included", () => {
  const items = browserBatch(3).map((envelope, i) => {
    const result = validateEnvelope(envelope, () => true);
    if (!result.ok) throw new Error(result.message);
    // The second holds a character packed rows escape, so its row starts with FS.
    return { ...result.item, time: 1_700_000_000_000 + i, message: i === 1 ? 'a\u001eb' : null };
  });
  const packed = listPacked([packItems(items.slice(0, 2)), packItems(items.slice(2))]);
  expect(packed.chunks[0]?.split('\u001e')[1]?.startsWith('\u001c')).toBe(true);
  expect(packedTimes(packed)).toEqual([1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_002]);
});
