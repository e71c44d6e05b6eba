// @vitest-environment node
// The vault runs in a worker: no DOM, and oidc-client-ts's DPoP signing finds WebCrypto on `window`
// only, which vault-worker.ts provides the same way.
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import { InMemoryWebStorage } from 'oidc-client-ts';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DpopKey, type DpopStore } from './dpop';
import { memoryDpopStore } from './dpop-store';
import { ProviderClient } from './provider-client';
import {
  APP_ORIGIN,
  fakeProvider,
  testOidcConfig,
  type FakeProvider,
  type FakeProviderOptions,
} from './test-provider';
import {
  inPageVault,
  TokenVault,
  type ApiRequest,
  type SessionKeeper,
  type VaultEnvironment,
  type VaultEvent,
} from './token-vault';

beforeAll(() => {
  (globalThis as { window?: unknown }).window ??= { crypto: globalThis.crypto };
});
afterEach(() => {
  vi.unstubAllGlobals();
});

/** A vault with the fake provider behind fetch, and what it announced. */
async function setUp(options: FakeProviderOptions = {}, env: Partial<VaultEnvironment> = {}) {
  const idp = await fakeProvider(options);
  const events: VaultEvent[] = [];
  const dpopStore = options.dpop ? memoryDpopStore() : undefined;
  const vault = new TokenVault(testOidcConfig, {
    origin: APP_ORIGIN,
    now: () => Date.now(),
    announce: (event) => events.push(event),
    dpopStore,
    ...env,
  });
  return { idp, vault, events, dpopStore };
}

/**
 * Signs in as the page does: the authorization request (PKCE, our nonce, the key's thumbprint when the
 * provider offers DPoP) made in the page, the user at the provider, and the callback handed to the vault.
 */
async function signIn(vault: TokenVault, idp: FakeProvider, dpopStore?: DpopStore) {
  const dpopKey = dpopStore ? new DpopKey(dpopStore, testOidcConfig.clientId) : undefined;
  const page = new ProviderClient(
    testOidcConfig,
    { origin: APP_ORIGIN, sessionStorage: new InMemoryWebStorage() },
    dpopKey,
  );
  const client = await page.tokenClient();
  const nonce = crypto.randomUUID();
  const request = await client.createSigninRequest({
    request_type: 'si:r',
    scope: testOidcConfig.scope,
    extraQueryParams: { nonce },
    state: { nonce },
    ...(dpopKey && client !== page.client ? { dpopJkt: await dpopKey.thumbprint() } : {}),
  });
  return vault.redeem({ url: idp.authorize(request.url), state: request.state.toStorageString(), nonce });
}

const get = (url: string, headers: [string, string][] = []): ApiRequest => ({ url, method: 'GET', headers });

/** Every token the provider issued: none may leave the vault except the ID token at sign-out. */
function tokensOf(idp: FakeProvider, { idTokens = true } = {}): string[] {
  return idp.issued.flatMap((tokens) => [
    tokens.access_token,
    ...(tokens.refresh_token ? [tokens.refresh_token] : []),
    ...(idTokens ? [tokens.id_token] : []),
  ]);
}

function expectNoToken(value: unknown, tokens: string[]) {
  const text = JSON.stringify(value);
  expect(tokens.length).toBeGreaterThan(0);
  for (const token of tokens) expect(text).not.toContain(token);
}

describe('TokenVault.fetchApi sends the token to the app’s own /api/ only', () => {
  it.each([
    ['another origin', 'https://evil.example/api/me'],
    ['another port of the same host', 'http://localhost:3001/api/me'],
    ['a look-alike host', 'http://localhost:3000.evil.example/api/me'],
    ['credentials before another host', 'http://localhost:3000@evil.example/api/me'],
    ['a scheme-relative URL', '//evil.example/api/me'],
    ['a backslash for a slash', '/\\evil.example/api/me'],
    ['the same origin outside /api/', '/account'],
    ['/api itself', '/api'],
    ['a prefix that only looks alike', '/apiary/x'],
    ['a path that climbs out of /api/', '/api/../admin'],
    ['an encoded climb out of /api/', '/api/%2e%2e/admin'],
    ['another scheme', 'data:text/plain,hello'],
  ])('refuses %s (%s)', async (_what, url) => {
    const { idp, vault } = await setUp();
    await signIn(vault, idp);
    const before = idp.requests.length;
    await expect(vault.fetchApi(get(url))).rejects.toThrow(TypeError);
    expect(idp.requests.slice(before)).toEqual([]);
  });

  it('accepts a path of the API, relative or absolute, with a query', async () => {
    const { idp, vault } = await setUp();
    await signIn(vault, idp);
    await expect(vault.fetchApi(get('/api/me?x=1'))).resolves.toMatchObject({ status: 200 });
    await expect(vault.fetchApi(get(`${APP_ORIGIN}/api/usage`))).resolves.toMatchObject({ status: 200 });
    expect(idp.to('/api/me')[0]?.url).toBe(`${APP_ORIGIN}/api/me?x=1`);
    expect(idp.to('/api/usage')).toHaveLength(1);
  });

  it("drops the page's own Authorization and DPoP headers, and keeps the others", async () => {
    const { idp, vault } = await setUp();
    await signIn(vault, idp);
    await vault.fetchApi(
      get('/api/me', [
        ['Authorization', 'Bearer chosen-by-the-page'],
        ['dpop', 'a-proof-of-the-page'],
        ['Accept', 'application/json'],
        ['traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
      ]),
    );
    const [sent] = idp.to('/api/me');
    expect(sent?.headers.get('Authorization')).toBe(`Bearer ${idp.issued[0]?.access_token}`);
    expect(sent?.headers.has('DPoP')).toBe(false);
    expect(sent?.headers.get('Accept')).toBe('application/json');
    expect(sent?.headers.get('traceparent')).toMatch(/^00-/);
  });

  it('drops them too without a session, and sends no token at all', async () => {
    const { idp, vault } = await setUp();
    await vault.fetchApi(get('/api/me', [['Authorization', 'Bearer chosen-by-the-page']]));
    expect(idp.to('/api/me')[0]?.headers.has('Authorization')).toBe(false);
  });

  it('follows no redirect (the token would go with it) and sends no cookie to another origin', async () => {
    const { idp, vault } = await setUp();
    await signIn(vault, idp);
    await vault.fetchApi({ ...get('/api/me'), method: 'post', body: '{}' });
    const [sent] = idp.to('/api/me');
    expect(sent?.init).toMatchObject({
      method: 'POST',
      redirect: 'error',
      credentials: 'same-origin',
      body: '{}',
    });

    // What fetch does with `redirect: 'error'` when the API answers a redirect: the call fails.
    idp.api = () => Promise.reject(new TypeError('Failed to fetch: redirect mode is "error"'));
    await expect(vault.fetchApi(get('/api/moved'))).rejects.toThrow(TypeError);
  });

  it("answers the API's answer, never a token", async () => {
    const { idp, vault, events } = await setUp();
    const user = await signIn(vault, idp);
    idp.api = () =>
      Response.json(
        { error: 'invalid_token' },
        {
          status: 401,
          headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"', 'X-Request-Id': 'r-1' },
        },
      );
    const answer = await vault.fetchApi(get('/api/me', [['Accept', 'application/json']]));
    expect(answer).toMatchObject({ status: 401, body: '{"error":"invalid_token"}' });
    expect(answer.headers).toContainEqual(['x-request-id', 'r-1']);
    expectNoToken(answer, tokensOf(idp));
    // Nor what the page learns of the session.
    expectNoToken([user, vault.current(), await vault.renew(), events], tokensOf(idp));
  });

  it("sends a DPoP-bound token with a proof for the call, once more with the API's nonce when it asks (RFC 9449 9)", async () => {
    const { idp, vault, dpopStore } = await setUp({ dpop: true });
    const user = await signIn(vault, idp, dpopStore);
    expect(user.token_type).toBe('DPoP');
    idp.api = ({ headers }) => {
      const proof = decodeJwt(headers.get('DPoP') ?? '');
      return proof.nonce === 'n-1'
        ? Response.json({ sub: 'alice' })
        : Response.json(
            { error: 'use_dpop_nonce' },
            {
              status: 401,
              headers: { 'WWW-Authenticate': 'DPoP error="use_dpop_nonce"', 'DPoP-Nonce': 'n-1' },
            },
          );
    };
    await expect(vault.fetchApi({ ...get('/api/me?x=1'), method: 'post' })).resolves.toMatchObject({
      status: 200,
    });
    const sent = idp.to('/api/me');
    expect(sent).toHaveLength(2);
    expect(sent[1]?.headers.get('Authorization')).toBe(`DPoP ${idp.issued[0]?.access_token}`);
    const proof = decodeJwt(sent[1]?.headers.get('DPoP') ?? '');
    expect(proof).toMatchObject({ htm: 'POST', htu: `${APP_ORIGIN}/api/me`, nonce: 'n-1' });
    expect(proof.ath).toEqual(expect.any(String));
  });
});

describe('a failed API call, as the page receives it', () => {
  it('is the TypeError a fetch would throw, with its reason, not a failure of the identity provider', async () => {
    const idp = await fakeProvider();
    const { vault, ...page } = inPageVault(testOidcConfig, { origin: APP_ORIGIN, now: () => Date.now() });
    await signIn(vault, idp);

    const refused = await page.call('fetchApi', get('https://evil.example/api/me')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).message).toBe(
      `The token vault calls ${APP_ORIGIN}/api/ only, not https://evil.example/api/me.`,
    );

    idp.api = () => Promise.reject(new TypeError('Failed to fetch'));
    const unreachable = await page.call('fetchApi', get('/api/me')).catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(TypeError);
    expect((unreachable as TypeError).message).toBe('Failed to fetch');
    expect((unreachable as TypeError).message).not.toMatch(/identity provider/);
  });
});

describe('TokenVault renewal', () => {
  const refreshes = (idp: FakeProvider) =>
    idp.to('/token').filter(({ body }) => new URLSearchParams(body).get('grant_type') === 'refresh_token');

  it('spends the refresh token once however many ask at once', async () => {
    const { idp, vault } = await setUp();
    await signIn(vault, idp);
    const [first, second] = await Promise.all([vault.renew(), vault.renew()]);
    expect(refreshes(idp)).toHaveLength(1);
    expect(first).toEqual(second);
    expect(first).toMatchObject({ profile: { sub: 'alice' }, renewable: true });
  });

  it('renews once before the API calls an expiring token is about to go with', async () => {
    const { idp, vault } = await setUp({ expiresIn: 3 });
    await signIn(vault, idp);
    await Promise.all([vault.fetchApi(get('/api/a')), vault.fetchApi(get('/api/b'))]);
    expect(refreshes(idp)).toHaveLength(1);
    const renewed = `Bearer ${idp.issued[1]?.access_token}`;
    expect(idp.to('/api/a')[0]?.headers.get('Authorization')).toBe(renewed);
    expect(idp.to('/api/b')[0]?.headers.get('Authorization')).toBe(renewed);
  });

  it('ends the session when the provider refuses the refresh token (invalid_grant)', async () => {
    const { idp, vault, events } = await setUp();
    await signIn(vault, idp);
    idp.tokenAnswer = () => Response.json({ error: 'invalid_grant' }, { status: 400 });

    await expect(vault.renew()).resolves.toBeNull();
    expect(vault.current()).toBeNull();
    expect(events.at(-1)).toMatchObject({
      type: 'ended',
      cause: 'renewal-failed',
      failure: { reason: 'invalid_grant', transient: false },
    });
    await vault.fetchApi(get('/api/me'));
    expect(idp.to('/api/me')[0]?.headers.has('Authorization')).toBe(false);
  });

  it('keeps a session whose renewal failed for want of a network, while its token is valid', async () => {
    const { idp, vault, events } = await setUp();
    await signIn(vault, idp);
    idp.tokenAnswer = () => Promise.reject(new TypeError('Failed to fetch'));
    await expect(vault.renew()).resolves.toMatchObject({ profile: { sub: 'alice' } });
    expect(events.map((event) => event.type)).toEqual(['session']);
  });
});

describe('TokenVault.signOut', () => {
  it('forgets the tokens at once, revokes the refresh token and answers the ID token for the end-session request', async () => {
    const { idp, vault, events } = await setUp();
    await signIn(vault, idp);
    const [issued] = idp.issued;

    await expect(vault.signOut()).resolves.toEqual({ idToken: issued?.id_token, warning: undefined });
    expect(vault.current()).toBeNull();
    expect(events.at(-1)).toEqual({ type: 'ended', cause: 'signed-out' });
    expect(new URLSearchParams(idp.to('/token/revocation')[0]?.body).get('token')).toBe(
      issued?.refresh_token,
    );
    await vault.fetchApi(get('/api/me'));
    expect(idp.to('/api/me')[0]?.headers.has('Authorization')).toBe(false);
  });

  it('says why when the provider refuses the revocation', async () => {
    const { idp, vault } = await setUp();
    await signIn(vault, idp);
    idp.revocationAnswer = () => Response.json({ error: 'unsupported_token_type' }, { status: 400 });
    const { idToken, warning } = await vault.signOut();
    expect(idToken).toBe(idp.issued[0]?.id_token);
    expect(warning).toMatch(/refused to revoke the refresh token \(400 unsupported_token_type\)/);
    expect(vault.current()).toBeNull();
  });

  it('answers nothing without a session', async () => {
    const { idp, vault } = await setUp();
    await expect(vault.signOut()).resolves.toEqual({ idToken: undefined, warning: undefined });
    expect(idp.to('/token/revocation')).toEqual([]);
  });
});

describe("the kept session (a reload after the vault's last tab closed)", () => {
  function keeper(kept?: string) {
    let stored = kept;
    return {
      load: vi.fn(() => Promise.resolve(stored)),
      save: vi.fn((session: string) => Promise.resolve(void (stored = session))),
      clear: vi.fn(() => Promise.resolve(void (stored = undefined))),
      stored: () => stored,
    } satisfies SessionKeeper & { stored: () => string | undefined };
  }
  const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('never holds bearer tokens', async () => {
    const keep = keeper();
    const { idp, vault } = await setUp({}, { keep });
    await signIn(vault, idp);
    await vault.renew();
    await settled();
    expect(keep.save).not.toHaveBeenCalled();
    expect(keep.stored()).toBeUndefined();
  });

  it('holds DPoP-bound tokens, which a new vault takes up with the same key', async () => {
    const keep = keeper();
    const { idp, vault, dpopStore } = await setUp({ dpop: true }, { keep });
    await signIn(vault, idp, dpopStore);
    await settled();
    expect(keep.save).toHaveBeenCalledOnce();
    expect(keep.stored()).toContain(idp.issued[0]?.refresh_token);

    const reloaded = new TokenVault(testOidcConfig, {
      origin: APP_ORIGIN,
      now: () => Date.now(),
      announce: () => undefined,
      dpopStore,
      keep,
    });
    await reloaded.restore();
    expect(reloaded.current()).toMatchObject({ profile: { sub: 'alice' }, token_type: 'DPoP' });
    await reloaded.fetchApi(get('/api/me'));
    expect(idp.to('/api/me')[0]?.headers.get('Authorization')).toBe(`DPoP ${idp.issued[0]?.access_token}`);
  });

  it('refuses a kept session of bearer tokens (written by anything but the vault), and clears it', async () => {
    const keep = keeper();
    const { idp, vault } = await setUp({}, { keep });
    await signIn(vault, idp);
    // The bearer session, as a script that shares the origin's IndexedDB could have written it.
    const planted = keeper(
      JSON.stringify({
        access_token: idp.issued[0]?.access_token,
        token_type: 'Bearer',
        profile: { sub: 'alice' },
        expires_at: Math.floor(Date.now() / 1000) + 600,
      }),
    );
    const bearer = new TokenVault(testOidcConfig, {
      origin: APP_ORIGIN,
      now: () => Date.now(),
      announce: () => undefined,
      keep: planted,
    });
    await bearer.restore();
    expect(bearer.current()).toBeNull();
    expect(planted.stored()).toBeUndefined();
  });

  it('clears the kept session at sign-out', async () => {
    const keep = keeper();
    const { idp, vault, dpopStore } = await setUp({ dpop: true }, { keep });
    await signIn(vault, idp, dpopStore);
    await settled();
    await vault.signOut();
    await settled();
    expect(keep.stored()).toBeUndefined();
    expect(dpopStore?.entries.size).toBe(0); // the key goes with the tokens bound to it
  });
});

describe('the DPoP key, ready before the click', () => {
  const thumbprintOf = async (store: ReturnType<typeof memoryDpopStore>) => {
    const kept = store.entries.get(testOidcConfig.clientId);
    if (!kept) throw new Error('no key kept');
    return calculateJwkThumbprint(await exportJWK(kept.keys.publicKey), 'sha256');
  };

  it('prepare() reads discovery and makes the key, so the thumbprint the page asks for later costs no request', async () => {
    const { idp, vault, dpopStore } = await setUp({ dpop: true });
    if (!dpopStore) throw new Error('no store');
    vault.prepare();
    await vi.waitFor(() => expect(dpopStore.entries.size).toBe(1));
    const jkt = await vault.thumbprint();
    expect(jkt).toBe(await thumbprintOf(dpopStore));
    expect(idp.to('/.well-known/openid-configuration')).toHaveLength(1);
  });

  it('makes one key when prepare() and the page ask at once, and the code bound to it is redeemed', async () => {
    const { idp, vault, dpopStore } = await setUp({ dpop: true });
    if (!dpopStore) throw new Error('no store');
    vault.prepare();
    const jkt = await vault.thumbprint();
    expect(jkt).toBe(await thumbprintOf(dpopStore));
    await expect(signIn(vault, idp, dpopStore)).resolves.toMatchObject({ token_type: 'DPoP' });
  });

  it('answers no thumbprint and makes no key where the provider does not offer DPoP', async () => {
    const dpopStore = memoryDpopStore();
    const { vault } = await setUp({}, { dpopStore });
    vault.prepare();
    await expect(vault.thumbprint()).resolves.toBeNull();
    expect(dpopStore.entries.size).toBe(0);
  });
});
