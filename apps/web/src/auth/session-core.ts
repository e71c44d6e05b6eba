import { signedOutElsewhere } from './auth-notices';
import type { AuthState, AuthUser, CallbackResult } from './auth-state';
import { markSessionSomewhere, writeSessionHint } from './session-hint';
import { SignInTelemetry, type FailureOf, type ReportSignInEvent } from './sign-in-telemetry';
import { broadcastSignals, type TabSignals } from './tab-signals';
import { telemetry } from '../telemetry/telemetry';

/** What every session's environment holds. */
export interface CoreEnvironment {
  /** Where the tab's hint (session-hint.ts), the sign-in journey and the return path live. */
  sessionStorage: Storage;
  /** Where the mark that some tab holds a session lives (session-hint.ts); none: not kept. */
  localStorage?: Storage | undefined;
  now: () => number;
  /** What the app's other tabs say of the session (tab-signals.ts); none: this tab is alone. */
  tabs?: TabSignals | undefined;
  /** Where the sign-in, renewal and session-end events go (the telemetry facade); none: nowhere. */
  reportSignIn?: ReportSignInEvent | undefined;
  /** Told the provider's URL before the browser leaves for it (its host is then never a referrer). */
  leavingFor?: ((url: string) => void) | undefined;
}

/** This page's part of either session's environment: its storage, clock, tabs and telemetry. */
export function pageEnvironment(clientId: string): CoreEnvironment & { location: Location } {
  return {
    location: window.location,
    sessionStorage: window.sessionStorage,
    localStorage: window.localStorage,
    now: () => Date.now(),
    tabs:
      typeof BroadcastChannel === 'function'
        ? broadcastSignals(new BroadcastChannel(`gatehouse-session:${clientId}`))
        : undefined,
    leavingFor: (url) => telemetry.ignoreReferrersFrom(url),
    reportSignIn: ({ name, properties, measurements }) =>
      telemetry.trackEvent(name, properties, measurements),
  };
}

/**
 * What every AuthSession does alike, whichever is the OAuth client (the token vault, or the server):
 * the state the React layer follows, and the hints the next first render reads.
 */
export abstract class SessionCore<User> {
  protected state: AuthState = { status: 'loading' };
  /** The session's user as the OAuth client describes it; null while none is signed in here. */
  protected user: User | null = null;
  protected readonly journey: SignInTelemetry;
  private readonly listeners = new Set<() => void>();
  private readonly callbacks = new Map<string, Promise<CallbackResult>>();
  /** The sign-in on its way to the provider, if any. */
  private signingIn: Promise<void> | undefined;

  protected constructor(
    private readonly core: CoreEnvironment,
    /** How sign-in failures are classified for the telemetry (the OAuth library's errors). */
    classify?: FailureOf,
  ) {
    this.journey = new SignInTelemetry(
      core.reportSignIn ?? (() => {}),
      core.sessionStorage,
      core.now,
      classify,
    );
  }

  getState = (): AuthState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  protected setState(state: AuthState): void {
    this.state = state;
    for (const listener of this.listeners) listener();
  }

  /** Signed in as `user`, or (null) signed out: the state, the tab's hint and the browser's mark. */
  protected keep(
    user: AuthUser | null,
    state: AuthState = user ? { status: 'signed-in', user } : { status: 'signed-out' },
  ): void {
    writeSessionHint(this.core.sessionStorage, user);
    if (this.core.localStorage) markSessionSomewhere(this.core.localStorage, user !== null);
    this.setState(state);
  }

  protected forget(state: AuthState): void {
    this.user = null;
    this.keep(null, state);
  }

  /** Another tab asks whether a session is here. */
  protected answerWho(): void {
    if (this.user) this.core.tabs?.send('here');
  }

  /** Another tab signed out, which ends the session here too; true when there was one to end. */
  protected endedInOtherTab(): boolean {
    if (!this.user || this.state.status !== 'signed-in') return false;
    this.journey.sessionEnded('other-tab');
    this.forget({ status: 'signed-out', notice: signedOutElsewhere });
    return true;
  }

  /**
   * Starts a sign-in, or joins the one on its way (StrictMode runs a guard's effect twice): one journey,
   * one pending request.
   */
  protected joinSignIn(start: () => Promise<void>): Promise<void> {
    this.signingIn ??= start().finally(() => (this.signingIn = undefined));
    return this.signingIn;
  }

  protected signInUnderWay(): boolean {
    return this.signingIn !== undefined;
  }

  /** Processes the callback `key` names exactly once, however often it is asked (StrictMode asks twice). */
  protected callbackOnce(key: string, process: () => Promise<CallbackResult>): Promise<CallbackResult> {
    let result = this.callbacks.get(key);
    if (!result) {
      result = process();
      this.callbacks.set(key, result);
    }
    return result;
  }
}
