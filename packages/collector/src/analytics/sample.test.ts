import { describe, expect, it } from 'vitest';
import { sampledCountEstimate, sampledMedianEstimate, sampleShift, widerShift } from './sample.js';

const sampling = { rowBudget: 1_000, minUsers: 100 };

describe('a sample of users', () => {
  it('thins by the fewest halvings that bring the rows within the budget', () => {
    expect(sampleShift(1_000, sampling)).toBe(0);
    expect(sampleShift(1_001, sampling)).toBe(1);
    expect(sampleShift(3_900, sampling)).toBe(2);
    expect(sampleShift(4_001, sampling)).toBe(3);
    // One user in 256 at most.
    expect(sampleShift(1e12, sampling)).toBe(8);
  });

  it('widens when the smallest figure rests on too few users, to every user if need be', () => {
    expect(widerShift(3, 100, sampling)).toBe(3);
    expect(widerShift(3, 60, sampling)).toBe(2);
    expect(widerShift(3, 20, sampling)).toBe(0);
    expect(widerShift(3, 0, sampling)).toBe(0);
    expect(widerShift(0, 0, sampling)).toBe(0);
  });

  it("states each estimate's error from the users it rests on", () => {
    expect(sampledCountEstimate('users', 2, 300).error).toBeCloseTo(Math.sqrt(0.75 / 300), 12);
    expect(sampledMedianEstimate('medianMsFromPrevious', 2, 2_500).error).toBeCloseTo(0.03, 12);
    expect(sampledCountEstimate('users', 3, 1).error).toBeCloseTo(Math.sqrt(7 / 8), 12);
  });
});
