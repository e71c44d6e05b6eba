import {
  OidcClient,
  WebStorageStateStore,
  type OidcClientSettings,
  type OidcMetadata,
  type SigninResponse,
  type User,
} from 'oidc-client-ts';
import type { RuntimeConfig } from '../config/runtime-config';
import { AuthError } from './auth-error';
import { dpopOffered, type DpopKey } from './dpop';
import { JwksCache, validateIdToken } from './id-token';
import { STATE_PREFIX } from './pending-sign-in';
import { revokeRefreshToken } from './revocation';
import { isBound, userFrom } from './session-user';
import { fetchUserInfo } from './userinfo';

type OidcConfig = RuntimeConfig['oidc'];

/**
 * The provider, as the session talks to it: discovery (once per page) and its issuer check, the
 * authorization-code client of oidc-client-ts (with DPoP once discovery offers it), the keys that check ID
 * tokens, userinfo, refresh, revocation, and the requests this tab has started. It keeps no session: the
 * session (oidc-session.ts) holds the user and the state.
 */
export class ProviderClient {
  /** The plain client: authorization and end-session requests, and token requests without DPoP. */
  readonly client: OidcClient;
  readonly jwks: JwksCache;
  private readonly settings: OidcClientSettings;
  /** The same client with DPoP on, made once discovery says the provider offers it (RFC 9449 5.1). */
  private boundClient: OidcClient | undefined;
  private discovery: Promise<Partial<OidcMetadata>> | undefined;

  constructor(
    private readonly config: OidcConfig,
    env: { origin: string; sessionStorage: Storage },
    readonly dpopKey: DpopKey | undefined,
  ) {
    this.settings = {
      authority: config.authority,
      client_id: config.clientId,
      redirect_uri: `${env.origin}/callback`,
      post_logout_redirect_uri: `${env.origin}/`,
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
  }

  /** OpenID Connect Discovery 1.0, 4: fetched once per page, however many steps ask for it at once. */
  metadata(): Promise<Partial<OidcMetadata>> {
    const discovery = (this.discovery ??= this.client.metadataService.getMetadata());
    discovery.catch(() => (this.discovery = undefined));
    return discovery;
  }

  /** OpenID Connect Discovery 1.0, 4.3: the issuer in the document must equal the configured authority. */
  async checkIssuer(): Promise<void> {
    const { issuer } = await this.metadata();
    if (issuer !== this.config.authority) {
      throw new AuthError(
        'issuer_mismatch',
        `The identity provider's discovery document names the issuer "${issuer}", not the configured authority "${this.config.authority}", so sign-in was stopped.`,
      );
    }
  }

  /**
   * The client for token requests: with DPoP when the provider offers it and this browser can keep a
   * key (oidc-client-ts then sends a proof with the code exchange and every refresh), else the plain one.
   */
  async tokenClient(): Promise<OidcClient> {
    const metadata = await this.metadata();
    if (!this.dpopKey || !dpopOffered(metadata)) return this.client;
    this.boundClient ??= new OidcClient({ ...this.settings, metadata, dpop: this.dpopKey.settings() });
    return this.boundClient;
  }

  /** The UserInfo claims, when the provider has the endpoint and issued an access token. */
  async userInfo(response: SigninResponse): Promise<Record<string, unknown>> {
    const endpoint = (await this.metadata()).userinfo_endpoint;
    const sub = response.profile.sub;
    if (!endpoint || !response.access_token || typeof sub !== 'string') return {};
    const accessToken = response.access_token;
    const key = this.dpopKey;
    const bound = key && isBound(response);
    return fetchUserInfo(
      endpoint,
      accessToken,
      sub,
      bound ? (request) => key.proof({ ...request, accessToken }) : undefined,
    );
  }

  /** Spends the refresh token (OpenID Connect Core 12) and checks a new ID token as at sign-in (12.2). */
  async refresh(user: User): Promise<User> {
    const client = isBound(user) ? await this.tokenClient() : this.client;
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
    return userFrom(
      Object.assign(response, { refresh_token: response.refresh_token ?? user.refresh_token }),
      user.profile.sub,
      userInfo,
    );
  }

  /**
   * Revokes the refresh token, if there is one and the provider has a revocation endpoint; never throws.
   * Answers why the provider refused, for the page's console, or undefined.
   */
  async revoke(user: User): Promise<string | undefined> {
    if (!user.refresh_token) return undefined;
    try {
      const endpoint = await this.client.metadataService.getRevocationEndpoint();
      if (endpoint) await revokeRefreshToken(endpoint, this.config.clientId, user.refresh_token);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** Forgets every sign-in or sign-out request this tab started and the provider has not answered. */
  async clearPendingRequests(): Promise<void> {
    const { stateStore } = this.client.settings;
    await Promise.all((await stateStore.getAllKeys()).map((key) => stateStore.remove(key)));
  }
}
