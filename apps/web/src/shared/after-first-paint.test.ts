import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterFirstPaint } from './after-first-paint';

afterEach(() => vi.useRealTimers());

describe('afterFirstPaint', () => {
  it('runs the task once, after the next frame', () => {
    vi.useFakeTimers();
    const frames: FrameRequestCallback[] = [];
    vi.stubGlobal('requestAnimationFrame', (callback: FrameRequestCallback) => frames.push(callback));
    const task = vi.fn();
    afterFirstPaint(task);
    expect(task).not.toHaveBeenCalled();
    frames.forEach((frame) => frame(0));
    vi.advanceTimersByTime(0);
    expect(task).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(task).toHaveBeenCalledTimes(1);
    vi.unstubAllGlobals();
  });

  it('still runs in a tab that paints no frames', () => {
    vi.useFakeTimers();
    vi.stubGlobal('requestAnimationFrame', () => 0);
    const task = vi.fn();
    afterFirstPaint(task, 100);
    vi.advanceTimersByTime(99);
    expect(task).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(task).toHaveBeenCalledTimes(1);
    vi.unstubAllGlobals();
  });
});
