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
import type { AuthSession, AuthState, AuthUser, CallbackResult } from './auth-state';
import { JwksCache, validateIdToken } from './id-token';
import { safeReturnTo } from './return-to';
import { TabSync, type TabMessage } from './tab-sync';

type OidcConfig = RuntimeConfig['oidc'];

const USER_KEY = 'gatehouse.session';
/** Renew this long before the access token expires (or at half its remaining life, if shorter). */
const RENEW_MARGIN_SECONDS = 60;
/** A renewal that failed for want of a network is tried again after this long. */
const RENEW_RETRY_MS = 10_000;
/** How long a new tab waits for another tab to share its session. */
const SESSION_ASK_MS = 150;

export interface SessionEnvironment {
  location: Pick<Location, 'origin' | 'assign'>;
  sessionStorage: Storage;
  now: () => number;
}

const browserEnvironment = (): SessionEnvironment => ({
  location: window.location,
  sessionStorage: window.sessionStorage,
  now: () => Date.now(),
});

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
    signOut: () => Promise.resolve(),
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
      stateStore: new WebStorageStateStore({ store: env.sessionStorage, prefix: 'gatehouse.oidc.' }),
      fetchRequestCredentials: 'omit',
      requestTimeoutInSeconds: 10,
      staleStateAgeInSeconds: 600,
    });
    this.jwks = new JwksCache(() => this.client.metadataService.getKeysEndpoint(false));
    this.sync = new TabSync((message) => this.onTabMessage(message));
  }

  async start(): Promise<void> {
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
      const request = await this.client.createSigninRequest({
        request_type: 'si:r',
        nonce: randomToken(),
        state: { returnTo: safeReturnTo(returnTo) },
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
    try {
      let nonce: string | undefined;
      let returnTo = '/';
      try {
        const { state } = await this.client.readSigninResponseState(url);
        nonce = state.nonce;
        returnTo = safeReturnTo((state.data as { returnTo?: unknown } | undefined)?.returnTo);
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
      const authError = toAuthError(error);
      const notice = { code: authError.code, message: authError.message };
      if (!this.user) this.setState({ status: 'signed-out', notice });
      return { ok: false, error: notice };
    }
  }

  async signOut(): Promise<void> {
    const user = this.user;
    this.forget({ status: 'signed-out' });
    this.sync.post({ type: 'session', user: null });
    if (!user) return;
    try {
      if (user.refresh_token) {
        await this.client.revokeToken(user.refresh_token, 'refresh_token').catch(() => undefined);
      }
      const request = await this.client.createSignoutRequest({ id_token_hint: user.id_token });
      this.env.location.assign(request.url);
    } catch {
      // No end-session endpoint (Google, for one) or the provider is unreachable: the local session
      // is gone, which is what the user asked for.
    }
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
      id_token: response.id_token,
      session_state: response.session_state,
      access_token: response.access_token,
      refresh_token: response.refresh_token,
      token_type: response.token_type,
      scope: response.scope,
      profile: { ...response.profile, sub },
      expires_at: response.expires_at,
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
        else if (this.user) this.forget({ status: 'signed-out' });
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
          id_token: user.id_token,
          session_state: user.session_state,
          scope: user.scope,
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
      this.forget({
        status: 'signed-out',
        notice: {
          code: 'renewal_failed',
          message:
            'Your session could not be renewed, so you have been signed out. Sign in again to continue.',
        },
      });
      this.sync.post({ type: 'session', user: null });
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
