import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeBehindStorage } from './write-behind-storage';

/** A storage that records its writes, and a page whose events the test fires. */
function setUp() {
  const kept = new Map<string, string>();
  const setItem = vi.fn((name: string, data: string) => void kept.set(name, data));
  const storage = { getItem: (name: string) => kept.get(name) ?? null, setItem };
  // The window: visibilitychange reaches its capturing listeners from the document, as in a browser.
  const document: { visibilityState: DocumentVisibilityState } = { visibilityState: 'visible' };
  const page = Object.assign(new EventTarget(), { document });
  const buffers = writeBehindStorage(storage, page, 1_000);
  const fire = (type: string) => page.dispatchEvent(new Event(type));
  return { kept, setItem, buffers, page, fire };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('writeBehindStorage (the SDK send buffers in sessionStorage)', () => {
  it('writes each buffer once a second with its latest contents, and reads what waits', () => {
    vi.useFakeTimers();
    const { kept, setItem, buffers } = setUp();
    for (const data of ['["a"]', '["a","b"]', '["a","b","c"]']) buffers.setItem(null, 'AI_buffer', data);
    buffers.setItem(null, 'AI_sentBuffer', '[]');
    expect(setItem).not.toHaveBeenCalled();
    expect(buffers.getItem(null, 'AI_buffer')).toBe('["a","b","c"]');
    vi.advanceTimersByTime(999);
    expect(setItem).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(setItem).toHaveBeenCalledTimes(2);
    expect(kept.get('AI_buffer')).toBe('["a","b","c"]');
    expect(buffers.getItem(null, 'nothing')).toBe('');
  });

  it('writes what waits when the page is left, and every change after that at once, until it is shown again', () => {
    vi.useFakeTimers();
    const { kept, setItem, buffers, fire } = setUp();
    buffers.setItem(null, 'AI_buffer', '["a"]');
    fire('pagehide');
    expect(kept.get('AI_buffer')).toBe('["a"]');
    // The SDK's own page-hide flush moves the items it sends by beacon to its sent buffer.
    buffers.setItem(null, 'AI_buffer', '[]');
    expect(kept.get('AI_buffer')).toBe('[]');
    fire('pageshow');
    setItem.mockClear();
    buffers.setItem(null, 'AI_buffer', '["b"]');
    expect(setItem).not.toHaveBeenCalled();
  });

  it('writes what waits when the page is hidden', () => {
    const { kept, buffers, page, fire } = setUp();
    buffers.setItem(null, 'AI_buffer', '["a"]');
    page.document.visibilityState = 'hidden';
    fire('visibilitychange');
    expect(kept.get('AI_buffer')).toBe('["a"]');
  });

  it('answers false, never throws, when the storage refuses a write', () => {
    const { setItem, buffers, fire } = setUp();
    setItem.mockImplementation(() => {
      throw new DOMException('full', 'QuotaExceededError');
    });
    fire('pagehide');
    expect(buffers.setItem(null, 'AI_buffer', '["a"]')).toBe(false);
  });
});
