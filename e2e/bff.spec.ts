import { expect, test } from '@playwright/test';
import { CookieJar, form, request as send } from '../apps/dev-idp/src/test-support/oidc-flow';
import { ACCOUNTS, bffSessionFor, grantsOf, startServer, type StartedServer } from './support';

/**
 * The BFF mode (OIDC_MODE=bff) from outside, as a browser's requests and as an attacker's: the server is
 * the OAuth client of the bundled provider (a confidential client), and the browser holds a cookie only.
 * These tests speak HTTP from Node with a cookie jar (the journey in a browser is browsers.spec.ts's and
 * injected-script.spec.ts's), so they can send what a browser would not: a cross-site request.
 */
let server: StartedServer;
test.beforeAll(async () => {
  // Access tokens of 20 s: the server renews them when half their life has gone.
  server = await startServer(100, { OIDC_MODE: 'bff', DEV_IDP_ACCESS_TOKEN_TTL: '20' });
});
test.afterAll(async () => {
  await server.stop();
});

const SAME_ORIGIN = { 'X-CSRF': '1', 'Sec-Fetch-Site': 'same-origin' };

async function userOf(jar: CookieJar, app: string) {
  const response = await send(jar, `${app}/bff/user`, { headers: SAME_ORIGIN });
  expect(response.status).toBe(200);
  return ((await response.json()) as { user: null | { sub: string; name: string; roles: string[] } }).user;
}

/** The provider session's uid, from its cookie in the jar (the test controls name grants by it). */
function providerCookie(jar: CookieJar): string {
  const cookie = /dev_idp_session=([^;]+)/.exec(jar.header())?.[1];
  if (!cookie) throw new Error('no provider session in the jar');
  return cookie;
}

test('signs in as a confidential client and calls the API with the session cookie only', async () => {
  const { jar, landedAt } = await bffSessionFor(server.origin, ACCOUNTS.alice);
  expect(landedAt.search).toBe('');
  // The browser got the session cookie (HttpOnly, SameSite=Strict; on https `__Host-` and Secure:
  // bff-cookies.test.ts), and no token anywhere.
  expect(jar.header()).toMatch(/(^|; )gatehouse-session=/);
  const user = await userOf(jar, server.origin);
  expect(user).toMatchObject({ sub: 'alice', name: ACCOUNTS.alice.name });
  const me = await send(jar, `${server.origin}/api/me`, { headers: SAME_ORIGIN });
  expect(me.status).toBe(200);
  expect(await me.json()).toMatchObject({ sub: 'alice' });
  // The tokens the provider issued went to the server: the client authenticated (a confidential client).
  const grants = await grantsOf(server.provider, { cookie: providerCookie(jar) });
  expect(grants.length).toBeGreaterThan(0);
  expect(
    JSON.stringify(await (await send(jar, `${server.origin}/bff/user`, { headers: SAME_ORIGIN })).text()),
  ).not.toContain(String(grants[0]?.access_token));
});

test('refuses a cookie-authenticated call without the custom header, from another origin or another site', async () => {
  const { jar } = await bffSessionFor(server.origin, ACCOUNTS.alice);
  const tries: [string, Record<string, string>, string][] = [
    ['no custom header (a form post from another site)', { 'Sec-Fetch-Site': 'cross-site' }, 'POST'],
    ['no custom header, a plain GET', {}, 'GET'],
    ['a cross-site POST with the header', { 'X-CSRF': '1', Origin: 'https://evil.example' }, 'POST'],
    ['a same-site but cross-origin fetch', { 'X-CSRF': '1', 'Sec-Fetch-Site': 'same-site' }, 'GET'],
  ];
  for (const [what, headers, method] of tries) {
    const api = await send(jar, `${server.origin}/api/me`, { method, headers });
    expect(api.status, what).toBe(403);
    const logout = await send(jar, `${server.origin}/bff/logout`, { method: 'POST', headers });
    expect(logout.status, what).toBe(403);
  }
  // Still signed in: none of them ended the session.
  expect(await userOf(jar, server.origin)).toMatchObject({ sub: 'alice' });
});

test('renews the access token on the server, once, before it expires', async () => {
  const { jar } = await bffSessionFor(server.origin, ACCOUNTS.alice);
  const cookie = providerCookie(jar);
  const issued = async () => (await grantsOf(server.provider, { cookie })).length;
  const before = await issued();
  // Past half the 20 s lifetime: the next calls (four at once) renew it, one refresh between them.
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const calls = await Promise.all(
    [1, 2, 3, 4].map(() => send(jar, `${server.origin}/api/me`, { headers: SAME_ORIGIN })),
  );
  expect(calls.map((c) => c.status)).toEqual([200, 200, 200, 200]);
  expect(await issued()).toBe(before + 1);
});

test('sign-out revokes the tokens, ends the session and hands the provider’s end-session request', async () => {
  const { jar } = await bffSessionFor(server.origin, ACCOUNTS.alice);
  const cookie = providerCookie(jar);
  const response = await send(jar, `${server.origin}/bff/logout`, { method: 'POST', headers: SAME_ORIGIN });
  expect(response.status).toBe(200);
  const { endSessionUrl } = (await response.json()) as { endSessionUrl: string };
  const end = new URL(endSessionUrl);
  expect(end.origin).toBe(server.provider);
  expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${server.origin}/`);
  expect(end.searchParams.get('id_token_hint')).toBeTruthy();
  expect(await userOf(jar, server.origin)).toBeNull();
  const api = await send(jar, `${server.origin}/api/me`, { headers: SAME_ORIGIN });
  expect(api.status).toBe(401);
  const grants = await grantsOf(server.provider, { cookie });
  // The refresh token (the one that outlives the page) was revoked at the provider.
  expect(grants.at(-1)?.revoked).toContain('refresh_token');
});

test('a back-channel logout from the provider ends the session', async () => {
  const { jar } = await bffSessionFor(server.origin, ACCOUNTS.alice);
  const other = await bffSessionFor(server.origin, ACCOUNTS.admin);
  expect(await userOf(jar, server.origin)).toMatchObject({ sub: 'alice' });
  // The user signs out at the provider itself (its own sign-out page, not through the app): the provider
  // posts a logout token to /bff/backchannel-logout.
  const page = await send(jar, `${server.provider}/session/end`);
  const html = await page.text();
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  expect(xsrf, html).toBeTruthy();
  const confirmed = await send(
    jar,
    `${server.provider}/session/end/confirm`,
    form({ xsrf: String(xsrf), logout: 'yes' }),
  );
  expect(confirmed.status).toBeLessThan(400);
  await expect.poll(() => userOf(jar, server.origin)).toBeNull();
  // Another user's session is not touched.
  expect(await userOf(other.jar, server.origin)).toMatchObject({ sub: 'admin' });
  // A forged logout token is refused.
  const forged = await fetch(`${server.origin}/bff/backchannel-logout`, {
    ...form({ logout_token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.' }),
  });
  expect(forged.status).toBe(400);
  expect(await userOf(other.jar, server.origin)).toMatchObject({ sub: 'admin' });
});

test('a callback that no sign-in of this browser waits for is refused', async () => {
  const jar = new CookieJar();
  const response = await send(jar, `${server.origin}/bff/callback?code=stolen&state=guessed`);
  expect(response.status).toBe(303);
  const location = new URL(response.headers.get('Location') ?? '', server.origin);
  expect(location.pathname).toBe('/callback');
  expect(location.searchParams.get('error')).toBe('state_mismatch');
  expect(jar.header()).not.toMatch(/gatehouse-session/);
});
