import {
  createRemoteJWKSet,
  customFetch,
  errors,
  jwtVerify,
  type FetchImplementation,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import type { SignInFailureReason } from '@gatehouse/api-contract';
import { AuthError } from './auth-error';

/**
 * The provider's keys, through jose's remote key set (cached, fetched again once when a token names a key
 * it does not hold), created once discovery has named the `jwks_uri`. jose's 30 s cooldown between such
 * fetches is off: the keys are often fetched during the code exchange (see oidc-session.ts), just before
 * a token signed with a key the provider publishes only once it is in use, and tokens reach this check
 * from the provider's token endpoint alone, so no third party can make it fetch at will.
 */
export class JwksCache {
  private keySet: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  constructor(
    private readonly jwksUri: () => Promise<string>,
    private readonly fetchImpl?: FetchImplementation,
  ) {}

  private keys(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.keySet ??= this.jwksUri().then((uri) =>
      createRemoteJWKSet(new URL(uri), {
        cooldownDuration: 0,
        ...(this.fetchImpl ? { [customFetch]: this.fetchImpl } : {}),
      }),
    );
    this.keySet.catch(() => (this.keySet = undefined));
    return this.keySet;
  }

  /** Fetches the keys now (while the token request is under way), unless they are fresh already. */
  async prefetch(): Promise<void> {
    const keys = await this.keys();
    if (!keys.fresh) await keys.reload();
  }

  async verify(token: string, options: Parameters<typeof jwtVerify>[2]) {
    const keys = await this.keys();
    const getKey: JWTVerifyGetKey = async (header, jws) => {
      try {
        return await keys(header, jws);
      } catch (error) {
        if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
          throw error;
        }
        throw new KeysUnavailableError('The JWKS could not be fetched.', { cause: error });
      }
    };
    return jwtVerify(token, getKey, options);
  }
}

/** The key set could not be had (network, status, not a JWKS): not the token's fault. */
class KeysUnavailableError extends Error {
  override readonly name = 'KeysUnavailableError';
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
      { cause, reason: failedCheck(cause, Date.now() / 1000) },
    );
  }
  const invalid = (why: string, check: SignInFailureReason) =>
    new AuthError('id_token_invalid', `The identity provider's ID token was rejected: ${why}.`, {
      reason: check,
    });
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== expected.clientId) {
    throw invalid('it was issued to another party (azp)', 'id_token_azp');
  }
  if (expected.nonce !== undefined && payload.nonce !== expected.nonce) {
    throw invalid('its nonce does not match this sign-in', 'nonce_mismatch');
  }
  if (expected.subject !== undefined && payload.sub !== expected.subject) {
    throw invalid('it is for another user than this session', 'id_token_subject');
  }
  return payload as JWTPayload & { sub: string };
}

/** How far `iat` may be from this browser's clock before a time check's failure is put down to it. */
const CLOCK_TOLERANCE_SECONDS = 60;

/**
 * The check that refused the token, as the sign-in telemetry reports it. A token the provider has just
 * issued that fails a time check (expired, not yet valid) while its `iat` is far from this browser's
 * clock says the clocks disagree, not that the token is old.
 */
export function failedCheck(error: unknown, now: number): SignInFailureReason {
  if (error instanceof KeysUnavailableError) return 'id_token_keys';
  if (error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed) {
    const timed = error instanceof errors.JWTExpired || error.claim === 'nbf' || error.claim === 'iat';
    const iat = error.payload.iat;
    if (timed && error.reason === 'check_failed' && typeof iat === 'number') {
      if (Math.abs(iat - now) > CLOCK_TOLERANCE_SECONDS) return 'clock_skew';
    }
    if (error instanceof errors.JWTExpired) return 'id_token_expired';
    if (error.claim === 'iss') return 'id_token_issuer';
    if (error.claim === 'aud') return 'id_token_audience';
    return 'id_token_claims';
  }
  if (
    error instanceof errors.JWSSignatureVerificationFailed ||
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys ||
    error instanceof errors.JOSEAlgNotAllowed
  ) {
    return 'id_token_signature';
  }
  return 'id_token_malformed';
}

function reason(error: unknown): string {
  if (error instanceof KeysUnavailableError) return "the provider's signing keys could not be fetched";
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
  return 'it could not be checked';
}
