import { describe, expect, it } from 'vitest';
import { InFlightBudget } from './in-flight.js';

describe('InFlightBudget', () => {
  it('counts what requests hold as it grows and gives it back once, however often released', () => {
    const budget = new InFlightBudget(100, 0);
    const a = budget.open('a');
    const b = budget.open('b');
    expect(a.charge(60)).toBe(true);
    expect(b.charge(30)).toBe(true);
    // Past the cap: refused, and nothing counted.
    expect(b.charge(20)).toBe(false);
    expect(budget.held).toBe(90);
    a.release();
    a.release();
    expect(budget.held).toBe(30);
    expect(a.charge(1)).toBe(false);
    b.release();
    expect(budget.held).toBe(0);
  });

  it('holds a source to its share, and lets a request alone through whatever its size', () => {
    const budget = new InFlightBudget(100, 25);
    const big = budget.open('a');
    // Alone: a cap below one body's size slows a deployment, it does not refuse every body.
    expect(big.charge(150)).toBe(true);
    big.release();
    const first = budget.open('a');
    const second = budget.open('a');
    expect(first.charge(20)).toBe(true);
    expect(second.charge(10)).toBe(false);
    expect(budget.full('a')).toBe(false);
    expect(second.charge(5)).toBe(true);
    expect(budget.full('a')).toBe(true);
    // Another source has a share of its own.
    expect(budget.open('b').charge(25)).toBe(true);
    expect(budget.full('b')).toBe(true);
    expect(budget.full('c')).toBe(false);
  });
});
