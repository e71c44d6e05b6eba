import {
  isOAuthErrorCode,
  type SignInFailureReason,
  type SignInStep,
  type SignInTrigger,
} from '@gatehouse/api-contract';
import type { RuntimeConfig } from '../config/runtime-config';
import { AuthError, providerErrorSentence, type AuthErrorCode } from './auth-error';
import { providerSessionRemains, sessionExpired, signInUnavailable } from './auth-notices';
import type { AuthNotice, AuthSession, AuthUser, CallbackResult, SignOutOutcome } from './auth-state';
import { safeReturnTo } from './return-to';
import { pageEnvironment, SessionCore, type CoreEnvironment } from './session-core';
import { readSessionHint } from './session-hint';
import type { TabSignal } from './tab-signals';
import type { ApiAnswer, ApiRequest } from './token-vault';

type OidcConfig = RuntimeConfig['oidc'];

/**
 * The header every call of the BFF's endpoints and of the API carries. A page of another site cannot
 * send a custom header without a CORS preflight the server never grants, so its presence shows the call
 * came from this app's own pages (the server refuses `/bff/*` and `/api/*` calls without it).
 */
const CSRF_HEADER: [string, string] = ['X-CSRF', '1'];

/** Where sign-in comes back to once the server has redeemed the code (kept in this tab meanwhile). */
const RETURN_TO_KEY = 'gatehouse.bff.return-to';

export interface BffEnvironment extends CoreEnvironment {
  /** Called for each request at the time it is made (the telemetry SDK wraps the page's fetch later). */
  fetch: typeof fetch;
  location: Pick<Location, 'origin' | 'assign' | 'href'>;
  /** Calls `listener` each time the tab becomes visible again; none: never. */
  whenVisible?: ((listener: () => void) => void) | undefined;
}

/** Entry point of the BFF session's chunk (create-auth-session.ts picks it for `oidc.mode: 'bff'`). */
export async function createBffSession(config: OidcConfig): Promise<AuthSession> {
  const session = new BffSession(config, {
    ...pageEnvironment(config.clientId),
    // Looked up on each call: the SDK's fetch tracking replaces window.fetch once it has loaded.
    fetch: (input, init) => window.fetch(input, init),
    whenVisible: (listener) =>
      document.addEventListener('visibilitychange', () => {
        if (document.visibilityState === 'visible') listener();
      }),
  });
  await session.start();
  return session;
}

/** How a failure the server names on its redirect to `/callback` reads, and is reported. */
interface ServerFailure {
  code: AuthErrorCode;
  message: string;
  reason: SignInFailureReason;
  step: SignInStep;
}

/** The server's own `error` codes on `/callback` (its `/bff/callback` could not finish the sign-in). */
const serverFailures: Record<string, ServerFailure> = {
  state_mismatch: {
    code: 'state_mismatch',
    message:
      'This sign-in response does not belong to a sign-in started in this browser: it was used already or came from an old tab. Sign in again.',
    reason: 'state_mismatch',
    step: 'return',
  },
  provider_unreachable: {
    code: 'provider_unreachable',
    message: 'The identity provider could not be reached. Try again later.',
    reason: 'network',
    step: 'redeem',
  },
  id_token_invalid: {
    code: 'id_token_invalid',
    message:
      "The identity provider's ID token could not be accepted, so sign-in was stopped. Try again; if it keeps happening, tell the provider's administrator.",
    reason: 'response_invalid',
    step: 'id-token',
  },
  redeem_failed: {
    code: 'token_request_failed',
    message: 'The identity provider refused to issue tokens. Sign in again.',
    reason: 'other',
    step: 'redeem',
  },
};

/** The `error` of the redirect to `/callback`: the server's own code, else the provider's (Core 3.1.2.6). */
function callbackFailure(error: string): ServerFailure {
  if (Object.hasOwn(serverFailures, error)) return serverFailures[error] as ServerFailure;
  return {
    code: 'provider_error',
    // The error_description is never shown: anyone can craft a link to /callback with one.
    message: providerErrorSentence(error),
    reason: isOAuthErrorCode(error) ? error : 'other',
    step: 'provider',
  };
}

const sessionMissing = new AuthError(
  'session_missing',
  'You signed in at the identity provider, but this browser kept no session for this app. Allow cookies for this site and sign in again.',
);
const signOutFailed: AuthNotice = {
  code: 'sign_out_failed',
  message:
    'This page has forgotten your session, but the server could not be reached to end it, so it may remain until it expires. Sign out again once you are back online.',
};
const sessionEnded: AuthNotice = {
  code: 'signed_out_elsewhere',
  message:
    'Your session has ended: you signed out elsewhere, or it was ended for you. Sign in again to continue.',
};

/**
 * The browser's side of the backend-for-frontend (RFC 10017, 6.1): the server is the OAuth client and
 * holds the tokens; this tab holds only an HttpOnly session cookie it cannot read. It asks the server who
 * is signed in (`/bff/user`), sends the browser to `/bff/login` and `/bff/logout`'s end-session URL, and
 * calls the API with the cookie. It keeps what the page needs across the provider's redirect in this
 * tab's sessionStorage: the return path and the sign-in journey's telemetry (ADR 0120).
 */
export class BffSession extends SessionCore<AuthUser> implements AuthSession {
  private reading: Promise<AuthUser | null> | undefined;

  constructor(
    private readonly config: Pick<OidcConfig, 'authority'>,
    private readonly env: BffEnvironment,
  ) {
    super(env);
    env.tabs?.listen((signal) => void this.onTabSignal(signal));
    // A back-channel logout, or a sign-out in another browser window, may have ended it meanwhile.
    env.whenVisible?.(() => void this.refresh());
  }

  /** The server's word on the session; on the redirect URI the callback brings it instead. */
  async start(): Promise<void> {
    if (new URL(this.env.location.href).pathname === '/callback') return;
    this.journey.abandoned();
    const hinted = readSessionHint(this.env.sessionStorage, this.env.now()) !== null;
    let user: AuthUser | null;
    try {
      user = await this.readUser();
    } catch {
      this.setState({ status: 'signed-out', notice: signInUnavailable });
      return;
    }
    if (user) this.show(user);
    else if (hinted) {
      this.journey.sessionEnded('expiry');
      this.forget({ status: 'signed-out', notice: sessionExpired });
    } else this.forget({ status: 'signed-out' });
  }

  /** Sends the browser to the server's `/bff/login`, which sends it on to the provider. */
  signIn(returnTo: string, trigger: SignInTrigger = 'button'): Promise<void> {
    return this.joinSignIn(() => this.startSignIn(returnTo, trigger));
  }

  private startSignIn(returnTo: string, trigger: SignInTrigger): Promise<void> {
    const ended = this.state.status === 'signed-out' ? this.state.notice?.code : undefined;
    const afterEnd = ended === 'session_expired';
    this.journey.started(trigger === 'button' && afterEnd ? 'expired-session' : trigger);
    this.env.sessionStorage.setItem(RETURN_TO_KEY, safeReturnTo(returnTo));
    // The provider's page is what refers the browser back to /callback (through the server's redirect).
    this.env.leavingFor?.(this.config.authority);
    this.env.location.assign(new URL('/bff/login', this.env.location.origin).href);
    return Promise.resolve();
  }

  /** Processes the return to `/callback` exactly once per URL (React StrictMode asks twice). */
  completeSignIn(url: string): Promise<CallbackResult> {
    return this.callbackOnce(url, () => this.processCallback(url));
  }

  private async processCallback(url: string): Promise<CallbackResult> {
    const error = new URL(url).searchParams.get('error');
    const saved = this.env.sessionStorage.getItem(RETURN_TO_KEY);
    this.env.sessionStorage.removeItem(RETURN_TO_KEY);
    if (error === null && saved === null) return this.revisitedCallback();
    this.journey.returned();
    if (error !== null) {
      const failure = callbackFailure(error);
      const authError = new AuthError(failure.code, failure.message, { reason: failure.reason });
      return this.signInFailed(authError, failure.step);
    }
    let user: AuthUser | null;
    try {
      user = await this.readUser();
    } catch (cause) {
      return this.signInFailed(cause, 'redeem');
    }
    if (!user) return this.signInFailed(sessionMissing, 'redeem');
    this.journey.redeemed();
    this.journey.signedIn();
    this.show(user);
    return { ok: true, returnTo: safeReturnTo(saved) };
  }

  /** `/callback` without an answer for this tab (reloaded, or from history): home, as the server says. */
  private async revisitedCallback(): Promise<CallbackResult> {
    const user = await this.readUser().catch(() => null);
    if (user) this.show(user);
    else this.forget({ status: 'signed-out' });
    return { ok: true, returnTo: '/' };
  }

  private signInFailed(error: unknown, step: SignInStep): CallbackResult {
    this.journey.failed(error, step);
    const authError =
      error instanceof AuthError
        ? error
        : new AuthError('provider_unreachable', signInUnavailable.message, {
            cause: error,
            reason: 'network',
          });
    const notice = { code: authError.code, message: authError.message };
    if (!this.user) this.setState({ status: 'signed-out', notice });
    return { ok: false, error: notice };
  }

  /**
   * Ends the session at the server (which revokes the tokens, deletes the session and clears the
   * cookie), then sends the browser to the provider's end-session request the server made, if any. Until
   * it has gone the state is `signing-out`, so no route guard starts a new sign-in meanwhile.
   */
  async signOut(): Promise<SignOutOutcome> {
    if (!this.user) {
      if (this.state.status !== 'signed-out') this.setState({ status: 'signed-out' });
      return 'signed-out';
    }
    this.journey.sessionEnded('sign-out');
    this.forget({ status: 'signing-out' });
    let endSessionUrl: string | null;
    try {
      endSessionUrl = await this.logout();
    } catch {
      // Another tab asking the server now would hear the session is still there: nothing to tell them.
      this.setState({ status: 'signed-out', notice: signOutFailed });
      return 'signed-out';
    }
    this.env.tabs?.send('signed-out');
    if (endSessionUrl) {
      this.env.leavingFor?.(endSessionUrl);
      this.env.location.assign(endSessionUrl);
      return 'leaving';
    }
    this.setState({ status: 'signed-out', notice: providerSessionRemains });
    return 'signed-out';
  }

  /**
   * One call of the app's API with the session cookie; the server adds the access token. Only this
   * origin's /api/ is called, and a redirect is never followed. The telemetry SDK reports it as a
   * dependency, with the trace context it adds, as it does every fetch of the page.
   */
  async fetchApi(request: ApiRequest): Promise<ApiAnswer> {
    const url = new URL(request.url, this.env.location.origin);
    if (url.origin !== this.env.location.origin || !url.pathname.startsWith('/api/')) {
      throw new TypeError(
        `The session calls ${this.env.location.origin}/api/ only, not ${url.origin}${url.pathname}.`,
      );
    }
    const headers = new Headers(request.headers);
    headers.set(...CSRF_HEADER);
    const response = await this.send(url.href, {
      method: request.method.toUpperCase(),
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    return {
      status: response.status,
      statusText: response.statusText,
      headers: [...response.headers],
      body: await response.text(),
    };
  }

  /**
   * Asks the server again (the API refused a call with 401): the server renews the tokens itself, so
   * what is left to learn is whether the session remains. True when it does.
   */
  async renew(): Promise<boolean> {
    try {
      const user = await this.readUser();
      if (user) this.show(user);
      else this.ended();
      return user !== null;
    } catch {
      return false; // The server cannot be reached: the session may remain, and the state stays.
    }
  }

  // --- internals ---

  /** Another tab's signal: it signed in (ask the server), signed out (so did the server's session). */
  private async onTabSignal(signal: TabSignal): Promise<void> {
    if (signal === 'who') this.answerWho();
    else if (signal === 'signed-out') this.endedInOtherTab();
    else if (signal === 'signed-in' && this.state.status === 'signed-out' && !this.signInUnderWay())
      await this.refresh();
  }

  /** The server's word again, kept to when it can be had. */
  private async refresh(): Promise<void> {
    if (this.state.status === 'loading' || this.state.status === 'signing-out') return;
    const user = await this.readUser().catch(() => undefined);
    if (user) this.show(user);
    else if (user === null) this.ended();
  }

  /** The server no longer knows the session this tab showed. */
  private ended(): void {
    const user = this.user;
    if (!user || this.state.status !== 'signed-in') return;
    const expired = user.expiresAt <= this.env.now() / 1000;
    this.journey.sessionEnded(expired ? 'expiry' : 'other-tab');
    this.forget({ status: 'signed-out', notice: expired ? sessionExpired : sessionEnded });
  }

  /** `GET /bff/user`, once at a time (two 401s at once ask once). */
  private readUser(): Promise<AuthUser | null> {
    this.reading ??= this.fetchUser().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async fetchUser(): Promise<AuthUser | null> {
    const response = await this.send(new URL('/bff/user', this.env.location.origin).href, {
      headers: [CSRF_HEADER],
      cache: 'no-store',
    });
    if (!response.ok) throw new TypeError(`GET /bff/user answered ${response.status}.`);
    const body = (await response.json()) as { user?: unknown };
    if (body.user === null) return null;
    const user = toAuthUser(body.user);
    if (!user) throw new TypeError('GET /bff/user answered a user the app cannot read.');
    return user;
  }

  /** `POST /bff/logout`: the provider's end-session request to go to, or null. */
  private async logout(): Promise<string | null> {
    const response = await this.send(new URL('/bff/logout', this.env.location.origin).href, {
      method: 'POST',
      headers: [CSRF_HEADER],
    });
    if (!response.ok) throw new TypeError(`POST /bff/logout answered ${response.status}.`);
    const { endSessionUrl } = (await response.json()) as { endSessionUrl?: unknown };
    return typeof endSessionUrl === 'string' && /^https?:\/\//.test(endSessionUrl) ? endSessionUrl : null;
  }

  /** Every request of this session: the cookie goes along, a redirect is an error (never followed). */
  private send(url: string, init: RequestInit): Promise<Response> {
    return this.env.fetch(url, { ...init, credentials: 'same-origin', redirect: 'error' });
  }

  private show(user: AuthUser): void {
    const arriving = this.state.status !== 'signed-in';
    this.user = user;
    this.keep(user);
    if (arriving) this.env.tabs?.send('signed-in');
  }
}

/** `/bff/user`'s user as the app shows it; the server renews the tokens, so the page never does. */
function toAuthUser(value: unknown): AuthUser | null {
  if (typeof value !== 'object' || value === null) return null;
  const { issuer, sub, name, email, roles, expiresAt } = value as Record<string, unknown>;
  if (typeof issuer !== 'string' || typeof sub !== 'string' || typeof name !== 'string') return null;
  if (email !== null && typeof email !== 'string') return null;
  if (!Array.isArray(roles) || !roles.every((role) => typeof role === 'string')) return null;
  if (typeof expiresAt !== 'number') return null;
  return {
    issuer,
    sub,
    name,
    email: email ?? undefined,
    roles,
    expiresAt,
    renewsAt: null,
    renewedByServer: true,
  };
}
