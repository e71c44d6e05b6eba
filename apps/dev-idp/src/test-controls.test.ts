import { get } from 'node:http';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { TEST_CONTROL_SCOPE_AGENT, TEST_CONTROL_SECRET_HEADER, startDevIdp } from './index.js';
import type { DevIdp, MisbehaviourSettings } from './index.js';
import {
  APP_ORIGIN,
  CLIENT_ID,
  CookieJar,
  authorizationRequest,
  exchangeCode,
  form,
  navigate,
  request,
  signIn,
  signInForTokens,
  tokenRequest,
} from './test-support/oidc-flow.js';

let idp: DevIdp;
let secret: string;
const startLines: string[] = [];

beforeAll(async () => {
  idp = await startDevIdp({
    port: 0,
    appOrigin: APP_ORIGIN,
    testControls: true,
    log: (line) => startLines.push(line),
  });
  secret = idp.testControlsSecret ?? '';
});

/** GET of the control endpoint, with the secret unless told otherwise. */
function readControls(headers: Record<string, string> = { [TEST_CONTROL_SECRET_HEADER]: secret }) {
  return fetch(`${idp.issuer}/__test/misbehave`, { headers });
}

afterAll(async () => {
  await idp.close();
});

afterEach(async () => {
  await misbehave({ mode: null });
});

async function misbehave(settings: MisbehaviourSettings | Record<string, unknown>): Promise<Response> {
  return fetch(`${idp.issuer}/__test/misbehave`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', [TEST_CONTROL_SECRET_HEADER]: secret },
    body: JSON.stringify(settings),
  });
}

async function fetchJwks(): Promise<JSONWebKeySet> {
  return (await (await fetch(`${idp.issuer}/jwks`)).json()) as JSONWebKeySet;
}

/** What verifyIdToken resolves to for an ID token of this provider, issued to the test client. */
const verified = { payload: { aud: CLIENT_ID } };

async function verifyIdToken(idToken: string) {
  // The checks an OpenID Connect client makes on an ID token (OIDC Core 3.1.3.7), nonce aside.
  return jwtVerify(idToken, createLocalJWKSet(await fetchJwks()), {
    issuer: idp.issuer,
    audience: CLIENT_ID,
    requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
  });
}

describe('control endpoint', () => {
  it('reports and changes the settings', async () => {
    const initial = await readControls();
    expect(await initial.json()).toEqual({ mode: null, accessTokenTtlSeconds: 300 });

    expect((await misbehave({ mode: 'wrong-nonce', accessTokenTtlSeconds: 70 })).status).toBe(204);
    const changed = await readControls();
    expect(await changed.json()).toEqual({ mode: 'wrong-nonce', accessTokenTtlSeconds: 70 });
  });

  it('refuses unknown modes and malformed bodies', async () => {
    const unknown = await misbehave({ mode: 'be-evil' });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_request' });
    expect((await misbehave({ mode: 'authorize-error:' })).status).toBe(400);
    expect((await misbehave({ mode: null, accessTokenTtlSeconds: -1 })).status).toBe(400);
    // Each bad key named, as the API's and the environment's refusals name theirs.
    const extra = await misbehave({ mode: null, colour: 'red' });
    expect(await extra.json()).toMatchObject({
      error_description: 'colour is not a setting of the test controls.',
    });
    const broken = await fetch(`${idp.issuer}/__test/misbehave`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', [TEST_CONTROL_SECRET_HEADER]: secret },
      body: '{',
    });
    expect(broken.status).toBe(400);
  });

  it('generates a secret per start, prints it once, and refuses anyone without it', async () => {
    expect(secret.length).toBeGreaterThanOrEqual(16);
    expect(startLines.filter((line) => line.includes(secret))).toHaveLength(1);
    const other = await startDevIdp({ port: 0, appOrigin: APP_ORIGIN, testControls: true, log: () => {} });
    await other.close();
    expect(other.testControlsSecret).not.toBe(secret);

    expect((await readControls({})).status).toBe(403);
    expect((await readControls({ [TEST_CONTROL_SECRET_HEADER]: `${secret}x` })).status).toBe(403);
    // What a page on another origin can send without a preflight: a text/plain POST, no custom header.
    const simple = await fetch(`${idp.issuer}/__test/misbehave`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', Origin: 'https://evil.example' },
      body: JSON.stringify({ mode: 'wrong-issuer' }),
    });
    expect(simple.status).toBe(403);
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
    expect(await (await readControls()).json()).toMatchObject({ mode: null });
  });

  it('keeps the settings of each scope to the requests that carry its token in their User-Agent', async () => {
    const inScope = (scope: string) => ({ 'User-Agent': `Mozilla/5.0 ${TEST_CONTROL_SCOPE_AGENT}/${scope}` });
    const discoveredIssuer = async (headers: Record<string, string> = {}) => {
      const answer = await fetch(`${idp.issuer}/.well-known/openid-configuration`, { headers });
      return ((await answer.json()) as { issuer: string }).issuer;
    };
    const lifetime = async (headers: Record<string, string> = {}) =>
      (await exchangeCode(idp.issuer, await signIn(idp.issuer), headers)).expires_in;

    expect((await misbehave({ scope: 'one', mode: 'discovery-issuer-mismatch' })).status).toBe(204);
    expect((await misbehave({ scope: 'two', mode: null, accessTokenTtlSeconds: 70 })).status).toBe(204);

    expect(await discoveredIssuer(inScope('one'))).toBe(`${idp.issuer}/other`);
    expect(await discoveredIssuer(inScope('two'))).toBe(idp.issuer);
    expect(await discoveredIssuer()).toBe(idp.issuer);
    expect(await lifetime(inScope('two'))).toBe(70);
    expect(await lifetime(inScope('one'))).toBe(300);
    expect(await lifetime()).toBe(300);
    const read = async (scope: string) =>
      (
        await fetch(`${idp.issuer}/__test/misbehave?scope=${scope}`, {
          headers: { [TEST_CONTROL_SECRET_HEADER]: secret },
        })
      ).json();
    expect(await read('two')).toEqual({ mode: null, accessTokenTtlSeconds: 70 });
    expect(await (await readControls()).json()).toEqual({ mode: null, accessTokenTtlSeconds: 300 });

    // Back to the defaults, a scope is forgotten.
    await misbehave({ scope: 'one', mode: null });
    expect(await discoveredIssuer(inScope('one'))).toBe(idp.issuer);
    await misbehave({ scope: 'two', mode: null });
    expect(await read('two')).toEqual({ mode: null, accessTokenTtlSeconds: 300 });
    expect((await misbehave({ scope: 'not a token', mode: null })).status).toBe(400);
  });

  it("gives a worker's token, revocation and UserInfo requests (no scope in their User-Agent) the scope of the sign-in they continue", async () => {
    const page = { 'User-Agent': `Mozilla/5.0 ${TEST_CONTROL_SCOPE_AGENT}/worker` };
    await misbehave({ scope: 'worker', mode: 'revocation-refuses-public', accessTokenTtlSeconds: 70 });
    // The authorization request is the page's navigation; the token request, the vault's, names no scope.
    const signedIn = await signIn(idp.issuer, 'alice', 'alice', {}, new CookieJar(page));
    const tokens = await exchangeCode(idp.issuer, signedIn);
    expect(tokens.expires_in).toBe(70);
    const renewed = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(((await renewed.json()) as { expires_in: number }).expires_in).toBe(70);
    const revoked = await fetch(`${idp.issuer}/token/revocation`, {
      ...form({ client_id: CLIENT_ID, token: tokens.access_token }),
    });
    expect(revoked.status).toBe(401);
    await misbehave({ scope: 'worker', mode: 'userinfo-sub-mismatch' });
    const userinfo = await fetch(`${idp.issuer}/me`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(((await userinfo.json()) as { sub: string }).sub).toBe('alice-other');
    // Another browser's sign-in, on connections of its own, is not touched.
    await misbehave({ scope: 'worker', mode: null });
    expect((await signInForTokens(idp.issuer)).tokens.expires_in).toBe(300);
  });

  it('takes only application/json, even with the secret', async () => {
    const plain = await fetch(`${idp.issuer}/__test/misbehave`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', [TEST_CONTROL_SECRET_HEADER]: secret },
      body: JSON.stringify({ mode: 'wrong-issuer' }),
    });
    expect(plain.status).toBe(415);
    expect(await (await readControls()).json()).toMatchObject({ mode: null });
  });

  it('uses the secret it was given, and prints no secret then', async () => {
    const lines: string[] = [];
    const given = 'a-secret-the-test-runner-chose';
    const other = await startDevIdp({
      port: 0,
      appOrigin: APP_ORIGIN,
      testControls: true,
      testControlsSecret: given,
      log: (line) => lines.push(line),
    });
    try {
      const answer = await fetch(`${other.issuer}/__test/misbehave`, {
        headers: { [TEST_CONTROL_SECRET_HEADER]: given },
      });
      expect(answer.status).toBe(200);
      expect(lines.join('\n')).not.toContain(given);
    } finally {
      await other.close();
    }
  });
});

describe('ID token modes', () => {
  it('behaves by default: the ID token verifies', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    await expect(verifyIdToken(tokens.id_token)).resolves.toMatchObject(verified);
  });

  it.each([
    [
      'wrong-issuer',
      (claims: Record<string, unknown>) => expect(claims.iss).toBe('https://wrong-issuer.example'),
    ],
    ['wrong-audience', (claims: Record<string, unknown>) => expect(claims.aud).toBe('someone-else')],
    ['missing-sub', (claims: Record<string, unknown>) => expect(claims).not.toHaveProperty('sub')],
    ['missing-iat', (claims: Record<string, unknown>) => expect(claims).not.toHaveProperty('iat')],
    [
      'expired',
      (claims: Record<string, unknown>) => {
        const now = Date.now() / 1000;
        expect(claims.exp).toBeLessThan(now - 600);
        expect(claims.iat).toBeLessThan(claims.exp as number);
      },
    ],
  ] as const)('%s: rewrites the claim and signs with the real key', async (mode, check) => {
    await misbehave({ mode });
    const { tokens } = await signInForTokens(idp.issuer);
    const claims = decodeJwt(tokens.id_token);
    check(claims);
    // Properly signed: only the claim checks can catch it.
    expect(decodeProtectedHeader(tokens.id_token).kid).toBe((await fetchJwks()).keys[0]!.kid);
    await expect(verifyIdToken(tokens.id_token)).rejects.toThrow();
    // Everything else stays real.
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'alice', aud: `${APP_ORIGIN}/api` });
  });

  it('wrong-nonce: the nonce differs from the one sent', async () => {
    await misbehave({ mode: 'wrong-nonce' });
    const { signedIn, tokens } = await signInForTokens(idp.issuer);
    const { payload } = await verifyIdToken(tokens.id_token);
    expect(payload.nonce).toEqual(expect.any(String));
    expect(payload.nonce).not.toBe(signedIn.request.nonce);
  });

  it('bad-signature: same kid as the published key, signature does not verify', async () => {
    await misbehave({ mode: 'bad-signature' });
    const { tokens } = await signInForTokens(idp.issuer);
    const jwks = await fetchJwks();
    expect(jwks.keys).toHaveLength(1);
    expect(decodeProtectedHeader(tokens.id_token).kid).toBe(jwks.keys[0]!.kid);
    await expect(verifyIdToken(tokens.id_token)).rejects.toBeInstanceOf(
      errors.JWSSignatureVerificationFailed,
    );
  });

  it('rotated-key: new kid, published only on the first JWKS request after the token was issued', async () => {
    await misbehave({ mode: 'rotated-key' });
    const before = await fetchJwks();
    expect(before.keys).toHaveLength(1);

    const signedIn = await signIn(idp.issuer);
    // Nothing signed with the new key yet, so the JWKS does not know it.
    expect((await fetchJwks()).keys).toHaveLength(1);
    const tokens = await exchangeCode(idp.issuer, signedIn);

    const kid = decodeProtectedHeader(tokens.id_token).kid;
    expect(kid).toEqual(expect.any(String));
    expect(kid).not.toBe(before.keys[0]!.kid);
    // A client holding the old JWKS fails on the unknown kid ...
    await expect(
      jwtVerify(tokens.id_token, createLocalJWKSet(before), { issuer: idp.issuer, audience: CLIENT_ID }),
    ).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey);
    // ... and succeeds after fetching it once more.
    const after = await fetchJwks();
    expect(after.keys.map((key) => key.kid)).toEqual([before.keys[0]!.kid, kid]);
    await expect(verifyIdToken(tokens.id_token)).resolves.toMatchObject(verified);
  });

  it("rotated-key: a scope's new key is published too on a connection that presented nothing (a vault's JWKS request beside its token request), not on another scope's", async () => {
    const page = { 'User-Agent': `Mozilla/5.0 ${TEST_CONTROL_SCOPE_AGENT}/rotating` };
    await misbehave({ scope: 'rotating', mode: 'rotated-key' });
    const signedIn = await signIn(idp.issuer, 'alice', 'alice', {}, new CookieJar(page));
    const tokens = await exchangeCode(idp.issuer, signedIn);
    const kid = decodeProtectedHeader(tokens.id_token).kid;
    /** The JWKS's kids, on a new connection, with `headers`. */
    const kids = (headers: Record<string, string> = {}) =>
      new Promise<string[]>((resolve, reject) => {
        get(`${idp.issuer}/jwks`, { agent: false, headers }, (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve((JSON.parse(text) as JSONWebKeySet).keys.map((key) => key.kid!)));
        }).on('error', reject);
      });
    expect(await kids()).toContain(kid);
    expect(await kids(page)).toContain(kid);
    await misbehave({ scope: 'other', mode: 'no-kid' });
    expect(await kids({ 'User-Agent': `Mozilla/5.0 ${TEST_CONTROL_SCOPE_AGENT}/other` })).toHaveLength(1);
    // Forgotten with its scope.
    await misbehave({ scope: 'rotating', mode: null });
    await misbehave({ scope: 'other', mode: null });
    expect(await kids()).toHaveLength(1);
  });

  it('no-kid: real key, no kid header, verifies against the one-key JWKS', async () => {
    await misbehave({ mode: 'no-kid' });
    const { tokens } = await signInForTokens(idp.issuer);
    expect(decodeProtectedHeader(tokens.id_token)).not.toHaveProperty('kid');
    await expect(verifyIdToken(tokens.id_token)).resolves.toMatchObject(verified);
  });

  it('also rewrites the ID token of refresh responses', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    await misbehave({ mode: 'wrong-audience' });
    const refreshed = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    const body = (await refreshed.json()) as Record<string, string>;
    expect(decodeJwt(body.id_token!).aud).toBe('someone-else');
  });
});

describe('other modes', () => {
  it('userinfo-sub-mismatch: userinfo answers another sub', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    await misbehave({ mode: 'userinfo-sub-mismatch' });
    const response = await fetch(`${idp.issuer}/me`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    const userinfo = (await response.json()) as Record<string, unknown>;
    expect(userinfo.sub).not.toBe(decodeJwt(tokens.id_token).sub);
    expect(userinfo.name).toBe('Alice Liddell');
  });

  it('discovery-issuer-mismatch: the discovery document names another issuer', async () => {
    await misbehave({ mode: 'discovery-issuer-mismatch' });
    const doc = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(doc.issuer).toBe(`${idp.issuer}/other`);
    expect(doc.token_endpoint).toBe(`${idp.issuer}/token`);
  });

  it.each(['login_required', 'access_denied'])(
    'authorize-error:%s: redirects to the app with the error',
    async (code) => {
      await misbehave({ mode: `authorize-error:${code}` });
      const auth = authorizationRequest(idp.issuer);
      const back = await navigate(new CookieJar(), auth.url);
      expect(back.kind).toBe('app');
      if (back.kind !== 'app') return;
      expect(back.url.origin + back.url.pathname).toBe(`${APP_ORIGIN}/callback`);
      expect(back.url.searchParams.get('error')).toBe(code);
      expect(back.url.searchParams.get('error_description')).toEqual(expect.any(String));
      expect(back.url.searchParams.get('state')).toBe(auth.state);
    },
  );

  it('authorize-error never redirects to an unregistered redirect_uri', async () => {
    await misbehave({ mode: 'authorize-error:login_required' });
    const { url } = authorizationRequest(idp.issuer, { redirect_uri: 'https://attacker.example/cb' });
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
  });

  it('refresh-fails: refresh grants get invalid_grant (with CORS), code exchange still works', async () => {
    await misbehave({ mode: 'refresh-fails' });
    const { tokens } = await signInForTokens(idp.issuer);
    const refused = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' });

    // The provider never saw it, so the same refresh token works once the mode is off.
    await misbehave({ mode: null });
    const accepted = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(accepted.status).toBe(200);
  });

  it('accessTokenTtlSeconds: tokens issued afterwards live that long', async () => {
    await misbehave({ mode: null, accessTokenTtlSeconds: 70 });
    const { tokens } = await signInForTokens(idp.issuer);
    expect(tokens.expires_in).toBe(70);
    const access = decodeJwt(tokens.access_token);
    const id = decodeJwt(tokens.id_token);
    expect(access.exp! - access.iat!).toBe(70);
    expect(id.exp! - id.iat!).toBe(70);

    await misbehave({ mode: null });
    expect((await signInForTokens(idp.issuer)).tokens.expires_in).toBe(300);
  });

  it('no-offline-access: discovery does not list it, a request for it gets invalid_scope, refresh tokens still come', async () => {
    await misbehave({ mode: 'no-offline-access' });
    const doc = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as {
      scopes_supported: string[];
    };
    expect(doc.scopes_supported).toContain('openid');
    expect(doc.scopes_supported).not.toContain('offline_access');

    const refused = await navigate(new CookieJar(), authorizationRequest(idp.issuer).url);
    expect(refused.kind === 'app' && refused.url.searchParams.get('error')).toBe('invalid_scope');

    const { tokens } = await signInForTokens(idp.issuer, 'alice', { scope: 'openid profile email' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('no-end-session: discovery names no end-session endpoint', async () => {
    await misbehave({ mode: 'no-end-session' });
    const doc = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(doc).not.toHaveProperty('end_session_endpoint');
    expect(doc.token_endpoint).toBe(`${idp.issuer}/token`);
  });

  it('logout-needs-state: without state the provider keeps the user on its own page', async () => {
    await misbehave({ mode: 'logout-needs-state' });
    const endSession = async (state?: string) => {
      const signedIn = await signIn(idp.issuer);
      const tokens = await exchangeCode(idp.issuer, signedIn);
      const logout = new URL(`${idp.issuer}/session/end`);
      logout.searchParams.set('id_token_hint', tokens.id_token);
      logout.searchParams.set('post_logout_redirect_uri', `${APP_ORIGIN}/`);
      if (state) logout.searchParams.set('state', state);
      return request(signedIn.jar, logout);
    };
    const withoutState = await endSession();
    expect(withoutState.status).toBe(200);
    expect(withoutState.headers.get('location')).toBeNull();
    const withState = await endSession('bye');
    expect(withState.status).toBe(303);
    expect(withState.headers.get('location')).toBe(`${APP_ORIGIN}/?state=bye`);
  });

  it('revocation-refuses-public: the revocation endpoint wants client authentication', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    const revoke = () =>
      fetch(`${idp.issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: APP_ORIGIN },
        body: new URLSearchParams({ token: tokens.refresh_token, client_id: CLIENT_ID }),
      });
    await misbehave({ mode: 'revocation-refuses-public' });
    const refused = await revoke();
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
    await misbehave({ mode: null });
    expect((await revoke()).status).toBe(200);
  });
});
