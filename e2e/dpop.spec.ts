import { decodeJwt, decodeProtectedHeader } from 'jose';
import { expect, test, type Page } from '@playwright/test';
import { makeDpopKey, makeDpopProof } from '../apps/server/src/test-support/dpop-proof';
import {
  ACCOUNTS,
  apiFromPage,
  sessionTokens,
  signIn,
  signOutThroughProvider,
  startServer,
  type StartedServer,
} from './support';
import { recordingProxy, type RecordingProxy } from './recording-proxy';

/**
 * Sender-constrained tokens (RFC 9449, ADR 0037). The bundled provider offers DPoP by default, so the
 * browser binds its tokens to a non-extractable key; this server also makes the API ask for its own
 * nonces, so the browser's retry with the nonce is exercised on every first call.
 */
let server: StartedServer;
/** In front of the server: the API calls as the browser sent them (the token vault's, from its worker). */
let proxy: RecordingProxy;
/** The app's origin, the proxy's. */
let app: string;
test.beforeAll(async () => {
  proxy = await recordingProxy();
  app = proxy.origin;
  // Short-lived tokens, so the vault renews during the test.
  // Offset 94, not 90: port 4190 is on the Fetch standard's list of blocked ports.
  server = await startServer(94, {
    API_DPOP_NONCES: '1',
    DEV_IDP_ACCESS_TOKEN_TTL: '20',
    PUBLIC_ORIGIN: app,
  });
  proxy.target(server.origin);
});
test.afterAll(async () => {
  await server.stop();
  await proxy.close();
});

/** The thumbprint of the key the browser keeps in oidc-client-ts's IndexedDB store, or null. */
async function browserKeyThumbprint(page: Page): Promise<string | null> {
  return page.evaluate(async () => {
    const keys = await new Promise<CryptoKeyPair | undefined>((resolve, reject) => {
      const open = indexedDB.open('oidc');
      open.onupgradeneeded = () => open.result.createObjectStore('dpop');
      open.onerror = () => reject(new Error(String(open.error)));
      open.onsuccess = () => {
        const read = open.result.transaction('dpop', 'readonly').objectStore('dpop').get('gatehouse');
        read.onsuccess = () => resolve((read.result as { keys?: CryptoKeyPair } | undefined)?.keys);
      };
    });
    if (!keys) return null;
    if (keys.privateKey.extractable) throw new Error('the private key is extractable');
    const { crv, kty, x, y } = await crypto.subtle.exportKey('jwk', keys.publicKey);
    // RFC 7638: the required members in lexicographic order, no spaces.
    const canonical = JSON.stringify({ crv, kty, x, y });
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical));
    return btoa(String.fromCharCode(...new Uint8Array(digest)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  });
}

test('tokens are bound to the browser: stolen ones are refused by the API and the provider', async ({
  browser,
  request,
}) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  // The token vault makes the API calls from its worker: as the browser sent them, through the proxy.
  const apiCalls = () =>
    proxy.seen
      .filter((r) => r.path.startsWith('/api/'))
      .map((r) => ({
        path: r.path,
        authorization: r.headers.authorization ?? '',
        dpop: typeof r.headers.dpop === 'string' ? r.headers.dpop : undefined,
        status: r.status,
      }));

  await page.goto(`${app}/`);
  await signIn(page, ACCOUNTS.admin, server.provider);
  const tokens = await sessionTokens(page, server.provider);
  expect(tokens.token_type).toBe('DPoP');
  const jkt = await browserKeyThumbprint(page);
  expect(jkt).toMatch(/^[\w-]{43}$/);
  // The provider bound the access token to that key (RFC 9449 6.1).
  expect(decodeJwt(tokens.access_token ?? '')).toMatchObject({ cnf: { jkt } });

  // The app calls the API with the DPoP scheme and a proof; the API's nonce costs one retry, once.
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('api-me')).toContainText(`"jkt": "${jkt}"`);
  // The tab's first call learns the nonce (401 use_dpop_nonce, then again with it); no other refusal.
  const [first, retry, ...rest] = apiCalls();
  expect([first?.status, retry?.status, retry?.path]).toEqual([401, 200, first?.path]);
  expect(rest.map((call) => call.status)).not.toContain(401);
  expect(apiCalls().map((call) => call.path)).toContain('/api/me');
  for (const call of apiCalls()) {
    expect(call.authorization).toBe(`DPoP ${tokens.access_token}`);
    expect(decodeProtectedHeader(call.dpop ?? '')).toMatchObject({ typ: 'dpop+jwt', alg: 'ES256' });
    expect(decodeJwt(call.dpop ?? '')).toMatchObject({ htm: 'GET', htu: `${app}${call.path}` });
  }
  expect(decodeJwt(first?.dpop ?? '')).not.toHaveProperty('nonce');
  expect(decodeJwt(retry?.dpop ?? '').nonce).toEqual(expect.any(String));

  // A second tab shares the session and the key; the leader renews with a proof, and the API still answers.
  const second = await context.newPage();
  await second.goto(`${app}/profile`);
  await expect(second.getByTestId('api-me')).toContainText(`"jkt": "${jkt}"`);
  await expect
    .poll(async () => (await sessionTokens(second, server.provider)).access_token, { timeout: 25_000 })
    .not.toBe(tokens.access_token);
  const renewed = await sessionTokens(second, server.provider);
  expect(decodeJwt(renewed.access_token ?? '')).toMatchObject({ cnf: { jkt } });
  expect((await apiFromPage(page, '/api/me')).status).toBe(200);

  // The thief has the tokens, not the key. Bearer: refused as a bound token (RFC 9449 7.2).
  const asBearer = await request.get(`${app}/api/me`, {
    headers: { authorization: `Bearer ${renewed.access_token}` },
  });
  expect(asBearer.status()).toBe(401);
  expect(asBearer.headers()['www-authenticate']).toMatch(
    /DPoP realm="gatehouse", algs="[^"]+", error="invalid_token"/,
  );
  // DPoP with the thief's own key: the proof is not signed by the key the token is bound to.
  const thief = await makeDpopKey();
  const nonce = asBearer.headers()['dpop-nonce'];
  const withOwnKey = await request.get(`${app}/api/me`, {
    headers: {
      authorization: `DPoP ${renewed.access_token}`,
      dpop: await makeDpopProof(thief, {
        method: 'GET',
        url: `${app}/api/me`,
        accessToken: renewed.access_token ?? '',
        ...(nonce ? { nonce } : {}),
      }),
    },
  });
  expect(withOwnKey.status()).toBe(401);
  expect(withOwnKey.headers()['www-authenticate']).toContain('error="invalid_dpop_proof"');
  // The provider refuses the refresh token without a proof, and with a proof of another key.
  const refresh = {
    grant_type: 'refresh_token',
    refresh_token: renewed.refresh_token ?? '',
    client_id: 'gatehouse',
  };
  const noProof = await request.post(`${server.provider}/token`, { form: refresh });
  expect(noProof.status()).toBe(400);
  const otherKey = await request.post(`${server.provider}/token`, {
    form: refresh,
    headers: { dpop: await makeDpopProof(thief, { method: 'POST', url: `${server.provider}/token` }) },
  });
  expect(otherKey.status()).toBe(400);
  expect(await otherKey.text()).toMatch(/invalid_grant|invalid_dpop_proof/);
  // The browser that holds the key still can.
  expect((await apiFromPage(page, '/api/me')).status).toBe(200);

  // Sign-out deletes the key: nothing bound to it can be used from this browser again.
  await second.close();
  await signOutThroughProvider(page, server.provider);
  expect(await browserKeyThumbprint(page)).toBeNull();
  await context.close();
});

test('a provider without DPoP: bearer tokens, exactly as before', async ({ page }) => {
  const plainProxy = await recordingProxy();
  const plain = await startServer(96, { DEV_IDP_DPOP: 'off', PUBLIC_ORIGIN: plainProxy.origin });
  plainProxy.target(plain.origin);
  try {
    await page.goto(`${plainProxy.origin}/`);
    await signIn(page, ACCOUNTS.admin, plain.provider);
    const tokens = await sessionTokens(page, plain.provider);
    expect(tokens.token_type).toBe('Bearer');
    expect(decodeJwt(tokens.access_token ?? '')).not.toHaveProperty('cnf');
    await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
    await expect(page.getByTestId('api-me')).toContainText('"jkt": null');
    const apiCall = plainProxy.seen.find((r) => r.path === '/api/me');
    expect(apiCall?.headers.authorization).toBe(`Bearer ${tokens.access_token}`);
    expect(apiCall?.headers.dpop).toBeUndefined();
    expect(await browserKeyThumbprint(page)).toBeNull();
  } finally {
    await plain.stop();
    await plainProxy.close();
  }
});
