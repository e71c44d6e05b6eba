// @vitest-environment node
import {
  base64url,
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  jwtVerify,
  type JWK,
} from 'jose';
import type { DPoPState } from 'oidc-client-ts';
import { describe, expect, it } from 'vitest';
import { dpopOffered, DpopKey } from './dpop';
import { memoryDpopStore as memoryStore } from './dpop-store';

const sha256 = async (text: string) =>
  base64url.encode(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));

describe('DpopKey', () => {
  it('signs RFC 9449 proofs with the key its thumbprint names', async () => {
    const key = new DpopKey(memoryStore(), 'gatehouse');
    const proof = await key.proof({
      url: 'https://app.example/api/me?x=1#y',
      method: 'get',
      accessToken: 'the.access.token',
      nonce: 'n-1',
    });
    const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt' });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({
      htm: 'GET',
      htu: 'https://app.example/api/me',
      ath: await sha256('the.access.token'),
      nonce: 'n-1',
    });
    expect(Math.abs((payload.iat as number) - Date.now() / 1000)).toBeLessThan(5);
    expect(await calculateJwkThumbprint(protectedHeader.jwk as JWK, 'sha256')).toBe(await key.thumbprint());
  });

  it('makes a new jti every time and leaves out ath and nonce when not given', async () => {
    const key = new DpopKey(memoryStore(), 'gatehouse');
    const request = { url: 'https://idp.example/token', method: 'POST' };
    const [one, two] = await Promise.all([key.proof(request), key.proof(request)]);
    const claims = async (proof: string) => (await jwtVerify(proof, EmbeddedJWK)).payload;
    const [first, second] = await Promise.all([claims(one), claims(two)]);
    expect(first.jti).not.toBe(second.jti);
    expect(first).not.toHaveProperty('ath');
    expect(first).not.toHaveProperty('nonce');
  });

  it('keeps the private key non-extractable and the public JWK free of private members', async () => {
    const store = memoryStore();
    const key = new DpopKey(store, 'gatehouse');
    const proof = await key.proof({ url: 'https://app.example/api/me', method: 'GET' });
    const { keys } = store.entries.get('gatehouse') as DPoPState;
    expect(keys.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', keys.privateKey)).rejects.toThrow();
    expect(decodeProtectedHeader(proof).jwk).not.toHaveProperty('d');
  });

  it('is one key for every tab that shares the store, and gone after remove()', async () => {
    const store = memoryStore();
    const tabOne = new DpopKey(store, 'gatehouse');
    const tabTwo = new DpopKey(store, 'gatehouse');
    const thumbprint = await tabOne.thumbprint();
    expect(await tabTwo.thumbprint()).toBe(thumbprint);
    await tabTwo.remove();
    expect(store.entries.size).toBe(0);
    expect(await tabOne.thumbprint()).not.toBe(thumbprint);
  });

  it('makes one key for callers that ask at once, and names it to each', async () => {
    const store = memoryStore();
    const key = new DpopKey(store, 'gatehouse');
    const [one, two] = await Promise.all([key.thumbprint(), key.thumbprint()]);
    expect(two).toBe(one);
    expect(await new DpopKey(store, 'gatehouse').thumbprint()).toBe(one);
  });

  it('hands oidc-client-ts the same store, with the code bound to the key', () => {
    const store = memoryStore();
    expect(new DpopKey(store, 'gatehouse').settings()).toEqual({ bind_authorization_code: true, store });
  });
});

describe('dpopOffered (RFC 9449 5.1)', () => {
  it.each([
    [{ dpop_signing_alg_values_supported: ['ES256', 'EdDSA'] }, true],
    [{ dpop_signing_alg_values_supported: ['EdDSA'] }, false],
    [{ dpop_signing_alg_values_supported: 'ES256' }, false],
    [{}, false],
  ])('%j: %s', (metadata, offered) => {
    expect(dpopOffered(metadata)).toBe(offered);
  });
});
