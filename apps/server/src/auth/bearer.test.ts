import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { exportPKCS8, generateKeyPair, importPKCS8, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAccessToken } from './bearer.js';
import {
  createTokenVerifier,
  InvalidTokenError,
  type ApiUser,
  type TokenVerifier,
} from './token-verifier.js';
import { createDpopVerifier, DpopNonces } from './dpop.js';
import type { IntrospectionClient } from './opaque-token.js';
import { makeDpopKey, makeDpopProof, type DpopKey } from '../test-support/dpop-proof.js';
import { startLoopbackProvider } from '../test-support/loopback-provider.js';
import { accessTokenAlgorithms, ProviderMetadataCache } from './provider-metadata.js';

// A real provider stand-in on loopback: discovery and JWKS over HTTP, keys made here.
let closeProvider: () => Promise<void>;
let api: Server;
let issuer: string;
let apiUrl: string;
let key: CryptoKey;
let otherKey: CryptoKey;
/** The API's JWT verifier against the loopback provider (made once the provider is up). */
let verify: TokenVerifier;
const AUDIENCE = 'https://gatehouse.test/api';

beforeAll(async () => {
  const provider = await startLoopbackProvider();
  ({ issuer, key } = provider);
  closeProvider = provider.close;
  ({ privateKey: otherKey } = await generateKeyPair('RS256'));

  verify = createTokenVerifier({
    issuer,
    audience: AUDIENCE,
    rolesClaim: 'roles',
    metadata: new ProviderMetadataCache(issuer),
  });
  const app = express();
  app.get('/me', requireAccessToken(verify), (_req, res) => res.json(res.locals.user));
  app.get('/admin', requireAccessToken(verify, { access: 'admin' }), (_req, res) => res.json({ ok: true }));
  api = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => api.once('listening', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeProvider();
  await new Promise((resolve) => api.close(resolve));
});

async function token(
  claims: Record<string, unknown> = {},
  options: { signWith?: CryptoKey; expiresIn?: string | number } = {},
) {
  return new SignJWT({ iss: issuer, aud: AUDIENCE, sub: 'alice', roles: ['member'], ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '5m')
    .sign(options.signWith ?? key);
}

async function call(path: string, authorization?: string) {
  const response = await fetch(`${apiUrl}${path}`, { headers: authorization ? { authorization } : {} });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('requireAccessToken', () => {
  it('accepts a valid token and hands the handler who called', async () => {
    const result = await call('/me', `Bearer ${await token({ name: 'Alice' })}`);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ sub: 'alice', name: 'Alice', roles: ['member'], issuer });
  });

  it('challenges a request without a token (RFC 6750 3.1: no error code)', async () => {
    const result = await call('/me');
    expect(result.status).toBe(401);
    expect(result.challenge).toBe('Bearer realm="gatehouse"');
  });

  it.each([
    ['a malformed header', () => Promise.resolve('Basic abc')],
    ['a token that is not a JWT', () => Promise.resolve('Bearer abc.def')],
    [
      'an expired token',
      async () => `Bearer ${await token({}, { expiresIn: Math.floor(Date.now() / 1000) - 10 })}`,
    ],
    ['a token for another audience', async () => `Bearer ${await token({ aud: 'someone-else' })}`],
    ['a token from another issuer', async () => `Bearer ${await token({ iss: 'https://evil.example' })}`],
    ['a token signed by another key', async () => `Bearer ${await token({}, { signWith: otherKey })}`],
  ])('refuses %s with invalid_token', async (_what, header) => {
    const result = await call('/me', await header());
    expect(result.status).toBe(401);
    expect(result.challenge).toMatch(
      /^Bearer realm="gatehouse", error="invalid_token", error_description="[^"]+"$/,
    );
    expect(result.body.error).toBe('invalid_token');
  });

  it('says which check failed', async () => {
    const expired = await call(
      '/me',
      `Bearer ${await token({}, { expiresIn: Math.floor(Date.now() / 1000) - 10 })}`,
    );
    expect(expired.challenge).toContain('expired');
    const audience = await call('/me', `Bearer ${await token({ aud: 'someone-else' })}`);
    expect(audience.challenge).toContain('another audience');
  });

  it('refuses an ID token that passes every other check (aud, iss, signature, exp)', async () => {
    const idToken = await new SignJWT({ iss: issuer, aud: AUDIENCE, sub: 'alice', nonce: 'n', at_hash: 'h' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'JWT' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);
    const result = await call('/me', `Bearer ${idToken}`);
    expect(result.status).toBe(401);
    expect(result.challenge).toContain('is an ID token');
    expect(result.body.message).toContain('not an access token');
  });

  it('names the audience it got and the one it wanted, in the challenge and the message', async () => {
    const result = await call('/me', `Bearer ${await token({ aud: ['openid', 'email"x'] })}`);
    expect(result.challenge).toContain(`it is for 'openid email?x', this API accepts '${AUDIENCE}'`);
    expect(result.body.message).toContain(`it is for 'openid email?x', this API accepts '${AUDIENCE}'`);
  });

  it('answers 403 when the role is missing, and lets the role in', async () => {
    expect((await call('/admin', `Bearer ${await token()}`)).status).toBe(403);
    expect((await call('/admin', `Bearer ${await token({ roles: ['admin'] })}`)).status).toBe(200);
  });
});

describe('the signing algorithm of a JWT access token', () => {
  it("is one the provider's discovery lists, and never none or HS*", async () => {
    // A key published without `alg` serves every RSA algorithm: only the list decides.
    const provider = await startLoopbackProvider(
      {},
      { keyAlg: null, discovery: { id_token_signing_alg_values_supported: ['RS256', 'HS256', 'none'] } },
    );
    try {
      const check = createTokenVerifier({
        issuer: provider.issuer,
        audience: AUDIENCE,
        rolesClaim: 'roles',
        metadata: new ProviderMetadataCache(provider.issuer),
      });
      const signed = (alg: string, signWith: CryptoKey | Uint8Array) =>
        new SignJWT({ iss: provider.issuer, aud: AUDIENCE, sub: 'alice' })
          .setProtectedHeader({ alg, kid: 'k1', typ: 'at+jwt' })
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(signWith);
      expect((await check(await signed('RS256', provider.key))).sub).toBe('alice');
      // The provider's own key, with an algorithm its discovery does not list.
      const sameKeyForPss = await importPKCS8(await exportPKCS8(provider.key), 'PS256');
      await expect(check(await signed('PS256', sameKeyForPss))).rejects.toThrow(
        "signed with an algorithm the provider's discovery does not list",
      );
      await expect(check(await signed('HS256', new Uint8Array(32)))).rejects.toThrow(InvalidTokenError);
    } finally {
      await provider.close();
    }
  });

  it('is RS256 when discovery lists no asymmetric algorithm; lists keep only asymmetric ones', () => {
    expect(accessTokenAlgorithms({})).toEqual(['RS256']);
    expect(accessTokenAlgorithms({ id_token_signing_alg_values_supported: ['HS256', 'none'] })).toEqual([
      'RS256',
    ]);
    expect(
      accessTokenAlgorithms({
        id_token_signing_alg_values_supported: ['RS256', 'HS512', 'ES256'],
        access_token_signing_alg_values_supported: ['PS256', 'RS256'],
      }),
    ).toEqual(['RS256', 'ES256', 'PS256']);
  });
});

describe('opaque access tokens', () => {
  const asked = { userinfo: 0, introspect: 0 };
  const people: Record<string, Record<string, unknown>> = {
    'opaque-bob': { sub: 'bob', name: 'Bob', email: 'bob@example.com', roles: ['admin'] },
    'opaque-carol': { sub: 'carol' },
    'jwt-alice': { sub: 'alice', name: 'Alice', email: 'alice@example.com' },
  };
  const introspected: Record<string, Record<string, unknown>> = {
    'opaque-bob': { active: true, sub: 'bob', scope: 'openid', token_type: 'Bearer', roles: ['admin'] },
    'opaque-carol': { active: true, scope: 'openid', username: 'carol' },
    'opaque-other-audience': { active: true, sub: 'bob', aud: ['https://elsewhere.example'] },
    'opaque-refresh': { active: true, sub: 'bob', token_type: 'refresh_token' },
    'opaque-dpop': { active: true, sub: 'bob', token_type: 'DPoP', cnf: { jkt: 'the-key-thumbprint' } },
    'opaque-expired': { active: true, sub: 'bob', exp: Math.floor(Date.now() / 1000) - 5 },
  };
  const CLIENT: IntrospectionClient = { client_id: 'gatehouse-api', client_secret: 's3cret:+/' };
  let provider: Awaited<ReturnType<typeof startLoopbackProvider>>;
  let verifiers: Record<string, TokenVerifier>;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    provider = await startLoopbackProvider({
      '/userinfo': (request) => {
        asked.userinfo += 1;
        const person = people[request.headers.authorization?.replace('Bearer ', '') ?? ''];
        return person ? { status: 200, json: person } : { status: 401, json: { error: 'invalid_token' } };
      },
      '/introspect': (request, body) => {
        asked.introspect += 1;
        // RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64.
        const expected = `Basic ${Buffer.from('gatehouse-api:s3cret%3A%2B%2F').toString('base64')}`;
        if (request.headers.authorization !== expected) return { status: 401, json: {} };
        const form = new URLSearchParams(body);
        if (form.get('token_type_hint') !== 'access_token') return { status: 400, json: {} };
        return { status: 200, json: introspected[form.get('token') ?? ''] ?? { active: false } };
      },
    });
    const metadata = () => new ProviderMetadataCache(provider.issuer);
    const common = { issuer: provider.issuer, audience: AUDIENCE, rolesClaim: 'roles' };
    verifiers = {
      userinfo: createTokenVerifier({ ...common, metadata: metadata() }),
      introspection: createTokenVerifier({ ...common, metadata: metadata(), introspectionClient: CLIENT }),
      'wrong-secret': createTokenVerifier({
        ...common,
        metadata: metadata(),
        introspectionClient: { ...CLIENT, client_secret: 'nope' },
      }),
    };
    const app = express();
    for (const [name, verify] of Object.entries(verifiers)) {
      app.get(`/${name}/me`, requireAccessToken(verify), async (_req, res) => {
        res.json(await verify.withProfile(res.locals.user as ApiUser, res.locals.accessToken as string));
      });
      app.get(`/${name}/admin`, requireAccessToken(verify, { access: 'admin' }), (_req, res) =>
        res.json({ ok: true }),
      );
    }
    app.use(((error: { status?: number; message: string }, _req, res, _next) => {
      res.status(error.status ?? 500).json({ message: error.message });
    }) satisfies ErrorRequestHandler);
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await provider.close();
    await new Promise((resolve) => server.close(resolve));
  });

  async function ask(path: string, token: string) {
    const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body: (await response.json()) as Record<string, unknown>,
    };
  }

  it("through userinfo: the provider's answer is the user, and it is asked once per token", async () => {
    const before = asked.userinfo;
    const first = await ask('/userinfo/me', 'opaque-bob');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      sub: 'bob',
      name: 'Bob',
      email: 'bob@example.com',
      roles: ['admin'],
      verifiedBy: 'userinfo',
      expiresAt: null,
    });
    expect((await ask('/userinfo/admin', 'opaque-bob')).status).toBe(200);
    expect(asked.userinfo).toBe(before + 1);
  });

  it('through userinfo: a token the provider refuses is invalid_token', async () => {
    const result = await ask('/userinfo/me', 'opaque-forged');
    expect(result.status).toBe(401);
    expect(result.challenge).toContain('error="invalid_token"');
    expect(result.body.message).toBe('The provider does not accept this access token.');
  });

  it('through introspection: an active access token is the user, asked once per token', async () => {
    const before = { ...asked };
    const first = await ask('/introspection/admin', 'opaque-bob');
    expect(first.status).toBe(200);
    const me = await ask('/introspection/me', 'opaque-bob');
    expect(me.body).toMatchObject({ sub: 'bob', roles: ['admin'], verifiedBy: 'introspection' });
    // The name and email came from userinfo, as the introspection answer had neither.
    expect(me.body).toMatchObject({ name: 'Bob', email: 'bob@example.com' });
    expect(asked.introspect).toBe(before.introspect + 1);
  });

  it('through introspection: a DPoP-bound token is an access token bound to its cnf.jkt (RFC 9449 6.2)', async () => {
    await expect(verifiers.introspection?.('opaque-dpop')).resolves.toMatchObject({
      sub: 'bob',
      jkt: 'the-key-thumbprint',
    });
    // So presented as a bearer token, it is refused: only the key's holder may use it.
    const asBearer = await ask('/introspection/me', 'opaque-dpop');
    expect(asBearer.status).toBe(401);
    expect(asBearer.body.message).toContain('DPoP-bound');
  });

  it('through introspection: without sub in the answer, userinfo names the user', async () => {
    const result = await ask('/introspection/me', 'opaque-carol');
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ sub: 'carol', verifiedBy: 'introspection' });
  });

  it.each([
    ['an inactive token', 'opaque-unknown', 'The access token is not active'],
    ['a refresh token', 'opaque-refresh', 'The token is a refresh_token token, not an access token'],
    ['an expired token', 'opaque-expired', 'The access token expired'],
    [
      'a token for another audience',
      'opaque-other-audience',
      `it is for 'https://elsewhere.example', this API accepts '${AUDIENCE}'`,
    ],
  ])('through introspection: refuses %s', async (_what, token, reason) => {
    const result = await ask('/introspection/me', token);
    expect(result.status).toBe(401);
    expect(result.challenge).toContain(reason);
  });

  it('through introspection: refused credentials are a server fault (503), not the caller', async () => {
    const result = await ask('/wrong-secret/me', 'opaque-bob');
    expect(result.status).toBe(503);
    expect(result.body.message).toContain('introspection endpoint answered 401');
  });

  it('fills a missing name and email of a JWT from userinfo, only for the same subject', async () => {
    const jwt = await token(
      { iss: provider.issuer, sub: 'alice', scope: 'openid' },
      { signWith: provider.key },
    );
    people[jwt] = people['jwt-alice']!;
    const filled = await ask('/userinfo/me', jwt);
    expect(filled.body).toMatchObject({
      sub: 'alice',
      name: 'Alice',
      email: 'alice@example.com',
      verifiedBy: 'jwt',
    });

    const other = await token(
      { iss: provider.issuer, sub: 'mallory', scope: 'openid' },
      { signWith: provider.key },
    );
    people[other] = people['jwt-alice']!;
    const kept = await ask('/userinfo/me', other);
    expect(kept.body).toMatchObject({ sub: 'mallory', name: null, email: null });
  });
});

describe('DPoP-bound tokens (RFC 9449 section 7)', () => {
  let dpopApi: Server;
  let origin: string;
  let browserKey: DpopKey;
  let attackerKey: DpopKey;

  beforeAll(async () => {
    [browserKey, attackerKey] = await Promise.all([makeDpopKey(), makeDpopKey()]);
    // The JWT verifier of the tests above, behind DPoP policies of its own.
    const app = express();
    dpopApi = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => dpopApi.once('listening', resolve));
    origin = `http://127.0.0.1:${(dpopApi.address() as AddressInfo).port}`;
    const policy = (required: boolean, nonces?: DpopNonces) => ({
      verify: createDpopVerifier({ nonces }),
      required,
      publicOrigin: origin,
      nonces,
    });
    const reply = (_req: unknown, res: express.Response) => res.json(res.locals.user);
    app.get('/allowed', requireAccessToken(verify, { dpop: policy(false) }), reply);
    app.get('/required', requireAccessToken(verify, { dpop: policy(true) }), reply);
    app.get('/nonces', requireAccessToken(verify, { dpop: policy(false, new DpopNonces(undefined)) }), reply);
  });

  afterAll(() => new Promise((resolve) => dpopApi.close(resolve)));

  const boundToken = (key = browserKey) => token({ scope: 'openid', cnf: { jkt: key.jkt } });

  async function send(path: string, scheme: string, accessToken: string, proof?: string) {
    const headers: Record<string, string> = { authorization: `${scheme} ${accessToken}` };
    if (proof) headers.dpop = proof;
    const response = await fetch(`${origin}${path}`, { headers });
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate') ?? '',
      nonce: response.headers.get('dpop-nonce'),
      body: (await response.json()) as Record<string, unknown>,
    };
  }
  const proofFor = (path: string, accessToken: string, key = browserKey, nonce?: string) =>
    makeDpopProof(key, { method: 'GET', url: `${origin}${path}`, accessToken, ...(nonce ? { nonce } : {}) });

  it('takes a bound token with a proof made for this request by its key', async () => {
    const accessToken = await boundToken();
    const result = await send('/allowed', 'DPoP', accessToken, await proofFor('/allowed', accessToken));
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ sub: 'alice', jkt: browserKey.jkt });
  });

  it('refuses a bound token sent as a bearer token: what a stolen token looks like', async () => {
    const result = await send('/allowed', 'Bearer', await boundToken());
    expect(result.status).toBe(401);
    expect(result.challenge).toMatch(/DPoP realm="gatehouse", algs="ES256[^"]*", error="invalid_token"/);
    expect(result.body.error).toBe('invalid_token');
  });

  it("refuses a stolen token with the thief's own key, and without any proof", async () => {
    const accessToken = await boundToken();
    const thief = await send(
      '/allowed',
      'DPoP',
      accessToken,
      await proofFor('/allowed', accessToken, attackerKey),
    );
    expect(thief.status).toBe(401);
    expect(thief.challenge).toContain('error="invalid_dpop_proof"');
    const bare = await send('/allowed', 'DPoP', accessToken);
    expect(bare.challenge).toMatch(
      /error="invalid_dpop_proof", error_description="The DPoP proof header is missing"/,
    );
  });

  it('refuses a proof made for another URL than the one the request names', async () => {
    const accessToken = await boundToken();
    const result = await send('/allowed', 'DPoP', accessToken, await proofFor('/required', accessToken));
    expect(result.challenge).toContain('another URL');
  });

  it('refuses an unbound token under the DPoP scheme', async () => {
    const accessToken = await token({ scope: 'openid' });
    const result = await send('/allowed', 'DPoP', accessToken, await proofFor('/allowed', accessToken));
    expect(result.challenge).toContain('is not DPoP-bound');
  });

  it('still takes bearer tokens from providers without DPoP, and offers both schemes', async () => {
    const ok = await send('/allowed', 'Bearer', await token({ scope: 'openid' }));
    expect(ok.status).toBe(200);
    const challenge = await fetch(`${origin}/allowed`);
    expect(challenge.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="gatehouse", DPoP realm="gatehouse", algs="ES256/,
    );
  });

  it('when DPoP is required, refuses bearer tokens and offers only the DPoP scheme', async () => {
    const result = await send('/required', 'Bearer', await token({ scope: 'openid' }));
    expect(result.status).toBe(401);
    expect(result.challenge).toMatch(/^DPoP realm="gatehouse", algs="[^"]+", error="invalid_token"/);
    expect(result.challenge).not.toContain('Bearer');
  });

  it('asks for its nonce with use_dpop_nonce, then takes a proof that carries it', async () => {
    const accessToken = await boundToken();
    const first = await send('/nonces', 'DPoP', accessToken, await proofFor('/nonces', accessToken));
    expect(first.status).toBe(401);
    expect(first.challenge).toContain('error="use_dpop_nonce"');
    expect(first.nonce).toMatch(/^[\w-]{20,}$/);
    const nonce = first.nonce as string;
    const second = await send(
      '/nonces',
      'DPoP',
      accessToken,
      await proofFor('/nonces', accessToken, browserKey, nonce),
    );
    expect(second.status).toBe(200);
    expect(second.nonce).toBe(nonce);
  });
});

describe('refusals, counted by reason', () => {
  let countingApi: Server;
  let origin: string;
  let browserKey: DpopKey;
  const counted: string[] = [];

  beforeAll(async () => {
    browserKey = await makeDpopKey();
    const app = express();
    countingApi = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => countingApi.once('listening', resolve));
    origin = `http://127.0.0.1:${(countingApi.address() as AddressInfo).port}`;
    const refusals = { count: (reason: string) => counted.push(reason) };
    const policy = (nonces?: DpopNonces) => ({
      verify: createDpopVerifier({ nonces }),
      required: false,
      publicOrigin: origin,
      nonces,
    });
    const reply = (_req: unknown, res: express.Response) => res.json({ ok: true });
    app.get('/me', requireAccessToken(verify, { dpop: policy(), refusals }), reply);
    app.get('/admin', requireAccessToken(verify, { access: 'admin', dpop: policy(), refusals }), reply);
    app.get(
      '/nonces',
      requireAccessToken(verify, { dpop: policy(new DpopNonces(undefined)), refusals }),
      reply,
    );
  });

  afterAll(() => new Promise((resolve) => countingApi.close(resolve)));

  async function refusalOf(path: string, headers: Record<string, string> = {}): Promise<string | undefined> {
    const before = counted.length;
    const response = await fetch(`${origin}${path}`, { headers });
    expect(response.status === 200 ? 0 : 1).toBe(counted.length - before);
    return counted.at(-1);
  }
  const proof = (path: string, accessToken: string) =>
    makeDpopProof(browserKey, { method: 'GET', url: `${origin}${path}`, accessToken });

  it.each([
    ['no token', 'missing', () => Promise.resolve({})],
    ['a header that is no token', 'malformed', () => Promise.resolve({ authorization: 'Basic abc' })],
    [
      'an expired token',
      'expired',
      async () => ({
        authorization: `Bearer ${await token({}, { expiresIn: Math.floor(Date.now() / 1000) - 10 })}`,
      }),
    ],
    [
      'a token for another audience',
      'wrong_audience',
      async () => ({ authorization: `Bearer ${await token({ aud: 'x' })}` }),
    ],
    [
      'a token from another issuer',
      'wrong_issuer',
      async () => ({ authorization: `Bearer ${await token({ iss: 'https://evil.example' })}` }),
    ],
    [
      'a bad signature',
      'bad_signature',
      async () => ({ authorization: `Bearer ${await token({}, { signWith: otherKey })}` }),
    ],
    [
      'a bound token as a bearer token',
      'wrong_scheme',
      async () => ({ authorization: `Bearer ${await token({ cnf: { jkt: browserKey.jkt } })}` }),
    ],
    [
      'a bound token without a proof',
      'dpop_invalid',
      async () => ({ authorization: `DPoP ${await token({ cnf: { jkt: browserKey.jkt } })}` }),
    ],
  ])('counts %s as %s', async (_what, reason, headers) => {
    expect(await refusalOf('/me', await headers())).toBe(reason);
  });

  it('counts a replayed proof, a proof without the nonce and a missing role, and nothing for a success', async () => {
    const accessToken = await token({ cnf: { jkt: browserKey.jkt }, roles: ['member'] });
    const once = await proof('/me', accessToken);
    const headers = { authorization: `DPoP ${accessToken}`, dpop: once };
    expect(await refusalOf('/me', headers)).not.toBe('dpop_replay');
    expect(await refusalOf('/me', headers)).toBe('dpop_replay');
    expect(
      await refusalOf('/nonces', {
        authorization: `DPoP ${accessToken}`,
        dpop: await proof('/nonces', accessToken),
      }),
    ).toBe('nonce_needed');
    expect(
      await refusalOf('/admin', {
        authorization: `DPoP ${accessToken}`,
        dpop: await proof('/admin', accessToken),
      }),
    ).toBe('insufficient_role');
  });
});
