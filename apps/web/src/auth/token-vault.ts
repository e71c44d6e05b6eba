import type { SignInStep } from '@gatehouse/api-contract';
import { InMemoryWebStorage, SigninState, User } from 'oidc-client-ts';
import type { RuntimeConfig } from '../config/runtime-config';
import { AuthError } from './auth-error';
import { DpopKey, dpopOffered, type DpopStore } from './dpop';
import { validateIdToken } from './id-token';
import { oidcFailureOf, toAuthError } from './oidc-errors';
import { ProviderClient } from './provider-client';
import { isBound, userFrom } from './session-user';
import { isTransient, TokenRenewal } from './token-renewal';
import {
  callError,
  VaultError,
  type CallFailure,
  type Vault,
  type VaultFailure,
  type VaultOperation,
  type VaultOperations,
} from './vault-protocol';

type OidcConfig = RuntimeConfig['oidc'];

/**
 * The session as the page may know it: the user's claims, the tokens' expiry and kind, and whether they
 * can be renewed. Never a token: the access, refresh and ID tokens stay in the vault.
 */
export interface VaultUser {
  profile: { sub: string } & Record<string, unknown>;
  /** Epoch seconds. */
  expires_at: number | undefined;
  /** `DPoP` when the tokens are bound to the browser's key, else `Bearer`. */
  token_type: string;
  scope: string | undefined;
  /** Whether the vault holds a refresh token (renewal is possible). */
  renewable: boolean;
  /** Epoch seconds when the vault plans to renew, or null when it cannot. */
  renewsAt: number | null;
}

/** What the vault tells every page it serves. */
export type VaultEvent =
  | { type: 'session'; user: VaultUser; cause: 'signed-in' | 'renewed' }
  | { type: 'ended'; cause: 'signed-out' | 'renewal-failed'; failure?: VaultFailure };

/** A request of the app's own API, as the page hands it over (the vault adds the authorization). */
export interface ApiRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body?: string | undefined;
}

/** The API's answer, as plain data a page can make a Response of. */
export interface ApiAnswer {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: string;
}

export interface VaultEnvironment {
  /** The app's origin: the only one its tokens are ever sent to (besides the provider's endpoints). */
  origin: string;
  /** Where the DPoP key lives (IndexedDB); without it, tokens are never sender-constrained. */
  dpopStore?: DpopStore | undefined;
  now: () => number;
  /** Called for what every page should hear: a renewal, a sign-in or a session's end. */
  announce: (event: VaultEvent) => void;
  fetch?: typeof fetch;
  /**
   * Where a session of DPoP-bound tokens is kept across reloads (IndexedDB, in the shared worker):
   * RFC 10017 lets a browser keep a sender-constrained refresh token, useless without the browser's
   * non-extractable key. Bearer tokens are never kept. None: nothing survives the vault.
   */
  keep?: SessionKeeper | undefined;
}

/** Storage for one serialized session of bound tokens. */
export interface SessionKeeper {
  load(): Promise<string | undefined>;
  save(session: string): Promise<void>;
  clear(): Promise<void>;
}

/** How long sign-out waits for the revocation before the page goes on (the request is keepalive). */
const REVOCATION_WAIT_MS = 500;
/** Headers only the vault sets: whatever the page put there is dropped. */
const VAULT_HEADERS = ['authorization', 'dpop'];

/** How a call of the page that failed crosses back to it (vault-protocol.ts's CallFailure). */
export function callFailure(op: VaultOperation, error: unknown): CallFailure {
  if (op === 'fetchApi' && !(error instanceof VaultError)) {
    return { fetchFailed: error instanceof Error ? error.message : String(error) };
  }
  return { failure: vaultFailure(error, 'redeem') };
}

/** The failure of `error` at `stage`, as the vault sends it to the page. */
export function vaultFailure(error: unknown, stage: SignInStep): VaultFailure {
  if (error instanceof VaultError) return error.failure;
  const authError = toAuthError(error);
  const { reason, step } = oidcFailureOf(error, stage);
  return { code: authError.code, message: authError.message, reason, step, transient: isTransient(error) };
}

/**
 * The browser's OAuth client, out of the page's reach (RFC 10017's browser pattern): it redeems the
 * authorization code, checks the ID token, holds the access and refresh tokens in memory, renews them,
 * revokes them at sign-out, signs the DPoP proofs, and calls the app's API with them. It runs in a worker
 * (vault-worker.ts), so a script injected into the page can ask it to call the API while the page is open
 * but can never read a token. Nothing it holds is written to storage.
 */
export class TokenVault {
  private user: User | null = null;
  private readonly provider: ProviderClient;
  private readonly dpopKey: DpopKey | undefined;
  private readonly renewal: TokenRenewal<User>;
  /** The API's latest DPoP nonce (RFC 9449 9), sent in the next proofs. */
  private apiNonce: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly config: OidcConfig,
    private readonly env: VaultEnvironment,
  ) {
    this.fetchImpl = env.fetch ?? ((input, init) => fetch(input, init));
    this.dpopKey = env.dpopStore ? new DpopKey(env.dpopStore, config.clientId) : undefined;
    // The pending sign-in's state is handed over by the page at the callback (redeem), and kept only until
    // the code is exchanged.
    this.provider = new ProviderClient(
      config,
      { origin: env.origin, sessionStorage: new InMemoryWebStorage() },
      this.dpopKey,
    );
    // One vault serves every tab (a shared worker), so it is always the one that renews.
    this.renewal = new TokenRenewal<User>(
      {
        current: () => this.user,
        refresh: (user) => this.provider.refresh(user),
        renewed: (user) => {
          this.hold(user);
          this.env.announce({ type: 'session', user: this.summary(user), cause: 'renewed' });
        },
        failed: (error) => {
          this.forget();
          this.env.announce({
            type: 'ended',
            cause: 'renewal-failed',
            failure: vaultFailure(error, 'redeem'),
          });
        },
        askLeader: () => undefined,
        now: () => this.env.now(),
      },
      { leader: true, electLeader: (onLeader) => onLeader() },
    );
  }

  /**
   * Takes up a kept session of bound tokens (the vault stopped with the app's last tab, a reload say),
   * unless it can no longer be used (expired with nothing to renew it). Never throws: a store that
   * cannot be read means starting without.
   */
  async restore(): Promise<void> {
    try {
      const kept = await this.env.keep?.load();
      if (!kept || this.user) return;
      const user = User.fromStorageString(kept);
      if (!isBound(user) || (user.expired && !user.refresh_token)) {
        await this.env.keep?.clear();
        return;
      }
      this.user = user;
      this.renewal.schedule();
    } catch {
      // Without the kept session, the page restores it through the provider.
    }
  }

  /** The session it holds, as the page may see it, or null. */
  current(): VaultUser | null {
    return this.user ? this.summary(this.user) : null;
  }

  /**
   * The thumbprint of the key the vault signs its proofs with: the page binds the authorization code to
   * it (RFC 9449 10), so only this vault can redeem the code. Null when the vault has no key store or
   * the provider does not offer DPoP (its discovery, as the vault read it).
   */
  async thumbprint(): Promise<string | null> {
    if (!this.dpopKey || !dpopOffered(await this.provider.metadata())) return null;
    return this.dpopKey.thumbprint();
  }

  /**
   * Fetches discovery and, where the provider offers DPoP, makes the key, ahead of their first use: a
   * sign-in then waits for neither (the page asks for the thumbprint at the click, and the worker
   * often lives on through the provider's pages to redeem the code). Never throws: each step is
   * tried again where it is needed.
   */
  prepare(): void {
    this.thumbprint().catch(() => undefined);
  }

  /**
   * Redeems the code of a callback URL with the pending request's state the page kept (its PKCE verifier
   * among it), checks the ID token (signature, issuer, audience, nonce) and reads UserInfo. Fails with a
   * VaultError that names the step.
   */
  async redeem(request: { url: string; state: string; nonce: string }): Promise<VaultUser> {
    let stage: SignInStep = 'redeem';
    try {
      const state = await SigninState.fromStorageString(request.state);
      await this.provider.client.settings.stateStore.set(state.id, request.state);
      await this.provider.checkIssuer();
      // The keys come while the code is exchanged, so checking the ID token adds no round trip after it.
      this.provider.jwks.prefetch().catch(() => undefined);
      // The DPoP client shares the plain one's state store (provider-client.ts).
      const response = await (await this.provider.tokenClient()).processSigninResponse(request.url);
      stage = 'id-token';
      if (!response.id_token) {
        throw new AuthError('id_token_invalid', 'The identity provider did not return an ID token.');
      }
      const [claims, userInfo] = await Promise.all([
        validateIdToken(response.id_token, this.provider.jwks, {
          issuer: this.config.authority,
          clientId: this.config.clientId,
          nonce: request.nonce,
        }),
        this.provider.userInfo(response),
      ]);
      const user = userFrom(response, claims.sub, userInfo);
      this.hold(user);
      const summary = this.summary(user);
      this.env.announce({ type: 'session', user: summary, cause: 'signed-in' });
      return summary;
    } catch (error) {
      throw new VaultError(vaultFailure(error, stage));
    }
  }

  /** Renews the tokens now (one renewal at a time); answers the session after it, or null if it ended. */
  async renew(): Promise<VaultUser | null> {
    await this.renewal.renew();
    return this.current();
  }

  /**
   * Calls the app's own API with the session's authorization: the bearer token, or DPoP with a proof for
   * this method and URL (RFC 9449 7.1), sent once more with the API's nonce when it asks for one. Any other
   * URL is refused, so no caller can have a token sent elsewhere; the page's own Authorization and DPoP
   * headers are dropped; a redirect is never followed.
   */
  async fetchApi(request: ApiRequest): Promise<ApiAnswer> {
    const url = new URL(request.url, this.env.origin);
    if (url.origin !== this.env.origin || !url.pathname.startsWith('/api/')) {
      throw new TypeError(
        `The token vault calls ${this.env.origin}/api/ only, not ${url.origin}${url.pathname}.`,
      );
    }
    await this.renewal.ensureFresh();
    const method = request.method.toUpperCase();
    const send = async () => {
      const headers = new Headers(request.headers);
      for (const name of VAULT_HEADERS) headers.delete(name);
      for (const [name, value] of Object.entries(await this.authorization(url.href, method))) {
        headers.set(name, value);
      }
      const response = await this.fetchImpl(url.href, {
        method,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        credentials: 'same-origin',
        redirect: 'error',
      });
      this.apiNonce = response.headers.get('DPoP-Nonce') ?? this.apiNonce;
      return response;
    };
    let response = await send();
    if (
      response.status === 401 &&
      /error="use_dpop_nonce"/.test(response.headers.get('WWW-Authenticate') ?? '')
    ) {
      response = await send();
    }
    return {
      status: response.status,
      statusText: response.statusText,
      headers: [...response.headers],
      body: await response.text(),
    };
  }

  /**
   * Ends the session: the tokens are forgotten at once and the refresh token revoked (waited for, up to
   * a limit: a worker's requests end with it). Answers the ID token, the end-session request's
   * `id_token_hint` (it authorizes no API call), and why the provider refused the revocation, if it did;
   * announces the end to every page.
   */
  async signOut(): Promise<{ idToken: string | undefined; warning: string | undefined }> {
    const user = this.user;
    if (!user) return { idToken: undefined, warning: undefined };
    this.forget();
    this.env.announce({ type: 'ended', cause: 'signed-out' });
    const warning = await Promise.race([this.provider.revoke(user), delay(REVOCATION_WAIT_MS)]);
    return { idToken: user.id_token, warning: warning || undefined };
  }

  /** What the page may know of `user`: claims, expiry, the tokens' kind; never a token. */
  private summary(user: User): VaultUser {
    return {
      profile: { ...(user.profile as Record<string, unknown>), sub: user.profile.sub },
      expires_at: user.expires_at,
      token_type: user.token_type,
      scope: user.scope,
      renewable: Boolean(user.refresh_token),
      renewsAt: this.renewal.renewsAt,
    };
  }

  private hold(user: User): void {
    this.user = user;
    this.renewal.schedule();
    this.renewal.sessionChanged();
    const keep = this.env.keep;
    if (keep) void (isBound(user) ? keep.save(user.toStorageString()) : keep.clear()).catch(() => undefined);
  }

  private forget(): void {
    this.renewal.stop();
    const bound = this.user && isBound(this.user);
    this.user = null;
    this.apiNonce = undefined;
    this.renewal.sessionChanged();
    void this.env.keep?.clear().catch(() => undefined);
    // The key goes with the tokens bound to it.
    if (bound) void this.dpopKey?.remove().catch(() => undefined);
  }

  private async authorization(url: string, method: string): Promise<Record<string, string>> {
    const user = this.user;
    if (!user?.access_token) return {};
    const token = user.access_token;
    if (!isBound(user) || !this.dpopKey) return { Authorization: `Bearer ${token}` };
    const proof = await this.dpopKey.proof({ url, method, accessToken: token, nonce: this.apiNonce });
    return { Authorization: `DPoP ${token}`, DPoP: proof };
  }
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

/**
 * The vault in the page itself, behind the same interface as the worker's: for unit tests, which have
 * no workers. Never used in the browser, where it would put the tokens back in the page's reach.
 */
export function inPageVault(
  config: OidcConfig,
  env: Omit<VaultEnvironment, 'announce'>,
): Vault & { vault: TokenVault } {
  const listeners = new Set<(event: VaultEvent, report: boolean) => void>();
  const vault = new TokenVault(config, {
    ...env,
    announce: (event) => {
      for (const listener of listeners) listener(event, true);
    },
  });
  const operations: {
    [K in VaultOperation]: (...args: VaultOperations[K]['args']) => Promise<VaultOperations[K]['answer']>;
  } = {
    current: () => Promise.resolve(vault.current()),
    thumbprint: () => vault.thumbprint(),
    redeem: (request) => vault.redeem(request),
    renew: () => vault.renew(),
    fetchApi: (request) => vault.fetchApi(request),
    signOut: () => vault.signOut(),
  };
  return {
    vault,
    call: async (op, ...args) => {
      try {
        return await (operations[op] as (...a: typeof args) => Promise<VaultOperations[typeof op]['answer']>)(
          ...args,
        );
      } catch (error) {
        throw callError(callFailure(op, error));
      }
    },
    listen: (listener) => void listeners.add(listener),
  };
}
