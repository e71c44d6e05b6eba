// @vitest-environment node
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { JwksCache, validateIdToken } from './id-token';

const ISSUER = 'https://idp.example.com';
const CLIENT = 'gatehouse';
let key: CryptoKey;
let publicJwk: JWK;
let rotatedKey: CryptoKey;
let rotatedJwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  key = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' };
  const next = await generateKeyPair('RS256');
  rotatedKey = next.privateKey;
  rotatedJwk = { ...(await exportJWK(next.publicKey)), kid: 'k2', alg: 'RS256' };
});

/** A JWKS endpoint stand-in that serves successive documents and counts the fetches. */
function jwksServing(...documents: JWK[][]) {
  let fetches = 0;
  const cache = new JwksCache(
    () => Promise.resolve('https://idp.example.com/jwks'),
    () => Promise.resolve(Response.json({ keys: documents[Math.min(fetches++, documents.length - 1)] })),
  );
  return { cache, fetches: () => fetches };
}

function idToken(
  claims: Record<string, unknown> = {},
  options: { signWith?: CryptoKey; kid?: string | null; omit?: string[] } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = {
    iss: ISSUER,
    aud: CLIENT,
    sub: 'alice',
    iat: now,
    exp: now + 300,
    nonce: 'n-1',
    ...claims,
  };
  for (const claim of options.omit ?? []) delete payload[claim];
  const header = options.kid === null ? { alg: 'RS256' } : { alg: 'RS256', kid: options.kid ?? 'k1' };
  return new SignJWT(payload).setProtectedHeader(header).sign(options.signWith ?? key);
}

const expected = { issuer: ISSUER, clientId: CLIENT, nonce: 'n-1' };

describe('validateIdToken', () => {
  it('accepts a well-formed token and returns its claims', async () => {
    const { cache } = jwksServing([publicJwk]);
    const claims = await validateIdToken(await idToken({ name: 'Alice' }), cache, expected);
    expect(claims).toMatchObject({ sub: 'alice', name: 'Alice' });
  });

  it.each([
    ['another issuer', { iss: 'https://evil.example.com' }, {}, /issued by another issuer/],
    ['another audience', { aud: 'someone-else' }, {}, /issued for another client/],
    ['several audiences without azp', { aud: [CLIENT, 'other'] }, {}, /another party \(azp\)/],
    ['another nonce', { nonce: 'n-2' }, {}, /nonce does not match/],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 3600 }, {}, /has expired/],
    ['no sub', {}, { omit: ['sub'] }, /sub claim is missing/],
    ['no iat', {}, { omit: ['iat'] }, /iat claim is missing/],
  ])('rejects %s', async (_what, claims, options, message) => {
    const { cache } = jwksServing([publicJwk]);
    await expect(validateIdToken(await idToken(claims, options), cache, expected)).rejects.toThrow(message);
  });

  it('rejects a signature from a key the provider does not hold', async () => {
    const { cache } = jwksServing([publicJwk]);
    const forged = await idToken({}, { signWith: rotatedKey, kid: 'k1' });
    await expect(validateIdToken(forged, cache, expected)).rejects.toMatchObject({
      code: 'id_token_invalid',
      message: expect.stringMatching(/signature does not verify/) as unknown as string,
    });
  });

  it('fetches the JWKS again, at once, for an unknown key id (rotation just after a prefetch)', async () => {
    const { cache, fetches } = jwksServing([publicJwk], [publicJwk, rotatedJwk]);
    await cache.prefetch();
    expect(fetches()).toBe(1);
    await validateIdToken(await idToken({}, { signWith: rotatedKey, kid: 'k2' }), cache, expected);
    expect(fetches()).toBe(2);
  });

  it('gives up after one refetch when the key is still unknown', async () => {
    const { cache, fetches } = jwksServing([publicJwk]);
    const unknown = await idToken({}, { signWith: rotatedKey, kid: 'k9' });
    await expect(validateIdToken(unknown, cache, expected)).rejects.toThrow(
      /key the provider does not publish/,
    );
    expect(fetches()).toBe(2);
  });

  it('prefetches the keys once, so the token check that follows fetches nothing', async () => {
    const { cache, fetches } = jwksServing([publicJwk]);
    await cache.prefetch();
    await cache.prefetch();
    await validateIdToken(await idToken(), cache, expected);
    expect(fetches()).toBe(1);
  });

  it("says the provider's keys could not be fetched when the JWKS endpoint fails", async () => {
    const cache = new JwksCache(
      () => Promise.resolve('https://idp.example.com/jwks'),
      () => Promise.resolve(new Response('down', { status: 503 })),
    );
    await expect(validateIdToken(await idToken(), cache, expected)).rejects.toThrow(
      /signing keys could not be fetched/,
    );
  });

  it('uses the only key when the token has no kid', async () => {
    const { cache } = jwksServing([publicJwk]);
    await expect(validateIdToken(await idToken({}, { kid: null }), cache, expected)).resolves.toMatchObject({
      sub: 'alice',
    });
  });

  it('checks that a refreshed token is for the same subject', async () => {
    const { cache } = jwksServing([publicJwk]);
    const token = await idToken({ sub: 'mallory' }, { omit: ['nonce'] });
    await expect(
      validateIdToken(token, cache, { issuer: ISSUER, clientId: CLIENT, subject: 'alice' }),
    ).rejects.toThrow(/another user/);
  });
});
