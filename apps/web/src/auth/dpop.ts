import { base64url, calculateJwkThumbprint, exportJWK, SignJWT } from 'jose';
import { DPoPState, type IndexedDbDPoPStore, type OidcClientSettings } from 'oidc-client-ts';

/** oidc-client-ts's DPoP settings (its type is not exported by name). */
type DPoPSettings = NonNullable<OidcClientSettings['dpop']>;

/**
 * RFC 9449 (DPoP) in the browser: one P-256 key pair per browser and client, its private half made
 * non-extractable by WebCrypto, kept by oidc-client-ts's IndexedDB store under the client id, so every tab
 * signs with the same key. oidc-client-ts signs the proofs of the token requests with it; this module signs
 * those of the API and userinfo calls, which oidc-client-ts does not make (its issue #2182).
 */

/**
 * The store's shape: oidc-client-ts's (IndexedDbDPoPStore's), whose `get` and `remove` answer undefined
 * for a key they do not hold; the browser's is dpop-store.ts, unit tests use one in memory.
 */
export type DpopStore = Pick<IndexedDbDPoPStore, 'get' | 'set' | 'remove' | 'getAllKeys'>;

/** RFC 9449 5.1: the provider offers DPoP when its metadata lists the algorithms; we sign with ES256. */
export function dpopOffered(metadata: object): boolean {
  const algorithms = (metadata as { dpop_signing_alg_values_supported?: unknown })
    .dpop_signing_alg_values_supported;
  return Array.isArray(algorithms) && algorithms.includes('ES256');
}

export interface ProofRequest {
  /** Absolute URL; query and fragment are left out of `htu` (RFC 9449 4.2). */
  url: string;
  method: string;
  /** The token sent with the request: its hash goes into `ath`. */
  accessToken?: string | undefined;
  nonce?: string | undefined;
}

export class DpopKey {
  private pending: Promise<CryptoKeyPair> | undefined;

  constructor(
    private readonly store: DpopStore,
    private readonly clientId: string,
  ) {}

  /** oidc-client-ts's `dpop` settings: it then sends proofs with the code exchange and every refresh. */
  settings(): DPoPSettings {
    return { bind_authorization_code: true, store: this.store };
  }

  /** RFC 7638 thumbprint of the public key, made now if there is none: the `dpop_jkt` of RFC 9449 10. */
  async thumbprint(): Promise<string> {
    const { publicKey } = await this.keys();
    return calculateJwkThumbprint(await exportJWK(publicKey), 'sha256');
  }

  /** A proof for one request (RFC 9449 4.2): `jti`, `htm`, `htu`, `iat`, and `ath` and `nonce` when given. */
  async proof(request: ProofRequest): Promise<string> {
    const { privateKey, publicKey } = await this.keys();
    const target = new URL(request.url);
    const claims: Record<string, unknown> = {
      jti: crypto.randomUUID(),
      htm: request.method.toUpperCase(),
      htu: `${target.origin}${target.pathname}`,
      iat: Math.floor(Date.now() / 1000),
    };
    if (request.accessToken !== undefined) claims.ath = await accessTokenHash(request.accessToken);
    if (request.nonce !== undefined) claims.nonce = request.nonce;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
      .sign(privateKey);
  }

  /** Opens the store ahead of the first proof (a read whose answer is not needed; it never fails). */
  warm(): void {
    this.store.getAllKeys().catch(() => undefined);
  }

  /** Sign-out: the key goes, so nothing bound to it can be used from this browser again. */
  async remove(): Promise<void> {
    await this.store.remove(this.clientId);
  }

  /**
   * The key pair, read or made. Callers at the same time share one read (and one new key): two keys made
   * at once would leave the store holding one and a caller naming the other.
   */
  private keys(): Promise<CryptoKeyPair> {
    this.pending ??= this.readOrMake().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async readOrMake(): Promise<CryptoKeyPair> {
    // One read: the store answers undefined for a key it does not hold (dpop-store.ts).
    const kept = (await this.store.get(this.clientId)) as DPoPState | undefined;
    if (kept) return kept.keys;
    // Non-extractable: script in the page can sign with it while the page lives, never copy it away.
    const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
      'sign',
      'verify',
    ]);
    await this.store.set(this.clientId, new DPoPState(keys));
    return keys;
  }
}

/** RFC 9449 4.2: base64url of the SHA-256 of the token's ASCII text. */
async function accessTokenHash(token: string): Promise<string> {
  return base64url.encode(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token))),
  );
}
