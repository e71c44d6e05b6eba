import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { AuthError } from './auth-error';

/**
 * Caches the provider's JWKS and fetches it again once when a token names a key it does not hold
 * (key rotation). A token without `kid` verifies against the only matching key.
 */
export class JwksCache {
  private keys: Promise<JSONWebKeySet> | undefined;

  constructor(
    private readonly jwksUri: () => Promise<string>,
    private readonly fetchJson: (url: string) => Promise<unknown> = defaultFetchJson,
  ) {}

  private load(force: boolean): Promise<JSONWebKeySet> {
    if (force || !this.keys) {
      this.keys = this.jwksUri()
        .then((uri) => this.fetchJson(uri))
        .then((body) => {
          if (!body || typeof body !== 'object' || !Array.isArray((body as JSONWebKeySet).keys)) {
            throw new TypeError('The JWKS document has no keys array.');
          }
          return body as JSONWebKeySet;
        });
      this.keys.catch(() => (this.keys = undefined));
    }
    return this.keys;
  }

  async verify(token: string, options: Parameters<typeof jwtVerify>[2]) {
    const attempt = async (force: boolean) =>
      jwtVerify(token, createLocalJWKSet(await this.load(force)), options);
    try {
      return await attempt(false);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) return attempt(true);
      throw error;
    }
  }
}

async function defaultFetchJson(url: string): Promise<unknown> {
  const response = await fetch(url, { credentials: 'omit' });
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
  return response.json();
}

export interface IdTokenExpectations {
  issuer: string;
  clientId: string;
  /** The nonce sent in the authentication request; absent for tokens from a refresh. */
  nonce?: string;
  /** For a refreshed token: the subject of the session it renews (OpenID Connect Core 12.2). */
  subject?: string;
  algorithms?: string[];
}

/**
 * Validates an ID token as OpenID Connect Core 3.1.3.7 asks: signature against the provider's keys,
 * `iss`, `aud` (and `azp` when there are several audiences), `exp`, `iat`, `sub`, `nonce`.
 */
export async function validateIdToken(
  idToken: string,
  jwks: JwksCache,
  expected: IdTokenExpectations,
): Promise<JWTPayload & { sub: string }> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwks.verify(idToken, {
      issuer: expected.issuer,
      audience: expected.clientId,
      requiredClaims: ['sub', 'iat', 'exp'],
      algorithms: expected.algorithms ?? ['RS256', 'PS256', 'ES256', 'RS384', 'RS512', 'ES384', 'EdDSA'],
      clockTolerance: 60,
    }));
  } catch (cause) {
    throw new AuthError(
      'id_token_invalid',
      `The identity provider's ID token was rejected: ${reason(cause)}.`,
      {
        cause,
      },
    );
  }
  const invalid = (why: string) =>
    new AuthError('id_token_invalid', `The identity provider's ID token was rejected: ${why}.`);
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== expected.clientId) {
    throw invalid('it was issued to another party (azp)');
  }
  if (expected.nonce !== undefined && payload.nonce !== expected.nonce) {
    throw invalid('its nonce does not match this sign-in');
  }
  if (expected.subject !== undefined && payload.sub !== expected.subject) {
    throw invalid('it is for another user than this session');
  }
  return payload as JWTPayload & { sub: string };
}

function reason(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'it has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'iss':
        return 'it was issued by another issuer';
      case 'aud':
        return 'it was issued for another client';
      case 'sub':
      case 'iat':
      case 'exp':
        return `its ${error.claim} claim is missing or invalid`;
      default:
        return `its ${error.claim} claim is invalid`;
    }
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (error instanceof errors.JWKSNoMatchingKey)
    return 'it is signed with a key the provider does not publish';
  if (error instanceof errors.JWKSMultipleMatchingKeys)
    return 'it names no key and the provider publishes several';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'it uses a signing algorithm that is not allowed';
  if (error instanceof errors.JOSEError) return 'it is malformed';
  return "the provider's signing keys could not be fetched";
}
