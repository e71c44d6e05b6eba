import { describe, expect, it, vi } from 'vitest';
import { trackedFetch, type TrackedCall } from './fetch-tracking';

const BASE = 'http://app.example/profile';
const answer = (status: number) => new Response('', { status });

/** A fetch that records what it was given and answers `status` (or fails when `fail`). */
function browserFetch(status = 200, fail = false) {
  const calls: { input: RequestInfo | URL; init: RequestInit | undefined }[] = [];
  const promises: Promise<Response>[] = [];
  const fetch = vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ input, init });
    const promise = fail ? Promise.reject(new TypeError('Failed to fetch')) : Promise.resolve(answer(status));
    promises.push(promise);
    return promise;
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls, promises };
}

describe('trackedFetch', () => {
  it("sends the tracker's traceparent beside the call's own headers and hands the caller the browser's own promise", async () => {
    const browser = browserFetch(201);
    const done = vi.fn();
    const track = vi.fn((): TrackedCall => ({ traceparent: '00-a-b-01', done }));
    const fetch = trackedFetch(browser.fetch, track, () => BASE);

    const promise = fetch('/api/me', { method: 'post', headers: { 'Content-Type': 'application/json' } });
    expect(promise).toBe(browser.promises[0]);
    expect(track).toHaveBeenCalledWith('http://app.example/api/me', 'POST');
    const headers = new Headers(browser.calls[0]?.init?.headers);
    expect(headers.get('traceparent')).toBe('00-a-b-01');
    expect(headers.get('content-type')).toBe('application/json');
    expect(browser.calls[0]?.init?.method).toBe('post');
    expect((await promise).status).toBe(201);
    expect(done).toHaveBeenCalledWith(201);
  });

  it("keeps a Request's own headers and method when it comes without an init", async () => {
    const browser = browserFetch();
    const track = vi.fn((): TrackedCall => ({ traceparent: '00-a-b-01', done: vi.fn() }));
    const request = new Request('http://app.example/api/items', {
      method: 'PUT',
      headers: { 'X-Kept': '1' },
    });
    await trackedFetch(browser.fetch, track, () => BASE)(request);
    expect(track).toHaveBeenCalledWith('http://app.example/api/items', 'PUT');
    const headers = new Headers(browser.calls[0]?.init?.headers);
    expect(headers.get('x-kept')).toBe('1');
    expect(headers.get('traceparent')).toBe('00-a-b-01');
  });

  it('reports status 0 for a call that failed, which still fails for its caller', async () => {
    const browser = browserFetch(200, true);
    const done = vi.fn();
    const fetch = trackedFetch(
      browser.fetch,
      () => ({ done }),
      () => BASE,
    );
    await expect(fetch('https://other.example/x')).rejects.toThrow('Failed to fetch');
    expect(done).toHaveBeenCalledWith(0);
    // No header where the tracker gives none (another origin).
    expect(browser.calls[0]?.init).toBeUndefined();
  });

  it('leaves an untracked call exactly as it came', async () => {
    const browser = browserFetch();
    const init = { headers: { A: 'b' } };
    await trackedFetch(
      browser.fetch,
      () => undefined,
      () => BASE,
    )('/v2/track', init);
    expect(browser.calls[0]).toEqual({ input: '/v2/track', init });
  });
});
