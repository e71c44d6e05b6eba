import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterAddressChange, afterFirstPaint, afterNextFrame } from './after-first-paint';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** A PerformanceObserver stand-in that the test feeds paint entries. */
function fakePaintTiming() {
  const observers: Array<(names: string[]) => void> = [];
  class FakeObserver {
    static supportedEntryTypes = ['paint'];
    constructor(private readonly callback: PerformanceObserverCallback) {}
    observe() {
      observers.push((names) =>
        this.callback(
          {
            getEntriesByName: (name: string) => (names.includes(name) ? [{}] : []),
          } as unknown as PerformanceObserverEntryList,
          this as unknown as PerformanceObserver,
        ),
      );
    }
    disconnect() {}
  }
  vi.stubGlobal('PerformanceObserver', FakeObserver);
  return { paint: (...names: string[]) => observers.forEach((notify) => notify(names)) };
}

describe('afterFirstPaint', () => {
  it('waits for the first contentful paint, not just any paint', () => {
    vi.useFakeTimers();
    const timing = fakePaintTiming();
    const task = vi.fn();
    afterFirstPaint(task);
    timing.paint('first-paint');
    vi.advanceTimersByTime(1_000);
    expect(task).not.toHaveBeenCalled();
    timing.paint('first-paint', 'first-contentful-paint');
    vi.advanceTimersByTime(0);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('runs at once in a hidden tab, which paints nothing', () => {
    vi.useFakeTimers();
    fakePaintTiming();
    vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    const task = vi.fn();
    afterFirstPaint(task);
    vi.advanceTimersByTime(0);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('falls back to a timer where paint timing is not supported', () => {
    vi.useFakeTimers();
    vi.stubGlobal('PerformanceObserver', undefined);
    const task = vi.fn();
    afterFirstPaint(task, 100);
    vi.advanceTimersByTime(99);
    expect(task).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(task).toHaveBeenCalledTimes(1);
  });
});

describe('afterNextFrame', () => {
  it('runs the task once, after the next frame', () => {
    vi.useFakeTimers();
    const frames: FrameRequestCallback[] = [];
    vi.stubGlobal('requestAnimationFrame', (callback: FrameRequestCallback) => frames.push(callback));
    const task = vi.fn();
    afterNextFrame(task);
    expect(task).not.toHaveBeenCalled();
    frames.forEach((frame) => frame(0));
    vi.advanceTimersByTime(0);
    expect(task).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('still runs in a tab that paints no frames', () => {
    vi.useFakeTimers();
    vi.stubGlobal('requestAnimationFrame', () => 0);
    const task = vi.fn();
    afterNextFrame(task, 100);
    vi.advanceTimersByTime(99);
    expect(task).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(task).toHaveBeenCalledTimes(1);
  });
});

describe('afterAddressChange', () => {
  // What wouter's router dispatches when the page calls history.replaceState.
  const replaceAddress = (url: string) => {
    window.history.replaceState(null, '', url);
    window.dispatchEvent(new Event('replaceState'));
  };

  it('waits until the address changes, once, whatever else the history events say', () => {
    vi.useFakeTimers();
    window.history.replaceState(null, '', '/callback?code=c&state=s');
    const task = vi.fn();
    afterAddressChange(task);
    window.dispatchEvent(new Event('replaceState'));
    window.dispatchEvent(new Event('popstate'));
    vi.advanceTimersByTime(5_000);
    expect(task).not.toHaveBeenCalled();
    replaceAddress('/callback');
    vi.advanceTimersByTime(1);
    expect(task).toHaveBeenCalledTimes(1);
    replaceAddress('/');
    vi.advanceTimersByTime(20_000);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('runs after its time-out when the address never changes, and only then', () => {
    vi.useFakeTimers();
    window.history.replaceState(null, '', '/callback?code=c&state=s');
    const task = vi.fn();
    afterAddressChange(task, 3_000);
    vi.advanceTimersByTime(2_999);
    expect(task).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    vi.advanceTimersByTime(1);
    expect(task).toHaveBeenCalledTimes(1);
    replaceAddress('/');
    vi.advanceTimersByTime(1_000);
    expect(task).toHaveBeenCalledTimes(1);
  });
});
