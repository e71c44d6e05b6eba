import { describe, expect, it } from 'vitest';
import { RateLimits } from './rate-limit.js';

/** A clock the test moves by hand. */
function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('RateLimits', () => {
  it('grants what the bucket holds and never goes into debt', () => {
    const time = clock();
    const limits = new RateLimits(undefined, 100, time.now);
    expect(limits.grant('a', 3500)).toEqual({ granted: 100, retryAfter: 1 });
    expect(limits.grant('a', 10)).toEqual({ granted: 0, retryAfter: 1 });
    // Half a second later half a bucket is back, not 3,400 items still owed.
    time.advance(500);
    expect(limits.grant('a', 3400).granted).toBe(50);
    time.advance(60_000);
    expect(limits.grant('a', 3400).granted).toBe(100);
  });

  it('gives each source its own bucket under one shared by all', () => {
    const time = clock();
    const limits = new RateLimits(150, 100, time.now);
    expect(limits.grant('a', 1000).granted).toBe(100);
    expect(limits.grant('b', 1000).granted).toBe(50);
    expect(limits.grant('c', 1).granted).toBe(0);
    expect(limits.grant('a', 1)).toEqual({ granted: 0, retryAfter: 1 });
    time.advance(1000);
    expect(limits.grant('c', 1).granted).toBe(1);
  });

  it('keeps at most 10,000 source buckets, however many addresses send', () => {
    const time = clock();
    const limits = new RateLimits(undefined, 10, time.now);
    for (let i = 0; i < 25_000; i++) {
      limits.grant(`2001:db8::${i.toString(16)}`, 5);
      if (i % 1000 === 0) time.advance(10);
    }
    expect(limits.tracked).toBeLessThanOrEqual(10_000);
  });

  it('forgets the buckets of idle sources first, so one still spending keeps its own', () => {
    const time = clock();
    const limits = new RateLimits(undefined, 10, time.now);
    for (let i = 0; i < 9_999; i++) limits.grant(`198.51.100.${i}`, 5);
    time.advance(2000); // all of them full again
    limits.grant('busy', 10);
    limits.grant('newcomer', 1);
    expect(limits.tracked).toBe(2);
    expect(limits.grant('busy', 10).granted).toBe(0);
  });
});
