import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { afterCallers } from './after-callers';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('afterCallers', () => {
  it('runs the tasks in order in a later task, after the code that queued them', async () => {
    const { later } = afterCallers();
    const order: string[] = [];
    later(() => order.push('first report'));
    later(() => order.push('second report'));
    order.push('the caller');
    await Promise.resolve();
    order.push('the caller, after its await');
    expect(order).toEqual(['the caller', 'the caller, after its await']);
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['the caller', 'the caller, after its await', 'first report', 'second report']);
  });

  it('runs what waits at once when the page is left or hidden, and each task once', async () => {
    const { later } = afterCallers();
    const ran = vi.fn();
    later(ran);
    window.dispatchEvent(new Event('pagehide'));
    expect(ran).toHaveBeenCalledTimes(1);
    later(ran);
    vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    document.dispatchEvent(new Event('visibilitychange'));
    expect(ran).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toHaveBeenCalledTimes(2);
  });

  it('runs what waits when asked, and not again later', async () => {
    const queue = afterCallers();
    const ran = vi.fn();
    queue.later(ran);
    queue.runAll();
    expect(ran).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toHaveBeenCalledTimes(1);
  });
});
