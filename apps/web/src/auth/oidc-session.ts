import { readRoles } from '@gatehouse/api-contract';
import { base64url } from 'jose';
import {
  ErrorResponse,
  InMemoryWebStorage,
  OidcClient,
  User,
  WebStorageStateStore,
  type OidcClientSettings,
  type OidcMetadata,
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
import { DpopKey, dpopOffered, type DpopStore } from './dpop';
import { IndexedDbKeyStore } from './dpop-store';
import { JwksCache, validateIdToken } from './id-token';
import { optionalScopeIn, requestedScope } from './requested-scope';
import { safeReturnTo } from './return-to';
import { revokeRefreshToken } from './revocation';
import { writeSessionHint } from './session-hint';
import { TabSync, type TabMessage } from './tab-sync';
import { isTransient, TokenRenewal } from './token-renewal';
import { fetchUserInfo } from './userinfo';

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
  /** Where the browser's DPoP key lives (IndexedDB); without it, tokens are never sender-constrained. */
  dpopStore?: DpopStore | undefined;
}

const browserEnvironment = (): SessionEnvironment => ({
  location: window.location,
  replaceUrl: (url) => window.history.replaceState(window.history.state, '', url),
  sessionStorage: window.sessionStorage,
  now: () => Date.now(),
  dpopStore: typeof indexedDB === 'undefined' ? undefined : new IndexedDbKeyStore(),
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
  private readonly client: OidcClient;
  private readonly settings: OidcClientSettings;
  /** The same client with DPoP on, made once discovery says the provider offers it (RFC 9449 5.1). */
  private boundClient: OidcClient | undefined;
  private readonly dpopKey: DpopKey | undefined;
  /** The deletion of the key at the last sign-out, awaited before the page leaves. */
  private keyRemoval: Promise<void> = Promise.resolve();
  /** The API's latest DPoP nonce (RFC 9449 9), sent in the next proofs. */
  private apiNonce: string | undefined;
  private readonly tokens: Storage;
  private readonly jwks: JwksCache;
  private readonly sync: TabSync;
  private readonly renewal: TokenRenewal<User>;
  private readonly callbacks = new Map<string, Promise<CallbackResult>>();
  private discovery: Promise<Partial<OidcMetadata>> | undefined;

  constructor(
    private readonly config: OidcConfig,
    private readonly env: SessionEnvironment,
  ) {
    this.tokens = config.tokenStore === 'memory' ? new InMemoryWebStorage() : env.sessionStorage;
    this.dpopKey = env.dpopStore ? new DpopKey(env.dpopStore, config.clientId) : undefined;
    this.settings = {
      authority: config.authority,
      client_id: config.clientId,
      redirect_uri: `${env.location.origin}/callback`,
      post_logout_redirect_uri: `${env.location.origin}/`,
      response_type: 'code',
      scope: config.scope,
      // Read here, beside the ID token's check rather than after it, and with a typed error (userinfo.ts).
      loadUserInfo: false,
      extraQueryParams: config.extraQueryParams,
      // PKCE verifier and state live in this tab only, and only until the callback.
      stateStore: new WebStorageStateStore({ store: env.sessionStorage, prefix: STATE_PREFIX }),
      fetchRequestCredentials: 'omit',
      requestTimeoutInSeconds: 10,
      staleStateAgeInSeconds: 600,
    };
    this.client = new OidcClient(this.settings);
    this.jwks = new JwksCache(async () => {
      await this.metadata();
      return this.client.metadataService.getKeysEndpoint(false);
    });
    this.sync = new TabSync((message) => this.onTabMessage(message));
    this.renewal = new TokenRenewal<User>(
      {
        current: () => this.user,
        refresh: (user) => this.refresh(user),
        renewed: (user) => {
          this.store(user);
          this.sync.post({ type: 'session', user: user.toStorageString() });
        },
        failed: () => {
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
    this.metadata().catch(() => undefined);
  }

  /** OpenID Connect Discovery 1.0, 4: fetched once per page, however many steps ask for it at once. */
  private metadata(): Promise<Partial<OidcMetadata>> {
    const discovery = (this.discovery ??= this.client.metadataService.getMetadata());
    discovery.catch(() => (this.discovery = undefined));
    return discovery;
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

  async signIn(returnTo: string): Promise<void> {
    try {
      await this.checkIssuer();
      const metadata = await this.metadata();
      const scope = requestedScope(this.config.scope, metadata.scopes_supported, this.refusedScopes());
      // The nonce goes in the request and our state, not oidc-client-ts's, so the ID token's check of it
      // is ours (id-token.ts), with its own typed error.
      const nonce = randomToken();
      const client = await this.tokenClient();
      const request = await client.createSigninRequest({
        request_type: 'si:r',
        scope,
        // RFC 9449 10: the code is bound to the key, so only this browser can redeem it.
        ...(client === this.client || !this.dpopKey ? {} : { dpopJkt: await this.dpopKey.thumbprint() }),
        extraQueryParams: { ...this.config.extraQueryParams, nonce },
        state: { returnTo: safeReturnTo(returnTo), scope, nonce },
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
    // The key store's connection opens while discovery and the keys are fetched, not when the code
    // exchange's proof is signed.
    this.dpopKey?.warm();
    let returnTo = '/';
    let requested = '';
    try {
      let nonce: unknown;
      try {
        const { state } = await this.client.readSigninResponseState(url);
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
      await this.checkIssuer();
      // The keys come while the code is exchanged, so checking the ID token adds no round trip after it.
      this.jwks.prefetch().catch(() => undefined);
      const response = await (await this.tokenClient()).processSigninResponse(url);
      if (!response.id_token) {
        throw new AuthError('id_token_invalid', 'The identity provider did not return an ID token.');
      }
      const [claims, userInfo] = await Promise.all([
        validateIdToken(response.id_token, this.jwks, {
          issuer: this.config.authority,
          clientId: this.config.clientId,
          nonce,
        }),
        this.userInfo(response),
      ]);
      const user = this.userFrom(response, claims.sub, userInfo);
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
    // The key's deletion must finish before the page leaves for the provider, or IndexedDB drops it.
    await Promise.all([cleared, this.keyRemoval]);
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
    if (!this.isBound(user) || !this.dpopKey) return { Authorization: `Bearer ${token}` };
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
    const { issuer } = await this.metadata();
    if (issuer !== this.config.authority) {
      throw new AuthError(
        'issuer_mismatch',
        `The identity provider's discovery document names the issuer "${issuer}", not the configured authority "${this.config.authority}", so sign-in was stopped.`,
      );
    }
  }

  /** The UserInfo claims, when the provider has the endpoint and issued an access token. */
  private async userInfo(response: SigninResponse): Promise<Record<string, unknown>> {
    const endpoint = (await this.metadata()).userinfo_endpoint;
    const sub = response.profile.sub;
    if (!endpoint || !response.access_token || typeof sub !== 'string') return {};
    const accessToken = response.access_token;
    const key = this.dpopKey;
    const bound = key && response.token_type.toLowerCase() === 'dpop';
    return fetchUserInfo(
      endpoint,
      accessToken,
      sub,
      bound ? (request) => key.proof({ ...request, accessToken }) : undefined,
    );
  }

  private isBound(user: Pick<User, 'token_type'>): boolean {
    return user.token_type.toLowerCase() === 'dpop';
  }

  /**
   * The client for token requests: with DPoP when the provider offers it and this browser can keep a
   * key (oidc-client-ts then sends a proof with the code exchange and every refresh), else the plain one.
   */
  private async tokenClient(): Promise<OidcClient> {
    const metadata = await this.metadata();
    if (!this.dpopKey || !dpopOffered(metadata)) return this.client;
    this.boundClient ??= new OidcClient({ ...this.settings, metadata, dpop: this.dpopKey.settings() });
    return this.boundClient;
  }

  private userFrom(response: SigninResponse, sub: string, userInfo: Record<string, unknown> = {}): User {
    return new User({
      ...(response.id_token === undefined ? {} : { id_token: response.id_token }),
      session_state: response.session_state,
      access_token: response.access_token,
      ...(response.refresh_token === undefined ? {} : { refresh_token: response.refresh_token }),
      token_type: response.token_type,
      ...(response.scope === undefined ? {} : { scope: response.scope }),
      profile: { ...response.profile, ...userInfo, sub },
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
    this.renewal.schedule();
    const described = this.describe(user);
    // Only where the tokens themselves survive a reload: the memory store keeps nothing in storage.
    if (this.config.tokenStore === 'session') writeSessionHint(this.env.sessionStorage, described);
    this.setState({ status: 'signed-in', user: described });
    this.renewal.sessionChanged();
  }

  private forget(state: AuthState): void {
    this.renewal.stop();
    // Sign-out, here or in another tab, or an ended session: the key goes with the tokens bound to it.
    if (this.user && this.isBound(this.user) && this.dpopKey) {
      this.keyRemoval = this.dpopKey.remove().catch(() => undefined);
    }
    this.user = null;
    this.tokens.removeItem(USER_KEY);
    writeSessionHint(this.env.sessionStorage, null);
    this.setState(state);
    this.renewal.sessionChanged();
  }

  private describe(user: User): AuthUser {
    const profile = user.profile as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
    return {
      issuer: this.config.authority,
      sub: user.profile.sub,
      name: text(profile.name) ?? text(profile.preferred_username) ?? text(profile.email) ?? user.profile.sub,
      email: text(profile.email),
      roles: readRoles(profile, this.config.rolesClaim),
      expiresAt: user.expires_at ?? 0,
      renewsAt: this.renewal.renewsAt,
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
        this.renewal.onRenewRequest();
        break;
    }
  }

  /** Spends the refresh token (OpenID Connect Core 12) and checks a new ID token as at sign-in (12.2). */
  private async refresh(user: User): Promise<User> {
    const client = this.isBound(user) ? await this.tokenClient() : this.client;
    const response = await client.useRefreshToken({
      state: {
        refresh_token: user.refresh_token ?? '',
        ...(user.id_token === undefined ? {} : { id_token: user.id_token }),
        session_state: user.session_state,
        ...(user.scope === undefined ? {} : { scope: user.scope }),
        profile: user.profile,
      },
      timeoutInSeconds: 10,
    });
    const [, userInfo] = await Promise.all([
      response.id_token && response.id_token !== user.id_token
        ? validateIdToken(response.id_token, this.jwks, {
            issuer: this.config.authority,
            clientId: this.config.clientId,
            subject: user.profile.sub,
          })
        : undefined,
      this.userInfo(response),
    ]);
    return this.userFrom(
      Object.assign(response, { refresh_token: response.refresh_token ?? user.refresh_token }),
      user.profile.sub,
      userInfo,
    );
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
  return base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
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
  if (isTransient(error)) {
    return new AuthError(
      'provider_unreachable',
      'The identity provider could not be reached. Try again later.',
      {
        cause: error,
      },
    );
  }
  // Anything else oidc-client-ts throws is a plain Error: its own checks of the provider's answer (a
  // token response that is not JSON, an ID token without `sub`), told apart by nothing but their text.
  return new AuthError(
    'response_invalid',
    "The identity provider's answer could not be accepted, so sign-in was stopped. Try again; if it keeps happening, tell the provider's administrator.",
    { cause: error },
  );
}
