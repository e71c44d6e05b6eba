import { configElementText } from '../config/config-element';
import { afterFirstPaint } from '../shared/after-first-paint';
import {
  forgetSessionId,
  forgetTelemetryState,
  storeChoice,
  storedIds,
  storedChoice,
  type ConsentChoice,
  type ConsentState,
} from './consent';
import { afterCallers, type AfterCallers } from './after-callers';
import { trackedFetch, type CallTracker } from './fetch-tracking';
import { hostOf } from './referrer';
import type { TelemetrySdk } from './sdk';
import { UnsentEvents, type QueuedEvent } from './unsent-events';
import type { WebVital } from './web-vitals';
import { WEB_VITALS_MARK } from './web-vitals-mark';

/** One API call the page hands to the token vault: its `traceparent`, and `done` once it answered. */
export type ApiCallTracker = (
  url: string,
  method: string,
) => { traceparent: string; done: (status: number) => void } | undefined;

export interface TelemetryRuntime {
  connectionString: string;
  consent: 'ask' | 'implied';
  /** The identity provider's issuer: never counted as a referrer. */
  providerUrl?: string | undefined;
}

/** The provider hosts this tab was sent to, kept across the redirect (not personal: the provider's host). */
const PROVIDER_HOSTS_KEY = 'gatehouse.telemetry-provider-hosts';

type Command = (sdk: TelemetrySdk) => void;
/** `pending` until the first paint has passed; `unavailable` when the SDK could not load. */
export type TelemetryConsent = ConsentState | 'pending' | 'unavailable';
/** Calls and errors kept while the SDK loads (or consent is pending); beyond this they are dropped. */
const QUEUE_LIMIT = 250;
/** How long items wait for a signed-in user's id from the server before they go out without it. */
export const USER_ID_WAIT_MS = 5_000;
/** How long a tab another tab signed out waits for that tab's fresh ids before it makes its own. */
export const FOLLOW_IDS_WAIT_MS = 3_000;
/** How often it looks at the cookies meanwhile. */
const FOLLOW_IDS_POLL_MS = 50;
/** How long the SDK's start waits once the page began to leave (for the provider), should it still be here. */
export const LEAVING_HOLD_MS = 3_000;
/** The longest the SDK's start waits for a sign-in that neither leaves nor fails (a provider that hangs). */
export const LEAVING_HOLD_LIMIT_MS = 10_000;

/**
 * What the app talks to: a small facade in the first chunk. The SDK itself loads in its own chunk
 * after the first paint and only with consent; until then calls and errors are queued, not lost. If it
 * cannot load, telemetry switches off quietly and the app works as before.
 */
export class TelemetryClient {
  private queue: Command[] = [];
  private sdk: TelemetrySdk | undefined;
  private loading: Promise<void> | undefined;
  private runtime: TelemetryRuntime | undefined;
  private consent: TelemetryConsent = 'pending';
  private readonly listeners = new Set<() => void>();
  /** Items wait (queued) while a signed-in user's id is on its way, so that each one carries it. */
  private awaitingUser = false;
  /** Bumped at each change of user, so a late answer for an earlier user is ignored. */
  private userGeneration = 0;
  /** Runs reporting work after the code waiting for an answer (after-callers.ts); made at first use. */
  private afterCallers: AfterCallers | undefined;
  private pageFetchesTracked = false;
  /** Bumped at each new identity and each refusal, so a tab's wait for another's fresh ids can end. */
  private identityGeneration = 0;
  /** The first page view's name: the page this load's web vitals belong to. */
  private landingPage: string | undefined;
  /** The page load's operation (trace id), once a later page has started its own (startOperation). */
  private loadOperation: string | undefined;
  /** Vitals measured before the first page view (on the sign-in callback, say), sent once it is known. */
  private vitalsBeforeLanding: WebVital[] = [];
  private watchingVitals = false;
  /** Settles once no sign-in is leaving the page any more (holdWhileLeaving). */
  private leaving: Promise<void> | undefined;
  /** Hosts of the identity provider: a page view's referrer is never one of them. */
  private readonly providerHosts = new Set<string>(storedProviderHosts());
  /** The queue's events, in this tab's storage too, so a page that leaves first does not lose them. */
  private readonly unsentEvents = new UnsentEvents(QUEUE_LIMIT);

  constructor(
    private readonly loadSdk: () => Promise<{
      startSdk: (cs: string, origin: string, providerHosts: ReadonlySet<string>) => TelemetrySdk;
    }> = () => import('./sdk'),
    private readonly loadWebVitals: () => Promise<{
      watchWebVitals: (report: (vital: WebVital) => void) => void;
    }> = () => import('./web-vitals'),
  ) {}

  /**
   * Starts listening for errors at once, and decides about the SDK when `after` runs its task: after the
   * first paint unless told otherwise.
   */
  start(
    readRuntime: () => Promise<TelemetryRuntime>,
    after: (task: () => void) => void = afterFirstPaint,
  ): void {
    window.addEventListener('error', this.onEarlyError);
    window.addEventListener('unhandledrejection', this.onEarlyRejection);
    // What an earlier page of this tab could not hand to its SDK goes first.
    if (storedChoice() === 'denied') this.unsentEvents.forget();
    this.queue.unshift(...this.unsentEvents.takeEarlier().map((event) => this.eventCommand(event)));
    after(() => {
      readRuntime().then(
        (runtime) => {
          this.runtime = runtime;
          if (runtime.providerUrl) this.ignoreReferrersFrom(runtime.providerUrl, false);
          this.setConsent(runtime.consent === 'implied' ? 'implied' : (storedChoice() ?? 'ask'));
        },
        () => this.switchOff(),
      );
    });
  }

  getConsent = (): TelemetryConsent => this.consent;

  /**
   * The page is about to leave for the identity provider (`leaving`: the sign-in's start): the SDK's
   * start, some 40 ms of the page's thread, waits, so it never stands between a quick click on "Sign in"
   * and the provider. Events meanwhile wait in the queue, and those kept for the next page reach it
   * (unsent-events.ts). Should the sign-in fail to start, or the page still be here LEAVING_HOLD_MS after
   * it began to leave (or LEAVING_HOLD_LIMIT_MS after the click, whatever the sign-in does), the SDK
   * starts then.
   */
  holdWhileLeaving(leaving: Promise<unknown>): void {
    const held = Promise.race([
      leaving.then(
        () => delay(LEAVING_HOLD_MS),
        () => undefined,
      ),
      delay(LEAVING_HOLD_LIMIT_MS),
    ]);
    const all = this.leaving ? Promise.all([this.leaving, held]).then(() => undefined) : held;
    this.leaving = all;
    void all.then(() => {
      if (this.leaving === all) this.leaving = undefined;
    });
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The visitor's answer to the banner, or a later change of mind. */
  choose(choice: ConsentChoice): void {
    storeChoice(choice);
    if (choice === 'denied') {
      this.stopSdk(false);
      forgetTelemetryState();
    }
    this.setConsent(choice);
  }

  /**
   * The browser is sent to the identity provider (sign-in, sign-out): when it comes back, the
   * provider's host is not where the visit came from. Kept in this tab's storage across the redirect.
   */
  ignoreReferrersFrom(url: string, keep = true): void {
    const host = hostOf(url);
    if (host === undefined || this.providerHosts.has(host)) return;
    this.providerHosts.add(host);
    if (!keep) return;
    try {
      sessionStorage.setItem(PROVIDER_HOSTS_KEY, JSON.stringify([...this.providerHosts]));
    } catch {
      // Without storage, the issuer (from the runtime configuration) is still excluded.
    }
  }

  /** Shows the banner again so the choice can be changed. */
  reconsider(): void {
    if (this.consent === 'granted' || this.consent === 'denied') this.setConsent('ask');
  }

  trackPageView(name: string, uri: string, durationMs?: number): void {
    if (this.landingPage === undefined) {
      this.landingPage = name;
      const early = this.vitalsBeforeLanding;
      this.vitalsBeforeLanding = [];
      for (const vital of early) this.trackWebVital(vital);
    }
    this.run((sdk) => sdk.trackPageView(name, uri, durationMs));
  }

  trackException(error: unknown, properties: Record<string, string> = {}): void {
    const asError = error instanceof Error ? error : new Error(String(error));
    this.run((sdk) => sdk.trackException(asError, properties));
  }

  /**
   * A product event, such as "Report exported"; properties must not hold personal data. It survives the
   * page leaving at once (for the identity provider, say): taken by the SDK, in its session-storage
   * buffer; waiting for it, in this tab's unsent events, where the next page takes it up. Kept in storage
   * only where consent is given or implied (before the runtime is read: by the page's configuration), or
   * the visitor's earlier answer was yes.
   */
  trackEvent(
    name: string,
    properties: Record<string, string> = {},
    measurements: Record<string, number> = {},
  ): void {
    const event = { name, properties, measurements };
    if (this.run(this.eventCommand(event)) === 'queued' && this.mayKeepEvents()) {
      this.unsentEvents.keep(event);
    }
  }

  /** Whether a waiting event may be kept in storage: asked only when one waits, not on every event. */
  private mayKeepEvents(): boolean {
    if (this.consent === 'granted' || this.consent === 'implied') return true;
    const stored = storedChoice();
    return stored === 'granted' || (this.consent === 'pending' && stored === null && consentImpliedByPage());
  }

  private eventCommand(event: QueuedEvent): Command {
    return (sdk) => {
      this.unsentEvents.sent(event);
      sdk.trackEvent(event.name, event.properties, event.measurements);
    };
  }

  /**
   * An API call the token vault makes for the page (no page fetch the SDK could see): the W3C
   * `traceparent` it should carry, joined to this page's trace as the SDK's own fetch tracking does, and
   * reported as a Fetch dependency when `done` is told its status. Undefined while the SDK is not running
   * (no consent yet, or none): the call then goes without, as a fetch would.
   */
  readonly apiCall: ApiCallTracker = (url, method) => {
    const sdk = this.sdk;
    if (!sdk) return undefined;
    const traceId = validTraceId(sdk.traceId()) ?? randomHex(16);
    const spanId = randomHex(8);
    const startTime = new Date();
    const started = performance.now();
    // A call answered after the identity changed (sign-out) is not reported: under the new ids, its trace
    // would link them to the old ones.
    const identity = this.identityGeneration;
    return {
      traceparent: `00-${traceId}-${spanId}-01`,
      done: (status) => {
        const durationMs = performance.now() - started;
        // Reported once the code waiting for the answer has run: the report costs the call nothing.
        this.afterCallers ??= afterCallers();
        this.afterCallers.later(() => {
          if (identity !== this.identityGeneration) return;
          this.run((running) =>
            running.trackDependency({ spanId, traceId, method, url, status, durationMs, startTime }),
          );
        });
      },
    };
  };

  /**
   * The page's own fetch calls, tracked as the vault's (fetch-tracking.ts) once the SDK runs: a
   * `traceparent` to this origin only, and none to any other (the provider's, say); the SDK's own sends
   * are not tracked.
   */
  private pageFetches(ingestion: string): CallTracker {
    return (url, method) => {
      // apiCall tracks nothing while no SDK runs.
      const call = url.startsWith(ingestion) ? undefined : this.apiCall(url, method);
      if (!call) return undefined;
      return hostOf(url) === window.location.host ? call : { done: call.done };
    };
  }

  trackMetric(name: string, value: number, properties: Record<string, string> = {}): void {
    this.run((sdk) => sdk.trackMetric(name, value, properties));
  }

  /**
   * A new operation for the page the router shows next, named after it: its page view, its calls (their
   * `traceparent`) and its errors belong to it, as each page load's do to the load's. The page load's own
   * operation is remembered for its web vitals, which are measured across the later pages.
   */
  startOperation(name: string): void {
    this.run((sdk) => {
      this.loadOperation ??= sdk.traceId();
      sdk.startOperation(name, randomHex(16));
    });
  }

  trackTrace(message: string, properties: Record<string, string> = {}): void {
    this.run((sdk) => sdk.trackTrace(message, properties));
  }

  /**
   * The signed-in user's id, which the server issues: items wait for it (at most USER_ID_WAIT_MS) so
   * the first page views after sign-in carry it too. A failed or empty answer leaves them anonymous.
   */
  /** `roles` go with every item while the user is identified (the dashboard's role segment). */
  identifyUser(id: Promise<string | null>, roles: readonly string[] = []): void {
    const generation = ++this.userGeneration;
    this.awaitingUser = true;
    const release = () => {
      if (generation !== this.userGeneration || !this.awaitingUser) return;
      this.awaitingUser = false;
      this.drain();
    };
    setTimeout(release, USER_ID_WAIT_MS);
    id.then(
      (value) => {
        if (generation !== this.userGeneration || !value) return release();
        const identify: Command = (sdk) => sdk.setAuthenticatedUser(value, roles.join(','));
        // Still waiting: first in line, before the items that waited for it.
        if (this.awaitingUser) this.queue.unshift(identify);
        else this.run(identify);
        release();
      },
      () => release(),
    );
  }

  clearAuthenticatedUser(): void {
    this.userGeneration++;
    this.awaitingUser = false;
    this.drain();
    this.run((sdk) => sdk.clearAuthenticatedUser());
  }

  /**
   * New anonymous user and session ids, at sign-out: what was sent goes out under the old ones, the
   * SDK and every `ai_*` entry go, and a fresh SDK starts, so nothing links this browser's activity
   * before and after (nor one person to the next on a shared computer). The consent choice stays.
   */
  startFreshIdentity(): void {
    this.stopSdk(true);
    forgetTelemetryState();
    this.loadIfAllowed();
  }

  /**
   * Another tab signed out and starts fresh ids (startFreshIdentity): this tab stops sending under the
   * old ones at once, and takes the new ones from the cookies the tabs share once that tab has written
   * them. It writes none meanwhile: where two tabs write the same cookie at once, Firefox's processes
   * may each keep a value of their own for good. Should no fresh ids come in FOLLOW_IDS_WAIT_MS, this
   * tab makes its own. Items wait in the queue meanwhile. A tab without an SDK has no ids to drop.
   */
  followFreshIdentity(): void {
    const sdk = this.sdk;
    if (!sdk) return;
    const old = sdk.ids();
    this.stopSdk(true);
    const generation = this.identityGeneration;
    const fresh = () => {
      const seen = storedIds().user;
      return seen !== '' && seen !== old.user;
    };
    // Meanwhile nothing else loads an SDK (load() waits for `loading`).
    let waited = () => {};
    this.loading = new Promise<void>((resolve) => (waited = resolve));
    const waitedUntil = Date.now() + FOLLOW_IDS_WAIT_MS;
    const look = () => {
      if (generation !== this.identityGeneration) return waited();
      if (!fresh() && Date.now() < waitedUntil) {
        setTimeout(look, FOLLOW_IDS_POLL_MS);
        return;
      }
      this.loading = undefined;
      if (!fresh()) forgetTelemetryState();
      // The other tab's SDK writes the session's cookie with its first item: until then this tab may
      // still see the old one, which it must not take up.
      else if (storedIds().session === old.session) forgetSessionId();
      this.loadIfAllowed();
      waited();
    };
    look();
  }

  // --- internals ---

  /** The SDK goes (what it holds is sent first when `flush`), and any wait for another tab's ids ends. */
  private stopSdk(flush: boolean): void {
    const sdk = this.sdk;
    // Calls answered under this identity are reported to its SDK before it goes (and dropped with it).
    if (flush) {
      this.afterCallers?.runAll();
      sdk?.flush();
    }
    sdk?.unload();
    this.sdk = undefined;
    this.loading = undefined;
    // An operation of the old identity's never goes out under the new one's ids.
    this.loadOperation = undefined;
    this.identityGeneration++;
  }

  private loadIfAllowed(): void {
    if (this.consent === 'granted' || this.consent === 'implied') this.load();
  }

  /** Runs the command at once if the SDK may take it, else queues it (while there is room and a point). */
  private run(command: Command): 'ran' | 'queued' | 'dropped' {
    if (this.sdk && !this.awaitingUser) {
      command(this.sdk);
      return 'ran';
    }
    if (this.consent !== 'denied' && this.consent !== 'unavailable' && this.queue.length < QUEUE_LIMIT) {
      this.queue.push(command);
      return 'queued';
    }
    return 'dropped';
  }

  /** Nothing waits any more: the queue and the events kept for the next page go. */
  private dropQueue(): void {
    this.queue = [];
    this.unsentEvents.forget();
  }

  private setConsent(consent: ConsentState): void {
    this.consent = consent;
    if (consent === 'granted' || consent === 'implied') this.load();
    if (consent === 'denied') this.dropQueue();
    for (const listener of this.listeners) listener();
  }

  private load(): void {
    const runtime = this.runtime;
    if (!runtime || this.sdk || this.loading) return;
    const generation = this.identityGeneration;
    this.loading = this.notLeaving()
      .then(() => this.loadSdk())
      .then(
        async ({ startSdk }) => {
          await this.notLeaving();
          // Refused, or a fresh identity began meanwhile (which loads again if it may).
          if (this.consent === 'denied' || generation !== this.identityGeneration) return;
          this.sdk = startSdk(runtime.connectionString, window.location.origin, this.providerHosts);
          if (!this.pageFetchesTracked) {
            this.pageFetchesTracked = true;
            const ingestion = ingestionPrefix(runtime.connectionString);
            window.fetch = trackedFetch(window.fetch.bind(window), this.pageFetches(ingestion));
          }
          // The SDK watches errors itself from here on.
          this.stopEarlyListeners();
          this.drain();
          this.watchWebVitals();
        },
        () => this.switchOff(),
      );
  }

  /**
   * This page load's web vitals, as metrics named after them (customMetrics in Azure Monitor), each
   * with the landing page's name (those measured before the first page view wait for it: the callback
   * route has none); the SDK gives them the page view's operation id. Once per load:
   * web-vitals measures the document, not the router's later pages. A chunk that fails to load costs
   * the vitals only.
   */
  private watchWebVitals(): void {
    if (this.watchingVitals) return;
    this.watchingVitals = true;
    this.loadWebVitals().then(
      ({ watchWebVitals }) => {
        watchWebVitals((vital) => {
          if (this.landingPage === undefined) this.vitalsBeforeLanding.push(vital);
          else this.trackWebVital(vital);
        });
        // On the page's timeline (DevTools, tests): from here an input ends LCP's measure and reports it.
        // Before it, web-vitals never saw the input, and reports LCP only when the page is hidden.
        performance.mark(WEB_VITALS_MARK);
      },
      () => console.warn('Web vitals are not reported: their code could not be loaded.'),
    );
  }

  private trackWebVital({ name, value, rating, navigationType }: WebVital): void {
    const properties = { page: this.landingPage ?? '', rating, navigationType };
    // The page load's operation, that of its landing page's view (startOperation).
    this.run((sdk) => sdk.trackMetric(name, value, properties, this.loadOperation));
  }

  /** Settles once no sign-in is leaving the page (holdWhileLeaving), at once when none is. */
  private async notLeaving(): Promise<void> {
    while (this.leaving) await this.leaving;
  }

  /** Sends what waited, once the SDK is there and no user id is awaited. */
  private drain(): void {
    const sdk = this.sdk;
    if (!sdk || this.awaitingUser) return;
    const queued = this.queue;
    this.queue = [];
    for (const command of queued) command(sdk);
  }

  private switchOff(): void {
    this.dropQueue();
    this.consent = 'unavailable';
    this.stopEarlyListeners();
    console.warn('Usage telemetry is off: its code could not be loaded.');
    for (const listener of this.listeners) listener();
  }

  private stopEarlyListeners(): void {
    window.removeEventListener('error', this.onEarlyError);
    window.removeEventListener('unhandledrejection', this.onEarlyRejection);
  }

  private readonly onEarlyError = (event: ErrorEvent) => {
    this.trackException(event.error ?? new Error(event.message), { source: 'window.onerror' });
  };

  private readonly onEarlyRejection = (event: PromiseRejectionEvent) => {
    this.trackException(event.reason, { source: 'unhandledrejection' });
  };
}

/** Where the SDK sends its items (`<IngestionEndpoint>/v2/track`, v2.1 alike): never tracked as a call. */
export function ingestionPrefix(connectionString: string): string {
  const endpoint = /(?:^|;)\s*IngestionEndpoint=([^;]+)/i.exec(connectionString)?.[1]?.trim();
  return `${(endpoint ?? 'https://dc.services.visualstudio.com').replace(/\/+$/, '')}/v2`;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function validTraceId(id: string): string | undefined {
  return /^[0-9a-f]{32}$/.test(id) && !/^0+$/.test(id) ? id : undefined;
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}

/**
 * Whether the server's configuration in this page implies consent, read before the runtime is (the
 * runtime-config chunk validates it later): all that is needed to keep an event for the next page.
 */
function consentImpliedByPage(): boolean {
  try {
    const config: unknown = JSON.parse(configElementText());
    const telemetry = (config as { telemetry?: { consent?: unknown } } | null)?.telemetry;
    return telemetry?.consent === 'implied';
  } catch {
    return false;
  }
}

function storedProviderHosts(): string[] {
  try {
    const stored: unknown = JSON.parse(sessionStorage.getItem(PROVIDER_HOSTS_KEY) ?? '[]');
    return Array.isArray(stored) ? stored.filter((host): host is string => typeof host === 'string') : [];
  } catch {
    return [];
  }
}

export const telemetry = new TelemetryClient();
