import {
  ErrorResponse,
  ErrorTimeout,
  InMemoryWebStorage,
  OidcClient,
  User,
  WebStorageStateStore,
  type SigninResponse,
} from 'oidc-client-ts';
import { readRuntimeConfig, type RuntimeConfig } from '../config/runtime-config';
import { AuthError, providerErrorSentence } from './auth-error';
import type {
  AuthNotice,
  AuthSession,
  AuthState,
  AuthUser,
  CallbackResult,
  SignOutOutcome,
} from './auth-state';
import { JwksCache, validateIdToken } from './id-token';
import { optionalScopeIn, requestedScope } from './requested-scope';
import { safeReturnTo } from './return-to';
import { revokeRefreshToken } from './revocation';
import { TabSync, type TabMessage } from './tab-sync';

type OidcConfig = RuntimeConfig['oidc'];

const USER_KEY = 'gatehouse.session';
/** Renew this long before the access token expires (or at half its remaining life, if shorter). */
const RENEW_MARGIN_SECONDS = 60;
/** A renewal that failed for want of a network is tried again after this long. */
const RENEW_RETRY_MS = 10_000;
/** How long a new tab waits for another tab to share its session. */
const SESSION_ASK_MS = 150;
/**
 * How long sign-out waits for the refresh token's revocation before it goes on to the provider. The
 * request carries on after the page has gone (keepalive); waiting a little only lets a refusal be
 * reported in this page's console.
 */
const REVOCATION_GRACE_MS = 500;
/** Where sign-in requests and the sign-out request wait for the provider's answer (this tab only). */
const STATE_PREFIX = 'gatehouse.oidc.';
/** Scopes the provider refused in this tab (`invalid_scope`) and sign-in does without. */
const REFUSED_SCOPES_KEY = 'gatehouse.refused-scopes';

export interface SessionEnvironment {
  location: Pick<Location, 'origin' | 'assign' | 'href'>;
  /** Replaces the current history entry (the post-logout return's `state` is taken out of the address). */
  replaceUrl: (url: string) => void;
  sessionStorage: Storage;
  now: () => number;
}

const browserEnvironment = (): SessionEnvironment => ({
  location: window.location,
  replaceUrl: (url) => window.history.replaceState(window.history.state, '', url),
  sessionStorage: window.sessionStorage,
  now: () => Date.now(),
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
  private readonly client: OidcClient;
  private readonly tokens: Storage;
  private readonly jwks: JwksCache;
  private readonly sync: TabSync;
  private readonly callbacks = new Map<string, Promise<CallbackResult>>();
  private renewTimer: ReturnType<typeof setTimeout> | undefined;
  private renewing: Promise<void> | undefined;
  private renewsAt: number | null = null;

  constructor(
    private readonly config: OidcConfig,
    private readonly env: SessionEnvironment,
  ) {
    this.tokens = config.tokenStore === 'memory' ? new InMemoryWebStorage() : env.sessionStorage;
    this.client = new OidcClient({
      authority: config.authority,
      client_id: config.clientId,
      redirect_uri: `${env.location.origin}/callback`,
      post_logout_redirect_uri: `${env.location.origin}/`,
      response_type: 'code',
      scope: config.scope,
      loadUserInfo: true,
      extraQueryParams: config.extraQueryParams,
      // PKCE verifier and state live in this tab only, and only until the callback.
      stateStore: new WebStorageStateStore({ store: env.sessionStorage, prefix: STATE_PREFIX }),
      fetchRequestCredentials: 'omit',
      requestTimeoutInSeconds: 10,
      staleStateAgeInSeconds: 600,
    });
    this.jwks = new JwksCache(() => this.client.metadataService.getKeysEndpoint(false));
    this.sync = new TabSync((message) => this.onTabMessage(message));
  }

  async start(): Promise<void> {
    await this.finishSignOut();
    const stored = this.tokens.getItem(USER_KEY) ?? (await this.sync.askForSession(SESSION_ASK_MS));
    if (stored) this.adopt(stored);
    else this.setState({ status: 'signed-out' });
    this.sync.electLeader(() => this.scheduleRenewal());
  }

  getState = (): AuthState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  async signIn(returnTo: string): Promise<void> {
    try {
      await this.checkIssuer();
      const metadata = await this.client.metadataService.getMetadata();
      const scope = requestedScope(this.config.scope, metadata.scopes_supported, this.refusedScopes());
      const request = await this.client.createSigninRequest({
        request_type: 'si:r',
        scope,
        nonce: randomToken(),
        state: { returnTo: safeReturnTo(returnTo), scope },
      });
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
    let returnTo = '/';
    let requested = '';
    try {
      let nonce: string | undefined;
      try {
        const { state } = await this.client.readSigninResponseState(url);
        nonce = state.nonce;
        const data = state.data as { returnTo?: unknown; scope?: unknown } | undefined;
        returnTo = safeReturnTo(data?.returnTo);
        requested = typeof data?.scope === 'string' ? data.scope : '';
      } catch (cause) {
        throw new AuthError(
          'state_mismatch',
          'This sign-in response does not belong to a sign-in started in this tab: it was used already or altered.',
          { cause },
        );
      }
      await this.checkIssuer();
      const response = await this.client.processSigninResponse(url);
      if (!response.id_token) {
        throw new AuthError('id_token_invalid', 'The identity provider did not return an ID token.');
      }
      const claims = await validateIdToken(response.id_token, this.jwks, {
        issuer: this.config.authority,
        clientId: this.config.clientId,
        ...(nonce === undefined ? {} : { nonce }),
      });
      const user = this.userFrom(response, claims.sub);
      this.store(user);
      this.sync.post({ type: 'session', user: user.toStorageString() });
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
          await this.signIn(returnTo);
          return { ok: false, retrying: true };
        } catch {
          // signIn has set the notice; the user reads it below.
        }
      }
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
    const cleared = this.clearPendingRequests();
    if (!user) {
      await cleared;
      if (this.state.status !== 'signed-out') this.setState({ status: 'signed-out' });
      return 'signed-out';
    }
    this.forget({ status: 'signing-out' });
    this.sync.post({ type: 'session', user: null, notice: signedOutElsewhere });
    const revocation = this.revoke(user);
    await cleared;
    let endSession: string | undefined;
    try {
      endSession = await this.client.metadataService.getEndSessionEndpoint();
    } catch {
      // The provider cannot be reached: the local session is gone, which is what the user asked for.
    }
    if (endSession) {
      await Promise.race([revocation, delay(REVOCATION_GRACE_MS)]);
      try {
        const request = await this.client.createSignoutRequest({
          ...(user.id_token === undefined ? {} : { id_token_hint: user.id_token }),
          client_id: this.config.clientId,
          state: { at: this.env.now() },
        });
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
    const user = this.user;
    if (!user) return null;
    if ((user.expires_in ?? 0) <= 5) {
      if (this.sync.leader) await this.renew();
      else await this.askLeaderToRenew();
    }
    return this.user?.access_token ?? null;
  }

  // --- internals ---

  /** Revokes the refresh token, if there is one and the provider has a revocation endpoint; never throws. */
  private async revoke(user: User): Promise<void> {
    if (!user.refresh_token) return;
    try {
      const endpoint = await this.client.metadataService.getRevocationEndpoint();
      if (endpoint) await revokeRefreshToken(endpoint, this.config.clientId, user.refresh_token);
    } catch (error) {
      console.warn(`Gatehouse: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Forgets every sign-in or sign-out request this tab started and the provider has not answered. */
  private async clearPendingRequests(): Promise<void> {
    const { stateStore } = this.client.settings;
    await Promise.all((await stateStore.getAllKeys()).map((key) => stateStore.remove(key)));
  }

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
      await this.client.readSignoutResponseState(url.href, true);
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

  /** OpenID Connect Discovery 1.0, 4.3: the issuer in the document must equal the configured authority. */
  private async checkIssuer(): Promise<void> {
    const issuer = await this.client.metadataService.getIssuer();
    if (issuer !== this.config.authority) {
      throw new AuthError(
        'issuer_mismatch',
        `The identity provider's discovery document names the issuer "${issuer}", not the configured authority "${this.config.authority}", so sign-in was stopped.`,
      );
    }
  }

  private userFrom(response: SigninResponse, sub: string): User {
    return new User({
      ...(response.id_token === undefined ? {} : { id_token: response.id_token }),
      session_state: response.session_state,
      access_token: response.access_token,
      ...(response.refresh_token === undefined ? {} : { refresh_token: response.refresh_token }),
      token_type: response.token_type,
      ...(response.scope === undefined ? {} : { scope: response.scope }),
      profile: { ...response.profile, sub },
      ...(response.expires_at === undefined ? {} : { expires_at: response.expires_at }),
    });
  }

  private adopt(serialized: string): void {
    const user = User.fromStorageString(serialized);
    if (user.expired && !user.refresh_token) {
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
    this.scheduleRenewal();
    this.setState({ status: 'signed-in', user: this.describe(user) });
  }

  private forget(state: AuthState): void {
    clearTimeout(this.renewTimer);
    this.renewsAt = null;
    this.user = null;
    this.tokens.removeItem(USER_KEY);
    this.setState(state);
  }

  private describe(user: User): AuthUser {
    const profile = user.profile as Record<string, unknown>;
    const roles = profile[this.config.rolesClaim];
    const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
    return {
      issuer: this.config.authority,
      sub: user.profile.sub,
      name: text(profile.name) ?? text(profile.preferred_username) ?? text(profile.email) ?? user.profile.sub,
      email: text(profile.email),
      roles: Array.isArray(roles) ? roles.filter((role): role is string => typeof role === 'string') : [],
      expiresAt: user.expires_at ?? 0,
      renewsAt: this.renewsAt,
    };
  }

  private onTabMessage(message: TabMessage): void {
    switch (message.type) {
      case 'session':
        if (message.user) this.adopt(message.user);
        else if (this.user) {
          this.forget({ status: 'signed-out', ...(message.notice ? { notice: message.notice } : {}) });
        }
        break;
      case 'session-request':
        if (this.user) this.sync.post({ type: 'session', user: this.user.toStorageString() });
        break;
      case 'renew-request':
        if (this.sync.leader) void this.renew();
        break;
    }
  }

  private scheduleRenewal(): void {
    clearTimeout(this.renewTimer);
    const user = this.user;
    if (!user?.refresh_token || user.expires_at === undefined) {
      this.renewsAt = null;
      return;
    }
    const now = this.env.now() / 1000;
    const remaining = user.expires_at - now;
    const at = user.expires_at - Math.min(RENEW_MARGIN_SECONDS, Math.max(remaining / 2, 0));
    this.renewsAt = Math.round(at);
    if (this.sync.leader) {
      this.renewTimer = setTimeout(() => void this.renew(), Math.max(0, (at - now) * 1000));
    }
  }

  private renew(): Promise<void> {
    this.renewing ??= this.renewNow().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async renewNow(): Promise<void> {
    const user = this.user;
    if (!user?.refresh_token) return;
    try {
      const response = await this.client.useRefreshToken({
        state: {
          refresh_token: user.refresh_token,
          ...(user.id_token === undefined ? {} : { id_token: user.id_token }),
          session_state: user.session_state,
          ...(user.scope === undefined ? {} : { scope: user.scope }),
          profile: user.profile,
        },
        timeoutInSeconds: 10,
      });
      if (response.id_token && response.id_token !== user.id_token) {
        await validateIdToken(response.id_token, this.jwks, {
          issuer: this.config.authority,
          clientId: this.config.clientId,
          subject: user.profile.sub,
        });
      }
      const renewed = this.userFrom(
        Object.assign(response, { refresh_token: response.refresh_token ?? user.refresh_token }),
        user.profile.sub,
      );
      if (this.user !== user) return; // signed out meanwhile
      this.store(renewed);
      this.sync.post({ type: 'session', user: renewed.toStorageString() });
    } catch (error) {
      if (this.user !== user) return;
      const transient = error instanceof ErrorTimeout || error instanceof TypeError;
      if (transient && !user.expired) {
        this.renewTimer = setTimeout(() => void this.renew(), RENEW_RETRY_MS);
        return;
      }
      const notice: AuthNotice = {
        code: 'renewal_failed',
        message: 'Your session could not be renewed, so you have been signed out. Sign in again to continue.',
      };
      this.forget({ status: 'signed-out', notice });
      this.sync.post({ type: 'session', user: null, notice });
    }
  }

  /** A follower tab never spends the refresh token itself: it asks the leader and waits for the result. */
  private askLeaderToRenew(): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.subscribe(() => {
        stop();
        clearTimeout(timer);
        resolve();
      });
      const timer = setTimeout(() => {
        stop();
        resolve();
      }, 10_000);
      this.sync.post({ type: 'renew-request' });
    });
  }
}

/** An error the provider answered the authorization request with (OpenID Connect Core 3.1.2.6). */
function isAuthorizationError(error: unknown, code: string): boolean {
  return error instanceof ErrorResponse && error.form === undefined && error.error === code;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** Maps whatever a step threw onto one sentence for the user, keeping the original as the cause. */
export function toAuthError(error: unknown): AuthError {
  if (error instanceof AuthError) return error;
  if (error instanceof ErrorResponse) {
    // oidc-client-ts attaches the request form to errors from the token endpoint only; any other
    // error response is the provider's answer to the authorization request (Core 3.1.2.6).
    const fromTokenEndpoint = error.form !== undefined;
    if (!fromTokenEndpoint) {
      return new AuthError('provider_error', providerErrorSentence(error.error ?? 'server_error'), {
        cause: error,
      });
    }
    return new AuthError(
      'token_request_failed',
      `The identity provider refused to issue tokens (${error.error}).`,
      { cause: error },
    );
  }
  if (error instanceof ErrorTimeout || error instanceof TypeError) {
    return new AuthError(
      'provider_unreachable',
      'The identity provider could not be reached. Try again later.',
      {
        cause: error,
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes('subject from UserInfo')) {
    return new AuthError(
      'userinfo_mismatch',
      "The identity provider's user info is for another user than its ID token, so sign-in was stopped.",
      { cause: error },
    );
  }
  if (message.includes('nonce')) {
    return new AuthError(
      'id_token_invalid',
      "The identity provider's ID token was rejected: its nonce does not match this sign-in.",
      { cause: error },
    );
  }
  if (message.includes('missing a subject')) {
    return new AuthError(
      'id_token_invalid',
      "The identity provider's ID token was rejected: its sub claim is missing or invalid.",
      { cause: error },
    );
  }
  if (/network|fetch|Failed to fetch/i.test(message)) {
    return new AuthError(
      'provider_unreachable',
      'The identity provider could not be reached. Try again later.',
      {
        cause: error,
      },
    );
  }
  return new AuthError('token_request_failed', 'Sign-in could not be completed. Try again.', {
    cause: error,
  });
}
