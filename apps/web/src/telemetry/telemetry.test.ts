import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TelemetrySdk } from './sdk';
import {
  FOLLOW_IDS_WAIT_MS,
  LEAVING_HOLD_LIMIT_MS,
  LEAVING_HOLD_MS,
  TelemetryClient,
  USER_ID_WAIT_MS,
  type TelemetryRuntime,
} from './telemetry';
import type { WebVital } from './web-vitals';
import { WEB_VITALS_MARK } from './web-vitals-mark';

function fakeSdk(ids = { user: 'old-user', session: 'old-session' }) {
  return {
    ids: vi.fn(() => ids),
    trackPageView: vi.fn(),
    trackException: vi.fn(),
    trackEvent: vi.fn(),
    trackMetric: vi.fn(),
    trackTrace: vi.fn(),
    traceId: vi.fn(() => '0af7651916cd43dd8448eb211c80319c'),
    startOperation: vi.fn(),
    trackDependency: vi.fn(),
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

/** A client whose SDK has started (`first`); the next start (a fresh identity) gets `second`. */
async function startedWithTwoSdks(second = fakeSdk()) {
  const first = fakeSdk();
  const startSdk = vi.fn().mockReturnValueOnce(first).mockReturnValueOnce(second);
  const client = new TelemetryClient(() => Promise.resolve({ startSdk }));
  client.start(() => Promise.resolve(runtime('implied')));
  await settle();
  return { first, second, startSdk, client };
}

/** Lets the after-first-paint timer and the pending promises run. */
async function settle() {
  await vi.advanceTimersByTimeAsync(200);
}

/** The test window's own fetch: a client whose SDK starts tracks the page's fetch calls by wrapping it. */
const windowFetch = window.fetch.bind(window);
beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal('requestAnimationFrame', () => 0);
  localStorage.clear();
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  window.fetch = windowFetch;
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

  it('starts a fresh SDK with no ai_* state left when asked for a fresh identity', async () => {
    const { first, second, startSdk, client } = await startedWithTwoSdks();
    document.cookie = 'ai_user=old-user; path=/';
    document.cookie = 'ai_session=old-session; path=/';
    localStorage.setItem('ai_session', 'old-session');
    localStorage.setItem('gatehouse.telemetry-consent', 'granted');

    client.startFreshIdentity();
    expect(first.flush).toHaveBeenCalled();
    expect(first.unload).toHaveBeenCalled();
    expect(document.cookie).not.toContain('ai_');
    expect(localStorage.getItem('ai_session')).toBeNull();
    expect(localStorage.getItem('gatehouse.telemetry-consent')).toBe('granted');
    client.trackPageView('Home', 'http://localhost/');
    await settle();
    expect(startSdk).toHaveBeenCalledTimes(2);
    expect(second.trackPageView).toHaveBeenCalledWith('Home', 'http://localhost/', undefined);
    expect(first.trackPageView).not.toHaveBeenCalled();
  });

  describe('when another tab signed out', () => {
    /** Every `ai_*` cookie this test window holds, as `name=value`. */
    const aiCookies = () =>
      document.cookie
        .split('; ')
        .filter((entry) => entry.startsWith('ai_'))
        .sort();

    async function followingTab() {
      const started = await startedWithTwoSdks(fakeSdk({ user: 'from-the-other-tab', session: 'any' }));
      document.cookie = 'ai_user=old-user|2026-11-29; path=/';
      document.cookie = 'ai_session=old-session|1|1; path=/';
      return started;
    }
    afterEach(() => {
      for (const name of ['ai_user', 'ai_session']) document.cookie = `${name}=; Max-Age=0; path=/`;
    });

    it('stops sending under the old ids at once, writes no id of its own, and takes up the ones that tab writes', async () => {
      const { first, second, startSdk, client } = await followingTab();
      client.followFreshIdentity();
      expect(first.flush).toHaveBeenCalled();
      expect(first.unload).toHaveBeenCalled();
      client.trackPageView('Home', 'http://localhost/');
      await vi.advanceTimersByTimeAsync(FOLLOW_IDS_WAIT_MS / 2);
      // Still the old ids in the cookies: nothing starts and nothing is written meanwhile.
      expect(startSdk).toHaveBeenCalledTimes(1);
      expect(aiCookies()).toEqual(['ai_session=old-session|1|1', 'ai_user=old-user|2026-11-29']);

      // The other tab forgets the old ids and its fresh SDK writes a new user (the session comes with its
      // first item).
      document.cookie = 'ai_session=; Max-Age=0; path=/';
      document.cookie = 'ai_user=new-user|2026-11-29; path=/';
      await settle();
      expect(startSdk).toHaveBeenCalledTimes(2);
      expect(aiCookies()).toEqual(['ai_user=new-user|2026-11-29']);
      expect(second.trackPageView).toHaveBeenCalledWith('Home', 'http://localhost/', undefined);
      expect(first.trackPageView).not.toHaveBeenCalled();
    });

    it('never takes up the old session, even when the new user is there first', async () => {
      const { startSdk, client } = await followingTab();
      client.followFreshIdentity();
      document.cookie = 'ai_user=new-user|2026-11-29; path=/';
      await settle();
      expect(startSdk).toHaveBeenCalledTimes(2);
      expect(aiCookies()).toEqual(['ai_user=new-user|2026-11-29']);
    });

    it('makes fresh ids itself when none come in time', async () => {
      const { second, startSdk, client } = await followingTab();
      client.followFreshIdentity();
      client.trackPageView('Home', 'http://localhost/');
      await vi.advanceTimersByTimeAsync(FOLLOW_IDS_WAIT_MS - 100);
      expect(startSdk).toHaveBeenCalledTimes(1);
      await settle();
      expect(startSdk).toHaveBeenCalledTimes(2);
      expect(aiCookies()).toEqual([]);
      expect(second.trackPageView).toHaveBeenCalledWith('Home', 'http://localhost/', undefined);
    });

    it('ends its wait when the visitor declines meanwhile', async () => {
      const { startSdk, client } = await followingTab();
      client.followFreshIdentity();
      client.choose('denied');
      document.cookie = 'ai_user=new-user|2026-11-29; path=/';
      await vi.advanceTimersByTimeAsync(FOLLOW_IDS_WAIT_MS * 2);
      expect(startSdk).toHaveBeenCalledTimes(1);
    });
  });

  it('holds items until the signed-in user id arrives, so they carry it; and not forever', async () => {
    const sdk = fakeSdk();
    const calls: string[] = [];
    sdk.setAuthenticatedUser.mockImplementation((id: string, roles: string) =>
      calls.push(`user ${id} (${roles})`),
    );
    sdk.trackPageView.mockImplementation((name: string) => calls.push(`view ${name}`));
    const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    client.start(() => Promise.resolve(runtime('implied')));
    await settle();
    let answer: (id: string) => void = () => {};
    client.identifyUser(new Promise((resolve) => (answer = resolve)), ['admin', 'member']);
    client.trackPageView('Profile', 'http://localhost/profile');
    await settle();
    expect(calls).toEqual([]);
    answer('server-issued-id');
    await settle();
    expect(calls).toEqual(['user server-issued-id (admin,member)', 'view Profile']);

    client.identifyUser(new Promise(() => {})); // the API never answers
    client.trackPageView('Home', 'http://localhost/');
    await vi.advanceTimersByTimeAsync(USER_ID_WAIT_MS);
    expect(calls.at(-1)).toBe('view Home');
  });

  it('switches off quietly when the SDK cannot load: one warning, and later calls load nothing again', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const load = vi.fn(() => Promise.reject(new Error('blocked by an ad blocker')));
    const client = new TelemetryClient(load);
    client.start(() => Promise.resolve(runtime('implied')));
    await settle();
    expect(client.getConsent()).toBe('unavailable');
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith('Usage telemetry is off: its code could not be loaded.');
    // Tracking goes on in the app as if nothing happened: no error, no retry of the blocked script.
    client.trackPageView('Home', 'http://localhost/');
    client.trackException(new Error('later'));
    await settle();
    expect(load).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(client.getConsent()).toBe('unavailable');
  });

  describe('web vitals', () => {
    /** A client whose web-vitals chunk is a fake: `report` stands for the browser's measurements. */
    function withVitals(consent: TelemetryRuntime['consent']) {
      const sdk = fakeSdk();
      let report: ((vital: WebVital) => void) | undefined;
      const loadVitals = vi.fn(() =>
        Promise.resolve({ watchWebVitals: (r: (vital: WebVital) => void) => void (report = r) }),
      );
      const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }), loadVitals);
      client.start(() => Promise.resolve(runtime(consent)));
      const measure = (vital: WebVital) => {
        if (!report) throw new Error('web vitals are not watched');
        report(vital);
      };
      return { sdk, client, loadVitals, measure };
    }
    const lcp: WebVital = { name: 'LCP', value: 1234, rating: 'good', navigationType: 'navigate' };

    it('are loaded with the SDK only, and go out as metrics named after the landing page', async () => {
      const { sdk, client, loadVitals, measure } = withVitals('ask');
      client.trackPageView('Home', 'http://localhost/');
      await settle();
      expect(loadVitals).not.toHaveBeenCalled();
      client.choose('granted');
      await settle();
      expect(loadVitals).toHaveBeenCalledTimes(1);
      client.trackPageView('Profile', 'http://localhost/profile', 5);
      measure(lcp);
      expect(sdk.trackMetric).toHaveBeenCalledWith(
        'LCP',
        1234,
        { page: 'Home', rating: 'good', navigationType: 'navigate' },
        undefined,
      );
    });

    it("keep the page load's operation once a later page has started its own", async () => {
      const { sdk, client, measure } = withVitals('implied');
      await settle();
      client.trackPageView('Home', 'http://localhost/');
      measure({ name: 'FCP', value: 900, rating: 'good', navigationType: 'navigate' });
      // Before any other page, the current operation is the load's: none named.
      expect(sdk.trackMetric).toHaveBeenLastCalledWith('FCP', 900, expect.anything(), undefined);
      const loadTrace = sdk.traceId();
      client.startOperation('Profile');
      expect(sdk.startOperation).toHaveBeenCalledWith('Profile', expect.stringMatching(/^[0-9a-f]{32}$/));
      sdk.traceId.mockReturnValue('4bf92f3577b34da6a3ce929d0e0e4736');
      client.trackPageView('Profile', 'http://localhost/profile', 5);
      client.startOperation('Diagnostics');
      measure(lcp);
      expect(sdk.trackMetric).toHaveBeenLastCalledWith('LCP', 1234, expect.anything(), loadTrace);
      // A fresh identity (sign-out) never sends the old one's operation.
      client.startFreshIdentity();
      await settle();
      measure({ name: 'CLS', value: 0.01, rating: 'good', navigationType: 'navigate' });
      expect(sdk.trackMetric).toHaveBeenLastCalledWith('CLS', 0.01, expect.anything(), undefined);
    });

    it('measured before the first page view wait for it, so they carry its name', async () => {
      const { sdk, client, measure } = withVitals('implied');
      await settle();
      measure({ name: 'FCP', value: 900, rating: 'good', navigationType: 'navigate' });
      expect(sdk.trackMetric).not.toHaveBeenCalled();
      client.trackPageView('Home', 'http://localhost/');
      expect(sdk.trackMetric).toHaveBeenCalledWith(
        'FCP',
        900,
        expect.objectContaining({ page: 'Home' }),
        undefined,
      );
    });

    it('are watched once per page load, and dropped once the visitor declines', async () => {
      const { sdk, client, loadVitals, measure } = withVitals('implied');
      client.trackPageView('Home', 'http://localhost/');
      await settle();
      client.startFreshIdentity();
      await settle();
      expect(loadVitals).toHaveBeenCalledTimes(1);
      client.choose('denied');
      measure(lcp);
      expect(sdk.trackMetric).not.toHaveBeenCalled();
    });

    it("mark the page's timeline as soon as they are watched", async () => {
      // What happened, in order: this client's web-vitals watching, and every mark. (Other clients of the
      // shared test window may mark too, so the test reads what comes right after this one's watching.)
      const events: string[] = [];
      vi.spyOn(performance, 'mark').mockImplementation((name: string) => {
        events.push(`mark ${name}`);
        return undefined as unknown as PerformanceMark;
      });
      const sdk = fakeSdk();
      const client = new TelemetryClient(
        () => Promise.resolve({ startSdk: () => sdk }),
        () => Promise.resolve({ watchWebVitals: () => void events.push('watching') }),
      );
      client.start(() => Promise.resolve(runtime('implied')));
      client.trackPageView('Home', 'http://localhost/');
      await settle();
      const watching = events.indexOf('watching');
      expect(watching).toBeGreaterThanOrEqual(0);
      expect(events[watching + 1]).toBe(`mark ${WEB_VITALS_MARK}`);
    });

    it('cost only themselves when their chunk cannot load', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const sdk = fakeSdk();
      const client = new TelemetryClient(
        () => Promise.resolve({ startSdk: () => sdk }),
        () => Promise.reject(new Error('offline')),
      );
      client.start(() => Promise.resolve(runtime('implied')));
      client.trackPageView('Home', 'http://localhost/');
      await settle();
      expect(client.getConsent()).toBe('implied');
      expect(sdk.trackPageView).toHaveBeenCalled();
      expect(warn).toHaveBeenCalledWith('Web vitals are not reported: their code could not be loaded.');
    });
  });
});

describe('what the sign-in telemetry relies on', () => {
  afterEach(() => sessionStorage.clear());

  it('sends an event with its measurements, at once once the SDK runs', async () => {
    const sdk = fakeSdk();
    const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    client.start(() => Promise.resolve(runtime('implied')));
    await settle();
    client.trackEvent('gatehouse.sign-in', { outcome: 'signed-in' }, { durationMs: 812 });
    expect(sdk.trackEvent).toHaveBeenLastCalledWith(
      'gatehouse.sign-in',
      { outcome: 'signed-in' },
      { durationMs: 812 },
    );
    expect(sessionStorage.length).toBe(0);
  });

  it("keeps the events a page could not hand to its SDK before it left, and the tab's next page sends them first, once", async () => {
    localStorage.setItem('gatehouse.telemetry-consent', 'granted');
    // A failed callback: its events wait for an SDK that starts after the address changes; the page
    // leaves for the provider first.
    const leaving = new TelemetryClient(() => new Promise(() => {}));
    leaving.trackEvent(
      'gatehouse.sign-in',
      { outcome: 'failed', reason: 'state_mismatch' },
      { durationMs: 5 },
    );
    leaving.trackEvent('gatehouse.sign-in', { outcome: 'started', trigger: 'button' });

    const sdk = fakeSdk();
    const next = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    next.trackEvent('gatehouse.sign-in', { outcome: 'returned' });
    next.start(() => Promise.resolve(runtime('ask')));
    await settle();
    expect(sdk.trackEvent.mock.calls).toEqual([
      ['gatehouse.sign-in', { outcome: 'failed', reason: 'state_mismatch' }, { durationMs: 5 }],
      ['gatehouse.sign-in', { outcome: 'started', trigger: 'button' }, {}],
      ['gatehouse.sign-in', { outcome: 'returned' }, {}],
    ]);
    // Handed to the SDK (whose own buffer keeps them from here): a later page sends none again.
    expect(sessionStorage.length).toBe(0);
    const later = fakeSdk();
    new TelemetryClient(() => Promise.resolve({ startSdk: () => later })).start(() =>
      Promise.resolve(runtime('ask')),
    );
    await settle();
    expect(later.trackEvent).not.toHaveBeenCalled();
  });

  it('keeps an event before the runtime is read where the page says consent is implied', () => {
    const config = document.createElement('script');
    config.id = 'gatehouse-config';
    config.type = 'application/json';
    config.textContent = JSON.stringify({ telemetry: { consent: 'implied' } });
    document.head.append(config);
    try {
      new TelemetryClient(() => new Promise(() => {})).trackEvent('gatehouse.sign-in', {
        outcome: 'started',
      });
      expect(sessionStorage.length).toBe(1);
      sessionStorage.clear();
      config.textContent = JSON.stringify({ telemetry: { consent: 'ask' } });
      new TelemetryClient(() => new Promise(() => {})).trackEvent('gatehouse.sign-in', {
        outcome: 'started',
      });
      expect(sessionStorage.length).toBe(0);
    } finally {
      config.remove();
    }
  });

  it("holds the SDK's start while a sign-in leaves the page, and starts it if the page stays or the sign-in fails", async () => {
    const startSdk = vi.fn(() => fakeSdk());
    const client = new TelemetryClient(() => Promise.resolve({ startSdk }));
    let left = () => {};
    client.holdWhileLeaving(new Promise<void>((resolve) => (left = resolve)));
    client.start(() => Promise.resolve(runtime('implied')));
    await settle();
    expect(startSdk).not.toHaveBeenCalled();
    // The navigation began; the page is still here for a while (a slow provider).
    left();
    await vi.advanceTimersByTimeAsync(LEAVING_HOLD_MS - 300);
    expect(startSdk).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(400);
    expect(startSdk).toHaveBeenCalledTimes(1);

    // A sign-in that fails to start releases the hold at once.
    const other = vi.fn(() => fakeSdk());
    const failing = new TelemetryClient(() => Promise.resolve({ startSdk: other }));
    failing.holdWhileLeaving(Promise.reject(new Error('discovery failed')));
    failing.start(() => Promise.resolve(runtime('implied')));
    await settle();
    expect(other).toHaveBeenCalledTimes(1);

    // A sign-in that hangs (a provider that never answers) holds it LEAVING_HOLD_LIMIT_MS at most.
    const late = vi.fn(() => fakeSdk());
    const hanging = new TelemetryClient(() => Promise.resolve({ startSdk: late }));
    hanging.holdWhileLeaving(new Promise(() => {}));
    hanging.start(() => Promise.resolve(runtime('implied')));
    await vi.advanceTimersByTimeAsync(LEAVING_HOLD_LIMIT_MS - 300);
    expect(late).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(400);
    expect(late).toHaveBeenCalledTimes(1);
  });

  it('keeps no event in storage without a yes, and forgets the kept ones at a no', async () => {
    // No answer yet: the event waits in memory only.
    const unanswered = new TelemetryClient(() => new Promise(() => {}));
    unanswered.trackEvent('gatehouse.sign-in', { outcome: 'started', trigger: 'button' });
    expect(sessionStorage.length).toBe(0);

    localStorage.setItem('gatehouse.telemetry-consent', 'granted');
    new TelemetryClient(() => new Promise(() => {})).trackEvent('gatehouse.sign-in', { outcome: 'returned' });
    expect(sessionStorage.length).toBe(1);
    // The visitor says no on the next page: nothing kept is sent, there or later.
    const sdk = fakeSdk();
    const next = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    next.start(() => Promise.resolve(runtime('ask')));
    next.choose('denied');
    await settle();
    expect(sessionStorage.length).toBe(0);
    expect(sdk.trackEvent).not.toHaveBeenCalled();

    // Stored before a no given in another tab: the next page drops it.
    localStorage.setItem('gatehouse.telemetry-consent', 'granted');
    new TelemetryClient(() => new Promise(() => {})).trackEvent('gatehouse.sign-in', { outcome: 'returned' });
    localStorage.setItem('gatehouse.telemetry-consent', 'denied');
    new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk })).start(() =>
      Promise.resolve(runtime('implied')),
    );
    expect(sessionStorage.length).toBe(0);
    await settle();
    expect(sdk.trackEvent).not.toHaveBeenCalled();
  });

  it("hands the SDK the provider's hosts: the issuer, and where this tab was sent before the page left", async () => {
    const startSdk = vi.fn((_cs: string, _origin: string, _hosts: ReadonlySet<string>) => fakeSdk());
    new TelemetryClient().ignoreReferrersFrom('https://login.example:8443/authorize?client_id=x&state=s');
    const client = new TelemetryClient(() => Promise.resolve({ startSdk }));
    client.start(() =>
      Promise.resolve({ ...runtime('implied'), providerUrl: 'https://issuer.example/tenant/v2.0' }),
    );
    await settle();
    expect([...(startSdk.mock.calls[0]?.[2] ?? [])].sort()).toEqual(['issuer.example', 'login.example:8443']);
    expect(sessionStorage.getItem('gatehouse.telemetry-provider-hosts')).not.toContain('state');
  });
});

describe('the API calls the token vault makes for the page', () => {
  it('carry a traceparent joined to the page trace, and are reported as a dependency once answered', async () => {
    const sdk = fakeSdk();
    const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    expect(client.apiCall('http://localhost/api/me', 'GET')).toBeUndefined(); // no SDK yet: none
    client.start(() => Promise.resolve(runtime('implied')));
    await settle();

    const call = client.apiCall('http://localhost/api/me', 'GET');
    expect(call?.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(sdk.trackDependency).not.toHaveBeenCalled();
    call?.done(200);
    // Reported after the code waiting for the answer, in a later task.
    expect(sdk.trackDependency).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(0);
    const spanId = call?.traceparent.split('-')[2];
    expect(sdk.trackDependency).toHaveBeenCalledWith(
      expect.objectContaining({
        spanId,
        traceId: '0af7651916cd43dd8448eb211c80319c',
        method: 'GET',
        url: 'http://localhost/api/me',
        status: 200,
      }),
    );
  });

  it("of the page's own fetch calls: a traceparent to this origin only, each reported after its caller, and never the SDK's sends", async () => {
    const sent: { url: string; traceparent: string | null }[] = [];
    window.fetch = vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
      const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
      sent.push({ url, traceparent: new Headers(init?.headers).get('traceparent') });
      return Promise.resolve(new Response(null, { status: 204 }));
    });
    const sdk = fakeSdk();
    const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    await fetch(`${window.location.origin}/api/me`); // before the SDK: not tracked
    client.start(() =>
      Promise.resolve({
        ...runtime('implied'),
        connectionString: 'InstrumentationKey=k;IngestionEndpoint=https://ingest.example/',
      }),
    );
    await settle();

    const order: string[] = [];
    sdk.trackDependency.mockImplementation(({ url }: { url: string }) => order.push(`reported ${url}`));
    await fetch(`${window.location.origin}/api/me`);
    order.push('the caller has its answer');
    await fetch('https://provider.example/.well-known/openid-configuration');
    await fetch('https://ingest.example/v2/track', { method: 'POST' });
    await vi.advanceTimersByTimeAsync(0);

    expect(sent.map((call) => [call.url, Boolean(call.traceparent)])).toEqual([
      [`${window.location.origin}/api/me`, false],
      [`${window.location.origin}/api/me`, true],
      ['https://provider.example/.well-known/openid-configuration', false],
      ['https://ingest.example/v2/track', false],
    ]);
    expect(order).toEqual([
      'the caller has its answer',
      `reported ${window.location.origin}/api/me`,
      'reported https://provider.example/.well-known/openid-configuration',
    ]);
    expect(sdk.trackDependency).toHaveBeenCalledWith(
      expect.objectContaining({
        spanId: sent[1]?.traceparent?.split('-')[2],
        traceId: '0af7651916cd43dd8448eb211c80319c',
        method: 'GET',
        status: 204,
      }),
    );
  });

  it('are reported to the SDK of the identity they were made under, never to the next one', async () => {
    const { first, second, startSdk, client } = await startedWithTwoSdks();
    const answered = client.apiCall('http://localhost/api/me', 'GET');
    const inFlight = client.apiCall('http://localhost/api/items', 'GET');
    answered?.done(200); // its report waits for a later task

    client.startFreshIdentity(); // sign-out
    expect(first.trackDependency).toHaveBeenCalledTimes(1);
    expect(first.trackDependency.mock.invocationCallOrder[0]).toBeLessThan(
      first.flush.mock.invocationCallOrder[0] ?? 0,
    );
    inFlight?.done(200); // answered after the sign-out: its trace is the old identity's
    await settle();
    expect(startSdk).toHaveBeenCalledTimes(2);
    expect(second.trackDependency).not.toHaveBeenCalled();
  });

  it('start a trace of their own when the SDK has none to join', async () => {
    const sdk = fakeSdk();
    sdk.traceId.mockReturnValue('');
    const client = new TelemetryClient(() => Promise.resolve({ startSdk: () => sdk }));
    client.start(() => Promise.resolve(runtime('implied')));
    await settle();
    expect(client.apiCall('http://localhost/api/me', 'GET')?.traceparent).toMatch(
      /^00-(?!0{32})[0-9a-f]{32}-[0-9a-f]{16}-01$/,
    );
  });
});
