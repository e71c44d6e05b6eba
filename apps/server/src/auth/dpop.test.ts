import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createDpopVerifier,
  DpopNonceError,
  DpopNonces,
  DpopProofError,
  DpopReplayCacheFullError,
  DpopTooManyProofsError,
  sameTarget,
  type DpopRequest,
} from './dpop.js';
import { makeDpopKey, makeDpopProof, type DpopKey } from '../test-support/dpop-proof.js';

const URL_ = 'https://app.example/api/me';
const TOKEN = 'eyJ.access.token';
const NOW = 1_800_000_000;

let key: DpopKey;
let otherKey: DpopKey;

beforeAll(async () => {
  [key, otherKey] = await Promise.all([makeDpopKey(), makeDpopKey()]);
});

/** A proof as a browser makes it for this test's request, with any part overridden. */
const proof = (
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
  signWith?: CryptoKey,
): Promise<string> =>
  makeDpopProof(
    key,
    { method: 'GET', url: URL_, accessToken: TOKEN },
    { claims: { iat: NOW, ...claims }, header, ...(signWith ? { signWith } : {}) },
  );

const request = async (overrides: Partial<DpopRequest> = {}): Promise<DpopRequest> => ({
  proof: await proof(),
  method: 'GET',
  url: URL_,
  accessToken: TOKEN,
  boundKey: key.jkt,
  ...overrides,
});

const verifier = (options: Parameters<typeof createDpopVerifier>[0] = {}) =>
  createDpopVerifier({ now: () => NOW, ...options });

async function refusal(promise: Promise<void>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DpopProofError);
  return (error as Error).message;
}

describe('a DPoP proof (RFC 9449 section 4.3)', () => {
  it('holds when it is made for this request, token and key', async () => {
    await expect(verifier()(await request())).resolves.toBeUndefined();
  });

  it('is refused when more than one is sent', async () => {
    const one = await proof();
    expect(await refusal(verifier()(await request({ proof: `${one}, ${one}` })))).toMatch(/more than one/i);
  });

  it('is refused when it is not a signed JWT', async () => {
    expect(await refusal(verifier()(await request({ proof: 'not.a.jwt' })))).toMatch(/invalid/i);
  });

  it('is refused without typ dpop+jwt', async () => {
    const wrongType = await proof({}, { typ: 'JWT' });
    expect(await refusal(verifier()(await request({ proof: wrongType })))).toMatch(/typ/);
  });

  it('is refused with a symmetric algorithm', async () => {
    const secret = new TextEncoder().encode('a-shared-secret-of-enough-length!');
    const hs256 = await new SignJWT({ jti: 'x', htm: 'GET', htu: URL_, iat: NOW })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.publicJwk })
      .sign(secret);
    expect(await refusal(verifier()(await request({ proof: hs256 })))).toMatch(/alg/i);
  });

  it('is refused when the signature is not made by the embedded key', async () => {
    const forged = await proof({}, {}, otherKey.privateKey);
    expect(await refusal(verifier()(await request({ proof: forged })))).toMatch(/signature/i);
  });

  it('is refused when the embedded key is a private key', async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = await exportJWK(pair.privateKey);
    const leaky = await proof({}, { jwk: privateJwk }, pair.privateKey);
    expect(await refusal(verifier()(await request({ proof: leaky })))).toMatch(/public key/i);
  });

  it('is refused without a jti', async () => {
    const noJti = await proof({ jti: undefined });
    expect(await refusal(verifier()(await request({ proof: noJti })))).toMatch(/jti/);
    const emptyJti = await proof({ jti: '' });
    expect(await refusal(verifier()(await request({ proof: emptyJti })))).toMatch(/jti/);
  });

  it('is refused for another HTTP method (htm)', async () => {
    const post = await proof({ htm: 'POST' });
    expect(await refusal(verifier()(await request({ proof: post })))).toMatch(/method/);
  });

  it('is refused for another URL (htu), and matched without query or fragment', async () => {
    const other = await proof({ htu: 'https://app.example/api/usage' });
    expect(await refusal(verifier()(await request({ proof: other })))).toMatch(/URL/);
    const otherOrigin = await proof({ htu: 'https://evil.example/api/me' });
    expect(await refusal(verifier()(await request({ proof: otherOrigin })))).toMatch(/URL/);
    const withQuery = await request({ url: `${URL_}?range=7d#x` });
    await expect(verifier()(withQuery)).resolves.toBeUndefined();
  });

  it('is refused when too old or from the future (iat)', async () => {
    const old = await proof({ iat: NOW - 301 });
    expect(await refusal(verifier()(await request({ proof: old })))).toMatch(/iat/);
    const future = await proof({ iat: NOW + 6 });
    expect(await refusal(verifier()(await request({ proof: future })))).toMatch(/iat/);
    const missing = await proof({ iat: undefined });
    expect(await refusal(verifier()(await request({ proof: missing })))).toMatch(/iat/);
    const edge = await proof({ iat: NOW - 300 });
    await expect(verifier()(await request({ proof: edge }))).resolves.toBeUndefined();
  });

  it('is refused for another access token (ath)', async () => {
    const stolen = await request({ accessToken: 'another.access.token' });
    expect(await refusal(verifier()(stolen))).toMatch(/ath/);
    const noAth = await proof({ ath: undefined });
    expect(await refusal(verifier()(await request({ proof: noAth })))).toMatch(/ath/);
  });

  it('is refused when signed with a key the token is not bound to (cnf.jkt)', async () => {
    const attackerProof = await proof({}, { jwk: otherKey.publicJwk }, otherKey.privateKey);
    expect(await refusal(verifier()(await request({ proof: attackerProof })))).toMatch(/not bound/);
  });

  it('is refused the second time it is presented (jti replay)', async () => {
    const verify = verifier();
    const once = await request();
    await verify(once);
    expect(await refusal(verify(once))).toMatch(/already used/);
  });

  it('is not remembered when refused, so a refused proof does not fill the table', async () => {
    const verify = verifier({ maxRememberedProofs: 1 });
    await refusal(verify(await request({ accessToken: 'other' })));
    await expect(verify(await request())).resolves.toBeUndefined();
  });

  it('refuses new proofs rather than forgetting live ones when the table is full', async () => {
    let now = NOW;
    const verify = createDpopVerifier({ now: () => now, maxRememberedProofs: 2 });
    await verify(await request());
    await verify(await request());
    await expect(verify(await request())).rejects.toBeInstanceOf(DpopReplayCacheFullError);
    // Once the window has passed, the old entries go and new proofs are taken again.
    now = NOW + 306;
    await expect(verify(await request({ proof: await proof({ iat: now }) }))).resolves.toBeUndefined();
  });
});

describe('one key cannot use up the replay table', () => {
  const otherRequest = async (): Promise<DpopRequest> => ({
    proof: await makeDpopProof(
      otherKey,
      { method: 'GET', url: URL_, accessToken: TOKEN },
      { claims: { iat: NOW } },
    ),
    method: 'GET',
    url: URL_,
    accessToken: TOKEN,
    boundKey: otherKey.jkt,
  });

  it("refuses a flooding key's proofs past its share (429), while another key's calls keep succeeding", async () => {
    const verify = verifier({ maxRememberedProofs: 20, maxProofsPerKey: 5 });
    const outcomes: string[] = [];
    for (let i = 0; i < 30; i++) {
      outcomes.push(
        await verify(await request()).then(
          () => 'ok',
          (error: unknown) => (error as Error).name,
        ),
      );
    }
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(5);
    expect(new Set(outcomes.slice(5))).toEqual(new Set(['DpopTooManyProofsError']));
    const refused = await verify(await request()).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DpopTooManyProofsError);
    // Its oldest proof (iat NOW) is forgotten 305 s later.
    expect((refused as DpopTooManyProofsError).retryAfterSeconds).toBe(305);
    for (let i = 0; i < 5; i++) await expect(verify(await otherRequest())).resolves.toBeUndefined();
  });

  it('forgets every expired proof, even behind one dated ahead at the front', async () => {
    let now = NOW;
    const verify = createDpopVerifier({ now: () => now, maxRememberedProofs: 3 });
    // First in: a proof dated 5 s ahead (allowed clock skew), so it expires last.
    await verify(await request({ proof: await proof({ iat: NOW + 5 }) }));
    await verify(await request());
    await verify(await request());
    // 306 s on: the two behind it have expired, the first has not.
    now = NOW + 306;
    await expect(verify(await request({ proof: await proof({ iat: now }) }))).resolves.toBeUndefined();
    await expect(verify(await request({ proof: await proof({ iat: now }) }))).resolves.toBeUndefined();
  });
});

describe('server nonces (RFC 9449 section 9)', () => {
  it('asks for a nonce when the proof has none, then takes the one it gave', async () => {
    const nonces = new DpopNonces('secret', 60);
    const verify = verifier({ nonces });
    const error = await verify(await request()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DpopNonceError);
    const { nonce } = error as DpopNonceError;
    await expect(verify(await request({ proof: await proof({ nonce }) }))).resolves.toBeUndefined();
  });

  it('refuses a made-up nonce and one two slots old', async () => {
    const nonces = new DpopNonces('secret', 60);
    const verify = verifier({ nonces });
    const madeUp = await proof({ nonce: 'made-up' });
    await expect(verify(await request({ proof: madeUp }))).rejects.toBeInstanceOf(DpopNonceError);
    const stale = await proof({ nonce: nonces.current(NOW - 120) });
    await expect(verify(await request({ proof: stale }))).rejects.toThrow(/stale/);
    const previousSlot = await proof({ nonce: nonces.current(NOW - 60) });
    await expect(verify(await request({ proof: previousSlot }))).resolves.toBeUndefined();
  });

  it('agrees between instances that share the secret, not otherwise', () => {
    const nonce = new DpopNonces('shared').current(NOW);
    expect(new DpopNonces('shared').accepts(nonce, NOW)).toBe(true);
    expect(new DpopNonces('another').accepts(nonce, NOW)).toBe(false);
    expect(new DpopNonces(undefined).accepts(nonce, NOW)).toBe(false);
  });
});

describe('sameTarget (htu, RFC 3986 6.2.2 normalisation)', () => {
  it.each([
    ['HTTPS://App.Example:443/api/me', 'https://app.example/api/me', true],
    ['https://app.example/api/./me', 'https://app.example/api/me', true],
    ['https://app.example/api/me', 'https://app.example/api/me?x=1', true],
    ['http://app.example/api/me', 'https://app.example/api/me', false],
    ['https://app.example:8443/api/me', 'https://app.example/api/me', false],
    ['https://app.example/api/me/', 'https://app.example/api/me', false],
    ['not a url', 'https://app.example/api/me', false],
  ])('%s against %s: %s', (htu, url, same) => {
    expect(sameTarget(htu, url)).toBe(same);
  });
});
