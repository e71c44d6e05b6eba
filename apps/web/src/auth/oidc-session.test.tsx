import { render, screen, waitFor } from '@testing-library/react';
import {
  ErrorResponse,
  ErrorTimeout,
  MetadataService,
  OidcClient,
  SigninResponse,
  User,
  type SigninState,
} from 'oidc-client-ts';
import { StrictMode } from 'react';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthProvider } from './auth-context';
import { CallbackPage } from './callback-page';
import type * as IdToken from './id-token';
import * as IdTokenModule from './id-token';
import { AuthError } from './auth-error';
import { toAuthError } from './oidc-errors';
import { OidcSession } from './oidc-session';
import type { ReportSignInEvent } from './sign-in-telemetry';

vi.mock('./id-token', async (importOriginal) => ({
  ...(await importOriginal<typeof IdToken>()),
  validateIdToken: vi.fn(() => Promise.resolve({ sub: 'alice' })),
}));

const AUTHORITY = 'http://localhost:3001';
const config = {
  authority: AUTHORITY,
  clientId: 'gatehouse',
  scope: 'openid profile email offline_access',
  rolesClaim: 'roles',
  tokenStore: 'session' as const,
  extraQueryParams: {},
};

function newSession(
  href = 'http://localhost:3000/',
  tokenStore: 'session' | 'memory' = 'session',
  rolesClaim = config.rolesClaim,
) {
  const environment = {
    location: { origin: 'http://localhost:3000', href, assign: vi.fn<(url: string) => void>() },
    replaceUrl: vi.fn<(url: string) => void>(),
    sessionStorage: window.sessionStorage,
    now: () => Date.now(),
    reportSignIn: vi.fn<ReportSignInEvent>(() => true),
    leavingFor: vi.fn<(url: string) => void>(),
  };
  return Object.assign(new OidcSession({ ...config, tokenStore, rolesClaim }, environment), { environment });
}

/**
 * A provider that has answered the callback's code: discovery, the token response oidc-client-ts
 * returns (it is stubbed), and the UserInfo endpoint behind a stubbed fetch.
 */
function answeredCallback(
  userInfo: Record<string, unknown> = { sub: 'alice', name: 'Alice', roles: ['member'] },
) {
  vi.spyOn(MetadataService.prototype, 'getMetadata').mockResolvedValue({
    issuer: AUTHORITY,
    userinfo_endpoint: `${AUTHORITY}/me`,
  });
  vi.spyOn(OidcClient.prototype, 'readSigninResponseState').mockResolvedValue({
    state: { data: { returnTo: '/profile', nonce: 'n-1' } } as unknown as SigninState,
    response: new SigninResponse(new URLSearchParams()),
  });
  const response = Object.assign(new SigninResponse(new URLSearchParams('code=c&state=s')), {
    id_token: 'header.payload.signature',
    access_token: 'at',
    refresh_token: 'rt',
    token_type: 'Bearer',
    scope: config.scope,
    profile: { sub: 'alice' },
    expires_in: 300,
  });
  const exchange = vi.spyOn(OidcClient.prototype, 'processSigninResponse').mockResolvedValue(response);
  const fetch = vi.fn<typeof globalThis.fetch>(() => Promise.resolve(Response.json(userInfo)));
  vi.stubGlobal('fetch', fetch);
  return { exchange, fetch };
}

afterEach(() => {
  window.sessionStorage.clear();
  vi.unstubAllGlobals();
});

/** A session that starts signed in, from tokens kept by an earlier page of this tab. */
async function signedInSession() {
  const user = new User({
    id_token: 'id.token.value',
    access_token: 'at',
    refresh_token: 'rt',
    token_type: 'Bearer',
    scope: config.scope,
    profile: { sub: 'alice', iss: AUTHORITY, aud: 'gatehouse', exp: 0, iat: 0 },
    expires_at: Math.floor(Date.now() / 1000) + 300,
  });
  window.sessionStorage.setItem('gatehouse.session', user.toStorageString());
  const session = newSession();
  await session.start();
  expect(session.getState().status).toBe('signed-in');
  return session;
}

/** The provider's discovery, as far as sign-out reads it. */
function provider({
  endSession = true,
  revocation,
}: {
  endSession?: boolean;
  revocation: Promise<Response>;
}) {
  vi.spyOn(MetadataService.prototype, 'getEndSessionEndpoint').mockResolvedValue(
    endSession ? `${AUTHORITY}/session/end` : undefined,
  );
  vi.spyOn(MetadataService.prototype, 'getRevocationEndpoint').mockResolvedValue(
    `${AUTHORITY}/token/revocation`,
  );
  const fetch = vi.fn<typeof globalThis.fetch>(() => revocation);
  vi.stubGlobal('fetch', fetch);
  return { fetch };
}

describe("the signed-in user's roles", () => {
  const storeUser = (profile: Record<string, unknown>) =>
    window.sessionStorage.setItem(
      'gatehouse.session',
      new User({
        id_token: 'id.token.value',
        access_token: 'at',
        token_type: 'Bearer',
        scope: config.scope,
        profile: { sub: 'ada', iss: AUTHORITY, aud: 'gatehouse', exp: 0, iat: 0, ...profile },
        expires_at: Math.floor(Date.now() / 1000) + 300,
      }).toStorageString(),
    );

  it('are read along the configured dotted path, as the API reads them (Keycloak)', async () => {
    storeUser({ realm_access: { roles: ['admin', 'member'] }, roles: ['not-this'] });
    const session = newSession(undefined, undefined, 'realm_access.roles');
    await session.start();
    expect(session.getState()).toMatchObject({ user: { roles: ['admin', 'member'] } });
  });

  it('count a single string as one role', async () => {
    storeUser({ roles: 'admin' });
    const session = newSession();
    await session.start();
    expect(session.getState()).toMatchObject({ user: { roles: ['admin'] } });
  });
});

/** The redirect URI's page under StrictMode (which runs its effect twice), until it has navigated on. */
async function renderCallbackInStrictMode(session: OidcSession) {
  window.history.replaceState(null, '', '/callback?code=c&state=s');
  const location = memoryLocation({ path: '/callback', record: true });
  render(
    <StrictMode>
      <Router hook={location.hook}>
        <AuthProvider loadSession={() => Promise.resolve(session)}>
          <CallbackPage />
        </AuthProvider>
      </Router>
    </StrictMode>,
  );
  await waitFor(() => expect(location.history?.at(-1)).toBe('/profile'));
}

describe('OidcSession.completeSignIn', () => {
  it('processes the callback exactly once under React StrictMode', async () => {
    const { exchange, fetch } = answeredCallback();

    const session = newSession();
    await renderCallbackInStrictMode(session);
    expect(exchange).toHaveBeenCalledTimes(1);
    expect(session.getState()).toMatchObject({
      status: 'signed-in',
      user: { name: 'Alice', roles: ['member'] },
    });
    expect(window.sessionStorage.getItem('gatehouse.session')).toContain('"access_token":"at"');
    expect(screen.queryByText('Sign-in failed')).toBeNull();
    const userInfoCalls = fetch.mock.calls.filter(([url]) => url === `${AUTHORITY}/me`);
    expect(userInfoCalls).toHaveLength(1);
    expect(new Headers(userInfoCalls[0]?.[1]?.headers).get('Authorization')).toBe('Bearer at');
  });

  it("keeps no session when the user info is another user's", async () => {
    answeredCallback({ sub: 'mallory', name: 'Mallory' });
    const session = newSession('http://localhost:3000/callback?code=c&state=s');
    const result = await session.completeSignIn('http://localhost:3000/callback?code=c&state=s');
    expect(result).toMatchObject({ ok: false, error: { code: 'userinfo_mismatch' } });
    expect(window.sessionStorage.getItem('gatehouse.session')).toBeNull();
    expect(window.sessionStorage.getItem('gatehouse.session.user')).toBeNull();
  });

  it('checks the nonce kept in its own state, not in oidc-client-ts', async () => {
    answeredCallback();
    const session = newSession();
    await session.completeSignIn('http://localhost:3000/callback?code=c&state=s');
    expect(vi.mocked(IdTokenModule.validateIdToken).mock.calls.at(-1)?.[2]).toMatchObject({ nonce: 'n-1' });
  });

  it('leaves the hint of who is signed in beside the tokens, and takes it away at sign-out', async () => {
    answeredCallback();
    const session = newSession();
    await session.completeSignIn('http://localhost:3000/callback?code=c&state=s');
    expect(JSON.parse(window.sessionStorage.getItem('gatehouse.session.user') ?? 'null')).toMatchObject({
      sub: 'alice',
      name: 'Alice',
    });
    await session.signOut();
    expect(window.sessionStorage.getItem('gatehouse.session.user')).toBeNull();
  });

  it('waits for the callback rather than for other tabs on the redirect URI', async () => {
    const session = newSession('http://localhost:3000/callback?code=c&state=s');
    await session.start();
    expect(session.getState()).toEqual({ status: 'loading' });
  });

  it('keeps no session when the state is unknown (replayed or forged)', async () => {
    vi.spyOn(OidcClient.prototype, 'readSigninResponseState').mockRejectedValue(
      new Error('No matching state found in storage'),
    );
    const session = newSession();
    const result = await session.completeSignIn('http://localhost:3000/callback?code=c&state=forged');
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'state_mismatch',
        message: expect.stringContaining('used already or altered') as string,
      },
    });
    expect(window.sessionStorage.getItem('gatehouse.session')).toBeNull();
  });

  it('refuses a saved state without a nonce, before redeeming the code', async () => {
    const { exchange } = answeredCallback();
    for (const data of [{ returnTo: '/profile' }, { returnTo: '/profile', nonce: '' }]) {
      vi.spyOn(OidcClient.prototype, 'readSigninResponseState').mockResolvedValue({
        // oidc-client-ts's own nonce does not count: the check is ours (id-token.ts).
        state: { nonce: 'n', data } as unknown as SigninState,
        response: new SigninResponse(new URLSearchParams()),
      });
      const session = newSession();
      const result = await session.completeSignIn(
        `http://localhost:3000/callback?code=c&state=s-${String(data.nonce)}`,
      );
      expect(result).toEqual({
        ok: false,
        error: { code: 'state_mismatch', message: expect.stringContaining('has no nonce') as string },
      });
    }
    expect(exchange).not.toHaveBeenCalled();
    expect(window.sessionStorage.getItem('gatehouse.session')).toBeNull();
  });
});

describe('toAuthError', () => {
  it.each([
    ['a fetch that could not be made', new TypeError('Failed to fetch'), 'provider_unreachable'],
    ["oidc-client-ts's timeout", new ErrorTimeout('Network timed out'), 'provider_unreachable'],
    [
      "the token endpoint's refusal",
      new ErrorResponse({ error: 'invalid_grant' }, new URLSearchParams('grant_type=authorization_code')),
      'token_request_failed',
    ],
    ["the authorization endpoint's refusal", new ErrorResponse({ error: 'access_denied' }), 'provider_error'],
    ['one of our own', new AuthError('issuer_mismatch', 'Another issuer.'), 'issuer_mismatch'],
    // Whatever the text says: a plain Error is oidc-client-ts refusing the provider's answer.
    ['a plain Error', new Error('subject from UserInfo response does not match'), 'response_invalid'],
  ])('maps %s by its type and code', (_what, error, code) => {
    expect(toAuthError(error).code).toBe(code);
  });

  it("says which answer of the provider's refused the sign-in", () => {
    expect(toAuthError(new ErrorResponse({ error: 'access_denied' })).message).toMatch(/access was denied/);
    expect(
      toAuthError(new ErrorResponse({ error: 'invalid_grant' }, new URLSearchParams('code=c'))).message,
    ).toMatch(/refused to issue tokens \(invalid_grant\)/);
  });
});

describe('the memory token store', () => {
  it('keeps tokens out of sessionStorage and shares them with a new tab that asks', async () => {
    // A channel of this test's own: sessions of earlier tests are still listening on the real one.
    const Channel = BroadcastChannel;
    vi.stubGlobal(
      'BroadcastChannel',
      class extends Channel {
        constructor() {
          super('memory-store-test');
        }
      },
    );
    answeredCallback({ sub: 'alice', name: 'Alice in memory' });
    const first = newSession('http://localhost:3000/', 'memory');
    await first.start();
    await first.completeSignIn('http://localhost:3000/callback?code=c&state=s');
    expect(first.getState().status).toBe('signed-in');
    expect(window.sessionStorage.getItem('gatehouse.session')).toBeNull();
    expect(window.sessionStorage.getItem('gatehouse.session.user')).toBeNull();

    const second = newSession('http://localhost:3000/', 'memory');
    await second.start();
    expect(second.getState()).toMatchObject({ status: 'signed-in', user: { name: 'Alice in memory' } });
    await expect(second.getAccessToken()).resolves.toBe('at');
  });
});

describe('OidcSession.signOut', () => {
  it('goes to the end-session endpoint with id_token_hint, client_id and state, without waiting for revocation', async () => {
    const session = await signedInSession();
    window.sessionStorage.setItem('gatehouse.oidc.stale-sign-in', '{}');
    const { fetch } = provider({ revocation: new Promise<Response>(() => undefined) }); // never answers
    const states: string[] = [];
    session.subscribe(() => states.push(session.getState().status));

    await expect(session.signOut()).resolves.toBe('leaving');

    expect(states[0]).toBe('signing-out'); // at once, so no route guard starts a sign-in meanwhile
    expect(window.sessionStorage.getItem('gatehouse.session')).toBeNull();
    expect(window.sessionStorage.getItem('gatehouse.oidc.stale-sign-in')).toBeNull();
    const [revocationUrl, init] = fetch.mock.calls[0] ?? [];
    expect(revocationUrl).toBe(`${AUTHORITY}/token/revocation`);
    expect(init).toMatchObject({ method: 'POST', keepalive: true });
    expect((init?.body as URLSearchParams).toString()).toBe(
      'token=rt&token_type_hint=refresh_token&client_id=gatehouse',
    );
    const target = new URL(session.environment.location.assign.mock.calls[0]?.[0] ?? 'http://missing');
    expect(`${target.origin}${target.pathname}`).toBe(`${AUTHORITY}/session/end`);
    expect(target.searchParams.get('id_token_hint')).toBe('id.token.value');
    expect(target.searchParams.get('client_id')).toBe('gatehouse');
    expect(target.searchParams.get('post_logout_redirect_uri')).toBe('http://localhost:3000/');
    const state = target.searchParams.get('state');
    expect(state).toMatch(/^[\w-]{8,}$/);
    expect(window.sessionStorage.getItem(`gatehouse.oidc.${state ?? ''}`)).not.toBeNull();
  });

  it('signs out here and says the provider session may remain when there is no end-session endpoint', async () => {
    const session = await signedInSession();
    provider({ endSession: false, revocation: Promise.resolve(new Response(null, { status: 200 })) });

    await expect(session.signOut()).resolves.toBe('signed-out');

    expect(session.environment.location.assign).not.toHaveBeenCalled();
    expect(session.getState()).toEqual({
      status: 'signed-out',
      notice: { code: 'provider_session_remains', message: expect.stringContaining('may remain') as string },
    });
  });

  it('warns in the console when the provider refuses to revoke, and signs out all the same', async () => {
    const session = await signedInSession();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    provider({
      revocation: Promise.resolve(Response.json({ error: 'invalid_client' }, { status: 401 })),
    });

    await expect(session.signOut()).resolves.toBe('leaving');

    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('refused to revoke the refresh token (401 invalid_client)'),
    );
    expect(session.environment.location.assign).toHaveBeenCalledTimes(1);
  });

  it('takes the state of its sign-out out of the address when the provider sends the browser back', async () => {
    window.sessionStorage.setItem('gatehouse.oidc.s-1', '{"id":"s-1","created":1}');
    const readState = vi.spyOn(OidcClient.prototype, 'readSignoutResponseState').mockResolvedValue({
      state: undefined,
      response: {} as never,
    });
    const session = newSession('http://localhost:3000/?state=s-1#top');
    await session.start();
    expect(readState).toHaveBeenCalledWith('http://localhost:3000/?state=s-1#top', true);
    expect(session.environment.replaceUrl).toHaveBeenCalledWith('/#top');
  });
});

describe('OidcSession.signIn', () => {
  it('asks only for the standard scopes the provider lists', async () => {
    vi.spyOn(MetadataService.prototype, 'getIssuer').mockResolvedValue(AUTHORITY);
    vi.spyOn(MetadataService.prototype, 'getMetadata').mockResolvedValue({
      issuer: AUTHORITY,
      scopes_supported: ['openid', 'profile', 'email'],
    });
    vi.spyOn(MetadataService.prototype, 'getAuthorizationEndpoint').mockResolvedValue(`${AUTHORITY}/auth`);
    const session = newSession();
    await session.signIn('/');
    const target = new URL(session.environment.location.assign.mock.calls[0]?.[0] ?? 'http://missing');
    expect(target.searchParams.get('scope')).toBe('openid profile email');
  });
});

describe('a provider that refuses offline_access without saying so in its discovery', () => {
  it('signs in once more without it, and shows the refusal if it comes again', async () => {
    vi.spyOn(MetadataService.prototype, 'getIssuer').mockResolvedValue(AUTHORITY);
    vi.spyOn(MetadataService.prototype, 'getMetadata').mockResolvedValue({ issuer: AUTHORITY }); // no scopes_supported
    vi.spyOn(MetadataService.prototype, 'getAuthorizationEndpoint').mockResolvedValue(`${AUTHORITY}/auth`);
    vi.spyOn(OidcClient.prototype, 'readSigninResponseState').mockResolvedValue({
      state: { data: { returnTo: '/profile', scope: config.scope, nonce: 'n' } } as unknown as SigninState,
      response: new SigninResponse(new URLSearchParams()),
    });
    vi.spyOn(OidcClient.prototype, 'processSigninResponse').mockRejectedValue(
      new ErrorResponse({ error: 'invalid_scope', error_description: 'unknown scope' }),
    );
    const session = newSession();

    const first = await session.completeSignIn('http://localhost:3000/callback?error=invalid_scope&state=s1');
    expect(first).toEqual({ ok: false, retrying: true });
    const again = new URL(session.environment.location.assign.mock.calls[0]?.[0] ?? 'http://missing');
    expect(again.searchParams.get('scope')).toBe('openid profile email');

    const second = await session.completeSignIn(
      'http://localhost:3000/callback?error=invalid_scope&state=s2',
    );
    expect(second).toMatchObject({ ok: false, error: { code: 'provider_error' } });
    expect(session.environment.location.assign).toHaveBeenCalledTimes(1);
  });
});

/** The events a session reported, as `name outcome|reason [trigger] [step] [reason]` lines. */
function reported(session: ReturnType<typeof newSession>): string[] {
  return session.environment.reportSignIn.mock.calls.map(([{ name, properties }]) =>
    [name, properties.outcome ?? '', properties.trigger, properties.step, properties.reason]
      .filter((part) => part !== undefined && part !== '')
      .join(' '),
  );
}

function providerForSignIn() {
  vi.spyOn(MetadataService.prototype, 'getIssuer').mockResolvedValue(AUTHORITY);
  vi.spyOn(MetadataService.prototype, 'getMetadata').mockResolvedValue({ issuer: AUTHORITY });
  vi.spyOn(MetadataService.prototype, 'getAuthorizationEndpoint').mockResolvedValue(`${AUTHORITY}/auth`);
}

describe('the sign-in telemetry', () => {
  it('reports each step of a journey once under React StrictMode, with the time since the start', async () => {
    providerForSignIn();
    const before = newSession();
    await before.signIn('/profile', 'guarded-page');
    expect(reported(before)).toEqual(['gatehouse.sign-in started guarded-page']);
    // Telemetry learns where the browser went, so that the provider never shows as a referrer.
    expect(before.environment.leavingFor).toHaveBeenCalledWith(
      before.environment.location.assign.mock.calls[0]?.[0],
    );

    answeredCallback();
    const session = newSession('http://localhost:3000/callback?code=c&state=s');
    await renderCallbackInStrictMode(session);
    expect(reported(session)).toEqual([
      'gatehouse.sign-in returned guarded-page',
      'gatehouse.sign-in redeemed guarded-page',
      'gatehouse.sign-in signed-in guarded-page',
    ]);
    const signedIn = session.environment.reportSignIn.mock.calls.at(-1)?.[0];
    expect(signedIn?.measurements.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('reports the step and the reason a sign-in failed at', async () => {
    answeredCallback({ sub: 'mallory' });
    const session = newSession('http://localhost:3000/callback?code=c&state=s');
    await session.completeSignIn('http://localhost:3000/callback?code=c&state=s');
    expect(reported(session).at(-1)).toBe('gatehouse.sign-in failed userinfo userinfo_mismatch');

    vi.spyOn(OidcClient.prototype, 'processSigninResponse').mockRejectedValue(
      new ErrorResponse({ error: 'access_denied', error_description: 'Alice said no' }),
    );
    await session.completeSignIn('http://localhost:3000/callback?error=access_denied&state=s2');
    expect(reported(session).at(-1)).toBe('gatehouse.sign-in failed provider access_denied');
  });

  it('reports one journey when a guard asks twice at once (StrictMode runs its effect twice)', async () => {
    providerForSignIn();
    const session = newSession();
    await Promise.all([
      session.signIn('/profile', 'guarded-page'),
      session.signIn('/profile', 'guarded-page'),
    ]);
    expect(reported(session)).toEqual(['gatehouse.sign-in started guarded-page']);
    expect(session.environment.location.assign).toHaveBeenCalledTimes(1);
  });

  it('reports a failure before the browser leaves', async () => {
    vi.spyOn(MetadataService.prototype, 'getMetadata').mockRejectedValue(new TypeError('Failed to fetch'));
    const session = newSession();
    await expect(session.signIn('/')).rejects.toThrow(AuthError);
    expect(reported(session)).toEqual([
      'gatehouse.sign-in started button',
      'gatehouse.sign-in failed button start network',
    ]);
  });

  it('reports a journey the user came back from without finishing as cancelled', async () => {
    providerForSignIn();
    await newSession().signIn('/');
    const back = newSession('http://localhost:3000/');
    await back.start();
    expect(reported(back)).toEqual(['gatehouse.sign-in failed button provider cancelled']);
  });

  it('reports sign-out, expiry and an end in another tab as session ends', async () => {
    const signedIn = await signedInSession();
    provider({ revocation: Promise.resolve(new Response(null)) });
    await signedIn.signOut();
    expect(reported(signedIn)).toEqual(['gatehouse.session-end sign-out']);

    const elsewhere = await signedInSession();
    (elsewhere as unknown as { onTabMessage(message: unknown): void }).onTabMessage({
      type: 'session',
      user: null,
    });
    expect(reported(elsewhere)).toEqual(['gatehouse.session-end other-tab']);

    window.sessionStorage.setItem(
      'gatehouse.session',
      new User({
        access_token: 'at',
        token_type: 'Bearer',
        profile: { sub: 'alice', iss: AUTHORITY, aud: 'gatehouse', exp: 0, iat: 0 },
        expires_at: Math.floor(Date.now() / 1000) - 10,
      }).toStorageString(),
    );
    const expired = newSession();
    await expired.start();
    expect(reported(expired)).toEqual(['gatehouse.session-end expiry']);
  });

  it('reports renewals, and a sign-in after a failed one as forced', async () => {
    const session = await signedInSession();
    const refresh = vi.spyOn(OidcClient.prototype, 'useRefreshToken');
    refresh.mockRejectedValueOnce(
      new ErrorResponse({ error: 'invalid_grant', error_description: 'rt revoked' }, new URLSearchParams()),
    );
    await session.renew();
    expect(reported(session)).toEqual([
      'gatehouse.renewal failed invalid_grant',
      'gatehouse.session-end renewal-failed',
    ]);
    providerForSignIn();
    await session.signIn('/');
    expect(reported(session).slice(2)).toEqual([
      'gatehouse.renewal forced-sign-in',
      'gatehouse.sign-in started expired-session',
    ]);
  });
});
