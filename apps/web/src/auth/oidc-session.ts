import {
  optionalScopeIn,
  requestedScope,
  type SignInStep,
  type SignInTrigger,
} from '@gatehouse/api-contract';
import { base64url } from 'jose';
import { readRuntimeConfig, type RuntimeConfig } from '../config/runtime-config';
import { AuthError } from './auth-error';
import { providerSessionRemains, sessionExpired, signedOutElsewhere } from './auth-notices';
import type { AuthNotice, AuthSession, AuthState, CallbackResult, SignOutOutcome } from './auth-state';
import { isAuthorizationError, oidcFailureOf, toAuthError } from './oidc-errors';
import { ProviderClient } from './provider-client';
import { keptNonce, pendingSignIn, type EarlyRedeem, type RequestData } from './pending-sign-in';
import { safeReturnTo } from './return-to';
import { pageEnvironment, SessionCore, type CoreEnvironment } from './session-core';
import { describeUser } from './session-user';
import { markSessionSomewhere, readSessionHint, writeSessionHint } from './session-hint';
import type { TabSignal } from './tab-signals';
import type { ApiAnswer, ApiRequest, VaultEvent, VaultUser } from './token-vault';
import { WorkerVault } from './vault-client';
import { VaultError, type Vault } from './vault-protocol';
import { telemetry, type ApiCallTracker } from '../telemetry/telemetry';

type OidcConfig = RuntimeConfig['oidc'];

/** Scopes the provider refused in this tab (`invalid_scope`) and sign-in does without. */
const REFUSED_SCOPES_KEY = 'gatehouse.refused-scopes';

export interface SessionEnvironment extends CoreEnvironment {
  location: Pick<Location, 'origin' | 'assign' | 'href'>;
  /** Replaces the current history entry (the post-logout return's `state` is taken out of the address). */
  replaceUrl: (url: string) => void;
  /** The token vault: the OAuth client that holds the tokens, out of the page's reach. */
  vault: Vault;
  /** Reports each API call as a dependency, with the trace context it sends (the telemetry facade). */
  trackApiCall?: ApiCallTracker | undefined;
  /** The callback's code, handed to the vault by the page's first script (pending-sign-in.ts). */
  earlyRedeem?: EarlyRedeem | undefined;
}

function browserEnvironment(
  config: OidcConfig,
  vault: Vault,
  earlyRedeem: EarlyRedeem | undefined,
): SessionEnvironment {
  return {
    ...pageEnvironment(config.clientId),
    replaceUrl: (url) => window.history.replaceState(window.history.state, '', url),
    vault,
    earlyRedeem,
    trackApiCall: telemetry.apiCall,
  };
}

/**
 * How long a new tab takes another tab's `here` as the answer to its question. The answer is a message
 * between two pages' processes, and one of them is in the background: on a loaded machine it has been
 * seen to take more than 2 s. A late answer still only brings the session the user has in the other tab.
 */
export const ASK_TABS_MS = 10_000;

const renewalFailed: AuthNotice = {
  code: 'renewal_failed',
  message: 'Your session could not be renewed, so you have been signed out. Sign in again to continue.',
};

/**
 * Entry point of the lazily loaded auth chunk, with the vault's worker if the page has started it, and
 * the callback's code if the page has already handed it to the vault.
 */
export async function createAuthSession(vault?: Vault, earlyRedeem?: EarlyRedeem): Promise<AuthSession> {
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
  const session = new OidcSession(
    config,
    browserEnvironment(config, vault ?? new WorkerVault(), earlyRedeem),
  );
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
    fetchApi: () => Promise.reject(error),
    renew: () => Promise.resolve(false),
  };
}

/**
 * The browser's OpenID Connect session, as the page runs it: the authorization request (code + PKCE S256,
 * the nonce, the DPoP key's thumbprint) and the end-session request through oidc-client-ts, the callback's
 * state, the user's claims, the sign-in telemetry and what the UI shows. The tokens are not here: the token
 * vault (token-vault.ts, in a worker) redeems the code, holds, renews and revokes them and makes the API
 * calls, so no script in the page can read one (ADR 0117).
 */
export class OidcSession extends SessionCore<VaultUser> implements AuthSession {
  private readonly provider: ProviderClient;
  private readonly vault: Vault;
  /** Until when (epoch ms) a `here` from another tab answers this one's question at start. */
  private askingTabsUntil = 0;

  constructor(
    private readonly config: OidcConfig,
    private readonly env: SessionEnvironment,
  ) {
    super(env, oidcFailureOf);
    this.vault = env.vault;
    this.provider = new ProviderClient(
      config,
      { origin: env.location.origin, sessionStorage: env.sessionStorage },
      undefined,
    );
    this.vault.listen((event, report) => this.onVaultEvent(event, report));
    env.tabs?.listen((signal) => void this.onTabSignal(signal));
  }

  /**
   * The vault's session (another tab's, or this tab's before a reload while the vault lived on), else a
   * session this tab had, restored through the provider (a top-level `prompt=none` request: the vault
   * keeps no token where the page could read it, so a vault that has stopped has nothing), else none. On
   * the redirect URI the state stays `loading` instead: the callback brings the session.
   */
  async start(): Promise<void> {
    // Discovery now, while the page settles, so the click on "Sign in" does not wait for it; on the
    // redirect URI once the code is redeemed (processCallback): the vault has discovery of its own, the
    // page needs it only for a later sign-in or sign-out, and the provider answers the token request alone.
    if (!this.onCallback()) {
      this.journey.abandoned();
      this.prefetchDiscovery();
    }
    await this.finishSignOut();
    if (this.onCallback()) return;
    const held = await this.vault.call('current').catch(() => null);
    if (held) {
      this.show(held);
      return;
    }
    if (readSessionHint(this.env.sessionStorage, this.env.now())) {
      await this.restore();
      return;
    }
    // Nobody here holds a session (a mark left by a browser closed while signed in goes).
    if (this.env.localStorage) markSessionSomewhere(this.env.localStorage, false);
    this.setState({ status: 'signed-out' });
    // A tab of a browser that gives it a vault of its own: is another tab signed in?
    this.askingTabsUntil = this.env.now() + ASK_TABS_MS;
    this.env.tabs?.send('who');
  }

  /**
   * Brings the session back through the provider (a top-level `prompt=none` request and back): the
   * vault has none, but the browser said there is one. A provider that wants the user to log in again
   * ends it with "session expired".
   */
  private async restore(): Promise<void> {
    // Where the user is when the browser leaves, not when the restore began: the signed-in UI is on
    // screen meanwhile, and a click on a link then must not be undone by the way back.
    const here = () => {
      const { pathname, search, hash } = new URL(this.env.location.href);
      return `${pathname}${search}${hash}`;
    };
    try {
      // The hint keeps the signed-in UI on screen while the browser goes to the provider and back.
      await this.redirectToProvider(here, { restore: true });
    } catch {
      // The provider cannot be reached: signed out, with the notice signIn set.
      writeSessionHint(this.env.sessionStorage, null);
    }
  }

  /**
   * Another tab's signal (tab-signals.ts). Where the tabs share the vault, its own events have already
   * said the same, and these change nothing; where each tab has its own, a tab signed out here follows a
   * sign-in elsewhere through the provider, and a sign-out elsewhere ends this tab's session too.
   */
  private async onTabSignal(signal: TabSignal): Promise<void> {
    if (signal === 'who') {
      this.answerWho();
      return;
    }
    if (signal === 'signed-out') {
      // This tab's own tokens, where it has a vault of its own: revoked (the provider session is over).
      if (this.endedInOtherTab()) await this.vault.call('signOut').catch(() => undefined);
      return;
    }
    const asked = signal === 'signed-in' || this.env.now() <= this.askingTabsUntil;
    if (!asked || this.state.status !== 'signed-out' || this.onCallback() || this.signInUnderWay()) return;
    const held = await this.vault.call('current').catch(() => null);
    if (held) this.show(held);
    else if (this.state.status === 'signed-out') await this.restore();
  }

  /** Fetches discovery (once; a failure is tried again when it is next needed). */
  private prefetchDiscovery(): void {
    this.provider.metadata().catch(() => undefined);
  }

  private onCallback(): boolean {
    const url = new URL(this.env.location.href);
    return url.pathname === '/callback' && isAnswer(url);
  }

  /**
   * Sends the browser to the provider. A sign-in asked for after the session ended (expired, or its
   * renewal failed) counts as the `expired-session` trigger, whichever button asked for it.
   */
  signIn(returnTo: string, trigger: SignInTrigger = 'button'): Promise<void> {
    return this.joinSignIn(() => this.startSignIn(returnTo, trigger));
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

  private async redirectToProvider(
    returnTo: string | (() => string),
    options: { restore?: boolean } = {},
  ): Promise<void> {
    try {
      // RFC 9449 10: the code is bound to the vault's key, so only the vault can redeem it. The vault
      // answers null where the provider does not offer DPoP; asked at once, beside discovery.
      const [metadata, dpopJkt] = await Promise.all([
        this.provider.checkIssuer().then(() => this.provider.metadata()),
        this.vault.call('thumbprint'),
      ]);
      const scope = requestedScope(this.config.scope, metadata.scopes_supported, this.refusedScopes());
      // The nonce goes in the request and our state, not oidc-client-ts's, so the ID token's check of it
      // is ours (id-token.ts, in the vault), with its own typed error.
      const nonce = randomToken();
      const data: RequestData = {
        returnTo: safeReturnTo(typeof returnTo === 'function' ? returnTo() : returnTo),
        scope,
        nonce,
      };
      if (options.restore) data.restore = true;
      const request = await this.provider.client.createSigninRequest({
        request_type: 'si:r',
        scope,
        ...(options.restore ? { prompt: 'none' } : {}),
        ...(dpopJkt ? { dpopJkt } : {}),
        extraQueryParams: { ...this.config.extraQueryParams, nonce },
        state: data,
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
    // Not the provider's answer (the callback reloaded after it was used): nothing to process.
    if (!isAnswer(new URL(url))) return Promise.resolve({ ok: true, returnTo: '/' });
    return this.callbackOnce(new URL(url).searchParams.get('state') ?? url, () => this.processCallback(url));
  }

  private async processCallback(url: string): Promise<CallbackResult> {
    let data: Partial<RequestData> = {};
    let stage: SignInStep = 'return';
    let stateId: string | undefined;
    let returned = false;
    const markReturned = () => {
      returned = true;
      if (!data.restore) this.journey.returned();
    };
    try {
      const pending = pendingSignIn(url, this.env.sessionStorage);
      if (!pending) {
        throw new AuthError(
          'state_mismatch',
          'This sign-in response does not belong to a sign-in started in this tab: it was used already or altered.',
        );
      }
      data = pending.data;
      stateId = pending.id;
      markReturned();
      // Refused before the code is redeemed (keptNonce says why).
      const nonce = keptNonce(pending);
      if (nonce === undefined) {
        throw new AuthError(
          'state_mismatch',
          'This sign-in response does not belong to a sign-in started by Gatehouse: its saved state has no nonce. Sign in again.',
        );
      }
      stage = 'redeem';
      // The page's first script may have handed this very code to the vault already (pending-sign-in.ts).
      const early = this.env.earlyRedeem;
      this.env.earlyRedeem = undefined;
      const user = await (early?.url === url
        ? early.redeemed
        : this.vault.call('redeem', { url, state: pending.saved, nonce }));
      if (data.restore) this.journey.renewal('succeeded');
      else {
        this.journey.redeemed();
        this.journey.signedIn();
      }
      this.show(user);
      return { ok: true, returnTo: safeReturnTo(data.returnTo) };
    } catch (error) {
      if (!returned) markReturned();
      return this.callbackFailed(error, stage, data);
    } finally {
      this.prefetchDiscovery();
      // One use only: the pending request is gone whatever came of it.
      if (stateId) await this.provider.client.settings.stateStore.remove(stateId).catch(() => undefined);
    }
  }

  private async callbackFailed(
    error: unknown,
    stage: SignInStep,
    data: Partial<RequestData>,
  ): Promise<CallbackResult> {
    const returnTo = safeReturnTo(data.returnTo);
    const step = error instanceof VaultError ? error.failure.step : stage;
    if (data.restore) {
      // The provider would not restore the session without the user: signed out, back where they were.
      this.journey.renewal('failed', error);
      this.journey.sessionEnded('expiry');
      this.forget({ status: 'signed-out', notice: sessionExpired });
      return { ok: true, returnTo };
    }
    const optional = optionalScopeIn(typeof data.scope === 'string' ? data.scope : '');
    if (refusedScope(error) && optional && !this.refusedScopes().has(optional)) {
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
        // redirectToProvider has set the notice; the user reads it below.
      }
    }
    this.journey.failed(error, step);
    const authError = toAuthError(error);
    const notice = { code: authError.code, message: authError.message };
    if (!this.user) this.setState({ status: 'signed-out', notice });
    return { ok: false, error: notice };
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
   * Signs out: the vault forgets the tokens at once (every tab hears it) and revokes the refresh token,
   * and the browser goes to the provider's end-session endpoint (OpenID Connect RP-Initiated Logout 1.0,
   * 2: `id_token_hint`, `client_id`, `post_logout_redirect_uri` and `state`). Until it has gone the state
   * is `signing-out`, so no route guard starts a new sign-in meanwhile. A provider without an end-session
   * endpoint leaves its own session as it is, and the user is told so.
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
    const [{ idToken, warning }] = await Promise.all([
      this.vault.call('signOut').catch(() => ({ idToken: undefined, warning: undefined })),
      cleared,
    ]);
    // Only now: a tab that hears it signs its own vault out, and where the vault is shared (Chromium,
    // Firefox), that must not come first and take the ID token this sign-out hands the provider.
    this.env.tabs?.send('signed-out');
    // The refresh token stays valid until it expires: the developer should know (the vault's console is
    // not the page's).
    if (warning) console.warn(`Gatehouse: ${warning}`);
    let endSession: string | undefined;
    try {
      endSession = await this.provider.client.metadataService.getEndSessionEndpoint();
    } catch {
      // The provider cannot be reached: the local session is gone, which is what the user asked for.
    }
    if (endSession) {
      try {
        const request = await this.provider.client.createSignoutRequest({
          ...(idToken === undefined ? {} : { id_token_hint: idToken }),
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
    this.setState({
      status: 'signed-out',
      ...(endSession === undefined && idToken ? { notice: providerSessionRemains } : {}),
    });
    return 'signed-out';
  }

  /**
   * One call of the app's API, made by the vault with the session's authorization; reported as a
   * dependency with the W3C trace context it carries, as the SDK reports the page's own fetches.
   */
  async fetchApi(request: ApiRequest): Promise<ApiAnswer> {
    const call = this.env.trackApiCall?.(request.url, request.method);
    const headers: [string, string][] = call
      ? [...request.headers, ['traceparent', call.traceparent]]
      : request.headers;
    try {
      const answer = await this.vault.call('fetchApi', { ...request, headers });
      call?.done(answer.status);
      return answer;
    } catch (error) {
      call?.done(0);
      throw error;
    }
  }

  /** Renews the tokens now (the API refused them with 401); true when a session remains. */
  async renew(): Promise<boolean> {
    try {
      return (await this.vault.call('renew')) !== null;
    } catch {
      return false;
    }
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

  /** What the vault announced: a session (a sign-in or a renewal, here or in another tab), or its end. */
  private onVaultEvent(event: VaultEvent, report: boolean): void {
    if (this.state.status === 'signing-out') return;
    if (event.type === 'session') {
      if (event.cause === 'renewed' && report) this.journey.renewal('succeeded');
      this.show(event.user);
      return;
    }
    if (!this.user) return;
    if (event.cause === 'renewal-failed') {
      if (report) {
        this.journey.renewal('failed', event.failure ? new VaultError(event.failure) : undefined);
        this.journey.sessionEnded('renewal-failed');
      } else this.journey.sessionEnded('other-tab');
      this.forget({ status: 'signed-out', notice: renewalFailed });
      return;
    }
    this.journey.sessionEnded('other-tab');
    this.forget({ status: 'signed-out', notice: signedOutElsewhere });
  }

  private show(user: VaultUser): void {
    if ((user.expires_at ?? Infinity) <= this.env.now() / 1000 && !user.renewable) {
      this.journey.sessionEnded('expiry');
      this.forget({ status: 'signed-out', notice: sessionExpired });
      return;
    }
    const arriving = this.state.status !== 'signed-in';
    this.user = user;
    const described = describeUser(user, this.config, user.renewsAt);
    this.keep(described);
    if (arriving) this.env.tabs?.send('signed-in');
  }
}

/** The provider's answer to an authorization request (Core 3.1.2.5, 3.1.2.6). */
function isAnswer(url: URL): boolean {
  return url.searchParams.has('code') || url.searchParams.has('error');
}

/** The provider refused a scope of the authorization request (`invalid_scope`, Core 3.1.2.6). */
function refusedScope(error: unknown): boolean {
  if (error instanceof VaultError) {
    return error.failure.reason === 'invalid_scope' && error.failure.step === 'provider';
  }
  return isAuthorizationError(error, 'invalid_scope');
}

function randomToken(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
}
