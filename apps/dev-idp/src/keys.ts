import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  /** Private JWK (with kid, alg, use) in the shape oidc-provider's `jwks` option expects. */
  readonly privateJwk: JWK;
  /** Public JWK (with kid, alg, use) as a JWKS endpoint would publish it. */
  readonly publicJwk: JWK;
}

/**
 * A fresh RS256 key pair. Keys live only in memory, so every start invalidates tokens from the previous run,
 * which is what a development provider should do. The kid is the RFC 7638 thumbprint unless one is given.
 */
export async function generateSigningKey(kid?: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const publicParts = await exportJWK(publicKey);
  const keyId = kid ?? (await calculateJwkThumbprint(publicParts));
  const meta = { kid: keyId, alg: 'RS256', use: 'sig' };
  return {
    kid: keyId,
    privateKey,
    publicKey,
    privateJwk: { ...(await exportJWK(privateKey)), ...meta },
    publicJwk: { ...publicParts, ...meta },
  };
}
