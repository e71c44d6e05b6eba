import { render, screen, waitFor } from '@testing-library/react';
import { ErrorResponse, ErrorTimeout } from 'oidc-client-ts';
import { StrictMode } from 'react';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthError } from './auth-error';
import { AuthProvider } from './auth-context';
import { CallbackPage } from './callback-page';
import { toAuthError } from './oidc-errors';
import { ASK_TABS_MS, OidcSession } from './oidc-session';
import { redeemEarly, type EarlyRedeem } from './pending-sign-in';
import type { ReportSignInEvent } from './sign-in-telemetry';
import {
  APP_ORIGIN,
  AUTHORITY,
  fakeProvider,
  pageStorage,
  testOidcConfig,
  type FakeProvider,
  type FakeProviderOptions,
} from './test-provider';
import { inPageVault } from './token-vault';
import { memoryDpopStore } from './dpop-store';
import type { Vault } from './vault-protocol';
import type { TabSignal, TabSignals } from './tab-signals';
import type { ApiCallTracker } from '../telemetry/telemetry';

const HOME = `${APP_ORIGIN}/`;

/** The token vault as the worker runs it, in the page for the test (every tab of a test may share one). */
function newVault(now: () => number = () => Date.now()) {
  return inPageVault(testOidcConfig, { origin: APP_ORIGIN, now });
}

/** A page of the app at `href`, with its session on `vault` (a fresh one unless given: a new browser). */
function newSession(
  href = HOME,
  {
    vault = newVault(),
    rolesClaim = testOidcConfig.rolesClaim,
    now = () => Date.now(),
    trackApiCall,
    tabs,
    earlyRedeem,
  }: {
    vault?: Vault;
    rolesClaim?: string;
    now?: () => number;
    trackApiCall?: ApiCallTracker;
    tabs?: TabSignals;
    earlyRedeem?: EarlyRedeem | undefined;
  } = {},
) {
  const environment = {
    location: { origin: APP_ORIGIN, href, assign: vi.fn<(url: string) => void>() },
    replaceUrl: vi.fn<(url: string) => void>(),
    sessionStorage: window.sessionStorage,
    now,
    vault,
    reportSignIn: vi.fn<ReportSignInEvent>(),
    leavingFor: vi.fn<(url: string) => void>(),
    trackApiCall,
    tabs,
    earlyRedeem,
  };
  return Object.assign(new OidcSession({ ...testOidcConfig, rolesClaim }, environment), { environment });
}
type TestSession = ReturnType<typeof newSession>;

/** Where the session last sent the browser. */
const sentTo = (session: TestSession) => session.environment.location.assign.mock.calls.at(-1)?.[0];

/** Starts a sign-in on `session` and has the user sign in at the provider: the callback URL it sends back. */
async function toProviderAndBack(session: TestSession, provider: FakeProvider, returnTo = '/profile') {
  await session.signIn(returnTo);
  return provider.authorize(sentTo(session));
}

/** A session signed in through the provider, as the callback page leaves it. */
async function signedInSession(provider: FakeProvider, options: Parameters<typeof newSession>[1] = {}) {
  const session = newSession(HOME, options);
  await session.start();
  const callback = await toProviderAndBack(session, provider);
  await expect(session.completeSignIn(callback)).resolves.toEqual({ ok: true, returnTo: '/profile' });
  expect(session.getState().status).toBe('signed-in');
  session.environment.reportSignIn.mockClear();
  return session;
}

/** What the vault holds, as the page may see it. */
const vaultSession = (session: TestSession) => session.environment.vault.call('current');

/** Fails when a token the provider issued is anywhere in the page's storage. */
function expectNoTokenInPageStorage(provider: FakeProvider) {
  const stored = pageStorage().join('\n');
  expect(provider.issued.length).toBeGreaterThan(0);
  for (const tokens of provider.issued) {
    for (const token of [tokens.access_token, tokens.refresh_token, tokens.id_token]) {
      if (token) expect(stored).not.toContain(token);
    }
  }
}

async function provider(options: FakeProviderOptions = {}) {
  return fakeProvider(options);
}

afterEach(() => {
  window.sessionStorage.clear();
  window.localStorage.clear();
  vi.unstubAllGlobals();
});

describe("the signed-in user's roles", () => {
  it('are read along the configured dotted path, as the API reads them (Keycloak)', async () => {
    const idp = await provider();
    idp.userInfo = { realm_access: { roles: ['admin', 'member'] }, roles: ['not-this'] };
    const session = await signedInSession(idp, { rolesClaim: 'realm_access.roles' });
    expect(session.getState()).toMatchObject({ user: { roles: ['admin', 'member'] } });
  });

  it('count a single string as one role', async () => {
    const idp = await provider();
    idp.userInfo = { roles: 'admin' };
    const session = await signedInSession(idp);
    expect(session.getState()).toMatchObject({ user: { roles: ['admin'] } });
  });
});

/** The redirect URI's page under StrictMode (which runs its effect twice), until it has navigated on. */
async function renderCallbackInStrictMode(session: OidcSession, callback: string) {
  const { pathname, search } = new URL(callback);
  window.history.replaceState(null, '', `${pathname}${search}`);
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
    const idp = await provider();
    const vault = newVault();
    const callback = await toProviderAndBack(newSession(HOME, { vault }), idp);

    const session = newSession(callback, { vault });
    await session.start();
    await renderCallbackInStrictMode(session, callback);
    expect(idp.to('/token')).toHaveLength(1);
    expect(session.getState()).toMatchObject({
      status: 'signed-in',
      user: { name: 'Alice', roles: ['member'] },
    });
    expect(screen.queryByText('Sign-in failed')).toBeNull();
    const userInfoCalls = idp.to('/me');
    expect(userInfoCalls).toHaveLength(1);
    expect(userInfoCalls[0]?.headers.get('Authorization')).toBe(`Bearer ${idp.issued[0]?.access_token}`);
  });

  it('sends a /callback without an answer home, with nothing processed (a reload after the answer)', async () => {
    const idp = await provider();
    const session = newSession(`${APP_ORIGIN}/callback`);
    await session.start();
    await expect(session.completeSignIn(`${APP_ORIGIN}/callback`)).resolves.toEqual({
      ok: true,
      returnTo: '/',
    });
    expect(session.environment.reportSignIn).not.toHaveBeenCalled();
    expect(idp.issued).toHaveLength(0);
  });

  it("keeps no token in the page's storage: the vault holds them", async () => {
    const idp = await provider();
    const session = await signedInSession(idp);
    expectNoTokenInPageStorage(idp);
    await session.renew();
    expect(idp.issued).toHaveLength(2);
    expectNoTokenInPageStorage(idp);
    await expect(vaultSession(session)).resolves.toMatchObject({
      profile: { sub: 'alice' },
      renewable: true,
    });
    expect(JSON.stringify(await vaultSession(session))).not.toMatch(/at-|rt-|eyJ/);
  });

  it("keeps no session when the user info is another user's", async () => {
    const idp = await provider();
    idp.userInfo = { sub: 'mallory', name: 'Mallory' };
    const session = newSession();
    const result = await session.completeSignIn(await toProviderAndBack(session, idp));
    expect(result).toMatchObject({ ok: false, error: { code: 'userinfo_mismatch' } });
    expect(session.getState()).toMatchObject({ status: 'signed-out' });
    await expect(vaultSession(session)).resolves.toBeNull();
    expect(window.sessionStorage.getItem('gatehouse.session.user')).toBeNull();
  });

  it('refuses an ID token without the nonce of this sign-in (the check is ours, not oidc-client-ts)', async () => {
    const idp = await provider();
    idp.idTokenClaims = { nonce: 'another-sign-in' };
    const session = newSession();
    const result = await session.completeSignIn(await toProviderAndBack(session, idp));
    expect(result).toMatchObject({ ok: false, error: { code: 'id_token_invalid' } });
    expect((result as { error: { message: string } }).error.message).toMatch(/nonce/);
    expect(reported(session).at(-1)).toBe('gatehouse.sign-in failed button id-token nonce_mismatch');
    await expect(vaultSession(session)).resolves.toBeNull();
  });

  it('leaves the hint of who is signed in, and takes it away at sign-out', async () => {
    const idp = await provider();
    const session = await signedInSession(idp);
    expect(JSON.parse(window.sessionStorage.getItem('gatehouse.session.user') ?? 'null')).toMatchObject({
      sub: 'alice',
      name: 'Alice',
    });
    await session.signOut();
    expect(window.sessionStorage.getItem('gatehouse.session.user')).toBeNull();
  });

  it('waits for the callback rather than for the vault on the redirect URI', async () => {
    const session = newSession(`${APP_ORIGIN}/callback?code=c&state=s`);
    await session.start();
    expect(session.getState()).toEqual({ status: 'loading' });
  });

  it('keeps no session when the state is unknown (forged) or used already (replayed)', async () => {
    const idp = await provider();
    const vault = newVault();
    const forged = newSession(HOME, { vault });
    const result = await forged.completeSignIn(`${APP_ORIGIN}/callback?code=c&state=forged`);
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'state_mismatch',
        message: expect.stringContaining('used already or altered') as string,
      },
    });

    const callback = await toProviderAndBack(newSession(HOME, { vault }), idp);
    await expect(newSession(callback, { vault }).completeSignIn(callback)).resolves.toMatchObject({
      ok: true,
    });
    const replay = newSession(callback, { vault: newVault() });
    await expect(replay.completeSignIn(callback)).resolves.toMatchObject({
      ok: false,
      error: { code: 'state_mismatch' },
    });
    expect(idp.to('/token')).toHaveLength(1);
  });

  it("takes up the code the page's first script handed to the vault: one exchange, one use of the state", async () => {
    const idp = await provider();
    const vault = newVault();
    const callback = await toProviderAndBack(newSession(HOME, { vault }), idp);
    const calls = vi.spyOn(vault, 'call');
    const earlyRedeem = redeemEarly(vault, callback, window.sessionStorage);
    expect(earlyRedeem?.url).toBe(callback);

    const session = newSession(callback, { vault, earlyRedeem });
    await session.start();
    await expect(session.completeSignIn(callback)).resolves.toEqual({ ok: true, returnTo: '/profile' });
    expect(session.getState()).toMatchObject({ status: 'signed-in', user: { name: 'Alice' } });
    expect(calls.mock.calls.filter(([op]) => op === 'redeem')).toHaveLength(1);
    expect(idp.to('/token')).toHaveLength(1);
    expect(
      window.sessionStorage.getItem(`gatehouse.oidc.${new URL(callback).searchParams.get('state')}`),
    ).toBeNull();
    expect(reported(session)).toContain('gatehouse.sign-in signed-in button');
  });

  it('on the redirect URI, asks the provider for discovery only once the vault has redeemed the code', async () => {
    const idp = await provider();
    const vault = newVault();
    const callback = await toProviderAndBack(newSession(HOME, { vault }), idp);
    const before = idp.requests.length;
    const earlyRedeem = redeemEarly(vault, callback, window.sessionStorage);

    const session = newSession(callback, { vault, earlyRedeem });
    await session.start();
    await expect(session.completeSignIn(callback)).resolves.toMatchObject({ ok: true });
    await waitFor(() => expect(idp.requests.length).toBeGreaterThan(before + 2));
    const asked = idp.requests.slice(before).map((request) => new URL(request.url).pathname);
    const discoveries = (paths: string[]) =>
      paths.filter((path) => path === '/.well-known/openid-configuration').length;
    const exchange = asked.indexOf('/token');
    // The vault's own before the exchange (this test's vault has no DPoP key to ready ahead), the page's after.
    expect(discoveries(asked.slice(0, exchange))).toBe(1);
    expect(discoveries(asked.slice(exchange))).toBe(1);
  });

  it('refuses a saved state without a nonce, before redeeming the code', async () => {
    const idp = await provider();
    for (const nonce of [undefined, '']) {
      const session = newSession();
      const callback = await toProviderAndBack(session, idp);
      // The pending request as this tab keeps it, altered: no nonce of ours.
      const key = `gatehouse.oidc.${new URL(callback).searchParams.get('state') ?? ''}`;
      const saved = JSON.parse(window.sessionStorage.getItem(key) ?? '{}') as {
        data: { nonce?: string | undefined };
      };
      saved.data.nonce = nonce;
      window.sessionStorage.setItem(key, JSON.stringify(saved));

      const result = await session.completeSignIn(callback);
      expect(result).toEqual({
        ok: false,
        error: { code: 'state_mismatch', message: expect.stringContaining('has no nonce') as string },
      });
    }
    expect(idp.to('/token')).toHaveLength(0);
  });
});

describe('another tab of the same browser (the shared vault)', () => {
  it('sees the session at once, calls the API with it, and hears the sign-out', async () => {
    const idp = await provider();
    const vault = newVault();
    const first = await signedInSession(idp, { vault });

    const second = newSession(HOME, { vault });
    await second.start();
    expect(second.getState()).toMatchObject({ status: 'signed-in', user: { sub: 'alice', name: 'Alice' } });
    const answer = await second.fetchApi({ url: `${APP_ORIGIN}/api/me`, method: 'GET', headers: [] });
    expect(answer.status).toBe(200);
    expect(idp.to('/api/me')[0]?.headers.get('Authorization')).toBe(`Bearer ${idp.issued[0]?.access_token}`);
    expect(idp.to('/token')).toHaveLength(1); // no second sign-in, no renewal

    await first.signOut();
    expect(second.getState()).toEqual({
      status: 'signed-out',
      notice: { code: 'signed_out_elsewhere', message: expect.stringContaining('another tab') as string },
    });
    expect(reported(second)).toEqual(['gatehouse.session-end other-tab']);
  });

  it('sees a renewal made for another tab', async () => {
    const idp = await provider();
    const vault = newVault();
    const first = await signedInSession(idp, { vault });
    const second = newSession(HOME, { vault });
    await second.start();
    const listener = vi.fn();
    second.subscribe(listener);
    await expect(first.renew()).resolves.toBe(true);
    expect(listener).toHaveBeenCalled();
    expect(second.getState()).toMatchObject({ status: 'signed-in' });
    expect(idp.to('/token')).toHaveLength(2);
  });
});

describe('a reload after the vault has stopped (the last tab closed)', () => {
  it('restores the session through the provider with prompt=none, where the user was', async () => {
    const idp = await provider();
    await signedInSession(idp);
    // A new vault: the worker stopped; this tab's hint of who was signed in remains.
    const reloaded = newSession(`${APP_ORIGIN}/usage?range=7d#top`);
    await reloaded.start();
    const request = new URL(sentTo(reloaded) ?? 'http://missing');
    expect(request.searchParams.get('prompt')).toBe('none');
    expect(reloaded.getState()).toMatchObject({ status: 'loading' }); // the hint keeps the UI meanwhile

    const back = newSession(idp.authorize(request.href), { vault: reloaded.environment.vault });
    await back.start();
    await expect(back.completeSignIn(back.environment.location.href)).resolves.toEqual({
      ok: true,
      returnTo: '/usage?range=7d#top',
    });
    expect(back.getState()).toMatchObject({ status: 'signed-in', user: { sub: 'alice' } });
    expect(reported(back)).toEqual(['gatehouse.renewal succeeded']);
  });

  it('comes back where the user went while the browser was about to leave, not where the restore began', async () => {
    const idp = await provider();
    await signedInSession(idp);
    const reloaded = newSession(`${APP_ORIGIN}/`);
    // A click on Profile while the request is being made (the signed-in UI is on screen meanwhile): the
    // address changes as the page asks the provider for what the request needs.
    const fetchProvider = globalThis.fetch;
    vi.stubGlobal('fetch', (...args: Parameters<typeof fetch>) => {
      reloaded.environment.location.href = `${APP_ORIGIN}/profile`;
      return fetchProvider(...args);
    });
    try {
      await reloaded.start();
    } finally {
      vi.stubGlobal('fetch', fetchProvider);
    }
    const back = newSession(idp.authorize(sentTo(reloaded)), { vault: reloaded.environment.vault });
    await back.start();
    await expect(back.completeSignIn(back.environment.location.href)).resolves.toEqual({
      ok: true,
      returnTo: '/profile',
    });
  });

  it('signs out with "session expired" when the provider wants the user to log in', async () => {
    const idp = await provider();
    idp.promptNone = 'login_required';
    await signedInSession(idp);
    const reloaded = newSession(`${APP_ORIGIN}/profile`);
    await reloaded.start();
    const back = newSession(idp.authorize(sentTo(reloaded)), { vault: reloaded.environment.vault });
    await back.start();
    await expect(back.completeSignIn(back.environment.location.href)).resolves.toEqual({
      ok: true,
      returnTo: '/profile',
    });
    expect(back.getState()).toMatchObject({ status: 'signed-out', notice: { code: 'session_expired' } });
    expect(reported(back)).toEqual([
      'gatehouse.renewal failed login_required',
      'gatehouse.session-end expiry',
    ]);
    expect(window.sessionStorage.getItem('gatehouse.session.user')).toBeNull();
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

describe('OidcSession.signOut', () => {
  it('revokes the refresh token and goes to the end-session endpoint with id_token_hint, client_id and state', async () => {
    const idp = await provider();
    const session = await signedInSession(idp);
    window.sessionStorage.setItem('gatehouse.oidc.stale-sign-in', '{}');
    // The revocation never answers: sign-out goes on after a short wait (the request is keepalive).
    idp.revocationAnswer = () => new Promise<Response>(() => undefined);
    const states: string[] = [];
    session.subscribe(() => states.push(session.getState().status));

    await expect(session.signOut()).resolves.toBe('leaving');

    expect(states[0]).toBe('signing-out'); // at once, so no route guard starts a sign-in meanwhile
    await expect(vaultSession(session)).resolves.toBeNull();
    expect(window.sessionStorage.getItem('gatehouse.oidc.stale-sign-in')).toBeNull();
    const [revocation] = idp.to('/token/revocation');
    expect(revocation?.init).toMatchObject({ method: 'POST', keepalive: true });
    expect(revocation?.body).toBe(
      `token=${idp.issued[0]?.refresh_token}&token_type_hint=refresh_token&client_id=gatehouse`,
    );
    const target = new URL(sentTo(session) ?? 'http://missing');
    expect(`${target.origin}${target.pathname}`).toBe(`${AUTHORITY}/session/end`);
    expect(target.searchParams.get('id_token_hint')).toBe(idp.issued[0]?.id_token);
    expect(target.searchParams.get('client_id')).toBe('gatehouse');
    expect(target.searchParams.get('post_logout_redirect_uri')).toBe(HOME);
    const state = target.searchParams.get('state');
    expect(state).toMatch(/^[\w-]{8,}$/);
    expect(window.sessionStorage.getItem(`gatehouse.oidc.${state ?? ''}`)).not.toBeNull();
  });

  it('signs out here and says the provider session may remain when there is no end-session endpoint', async () => {
    const idp = await provider({ endSession: false });
    const session = await signedInSession(idp);
    session.environment.location.assign.mockClear();

    await expect(session.signOut()).resolves.toBe('signed-out');

    expect(session.environment.location.assign).not.toHaveBeenCalled();
    expect(session.getState()).toEqual({
      status: 'signed-out',
      notice: { code: 'provider_session_remains', message: expect.stringContaining('may remain') as string },
    });
  });

  it('warns in the console when the provider refuses to revoke, and signs out all the same', async () => {
    const idp = await provider();
    const session = await signedInSession(idp);
    session.environment.location.assign.mockClear();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    idp.revocationAnswer = () => Response.json({ error: 'invalid_client' }, { status: 401 });

    await expect(session.signOut()).resolves.toBe('leaving');

    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining('refused to revoke the refresh token (401 invalid_client)'),
    );
    expect(session.environment.location.assign).toHaveBeenCalledTimes(1);
  });

  it('takes the state of its sign-out out of the address when the provider sends the browser back', async () => {
    const idp = await provider();
    const session = await signedInSession(idp);
    await session.signOut();
    const state = new URL(sentTo(session) ?? 'http://missing').searchParams.get('state') ?? '';
    expect(window.sessionStorage.getItem(`gatehouse.oidc.${state}`)).not.toBeNull();

    const back = newSession(`${APP_ORIGIN}/?state=${state}#top`, { vault: session.environment.vault });
    await back.start();
    expect(back.environment.replaceUrl).toHaveBeenCalledWith('/#top');
    expect(window.sessionStorage.getItem(`gatehouse.oidc.${state}`)).toBeNull();
    expect(back.getState()).toEqual({ status: 'signed-out' });
  });
});

describe('OidcSession.signIn', () => {
  it('asks only for the standard scopes the provider lists', async () => {
    await provider({ scopesSupported: ['openid', 'profile', 'email'] });
    const session = newSession();
    await session.signIn('/');
    const target = new URL(sentTo(session) ?? 'http://missing');
    expect(target.searchParams.get('scope')).toBe('openid profile email');
    expect(target.searchParams.get('code_challenge_method')).toBe('S256');
    expect(target.searchParams.get('nonce')).toMatch(/^[\w-]{43}$/);
  });
});

describe('a provider that refuses offline_access without saying so in its discovery', () => {
  it('signs in once more without it', async () => {
    const idp = await provider(); // no scopes_supported
    idp.refuseAuthorization = (request) =>
      request.get('scope')?.includes('offline_access') ? 'invalid_scope' : undefined;
    const session = newSession();

    const first = await session.completeSignIn(await toProviderAndBack(session, idp));
    expect(first).toEqual({ ok: false, retrying: true });
    const again = new URL(sentTo(session) ?? 'http://missing');
    expect(again.searchParams.get('scope')).toBe('openid profile email');

    await expect(session.completeSignIn(idp.authorize(again.href))).resolves.toEqual({
      ok: true,
      returnTo: '/profile',
    });
    expect(session.getState()).toMatchObject({ status: 'signed-in' });
  });

  it('shows the refusal if it comes again', async () => {
    const idp = await provider();
    idp.refuseAuthorization = () => 'invalid_scope';
    const session = newSession();

    const first = await session.completeSignIn(await toProviderAndBack(session, idp));
    expect(first).toEqual({ ok: false, retrying: true });
    const second = await session.completeSignIn(idp.authorize(sentTo(session)));
    expect(second).toMatchObject({ ok: false, error: { code: 'provider_error' } });
    expect(session.environment.location.assign).toHaveBeenCalledTimes(2); // the sign-in and one retry
  });
});

describe("OidcSession's API calls", () => {
  it('go through the vault with a traceparent, reported as a dependency with their status', async () => {
    const idp = await provider();
    const done = vi.fn();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const trackApiCall = vi.fn<ApiCallTracker>(() => ({ traceparent, done }));
    const session = await signedInSession(idp, { trackApiCall });
    idp.api = () => Response.json({ error: 'forbidden' }, { status: 403 });

    const answer = await session.fetchApi({
      url: `${APP_ORIGIN}/api/usage`,
      method: 'GET',
      headers: [['accept', 'application/json']],
    });
    expect(answer.status).toBe(403);
    expect(trackApiCall).toHaveBeenCalledWith(`${APP_ORIGIN}/api/usage`, 'GET');
    const [sent] = idp.to('/api/usage');
    expect(sent?.headers.get('traceparent')).toBe(traceparent);
    expect(sent?.headers.get('accept')).toBe('application/json');
    expect(sent?.headers.get('Authorization')).toBe(`Bearer ${idp.issued[0]?.access_token}`);
    expect(done).toHaveBeenCalledWith(403);

    await expect(
      session.fetchApi({ url: 'https://elsewhere.example/api/usage', method: 'GET', headers: [] }),
    ).rejects.toThrow();
    expect(done).toHaveBeenLastCalledWith(0);
  });

  it('renew() answers whether a session remains', async () => {
    const idp = await provider();
    const session = await signedInSession(idp);
    await expect(session.renew()).resolves.toBe(true);
    idp.tokenAnswer = () => Response.json({ error: 'invalid_grant' }, { status: 400 });
    await expect(session.renew()).resolves.toBe(false);
    expect(session.getState()).toMatchObject({ status: 'signed-out', notice: { code: 'renewal_failed' } });
  });
});

/** The events a session reported, as `name outcome|reason [trigger] [step] [reason]` lines. */
function reported(session: TestSession): string[] {
  return session.environment.reportSignIn.mock.calls.map(([{ name, properties }]) =>
    [name, properties.outcome ?? '', properties.trigger, properties.step, properties.reason]
      .filter((part) => part !== undefined && part !== '')
      .join(' '),
  );
}

describe('the sign-in telemetry', () => {
  it('reports each step of a journey once under React StrictMode, with the time since the start', async () => {
    const idp = await provider();
    const vault = newVault();
    const before = newSession(HOME, { vault });
    await before.signIn('/profile', 'guarded-page');
    expect(reported(before)).toEqual(['gatehouse.sign-in started guarded-page']);
    // Telemetry learns where the browser went, so that the provider never shows as a referrer.
    expect(before.environment.leavingFor).toHaveBeenCalledWith(sentTo(before));

    const callback = idp.authorize(sentTo(before));
    const session = newSession(callback, { vault });
    await session.start();
    await renderCallbackInStrictMode(session, callback);
    expect(reported(session)).toEqual([
      'gatehouse.sign-in returned guarded-page',
      'gatehouse.sign-in redeemed guarded-page',
      'gatehouse.sign-in signed-in guarded-page',
    ]);
    const signedIn = session.environment.reportSignIn.mock.calls.at(-1)?.[0];
    expect(signedIn?.measurements.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('reports the step and the reason a sign-in failed at', async () => {
    const idp = await provider();
    idp.userInfo = { sub: 'mallory' };
    const session = newSession();
    await session.completeSignIn(await toProviderAndBack(session, idp));
    expect(reported(session).at(-1)).toBe('gatehouse.sign-in failed button userinfo userinfo_mismatch');

    idp.refuseAuthorization = () => 'access_denied';
    await session.completeSignIn(await toProviderAndBack(session, idp));
    expect(reported(session).at(-1)).toBe('gatehouse.sign-in failed button provider access_denied');

    idp.refuseAuthorization = () => undefined;
    idp.tokenAnswer = () => Response.json({ error: 'invalid_grant' }, { status: 400 });
    await session.completeSignIn(await toProviderAndBack(session, idp));
    expect(reported(session).at(-1)).toBe('gatehouse.sign-in failed button redeem invalid_grant');
  });

  it('reports one journey when a guard asks twice at once (StrictMode runs its effect twice)', async () => {
    await provider();
    const session = newSession();
    await Promise.all([
      session.signIn('/profile', 'guarded-page'),
      session.signIn('/profile', 'guarded-page'),
    ]);
    expect(reported(session)).toEqual(['gatehouse.sign-in started guarded-page']);
    expect(session.environment.location.assign).toHaveBeenCalledTimes(1);
  });

  it('reports a failure before the browser leaves', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.reject(new TypeError('Failed to fetch'))),
    );
    const session = newSession();
    await expect(session.signIn('/')).rejects.toThrow(AuthError);
    expect(reported(session)).toEqual([
      'gatehouse.sign-in started button',
      'gatehouse.sign-in failed button start network',
    ]);
  });

  it('reports a journey the user came back from without finishing as cancelled', async () => {
    await provider();
    await newSession().signIn('/');
    const back = newSession(HOME);
    await back.start();
    expect(reported(back)).toEqual(['gatehouse.sign-in failed button provider cancelled']);
  });

  it('reports sign-out, expiry and an end in another tab as session ends', async () => {
    const idp = await provider();
    const signedIn = await signedInSession(idp);
    await signedIn.signOut();
    expect(reported(signedIn)).toEqual(['gatehouse.session-end sign-out']);

    const vault = newVault();
    await signedInSession(idp, { vault });
    const elsewhere = newSession(HOME, { vault });
    await elsewhere.start();
    await vault.call('signOut');
    expect(reported(elsewhere)).toEqual(['gatehouse.session-end other-tab']);
  });

  it('reports a session the vault holds past its expiry, with nothing to renew it, as expired', async () => {
    const idp = await provider({ refreshTokens: false, expiresIn: 60 });
    const vault = newVault();
    await signedInSession(idp, { vault });
    const later = () => Date.now() + 120_000;
    const expired = newSession(HOME, { vault, now: later });
    await expired.start();
    expect(expired.getState()).toMatchObject({ status: 'signed-out', notice: { code: 'session_expired' } });
    expect(reported(expired)).toEqual(['gatehouse.session-end expiry']);
  });

  it('reports renewals, and a sign-in after a failed one as forced', async () => {
    const idp = await provider();
    const session = await signedInSession(idp);
    await session.renew();
    expect(reported(session)).toEqual(['gatehouse.renewal succeeded']);

    idp.tokenAnswer = () =>
      Response.json({ error: 'invalid_grant', error_description: 'rt revoked' }, { status: 400 });
    await session.renew();
    expect(reported(session).slice(1)).toEqual([
      'gatehouse.renewal failed invalid_grant',
      'gatehouse.session-end renewal-failed',
    ]);
    await session.signIn('/');
    expect(reported(session).slice(3)).toEqual([
      'gatehouse.renewal forced-sign-in',
      'gatehouse.sign-in started expired-session',
    ]);
  });
});

describe('a provider that offers DPoP', () => {
  it("binds the authorization code to the vault's key, which the page never holds", async () => {
    const idp = await provider({ dpop: true });
    const vault = inPageVault(testOidcConfig, {
      origin: APP_ORIGIN,
      now: () => Date.now(),
      dpopStore: memoryDpopStore(),
    });
    const session = newSession(HOME, { vault });
    await session.start();
    await session.signIn('/profile');
    const jkt = new URL(String(sentTo(session))).searchParams.get('dpop_jkt');
    expect(jkt).toBe(await vault.call('thumbprint'));
    const callback = idp.authorize(sentTo(session));
    await expect(session.completeSignIn(callback)).resolves.toEqual({ ok: true, returnTo: '/profile' });
    expect(idp.issued.at(-1)?.token_type).toBe('DPoP');
  });
});

/**
 * A BroadcastChannel between tabs: each tab's signals reach the others (never itself), a task later, or
 * at once (`immediate`: the other tab's process is the faster one). `inTransit` runs as each signal
 * travels (a test moves its clock there: a slow delivery).
 */
function tabChannel({ immediate = false, inTransit = (_signal: TabSignal) => {} } = {}) {
  const listeners = new Set<(signal: TabSignal) => void>();
  return (): TabSignals => {
    let own: ((signal: TabSignal) => void) | undefined;
    const deliver = (signal: TabSignal) => {
      inTransit(signal);
      for (const listener of listeners) if (listener !== own) listener(signal);
    };
    return {
      send: (signal) => (immediate ? deliver(signal) : setTimeout(() => deliver(signal))),
      listen: (listener) => {
        own = listener;
        listeners.add(listener);
      },
    };
  };
}

describe('tabs that share the vault and hear each other too', () => {
  it('a sign-out keeps its ID token for the provider, however fast another tab hears of it', async () => {
    const idp = await provider();
    const tab = tabChannel({ immediate: true });
    const vault = newVault();
    const first = await signedInSession(idp, { tabs: tab(), vault });
    await signedInSession(idp, { tabs: tab(), vault });
    await expect(first.signOut()).resolves.toBe('leaving');
    expect(new URL(String(sentTo(first))).searchParams.get('id_token_hint')).toMatch(/^ey/);
  });
});

describe('tabs that each have a vault of their own (WebKit gives every window its own worker)', () => {
  it('a new tab asks the others, and follows a signed-in one through the provider', async () => {
    const idp = await provider();
    const tab = tabChannel();
    await signedInSession(idp, { tabs: tab() });
    window.sessionStorage.clear(); // the new tab's own storage: no hint of a session
    const other = newSession(HOME, { tabs: tab() });
    await other.start();
    expect(other.getState()).toMatchObject({ status: 'signed-out' });
    await vi.waitFor(() =>
      expect(new URL(sentTo(other) ?? 'http://none').searchParams.get('prompt')).toBe('none'),
    );
  });

  it.each([
    { late: 'by 8 s (a loaded machine)', takenMs: 8_000, followed: true },
    { late: 'after the tab stopped asking', takenMs: ASK_TABS_MS + 1, followed: false },
  ])('an answer that comes $late is followed: $followed', async ({ takenMs, followed }) => {
    const idp = await provider();
    let clock = Date.now();
    const tab = tabChannel({ inTransit: (signal) => void (signal === 'here' && (clock += takenMs)) });
    await signedInSession(idp, { tabs: tab() });
    await new Promise((resolve) => setTimeout(resolve)); // its "signed in" has reached every tab
    window.sessionStorage.clear();
    const other = newSession(HOME, { tabs: tab(), now: () => clock });
    await other.start();
    // The question, its answer and what the new tab does with it: a few tasks.
    await vi.waitFor(() => expect(clock).toBeGreaterThan(Date.now()));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const prompt = new URL(sentTo(other) ?? 'http://none').searchParams.get('prompt');
    expect(prompt).toBe(followed ? 'none' : null);
  });

  it('a sign-out in one tab signs the others out, and revokes their own tokens', async () => {
    const idp = await provider();
    const tab = tabChannel();
    const first = await signedInSession(idp, { tabs: tab() });
    const second = await signedInSession(idp, { tabs: tab() });
    await first.signOut();
    await vi.waitFor(() =>
      expect(second.getState()).toMatchObject({
        status: 'signed-out',
        notice: { code: 'signed_out_elsewhere' },
      }),
    );
    await vi.waitFor(() => expect(idp.to('/token/revocation')).toHaveLength(2));
    expect(await second.environment.vault.call('current')).toBeNull();
  });
});
