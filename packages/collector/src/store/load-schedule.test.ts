import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LoadSchedule } from './load-schedule.js';

describe('LoadSchedule', () => {
  let schedule: LoadSchedule | undefined;
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    schedule?.stop();
    vi.useRealTimers();
  });

  /** A journal of `count` pending items whose loads are recorded (and fail while `failing`). */
  function setUp(options: { failing?: () => boolean } = {}) {
    const limits: number[] = [];
    const warnings: string[] = [];
    const load = (limit: number) => {
      limits.push(limit);
      if (options.failing?.()) return Promise.reject(new Error('disk full'));
      return Promise.resolve(Math.min(limit, schedule?.pending ?? 0));
    };
    schedule = new LoadSchedule(load, { rows: 100, idleMs: 200, maxLagMs: 5000 }, (m) => warnings.push(m));
    return { schedule, limits, warnings };
  }

  it('loads whole row groups while appends go on, and the rest after a pause', async () => {
    const { schedule, limits } = setUp();
    schedule.appended(250);
    expect(schedule.behind).toBe(true);
    schedule.loadFull();
    await vi.advanceTimersByTimeAsync(0);
    expect(limits).toEqual([200]);
    expect(schedule.pending).toBe(50);
    expect(schedule.behind).toBe(false);
    await vi.advanceTimersByTimeAsync(250); // the pause
    expect(limits).toEqual([200, Infinity]);
    expect(schedule.pending).toBe(0);
  });

  it('loads a trickle of appends once the oldest has waited the longest it may', async () => {
    const { schedule, limits } = setUp();
    for (let i = 0; i < 60; i++) {
      schedule.appended(1);
      await vi.advanceTimersByTimeAsync(100); // never a pause of 200 ms
    }
    expect(limits).toEqual([Infinity]);
    expect(schedule.pending).toBeLessThan(60);
  });

  it('answers a flush once everything appended is loaded', async () => {
    const { schedule } = setUp();
    schedule.appended(30);
    await schedule.flush();
    expect(schedule.pending).toBe(0);
  });

  it('waits longer after each failed load, keeping the items, and says so', async () => {
    let failing = true;
    const { schedule, limits, warnings } = setUp({ failing: () => failing });
    schedule.appended(10);
    await expect(schedule.flush()).rejects.toThrow('disk full');
    expect(schedule.pending).toBe(10);
    await vi.advanceTimersByTimeAsync(900); // retried after 1 s, not before
    expect(limits).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(limits).toHaveLength(2); // failed again: next after 2 s
    await vi.advanceTimersByTimeAsync(1800);
    expect(limits).toHaveLength(2);
    failing = false;
    await vi.advanceTimersByTimeAsync(300);
    expect(limits).toHaveLength(3);
    expect(schedule.pending).toBe(0);
    expect(warnings[0]).toMatch(/failed \(Error: disk full\); will retry/);
  });

  it('keeps no timer while nothing waits: an idle store wakes nobody', async () => {
    const { schedule, limits } = setUp();
    expect(vi.getTimerCount()).toBe(0);
    schedule.appended(5);
    expect(vi.getTimerCount()).toBe(1);
    for (let i = 0; i < 10; i++) schedule.appended(1); // still the one timer
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(250);
    expect(limits).toEqual([Infinity]);
    expect(schedule.pending).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
