import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_ACCOUNTS, startDevIdp } from './index.js';
import type { DevIdp } from './index.js';
import { LOGIN_ERROR } from './interactions.js';
import {
  APP_ORIGIN,
  CLIENT_ID,
  CookieJar,
  REDIRECT_URI,
  authorizationRequest,
  exchangeCode,
  form,
  loginAction,
  navigate,
  request,
  signIn,
  signInForTokens,
  tokenRequest,
} from './test-support/oidc-flow.js';

const API = `${APP_ORIGIN}/api`;

let idp: DevIdp;
const logLines: string[] = [];

beforeAll(async () => {
  idp = await startDevIdp({ port: 0, appOrigin: APP_ORIGIN, log: (line) => logLines.push(line) });
});

afterAll(async () => {
  await idp.close();
});

async function jwks() {
  const response = await fetch(`${idp.issuer}/jwks`);
  return createLocalJWKSet((await response.json()) as JSONWebKeySet);
}

describe('stop', () => {
  it('does not wait for a connection that has sent no request yet, as a browser preconnects', async () => {
    const other = await startDevIdp({ port: 0, appOrigin: APP_ORIGIN, log: () => undefined });
    const socket = connect(other.port, 'localhost');
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await expect(other.close()).resolves.toBeUndefined();
    await closed;
  });
});

describe('start-up', () => {
  it('listens on a random port, derives its issuer from it and says what it is', () => {
    expect(idp.port).toBeGreaterThan(0);
    expect(idp.issuer).toBe(`http://localhost:${idp.port}`);
    const text = logLines.join('\n');
    expect(text).toMatch(/DEVELOPMENT AND TESTS ONLY/);
    expect(text).toContain(idp.issuer);
    for (const account of DEMO_ACCOUNTS) expect(text).toContain(`${account.username} / ${account.password}`);
  });
});

describe('discovery', () => {
  it('publishes the endpoints the SPA uses, S256 only, and allows the app origin', async () => {
    const response = await fetch(`${idp.issuer}/.well-known/openid-configuration`, {
      headers: { Origin: APP_ORIGIN },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const doc = (await response.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: idp.issuer,
      authorization_endpoint: `${idp.issuer}/auth`,
      token_endpoint: `${idp.issuer}/token`,
      userinfo_endpoint: `${idp.issuer}/me`,
      jwks_uri: `${idp.issuer}/jwks`,
      end_session_endpoint: `${idp.issuer}/session/end`,
      revocation_endpoint: `${idp.issuer}/token/revocation`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
    });
    expect(doc.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    expect(doc.scopes_supported).toEqual(
      expect.arrayContaining(['openid', 'profile', 'email', 'offline_access']),
    );
    expect(doc.claims_supported).toEqual(
      expect.arrayContaining(['sub', 'name', 'email', 'email_verified', 'roles']),
    );
  });
});

describe('authorization code flow with PKCE', () => {
  it('signs alice in and issues an ID token, an API access token (JWT) and a refresh token', async () => {
    const { signedIn, tokens } = await signInForTokens(idp.issuer, 'alice');
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.expires_in).toBe(300);
    expect(tokens.refresh_token).toEqual(expect.any(String));

    const { payload: id } = await jwtVerify(tokens.id_token, await jwks(), {
      issuer: idp.issuer,
      audience: CLIENT_ID,
    });
    expect(id).toMatchObject({
      sub: 'alice',
      nonce: signedIn.request.nonce,
      name: 'Alice Liddell',
      email: 'alice@example.com',
      email_verified: true,
      roles: ['member'],
    });
    expect(id.exp! - id.iat!).toBe(300);

    const { payload: access, protectedHeader } = await jwtVerify(tokens.access_token, await jwks(), {
      issuer: idp.issuer,
      audience: API,
      typ: 'at+jwt',
    });
    expect(protectedHeader.kid).toBe(decodeProtectedHeader(tokens.id_token).kid);
    expect(access).toMatchObject({ sub: 'alice', client_id: CLIENT_ID, roles: ['member'] });
    expect(access.scope).toBe('openid profile email');
  });

  it('answers the token request with CORS headers for the app origin', async () => {
    const signedIn = await signIn(idp.issuer);
    const response = await tokenRequest(idp.issuer, {
      grant_type: 'authorization_code',
      code: signedIn.code,
      redirect_uri: REDIRECT_URI,
      code_verifier: signedIn.request.verifier,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });

  it('refuses token requests from other origins', async () => {
    const signedIn = await signIn(idp.issuer);
    const response = await fetch(`${idp.issuer}/token`, {
      ...form({
        client_id: CLIENT_ID,
        grant_type: 'authorization_code',
        code: signedIn.code,
        redirect_uri: REDIRECT_URI,
        code_verifier: signedIn.request.verifier,
      }),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'http://evil.example' },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gives admin both roles', async () => {
    const { tokens } = await signInForTokens(idp.issuer, 'admin');
    expect(decodeJwt(tokens.id_token)).toMatchObject({
      sub: 'admin',
      name: 'Ada Admin',
      roles: ['admin', 'member'],
    });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'admin', roles: ['admin', 'member'] });
  });

  it('puts the roles where Keycloak does when asked (rolesClaim realm_access.roles)', async () => {
    const keycloakLike = await startDevIdp({
      port: 0,
      appOrigin: APP_ORIGIN,
      rolesClaim: 'realm_access.roles',
      log: () => undefined,
    });
    try {
      const { tokens } = await signInForTokens(keycloakLike.issuer, 'admin');
      for (const token of [tokens.id_token, tokens.access_token]) {
        const claims = decodeJwt(token);
        expect(claims).toMatchObject({ realm_access: { roles: ['admin', 'member'] } });
        expect(claims).not.toHaveProperty('roles');
      }
    } finally {
      await keycloakLike.close();
    }
  });

  it('answers userinfo for the API access token, with the ID token subject', async () => {
    const { tokens } = await signInForTokens(idp.issuer, 'alice');
    const response = await fetch(`${idp.issuer}/me`, {
      headers: { Authorization: `Bearer ${tokens.access_token}`, Origin: APP_ORIGIN },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const userinfo = (await response.json()) as Record<string, unknown>;
    expect(userinfo).toEqual({
      sub: decodeJwt(tokens.id_token).sub,
      name: 'Alice Liddell',
      email: 'alice@example.com',
      email_verified: true,
      roles: ['member'],
    });
  });

  it('refuses userinfo for a forged or unknown access token', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    const [header, payload] = tokens.access_token.split('.');
    const response = await fetch(`${idp.issuer}/me`, {
      headers: { Authorization: `Bearer ${header}.${payload}.AAAA` },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_token' });
  });

  it('rotates the refresh token and refuses the old one', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    const refreshed = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const next = (await refreshed.json()) as Record<string, string>;
    expect(next.refresh_token).toEqual(expect.any(String));
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(decodeJwt(next.id_token!)).toMatchObject({ sub: 'alice', roles: ['member'] });
    expect(decodeJwt(next.access_token!)).toMatchObject({ sub: 'alice', aud: API });

    const reused = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('revokes a refresh token at the revocation endpoint', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    const revoked = await fetch(`${idp.issuer}/token/revocation`, {
      ...form({ client_id: CLIENT_ID, token: tokens.refresh_token, token_type_hint: 'refresh_token' }),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: APP_ORIGIN },
    });
    expect(revoked.status).toBe(200);
    expect(revoked.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const refresh = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refresh.status).toBe(400);
  });

  it('signs in again without a login page while the provider session lasts', async () => {
    const { jar } = await signIn(idp.issuer);
    const again = await navigate(jar, authorizationRequest(idp.issuer).url);
    expect(again.kind).toBe('app');
    if (again.kind === 'app') expect(again.url.searchParams.get('code')).toEqual(expect.any(String));
  });
});

describe('prompts', () => {
  it('prompt=none answers silently with a code while signed in, login_required otherwise', async () => {
    const { jar } = await signIn(idp.issuer);
    const silent = await navigate(jar, authorizationRequest(idp.issuer, { prompt: 'none' }).url);
    expect(silent.kind === 'app' && silent.url.searchParams.get('code')).toEqual(expect.any(String));

    const anonymous = await navigate(
      new CookieJar(),
      authorizationRequest(idp.issuer, { prompt: 'none' }).url,
    );
    expect(anonymous.kind === 'app' && anonymous.url.searchParams.get('error')).toBe('login_required');
  });

  it('prompt=consent needs no consent page for the first-party client', async () => {
    const jar = new CookieJar();
    const auth = authorizationRequest(idp.issuer, { prompt: 'consent' });
    const page = await navigate(jar, auth.url);
    if (page.kind !== 'page') throw new Error('expected the login page');
    const back = await navigate(
      jar,
      new URL(loginAction(await page.response.text()), idp.issuer),
      form({ username: 'alice', password: 'alice' }),
    );
    expect(back.kind).toBe('app');
    if (back.kind !== 'app') return;
    expect(back.url.searchParams.get('code')).toEqual(expect.any(String));
    expect(back.url.searchParams.get('state')).toBe(auth.state);
  });
});

describe('login page', () => {
  async function openLoginPage() {
    const jar = new CookieJar();
    const auth = authorizationRequest(idp.issuer);
    const page = await navigate(jar, auth.url);
    if (page.kind !== 'page') throw new Error('expected the login page');
    return { jar, auth, page, html: await page.response.text() };
  }

  it('is plain, labelled HTML with the demo accounts and no scripts', async () => {
    const { page, html } = await openLoginPage();
    expect(page.response.status).toBe(200);
    expect(page.url.pathname).toMatch(/^\/interaction\//);
    expect(page.response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toMatch(/<h1>Sign in<\/h1>/);
    expect(html).toContain('<label for="username">Username</label>');
    expect(html).toContain('<input id="username" name="username"');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toContain('<input id="password" name="password" type="password"');
    expect(html).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(html).toMatch(/<button[^>]*>Cancel<\/button>/);
    expect(html).toContain('<code>alice</code> / <code>alice</code> — member');
    expect(html).toContain('<code>admin</code> / <code>admin</code> — admin');
    expect(html).not.toMatch(/<script|\son\w+=|https?:\/\//i);
  });

  it('shows an error and keeps the username on a wrong password', async () => {
    const { jar, html } = await openLoginPage();
    const response = await request(
      jar,
      new URL(loginAction(html), idp.issuer),
      form({ username: 'alice', password: 'nope' }),
    );
    expect(response.status).toBe(200);
    const again = await response.text();
    expect(again).toContain(LOGIN_ERROR);
    expect(again).toContain('value="alice"');
  });

  it('escapes what it echoes', async () => {
    const { jar, html } = await openLoginPage();
    const response = await request(
      jar,
      new URL(loginAction(html), idp.issuer),
      form({ username: '"><b>x', password: 'x' }),
    );
    expect(await response.text()).toContain('value="&quot;&gt;&lt;b&gt;x"');
  });

  it('sends access_denied to the app on Cancel', async () => {
    const { jar, auth, html } = await openLoginPage();
    const abort = /action="(\/interaction\/[^"]+\/abort)"/.exec(html)?.[1];
    expect(abort).toBeDefined();
    const back = await navigate(jar, new URL(abort!, idp.issuer), { method: 'POST' });
    expect(back.kind).toBe('app');
    if (back.kind !== 'app') return;
    expect(back.url.pathname).toBe('/callback');
    expect(back.url.searchParams.get('error')).toBe('access_denied');
    expect(back.url.searchParams.get('state')).toBe(auth.state);
  });

  it('explains an expired or unknown interaction', async () => {
    const response = await fetch(`${idp.issuer}/interaction/unknown`);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/expired or is not valid/);
  });
});

describe('authorization request validation', () => {
  it('refuses a redirect_uri that is not registered, without redirecting to it', async () => {
    const { url } = authorizationRequest(idp.issuer, { redirect_uri: `${APP_ORIGIN}/elsewhere` });
    const response = await request(new CookieJar(), url);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('invalid_redirect_uri');
  });

  it('refuses a request without code_challenge', async () => {
    const { url, state } = authorizationRequest(idp.issuer, {
      code_challenge: undefined,
      code_challenge_method: undefined,
    });
    const back = await navigate(new CookieJar(), url);
    expect(back.kind).toBe('app');
    if (back.kind !== 'app') return;
    expect(back.url.searchParams.get('error')).toBe('invalid_request');
    expect(back.url.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(back.url.searchParams.get('state')).toBe(state);
  });

  it('refuses a wrong code_verifier at the token endpoint', async () => {
    const signedIn = await signIn(idp.issuer);
    const response = await tokenRequest(idp.issuer, {
      grant_type: 'authorization_code',
      code: signedIn.code,
      redirect_uri: REDIRECT_URI,
      code_verifier: 'x'.repeat(43),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('RP-initiated logout', () => {
  it('redirects straight back to the app with id_token_hint, and ends the tokens', async () => {
    const signedIn = await signIn(idp.issuer);
    const tokens = await exchangeCode(idp.issuer, signedIn);
    const logout = new URL(`${idp.issuer}/session/end`);
    logout.searchParams.set('id_token_hint', tokens.id_token);
    logout.searchParams.set('post_logout_redirect_uri', `${APP_ORIGIN}/`);
    logout.searchParams.set('state', 'bye');

    const response = await request(signedIn.jar, logout);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${APP_ORIGIN}/?state=bye`);

    const refresh = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refresh.status).toBe(400);
    const userinfo = await fetch(`${idp.issuer}/me`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(401);
    // The provider session is gone: the next authorization shows the login page again.
    const next = await navigate(signedIn.jar, authorizationRequest(idp.issuer).url);
    expect(next.kind).toBe('page');
  });

  it('asks with a single Sign out button when the request does not prove who sent it', async () => {
    const { jar } = await signIn(idp.issuer);
    const response = await request(jar, `${idp.issuer}/session/end`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toMatch(
      /<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out<\/button>/,
    );
    expect(html).not.toMatch(/<script/i);
  });
});

describe('the content security policy of every page', () => {
  /** The policy's directives by name; throws on anything an attacker could use. */
  function strictPolicy(response: Response): Map<string, string[]> {
    const header = response.headers.get('content-security-policy');
    expect(header).not.toBeNull();
    const directives = new Map(
      (header ?? '').split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('form-action')).toEqual(["'self'", APP_ORIGIN]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('img-src')).toContain('data:');
    for (const [, values] of directives) {
      expect(values).not.toContain('*');
      expect(values.join(' ')).not.toMatch(/unsafe-|https?:\/\/\*|^\*|\s\*/);
    }
    return directives;
  }

  it('holds on the login page, after a failed sign-in, and on an expired interaction', async () => {
    const jar = new CookieJar();
    const page = await navigate(jar, authorizationRequest(idp.issuer).url);
    if (page.kind !== 'page') throw new Error('expected the login page');
    strictPolicy(page.response);
    const html = await page.response.text();
    // An icon the policy allows, so the browser neither fetches /favicon.ico nor logs a refusal.
    expect(html).toContain('<link rel="icon" href="data:,">');
    const failed = await request(
      jar,
      new URL(loginAction(html), idp.issuer),
      form({ username: 'alice', password: 'nope' }),
    );
    expect(failed.status).toBe(200);
    strictPolicy(failed);
    strictPolicy(await fetch(`${idp.issuer}/interaction/unknown`));
  });

  it('holds on the sign-out pages, with or without a provider session', async () => {
    const { jar } = await signIn(idp.issuer);
    const confirm = await request(jar, `${idp.issuer}/session/end`);
    expect(confirm.status).toBe(200);
    expect(strictPolicy(confirm).get('script-src')).toEqual(["'self'"]);
    // Without a session, oidc-provider renders a form that submits itself: its one script, by hash only.
    const noSession = await request(new CookieJar(), `${idp.issuer}/session/end`);
    const html = await noSession.text();
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    const hash = createHash('sha256').update(script).digest('base64');
    expect(strictPolicy(noSession).get('script-src')).toEqual(["'self'", `'sha256-${hash}'`]);
    strictPolicy(await fetch(`${idp.issuer}/session/end/success`));
  });

  it('answers the icon a browser asks for anyway with nothing, not an error', async () => {
    const icon = await fetch(`${idp.issuer}/favicon.ico`);
    expect(icon.status).toBe(204);
    strictPolicy(icon);
  });
});

describe('test controls when disabled', () => {
  it('does not exist', async () => {
    expect((await fetch(`${idp.issuer}/__test/misbehave`)).status).toBe(404);
    const post = await fetch(`${idp.issuer}/__test/misbehave`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: 'wrong-issuer' }),
    });
    expect(post.status).toBe(404);
  });
});
