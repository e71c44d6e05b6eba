import {
  base64url,
  calculateJwkThumbprint,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  SignJWT,
} from 'jose';
import { vi } from 'vitest';
import type { RuntimeConfig } from '../config/runtime-config';

/**
 * For unit tests of the session and the token vault: an OpenID provider and the app's API behind a
 * stubbed `fetch`, close enough to a real one that oidc-client-ts, jose and the vault run unmocked:
 * discovery, signed ID tokens (ES256) with the request's nonce, PKCE checked at the token endpoint,
 * rotated refresh tokens, DPoP-bound tokens when the client sends a proof, UserInfo, revocation.
 */

export const APP_ORIGIN = 'http://localhost:3000';
export const AUTHORITY = 'http://localhost:3001';

export const testOidcConfig: RuntimeConfig['oidc'] = {
  mode: 'browser',
  authority: AUTHORITY,
  clientId: 'gatehouse',
  scope: 'openid profile email offline_access',
  rolesClaim: 'roles',
  extraQueryParams: {},
};

/** One request as the fake saw it. */
export interface SeenRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string;
  init: RequestInit | undefined;
}

interface Tokens {
  access_token: string;
  refresh_token: string | undefined;
  id_token: string;
  token_type: 'Bearer' | 'DPoP';
}

export interface FakeProviderOptions {
  /** The scopes its discovery lists; none: it does not say. */
  scopesSupported?: string[];
  /** Whether it has an end-session endpoint (default yes). */
  endSession?: boolean;
  /** Whether it offers DPoP (RFC 9449 5.1). */
  dpop?: boolean;
  /** Seconds the access token lives (default an hour). */
  expiresIn?: number;
  /** Whether it issues refresh tokens (default yes). */
  refreshTokens?: boolean;
}

type Answer = (request: SeenRequest) => Response | Promise<Response> | undefined;

const form = (body: string) => new URLSearchParams(body);

function bodyText(body: RequestInit['body']): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string' || body instanceof URLSearchParams) return body.toString();
  throw new TypeError('The fake provider reads text and form bodies only.');
}

async function sha256(text: string): Promise<string> {
  return base64url.encode(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))),
  );
}

/** The DPoP proof's key thumbprint, or undefined without a proof (its signature is dpop.test.ts's concern). */
async function proofKey(request: SeenRequest): Promise<string | undefined> {
  const proof = request.headers.get('DPoP');
  if (!proof) return undefined;
  const { jwk } = decodeProtectedHeader(proof);
  return jwk ? calculateJwkThumbprint(jwk, 'sha256') : undefined;
}

/** Starts the fake and stubs `fetch` with it (vi.unstubAllGlobals() takes it away). */
export async function fakeProvider(options: FakeProviderOptions = {}) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k-1', alg: 'ES256', use: 'sig' };
  const requests: SeenRequest[] = [];
  const codes = new Map<
    string,
    { nonce: string | undefined; challenge: string; scope: string; jkt?: string }
  >();
  /** Live refresh tokens: a used one is spent (rotation). */
  const refreshTokens = new Map<string, { sub: string; scope: string; jkt: string | undefined }>();
  const accessTokens = new Map<string, { sub: string; jkt: string | undefined }>();
  const issued: Tokens[] = [];
  let serial = 0;

  const provider = {
    requests,
    issued,
    /** The user who signs in. */
    sub: 'alice',
    /** More claims of the ID token (a nonce here replaces the request's). */
    idTokenClaims: {} as Record<string, unknown>,
    /** What UserInfo answers (its `sub` is the user's unless set here). */
    userInfo: { name: 'Alice', roles: ['member'] } as Record<string, unknown>,
    /** The authorization endpoint's error for a request, if it refuses it (e.g. `invalid_scope`). */
    refuseAuthorization: (_request: URLSearchParams): string | undefined => undefined,
    /** Answers the token endpoint gives before its own (a refusal, a request that never ends). */
    tokenAnswer: (() => undefined) as Answer,
    revocationAnswer: (() => new Response(null, { status: 200 })) as Answer,
    /** The app's API (same origin as the app), answering what the vault sends it. */
    api: (() => Response.json({ ok: true })) as Answer,

    /** Requests made to `path` of the provider or the app. */
    to(path: string): SeenRequest[] {
      return requests.filter((request) => new URL(request.url).pathname === path);
    },

    /**
     * The browser at the authorization endpoint (the URL the session sent it to): the user signs in and
     * the provider sends the browser back to the redirect URI, with a code, or an error.
     */
    authorize(url: string | undefined): string {
      if (!url) throw new Error('The session sent the browser nowhere.');
      const target = new URL(url);
      const query = target.searchParams;
      if (`${target.origin}${target.pathname}` !== `${AUTHORITY}/auth`)
        throw new Error(`Not the provider: ${url}`);
      if (query.get('client_id') !== testOidcConfig.clientId || query.get('response_type') !== 'code') {
        throw new Error(`Not an authorization request of the app: ${url}`);
      }
      const back = new URL(query.get('redirect_uri') ?? '');
      back.searchParams.set('state', query.get('state') ?? '');
      const refused =
        provider.refuseAuthorization(query) ??
        (query.get('prompt') === 'none' ? provider.promptNone : undefined);
      if (refused) {
        back.searchParams.set('error', refused);
        return back.href;
      }
      const code = `code-${++serial}`;
      codes.set(code, {
        nonce: query.get('nonce') ?? undefined,
        challenge: query.get('code_challenge') ?? '',
        scope: query.get('scope') ?? '',
        ...(query.has('dpop_jkt') ? { jkt: query.get('dpop_jkt') ?? '' } : {}),
      });
      back.searchParams.set('code', code);
      return back.href;
    },
    /** What a `prompt=none` request comes back with: an error (`login_required`), or undefined (a code). */
    promptNone: undefined as string | undefined,

    fetch: vi.fn<typeof fetch>(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      const request: SeenRequest = {
        url,
        method: (init?.method ?? 'GET').toUpperCase(),
        headers: new Headers(init?.headers),
        body: bodyText(init?.body),
        init,
      };
      requests.push(request);
      return answer(request);
    }),
  };

  async function issue(sub: string, scope: string, nonce: string | undefined, jkt: string | undefined) {
    const now = Math.floor(Date.now() / 1000);
    const n = ++serial;
    const tokens: Tokens = {
      access_token: `at-${n}`,
      refresh_token: options.refreshTokens === false ? undefined : `rt-${n}`,
      id_token: await new SignJWT({ ...(nonce === undefined ? {} : { nonce }), ...provider.idTokenClaims })
        .setProtectedHeader({ alg: 'ES256', kid: 'k-1' })
        .setIssuer(AUTHORITY)
        .setAudience(testOidcConfig.clientId)
        .setSubject(sub)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(privateKey),
      token_type: jkt ? 'DPoP' : 'Bearer',
    };
    issued.push(tokens);
    accessTokens.set(tokens.access_token, { sub, jkt });
    if (tokens.refresh_token) refreshTokens.set(tokens.refresh_token, { sub, scope, jkt });
    return Response.json({ ...tokens, scope, expires_in: options.expiresIn ?? 3600 });
  }

  const invalidGrant = (why: string) =>
    Response.json({ error: 'invalid_grant', error_description: why }, { status: 400 });

  async function token(request: SeenRequest): Promise<Response> {
    const params = form(request.body);
    const jkt = await proofKey(request);
    if (params.get('grant_type') === 'authorization_code') {
      const code = codes.get(params.get('code') ?? '');
      codes.delete(params.get('code') ?? '');
      if (!code) return invalidGrant('unknown or used code');
      if ((await sha256(params.get('code_verifier') ?? '')) !== code.challenge) return invalidGrant('PKCE');
      if (code.jkt !== undefined && code.jkt !== jkt) return invalidGrant('the code is bound to another key');
      return issue(provider.sub, code.scope, code.nonce, options.dpop ? jkt : undefined);
    }
    if (params.get('grant_type') === 'refresh_token') {
      const held = refreshTokens.get(params.get('refresh_token') ?? '');
      if (!held) return invalidGrant('unknown, spent or revoked refresh token');
      if (held.jkt !== undefined && held.jkt !== jkt)
        return invalidGrant('the refresh token is bound to a key');
      refreshTokens.delete(params.get('refresh_token') ?? '');
      return issue(held.sub, held.scope, undefined, held.jkt);
    }
    return Response.json({ error: 'unsupported_grant_type' }, { status: 400 });
  }

  function userInfo(request: SeenRequest): Response {
    const [scheme, value] = (request.headers.get('Authorization') ?? '').split(' ');
    const held = accessTokens.get(value ?? '');
    if (!held || scheme !== (held.jkt ? 'DPoP' : 'Bearer') || (held.jkt && !request.headers.has('DPoP'))) {
      return new Response(null, {
        status: 401,
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    return Response.json({ sub: held.sub, ...provider.userInfo });
  }

  async function answer(request: SeenRequest): Promise<Response> {
    const { origin, pathname } = new URL(request.url);
    if (origin === APP_ORIGIN) return (await provider.api(request)) ?? new Response(null, { status: 404 });
    if (origin !== AUTHORITY)
      throw new TypeError(`Failed to fetch ${request.url} (not the app, not the provider)`);
    switch (pathname) {
      case '/.well-known/openid-configuration':
        return Response.json({
          issuer: AUTHORITY,
          authorization_endpoint: `${AUTHORITY}/auth`,
          token_endpoint: `${AUTHORITY}/token`,
          userinfo_endpoint: `${AUTHORITY}/me`,
          jwks_uri: `${AUTHORITY}/jwks`,
          revocation_endpoint: `${AUTHORITY}/token/revocation`,
          ...(options.endSession === false ? {} : { end_session_endpoint: `${AUTHORITY}/session/end` }),
          ...(options.scopesSupported ? { scopes_supported: options.scopesSupported } : {}),
          ...(options.dpop ? { dpop_signing_alg_values_supported: ['ES256'] } : {}),
        });
      case '/jwks':
        return Response.json({ keys: [jwk] });
      case '/token':
        return (await provider.tokenAnswer(request)) ?? token(request);
      case '/me':
        return userInfo(request);
      case '/token/revocation': {
        const answered = (await provider.revocationAnswer(request)) ?? new Response(null);
        if (answered.ok) refreshTokens.delete(form(request.body).get('token') ?? '');
        return answered;
      }
      default:
        return new Response(null, { status: 404 });
    }
  }

  vi.stubGlobal('fetch', provider.fetch);
  return provider;
}

export type FakeProvider = Awaited<ReturnType<typeof fakeProvider>>;

/** Every value kept in the page's sessionStorage and localStorage, for tests that no token is there. */
export function pageStorage(): string[] {
  const values: string[] = [];
  for (const storage of [window.sessionStorage, window.localStorage]) {
    for (let i = 0; i < storage.length; i++) {
      const key = storage.key(i);
      if (key !== null) values.push(`${key}=${storage.getItem(key) ?? ''}`);
    }
  }
  return values;
}
