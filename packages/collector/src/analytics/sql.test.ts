import { describe, expect, it } from 'vitest';
import type { UsageRange } from '@gatehouse/api-contract';
import { bucketedPeriod, DAY, period } from './sql.js';

describe('period', () => {
  it('reads a preset range up to now', () => {
    expect(period({ range: '24h', now: 10 * DAY })).toEqual({ range: '24h', from: 9 * DAY, to: 10 * DAY });
  });

  // The store holder passes a replica's options on as they came: a range is looked up among its own.
  it('takes only its own ranges, not what every object inherits', () => {
    for (const range of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(() => period({ range: range as UsageRange })).toThrow(RangeError);
      expect(() => bucketedPeriod({ range: range as UsageRange })).toThrow(RangeError);
    }
  });
});
