import type { SignInStep, SignInTrigger } from '@gatehouse/api-contract';
import { base64url } from 'jose';
import { InMemoryWebStorage, User } from 'oidc-client-ts';
import { readRuntimeConfig, type RuntimeConfig } from '../config/runtime-config';
import { AuthError } from './auth-error';
import type { AuthNotice, AuthSession, AuthState, CallbackResult, SignOutOutcome } from './auth-state';
import { DpopKey, type DpopStore } from './dpop';
import { IndexedDbKeyStore } from './dpop-store';
import { validateIdToken } from './id-token';
import { isAuthorizationError, toAuthError } from './oidc-errors';
import { ProviderClient } from './provider-client';
import { optionalScopeIn, requestedScope } from './requested-scope';
import { safeReturnTo } from './return-to';
import { describeUser, isBound, userFrom } from './session-user';
import { writeSessionHint } from './session-hint';
import { SignInTelemetry, type ReportSignInEvent } from './sign-in-telemetry';
import { TabSync, type TabMessage } from './tab-sync';
import { TokenRenewal } from './token-renewal';
import { telemetry } from '../telemetry/telemetry';

type OidcConfig = RuntimeConfig['oidc'];

const USER_KEY = 'gatehouse.session';
/** How long a new tab waits for another tab to share its session. */
const SESSION_ASK_MS = 150;
/**
 * How long sign-out waits for the refresh token's revocation before it goes on to the provider. The
 * request carries on after the page has gone (keepalive); waiting a little only lets a refusal be
 * reported in this page's console.
 */
const REVOCATION_GRACE_MS = 500;
/** Scopes the provider refused in this tab (`invalid_scope`) and sign-in does without. */
const REFUSED_SCOPES_KEY = 'gatehouse.refused-scopes';

export interface SessionEnvironment {
  location: Pick<Location, 'origin' | 'assign' | 'href'>;
  /** Replaces the current history entry (the post-logout return's `state` is taken out of the address). */
  replaceUrl: (url: string) => void;
  sessionStorage: Storage;
  now: () => number;
  /** Where the browser's DPoP key lives (IndexedDB); without it, tokens are never sender-constrained. */
  dpopStore?: DpopStore | undefined;
  /** Told the provider's URL before the browser leaves for it (its host is then never a referrer). */
  leavingFor?: ((url: string) => void) | undefined;
  /** Where the sign-in, renewal and session-end events go (the telemetry facade); none: nowhere. */
  reportSignIn?: ReportSignInEvent | undefined;
}

const browserEnvironment = (): SessionEnvironment => ({
  location: window.location,
  replaceUrl: (url) => window.history.replaceState(window.history.state, '', url),
  sessionStorage: window.sessionStorage,
  now: () => Date.now(),
  dpopStore: typeof indexedDB === 'undefined' ? undefined : new IndexedDbKeyStore(),
  leavingFor: (url) => telemetry.ignoreReferrersFrom(url),
  reportSignIn: ({ name, properties, measurements }) => telemetry.trackEvent(name, properties, measurements),
});

const signedOutElsewhere: AuthNotice = {
  code: 'signed_out_elsewhere',
  message: 'You signed out in another tab. Sign in again to continue.',
};
const providerSessionRemains: AuthNotice = {
  code: 'provider_session_remains',
  message:
    'You are signed out of this app, but your identity provider offers no way to sign out there, so your session at the provider may remain until you close the browser.',
};

/** Entry point of the lazily loaded auth chunk. */
export async function createAuthSession(): Promise<AuthSession> {
  let config: OidcConfig;
  try {
    config = readRuntimeConfig().oidc;
  } catch (cause) {
    return unavailableSession(
      new AuthError('config_invalid', "Sign-in is unavailable because this app's configuration is invalid.", {
        cause,
      }),
    );
  }
  const session = new OidcSession(config, browserEnvironment());
  // Discovery now, while the page settles: neither the click on "Sign in" nor the callback waits for it.
  session.prefetchDiscovery();
  await session.start();
  return session;
}

function unavailableSession(error: AuthError): AuthSession {
  const state: AuthState = { status: 'signed-out', notice: { code: error.code, message: error.message } };
  return {
    getState: () => state,
    subscribe: () => () => {},
    signIn: () => Promise.reject(error),
    signOut: () => Promise.resolve('signed-out'),
    completeSignIn: () => Promise.resolve({ ok: false, error: { code: error.code, message: error.message } }),
    getAccessToken: () => Promise.resolve(null),
    authorize: () => Promise.resolve(null),
    sawApiAnswer: () => undefined,
    renew: () => Promise.resolve(),
  };
}

/**
 * The browser's OpenID Connect session: authorization code + PKCE (S256) through oidc-client-ts,
 * plus what it leaves to the application: ID token signature and claim validation (jose), the
 * issuer check against discovery, one-time callback processing, renewal by a single leader tab,
 * and cross-tab sign-in and sign-out.
 */
export class OidcSession implements AuthSession {
  private state: AuthState = { status: 'loading' };
  private readonly listeners = new Set<() => void>();
  private user: User | null = null;
  private readonly provider: ProviderClient;
  private readonly dpopKey: DpopKey | undefined;
  /** The deletion of the key at the last sign-out, awaited before the page leaves. */
  private keyRemoval: Promise<void> = Promise.resolve();
  /** The API's latest DPoP nonce (RFC 9449 9), sent in the next proofs. */
  private apiNonce: string | undefined;
  private readonly tokens: Storage;
  private readonly sync: TabSync;
  private readonly renewal: TokenRenewal<User>;
  private readonly callbacks = new Map<string, Promise<CallbackResult>>();
  private readonly journey: SignInTelemetry;
  /** The sign-in on its way to the provider, if any. */
  private signingIn: Promise<void> | undefined;

  constructor(
    private readonly config: OidcConfig,
    private readonly env: SessionEnvironment,
  ) {
    this.tokens = config.tokenStore === 'memory' ? new InMemoryWebStorage() : env.sessionStorage;
    this.dpopKey = env.dpopStore ? new DpopKey(env.dpopStore, config.clientId) : undefined;
    this.journey = new SignInTelemetry(env.reportSignIn ?? (() => false), env.sessionStorage, env.now);
    this.provider = new ProviderClient(
      config,
      { origin: env.location.origin, sessionStorage: env.sessionStorage },
      this.dpopKey,
    );
    this.sync = new TabSync((message) => this.onTabMessage(message));
    this.renewal = new TokenRenewal<User>(
      {
        current: () => this.user,
        refresh: (user) => this.provider.refresh(user),
        renewed: (user) => {
          this.journey.renewal('succeeded');
          this.store(user);
          this.sync.post({ type: 'session', user: user.toStorageString() });
        },
        failed: (error) => {
          this.journey.renewal('failed', error);
          this.journey.sessionEnded('renewal-failed');
          const notice: AuthNotice = {
            code: 'renewal_failed',
            message:
              'Your session could not be renewed, so you have been signed out. Sign in again to continue.',
          };
          this.forget({ status: 'signed-out', notice });
          this.sync.post({ type: 'session', user: null, notice });
        },
        askLeader: () => this.sync.post({ type: 'renew-request' }),
        now: () => this.env.now(),
      },
      this.sync,
    );
  }

  /**
   * A session of this tab, else one another tab shares. On the redirect URI the state stays `loading`
   * instead: the callback brings the session, and asking the other tabs would only delay it.
   */
  async start(): Promise<void> {
    if (!this.onCallback()) this.journey.abandoned();
    await this.finishSignOut();
    const stored = this.tokens.getItem(USER_KEY);
    if (stored) this.adopt(stored);
    else if (!this.onCallback()) {
      const shared = await this.sync.askForSession(SESSION_ASK_MS);
      if (shared) this.adopt(shared);
      else this.setState({ status: 'signed-out' });
    }
    this.renewal.start();
  }

  /** Fetches discovery (once; a failure is tried again when it is next needed). */
  prefetchDiscovery(): void {
    this.provider.metadata().catch(() => undefined);
  }

  private onCallback(): boolean {
    const url = new URL(this.env.location.href);
    return url.pathname === '/callback' && (url.searchParams.has('code') || url.searchParams.has('error'));
  }

  getState = (): AuthState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /**
   * Sends the browser to the provider. A sign-in asked for after the session ended (expired, or its
   * renewal failed) counts as the `expired-session` trigger, whichever button asked for it.
   */
  signIn(returnTo: string, trigger: SignInTrigger = 'button'): Promise<void> {
    // A second call while the first is on its way (StrictMode runs a guard's effect twice) joins it:
    // one journey, one pending state at the provider.
    this.signingIn ??= this.startSignIn(returnTo, trigger).finally(() => (this.signingIn = undefined));
    return this.signingIn;
  }

  private async startSignIn(returnTo: string, trigger: SignInTrigger): Promise<void> {
    const ended = this.state.status === 'signed-out' ? this.state.notice?.code : undefined;
    if (ended === 'renewal_failed') this.journey.renewal('forced-sign-in');
    const afterEnd = ended === 'renewal_failed' || ended === 'session_expired';
    this.journey.started(trigger === 'button' && afterEnd ? 'expired-session' : trigger);
    try {
      await this.redirectToProvider(returnTo);
    } catch (error) {
      this.journey.failedToStart(error);
      throw error;
    }
  }

  private async redirectToProvider(returnTo: string): Promise<void> {
    try {
      await this.provider.checkIssuer();
      const metadata = await this.provider.metadata();
      const scope = requestedScope(this.config.scope, metadata.scopes_supported, this.refusedScopes());
      // The nonce goes in the request and our state, not oidc-client-ts's, so the ID token's check of it
      // is ours (id-token.ts), with its own typed error.
      const nonce = randomToken();
      const client = await this.provider.tokenClient();
      const request = await client.createSigninRequest({
        request_type: 'si:r',
        scope,
        // RFC 9449 10: the code is bound to the key, so only this browser can redeem it.
        ...(client === this.provider.client || !this.dpopKey
          ? {}
          : { dpopJkt: await this.dpopKey.thumbprint() }),
        extraQueryParams: { ...this.config.extraQueryParams, nonce },
        state: { returnTo: safeReturnTo(returnTo), scope, nonce },
      });
      this.env.leavingFor?.(request.url);
      this.env.location.assign(request.url);
    } catch (error) {
      const authError = toAuthError(error);
      this.setState({ status: 'signed-out', notice: { code: authError.code, message: authError.message } });
      throw authError;
    }
  }

  /** Processes a callback URL exactly once, however often it is asked (React StrictMode asks twice). */
  completeSignIn(url: string): Promise<CallbackResult> {
    const key = new URL(url).searchParams.get('state') ?? url;
    let result = this.callbacks.get(key);
    if (!result) {
      result = this.processCallback(url);
      this.callbacks.set(key, result);
    }
    return result;
  }

  private async processCallback(url: string): Promise<CallbackResult> {
    // The key store's connection opens while discovery and the keys are fetched, not when the code
    // exchange's proof is signed.
    this.dpopKey?.warm();
    let returnTo = '/';
    let requested = '';
    let stage: SignInStep = 'return';
    this.journey.returned();
    try {
      let nonce: unknown;
      try {
        const { state } = await this.provider.client.readSigninResponseState(url);
        const data = state.data as { returnTo?: unknown; scope?: unknown; nonce?: unknown } | undefined;
        nonce = data?.nonce;
        returnTo = safeReturnTo(data?.returnTo);
        requested = typeof data?.scope === 'string' ? data.scope : '';
      } catch (cause) {
        throw new AuthError(
          'state_mismatch',
          'This sign-in response does not belong to a sign-in started in this tab: it was used already or altered.',
          { cause },
        );
      }
      // signIn always keeps one: a state without it was not made by this app, so the ID token's
      // nonce (OpenID Connect Core 3.1.3.7, 11) would go unchecked. Refused before the code is redeemed.
      if (typeof nonce !== 'string' || nonce === '') {
        throw new AuthError(
          'state_mismatch',
          'This sign-in response does not belong to a sign-in started by Gatehouse: its saved state has no nonce. Sign in again.',
        );
      }
      stage = 'redeem';
      await this.provider.checkIssuer();
      // The keys come while the code is exchanged, so checking the ID token adds no round trip after it.
      this.provider.jwks.prefetch().catch(() => undefined);
      const response = await (await this.provider.tokenClient()).processSigninResponse(url);
      this.journey.redeemed();
      stage = 'id-token';
      if (!response.id_token) {
        throw new AuthError('id_token_invalid', 'The identity provider did not return an ID token.');
      }
      const [claims, userInfo] = await Promise.all([
        validateIdToken(response.id_token, this.provider.jwks, {
          issuer: this.config.authority,
          clientId: this.config.clientId,
          nonce,
        }),
        this.provider.userInfo(response),
      ]);
      const user = userFrom(response, claims.sub, userInfo);
      this.store(user);
      this.sync.post({ type: 'session', user: user.toStorageString() });
      this.journey.signedIn();
      return { ok: true, returnTo };
    } catch (error) {
      const optional = optionalScopeIn(requested);
      if (isAuthorizationError(error, 'invalid_scope') && optional && !this.refusedScopes().has(optional)) {
        // A provider that does not know offline_access (and does not say so in its discovery): once
        // more without it. Many such providers issue a refresh token all the same.
        this.env.sessionStorage.setItem(
          REFUSED_SCOPES_KEY,
          JSON.stringify([...this.refusedScopes(), optional]),
        );
        try {
          // The same journey: it goes on at the provider, with its start time and trigger.
          await this.redirectToProvider(returnTo);
          return { ok: false, retrying: true };
        } catch {
          // signIn has set the notice; the user reads it below.
        }
      }
      this.journey.failed(error, stage);
      const authError = toAuthError(error);
      const notice = { code: authError.code, message: authError.message };
      if (!this.user) this.setState({ status: 'signed-out', notice });
      return { ok: false, error: notice };
    }
  }

  private refusedScopes(): Set<string> {
    try {
      const stored: unknown = JSON.parse(this.env.sessionStorage.getItem(REFUSED_SCOPES_KEY) ?? '[]');
      return new Set(Array.isArray(stored) ? stored.filter((s): s is string => typeof s === 'string') : []);
    } catch {
      return new Set();
    }
  }

  /**
   * Signs out: the tokens go at once (in every tab), the refresh token is revoked without waiting for
   * it, and the browser goes to the provider's end-session endpoint (OpenID Connect RP-Initiated
   * Logout 1.0, 2: `id_token_hint`, `client_id`, `post_logout_redirect_uri` and `state`). Until it
   * has gone the state is `signing-out`, so no route guard starts a new sign-in meanwhile. A provider
   * without an end-session endpoint leaves its own session as it is, and the user is told so.
   */
  async signOut(): Promise<SignOutOutcome> {
    const user = this.user;
    const cleared = this.provider.clearPendingRequests();
    if (!user) {
      await cleared;
      if (this.state.status !== 'signed-out') this.setState({ status: 'signed-out' });
      return 'signed-out';
    }
    this.journey.sessionEnded('sign-out');
    this.forget({ status: 'signing-out' });
    this.sync.post({ type: 'session', user: null, notice: signedOutElsewhere });
    const revocation = this.provider.revoke(user);
    // The key's deletion must finish before the page leaves for the provider, or IndexedDB drops it.
    await Promise.all([cleared, this.keyRemoval]);
    let endSession: string | undefined;
    try {
      endSession = await this.provider.client.metadataService.getEndSessionEndpoint();
    } catch {
      // The provider cannot be reached: the local session is gone, which is what the user asked for.
    }
    if (endSession) {
      await Promise.race([revocation, delay(REVOCATION_GRACE_MS)]);
      try {
        const request = await this.provider.client.createSignoutRequest({
          ...(user.id_token === undefined ? {} : { id_token_hint: user.id_token }),
          client_id: this.config.clientId,
          state: { at: this.env.now() },
        });
        this.env.leavingFor?.(request.url);
        this.env.location.assign(request.url);
        return 'leaving';
      } catch {
        // As above: fall through to a local sign-out.
      }
    }
    await revocation;
    this.setState({
      status: 'signed-out',
      ...(endSession === undefined && user.id_token ? { notice: providerSessionRemains } : {}),
    });
    return 'signed-out';
  }

  async getAccessToken(): Promise<string | null> {
    await this.renewal.ensureFresh();
    return this.user?.access_token ?? null;
  }

  /**
   * The headers that authorize one API request: `Authorization: DPoP` and a fresh proof for this
   * method and URL (RFC 9449 7.1) when the tokens are bound to this browser's key, else the bearer
   * token (RFC 6750 2.1); null when signed out.
   */
  async authorize(request: { url: string; method: string }): Promise<Record<string, string> | null> {
    const token = await this.getAccessToken();
    const user = this.user;
    if (!token || !user) return null;
    if (!isBound(user) || !this.dpopKey) return { Authorization: `Bearer ${token}` };
    const proof = await this.dpopKey.proof({ ...request, accessToken: token, nonce: this.apiNonce });
    return { Authorization: `DPoP ${token}`, DPoP: proof };
  }

  /** Keeps the nonce an API answer offers for the next proofs (RFC 9449 9: any answer may carry one). */
  sawApiAnswer(response: Pick<Response, 'headers'>): void {
    this.apiNonce = response.headers.get('DPoP-Nonce') ?? this.apiNonce;
  }

  /** Renews the tokens now (in the leader tab); for an API call the server refused with 401. */
  async renew(): Promise<void> {
    if (this.sync.leader) await this.renewal.renew();
    else await this.renewal.ensureFresh();
  }

  // --- internals ---

  /**
   * Back from the provider's end-session endpoint: its `state` answers our sign-out request, which is
   * then removed, and the parameter is taken out of the address bar and the history entry.
   */
  private async finishSignOut(): Promise<void> {
    const url = new URL(this.env.location.href);
    if (url.origin !== this.env.location.origin || url.pathname !== '/' || !url.searchParams.has('state')) {
      return;
    }
    try {
      await this.provider.client.readSignoutResponseState(url.href, true);
    } catch {
      // Not ours (used already, or made up): nothing to remove, but it leaves the address all the same.
    }
    url.searchParams.delete('state');
    this.env.replaceUrl(`${url.pathname}${url.search}${url.hash}`);
  }

  private setState(state: AuthState): void {
    this.state = state;
    for (const listener of this.listeners) listener();
  }

  private adopt(serialized: string): void {
    const user = User.fromStorageString(serialized);
    if (user.expired && !user.refresh_token) {
      this.journey.sessionEnded('expiry');
      this.forget({
        status: 'signed-out',
        notice: { code: 'session_expired', message: 'Your session has expired. Sign in again to continue.' },
      });
      return;
    }
    this.store(user);
  }

  private store(user: User): void {
    this.user = user;
    this.tokens.setItem(USER_KEY, user.toStorageString());
    this.renewal.schedule();
    const described = describeUser(user, this.config, this.renewal.renewsAt);
    // Only where the tokens themselves survive a reload: the memory store keeps nothing in storage.
    if (this.config.tokenStore === 'session') writeSessionHint(this.env.sessionStorage, described);
    this.setState({ status: 'signed-in', user: described });
    this.renewal.sessionChanged();
  }

  private forget(state: AuthState): void {
    this.renewal.stop();
    // Sign-out, here or in another tab, or an ended session: the key goes with the tokens bound to it.
    if (this.user && isBound(this.user) && this.dpopKey) {
      this.keyRemoval = this.dpopKey.remove().catch(() => undefined);
    }
    this.user = null;
    this.tokens.removeItem(USER_KEY);
    writeSessionHint(this.env.sessionStorage, null);
    this.setState(state);
    this.renewal.sessionChanged();
  }

  private onTabMessage(message: TabMessage): void {
    switch (message.type) {
      case 'session':
        if (message.user) this.adopt(message.user);
        else if (this.user) {
          this.journey.sessionEnded('other-tab');
          this.forget({ status: 'signed-out', ...(message.notice ? { notice: message.notice } : {}) });
        }
        break;
      case 'session-request':
        if (this.user) this.sync.post({ type: 'session', user: this.user.toStorageString() });
        break;
      case 'renew-request':
        this.renewal.onRenewRequest();
        break;
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function randomToken(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
}
