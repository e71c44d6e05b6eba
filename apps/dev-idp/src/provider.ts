import { randomBytes } from 'node:crypto';

import Provider, { errors } from 'oidc-provider';
import type Koa from 'koa';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

import { accountBySub, accountFinder, rolesClaims } from './accounts.js';
import { interactionRoutes } from './interactions.js';
import type { SigningKey } from './keys.js';
import { LONG_COOKIE, logoutSource } from './logout.js';
import { UserinfoBridge } from './userinfo-bridge.js';
import { contentSecurityPolicy, errorPage, sendPage, signedOutPage } from './views.js';

const DAY = 24 * 60 * 60;

/** oidc-provider's default route paths, which we keep; named here because our middleware matches on them. */
export const ROUTES = {
  authorization: '/auth',
  token: '/token',
  userinfo: '/me',
  jwks: '/jwks',
  end_session: '/session/end',
  revocation: '/token/revocation',
} as const;

export interface ProviderSettings {
  issuer: string;
  appOrigin: string;
  clientId: string;
  /** A confidential client's secret (Gatehouse's BFF mode); undefined: a public client. */
  clientSecret?: string | undefined;
  /** The client's one redirect URI. */
  redirectUri: string;
  apiResource: string;
  signingKey: SigningKey;
  /** TTL of access tokens and ID tokens issued now (test controls can change it at run time). */
  tokenTtlSeconds: () => number;
  /**
   * `opaque`: no default resource, so oidc-provider issues its opaque access tokens (for userinfo), as
   * Django OAuth Toolkit, Auth0 without an audience or Okta's org server do. Default `jwt`.
   */
  accessTokenFormat?: 'jwt' | 'opaque';
  /** A confidential client that may introspect the SPA's tokens (RFC 7662), as an API server would. */
  introspectionClient?: { client_id: string; client_secret: string } | undefined;
  /**
   * RFC 9449: offer DPoP (discovery lists `dpop_signing_alg_values_supported`), so a client that sends
   * proofs gets sender-constrained tokens; `false` plays a provider without DPoP. Default true.
   */
  dpop?: boolean;
  /**
   * Where tokens and userinfo carry the roles: `roles` (default), or a dotted path such as
   * `realm_access.roles`, where Keycloak puts them.
   */
  rolesClaim?: string;
  /**
   * Middleware ahead of the provider's own routes (the test controls): it sees requests as the browser
   * sent them, before the UserInfo bridge swaps an access token for its twin.
   */
  ahead?: Koa.Middleware[];
}

/** Scopes the Gatehouse API accepts; the access token's scope is the requested scopes filtered to these. */
const API_SCOPES = 'openid profile email';

export function createProvider(settings: ProviderSettings): Provider {
  const { appOrigin, clientId, clientSecret, redirectUri, apiResource, signingKey, tokenTtlSeconds } =
    settings;
  const { introspectionClient } = settings;
  const opaque = settings.accessTokenFormat === 'opaque';
  const rolesClaim = settings.rolesClaim ?? 'roles';
  /** The top-level claim that holds the roles (`realm_access` for `realm_access.roles`). */
  const rolesRoot = rolesClaim.split('.')[0] ?? 'roles';

  const bridge = new UserinfoBridge(() => provider, {
    publicKey: signingKey.publicKey,
    audience: apiResource,
  });

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_name: 'Gatehouse',
        application_type: 'web',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [redirectUri],
        post_logout_redirect_uris: [`${appOrigin}/`],
        ...(clientSecret === undefined
          ? { token_endpoint_auth_method: 'none' as const }
          : {
              client_secret: clientSecret,
              token_endpoint_auth_method: 'client_secret_basic' as const,
              // OpenID Connect Back-Channel Logout 1.0: the provider posts a logout token here when the
              // user's session with it ends, and the server ends its own sessions of that `sid`.
              backchannel_logout_uri: `${appOrigin}/bff/backchannel-logout`,
              backchannel_logout_session_required: true,
            }),
      },
      ...(introspectionClient
        ? [
            {
              ...introspectionClient,
              client_name: 'Gatehouse API (introspection only)',
              token_endpoint_auth_method: 'client_secret_basic' as const,
              grant_types: [],
              response_types: [],
              redirect_uris: [],
            },
          ]
        : []),
    ],
    // oidc-provider's own requests (the back-channel logout's POST) refuse loopback and private
    // addresses, against SSRF; this development provider's one client is the app on this machine.
    fetch: (url, options) => {
      const { dispatcher: _ssrfGuard, ...rest } = options as RequestInit & { dispatcher?: unknown };
      return fetch(url, rest);
    },
    // Code flow only, so discovery does not advertise implicit or hybrid response types.
    responseTypes: ['code'],
    jwks: { keys: [signingKey.privateJwk] },
    cookies: {
      // Random per start: cookies from an earlier run simply stop matching.
      keys: [randomBytes(32).toString('base64url')],
      // Cookies ignore ports, so the app on localhost:3000 sees ours; distinct names avoid clashing with its own.
      names: { session: 'dev_idp_session', interaction: 'dev_idp_interaction', resume: 'dev_idp_resume' },
      long: LONG_COOKIE,
      short: { httpOnly: true, sameSite: 'lax' },
    },
    claims: {
      openid: ['sub'],
      // Gatehouse reads roles with the profile scope; no extra scope to request.
      profile: ['name', rolesRoot],
      email: ['email', 'email_verified'],
    },
    // Put every granted claim in the ID token, not only in userinfo.
    conformIdTokenClaims: false,
    findAccount: accountFinder(rolesClaim),
    pkce: { required: () => true },
    clientBasedCORS: (_ctx, origin, client) => client.clientId === clientId && origin === appOrigin,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // First-party client: consent is implied, so grant whatever it asks for (docs: "skip consent" recipe).
    loadExistingGrant: async (ctx) => {
      const { client, session, result } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const grantId = result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      const grant =
        (grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined) ??
        new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope(ctx.oidc.requestParamOIDCScopes);
      grant.addOIDCClaims(ctx.oidc.requestParamClaims);
      for (const [indicator, server] of Object.entries(ctx.oidc.resourceServers ?? {})) {
        grant.addResourceScope(
          indicator,
          [...ctx.oidc.requestParamScopes].filter((s) => server.scopes.has(s)),
        );
      }
      await grant.save();
      return grant;
    },
    // oidc-provider drops offline_access unless the request says prompt=consent, and the SPA does not; so this
    // first-party client gets a refresh token on every code exchange. Without offline_access they expire with
    // the provider session (oidc-provider's default expiresWithSession), and logout revokes them anyway.
    issueRefreshToken: (_ctx, client, code) =>
      client.clientId === clientId && client.grantTypeAllowed('refresh_token') && code.scopes.has('openid'),
    rotateRefreshToken: true,
    extraTokenClaims: (_ctx, token) => {
      const account = 'accountId' in token ? accountBySub(token.accountId) : undefined;
      return account ? rolesClaims(account, rolesClaim) : undefined;
    },
    formats: { customizers: { jwt: (_ctx, token) => bridge.rememberTwin(token) } },
    ttl: {
      AccessToken: () => tokenTtlSeconds(),
      IdToken: () => tokenTtlSeconds(),
      AuthorizationCode: 60,
      // Rotation keeps the first token's absolute lifetime.
      RefreshToken: (ctx) => ctx.oidc.entities.RotatedRefreshToken?.remainingTTL ?? DAY,
      Interaction: 60 * 60,
      Session: DAY,
      Grant: DAY,
    },
    features: {
      devInteractions: { enabled: false },
      // A client may revoke only its own tokens: the default policy, declared so the provider does not nag.
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      userinfo: { enabled: true },
      backchannelLogout: { enabled: clientSecret !== undefined },
      // Tokens are bound when the client sends a proof (RFC 9449 section 5); public clients' refresh
      // tokens then are too (section 5.0). Nonces are left to the API, which can ask for its own.
      dPoP: { enabled: settings.dpop ?? true },
      // RFC 7662: only the API's own confidential client may ask, and only about the SPA's access tokens:
      // oidc-provider ignores token_type_hint and would call a refresh token active, without a token_type.
      introspection: {
        enabled: introspectionClient !== undefined,
        allowedPolicy: (_ctx, client, token) =>
          client.clientId === introspectionClient?.client_id &&
          token.clientId === clientId &&
          token.kind === 'AccessToken',
      },
      resourceIndicators: {
        enabled: true,
        // Without a resource, oidc-provider issues an opaque access token meant for userinfo.
        defaultResource: () => (opaque ? undefined : apiResource),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => {
          if (resourceIndicator !== apiResource) throw new errors.InvalidTarget();
          return {
            scope: API_SCOPES,
            audience: apiResource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: tokenTtlSeconds(),
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource,
        postLogoutSuccessSource: (ctx) => sendPage(ctx, 200, 'Signed out', signedOutPage()),
      },
    },
    renderError: (ctx: KoaContextWithOIDC, out) => {
      sendPage(
        ctx,
        ctx.status,
        'Error',
        errorPage('The identity provider could not handle this request.', { ...out }),
      );
    },
  };

  const provider = new Provider(settings.issuer, configuration);
  const policy = contentSecurityPolicy(appOrigin);
  provider.use(async (ctx, next) => {
    // Before the routes: oidc-provider's own pages (the sign-out confirmation) add to it.
    ctx.set('Content-Security-Policy', policy);
    // Browsers ask for an icon whatever the page says; nothing to show, and nothing to log.
    if (ctx.path === '/favicon.ico' && ctx.method === 'GET') {
      ctx.status = 204;
      ctx.set('Cache-Control', 'max-age=86400');
      return;
    }
    await next();
  });
  for (const middleware of settings.ahead ?? []) provider.use(middleware);
  provider.use(interactionRoutes(provider));
  provider.use(bridge.middleware(ROUTES.userinfo));
  return provider;
}
