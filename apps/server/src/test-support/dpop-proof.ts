import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { accessTokenHash } from '../auth/dpop.js';

/** A DPoP key as a browser holds it: the private half signs, the public half travels in each proof. */
export interface DpopKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** RFC 7638 thumbprint: what a bound token's `cnf.jkt` names. */
  jkt: string;
}

export async function makeDpopKey(): Promise<DpopKey> {
  const pair = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  return { privateKey: pair.privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256') };
}

let counter = 0;

/** An RFC 9449 proof for one request, with any claim or header overridden (undefined removes it). */
export function makeDpopProof(
  key: DpopKey,
  request: { method: string; url: string; accessToken?: string; nonce?: string },
  overrides: {
    claims?: Record<string, unknown>;
    header?: Record<string, unknown>;
    signWith?: CryptoKey;
  } = {},
): Promise<string> {
  return new SignJWT({
    jti: `proof-${process.pid}-${++counter}-${Math.random()}`,
    htm: request.method,
    htu: request.url,
    iat: Math.floor(Date.now() / 1000),
    ...(request.accessToken === undefined ? {} : { ath: accessTokenHash(request.accessToken) }),
    ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
    ...overrides.claims,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk, ...overrides.header })
    .sign(overrides.signWith ?? key.privateKey);
}
