import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TelemetrySdk } from './sdk';
import { TelemetryClient, type TelemetryRuntime } from './telemetry';

function fakeSdk() {
  return {
    trackPageView: vi.fn(),
    trackException: vi.fn(),
    trackEvent: vi.fn(),
    trackMetric: vi.fn(),
    trackTrace: vi.fn(),
    setAuthenticatedUser: vi.fn(),
    clearAuthenticatedUser: vi.fn(),
    flush: vi.fn(),
    unload: vi.fn(),
  } satisfies TelemetrySdk;
}

const runtime = (consent: TelemetryRuntime['consent']): TelemetryRuntime => ({
  connectionString: 'InstrumentationKey=k;IngestionEndpoint=http://localhost:3000/',
  consent,
});

/** Lets the after-first-paint timer and the pending promises run. */
async function settle() {
  await vi.advanceTimersByTimeAsync(200);
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal('requestAnimationFrame', () => 0);
  localStorage.clear();
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('TelemetryClient', () => {
  it('queues calls until the SDK has loaded, then sends them in order', async () => {
    const sdk = fakeSdk();
    const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    client.trackPageView('Home', 'http://localhost/');
    client.trackException(new Error('early'));
    client.start(() => Promise.resolve(runtime('implied')));
    expect(sdk.trackPageView).not.toHaveBeenCalled();
    await settle();
    expect(sdk.trackPageView).toHaveBeenCalledWith('Home', 'http://localhost/', undefined);
    expect(sdk.trackException).toHaveBeenCalledWith(new Error('early'), {});
    client.trackPageView('Profile', 'http://localhost/profile', 12);
    expect(sdk.trackPageView).toHaveBeenLastCalledWith('Profile', 'http://localhost/profile', 12);
  });

  it('loads nothing and stores nothing until the visitor accepts', async () => {
    const sdk = fakeSdk();
    const load = vi.fn(() => Promise.resolve({ startSdk: () => sdk }));
    const client = new TelemetryClient(load);
    client.start(() => Promise.resolve(runtime('ask')));
    client.trackPageView('Home', 'http://localhost/');
    await settle();
    expect(client.getConsent()).toBe('ask');
    expect(load).not.toHaveBeenCalled();

    client.choose('granted');
    await settle();
    expect(load).toHaveBeenCalledTimes(1);
    expect(sdk.trackPageView).toHaveBeenCalledWith('Home', 'http://localhost/', undefined);
    expect(localStorage.getItem('gatehouse.telemetry-consent')).toBe('granted');
  });

  it('drops everything when the visitor declines, and remembers it', async () => {
    const load = vi.fn(() => Promise.resolve({ startSdk: () => fakeSdk() }));
    const client = new TelemetryClient(load);
    client.start(() => Promise.resolve(runtime('ask')));
    await settle();
    client.choose('denied');
    client.trackPageView('Home', 'http://localhost/');
    await settle();
    expect(load).not.toHaveBeenCalled();

    const next = new TelemetryClient(load);
    next.start(() => Promise.resolve(runtime('ask')));
    await settle();
    expect(next.getConsent()).toBe('denied');
    expect(load).not.toHaveBeenCalled();
  });

  it('catches errors that happen before the SDK is there', async () => {
    const sdk = fakeSdk();
    const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    client.start(() => Promise.resolve(runtime('implied')));
    window.dispatchEvent(new ErrorEvent('error', { error: new Error('boom'), message: 'boom' }));
    await settle();
    expect(sdk.trackException).toHaveBeenCalledWith(new Error('boom'), { source: 'window.onerror' });
  });

  it('switches off quietly when the SDK cannot load, with one warning', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const client = new TelemetryClient(() => Promise.reject(new Error('blocked by an ad blocker')));
    client.start(() => Promise.resolve(runtime('implied')));
    await settle();
    expect(client.getConsent()).toBe('unavailable');
    client.trackPageView('Home', 'http://localhost/');
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
