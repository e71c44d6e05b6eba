import { readRoles, type ApiRefusalReason, type ApiUser, type TokenCheck } from '@gatehouse/api-contract';
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose';
import {
  askUserinfo,
  introspect,
  TokenCheckUnavailableError,
  TokenFactsCache,
  TokenRefusedError,
  type IntrospectionClient,
  type TokenFacts,
} from './opaque-token.js';
import type { ProviderMetadata, ProviderMetadataCache } from './provider-metadata.js';
import { notAnAccessToken } from './token-kind.js';

/**
 * Verifying an access token: a JWT against the provider's keys (algorithms, issuer, audience, expiry), an
 * opaque one by introspection or userinfo, and the user it names (roles by the configured claim). The
 * HTTP guard that calls it is bearer.ts.
 */

// Who called the API as handlers see it, and as /api/me answers it; how the token was judged.
export type { ApiUser, TokenCheck } from '@gatehouse/api-contract';

export interface TokenVerifierOptions {
  issuer: string;
  audience: string;
  rolesClaim: string;
  metadata: ProviderMetadataCache;
  /** Credentials for RFC 7662 introspection of opaque tokens; without them, userinfo is asked. */
  introspectionClient?: IntrospectionClient | undefined;
  fetchImpl?: typeof fetch;
  /** Answers about opaque tokens are reused this long at most (never beyond the token's exp). */
  cacheSeconds?: number;
  cacheEntries?: number;
}

/** The provider's keys could not be fetched: the token cannot be judged either way. */
export class ProviderUnavailableError extends Error {
  override readonly name = 'ProviderUnavailableError';
  readonly code = 'provider_unavailable';
  readonly status = 503;
}

/** A token the API refuses; `reason` is what the refusal metric counts it as (refusal-metrics.ts). */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
  readonly code = 'invalid_token';
  readonly reason: ApiRefusalReason;
  constructor(message: string, options?: { cause?: unknown; reason?: ApiRefusalReason }) {
    super(message, options);
    this.reason = options?.reason ?? 'invalid_token';
  }
}

export interface TokenVerifier {
  (token: string): Promise<ApiUser>;
  /** Fills a missing name or email from the provider's userinfo endpoint; the user as is when it cannot. */
  withProfile(user: ApiUser, token: string): Promise<ApiUser>;
}

const UNREACHABLE = 'The identity provider could not be reached to check the token.';

/**
 * Validates access tokens. A JWT (RFC 9068 profile) is verified here: signature against the provider's
 * JWKS (jose caches it and fetches it again for an unknown key id), issuer, audience, expiry, and that it
 * is an access token, not an ID token. Any other token is opaque to us, so the provider is asked: RFC 7662
 * introspection when the server has credentials for it, else the userinfo endpoint.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const fetchImpl = options.fetchImpl ?? fetch;
  const cache = new TokenFactsCache({
    ttlSeconds: options.cacheSeconds ?? 30,
    maxEntries: options.cacheEntries ?? 10_000,
  });
  const profiles = new TokenFactsCache({
    ttlSeconds: options.cacheSeconds ?? 30,
    maxEntries: options.cacheEntries ?? 10_000,
  });
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  const metadata = () =>
    options.metadata.get().catch((cause: unknown) => {
      throw new ProviderUnavailableError(UNREACHABLE, { cause });
    });

  const toUser = (claims: Record<string, unknown>, verifiedBy: TokenCheck, exp: unknown): ApiUser => ({
    sub: claims.sub as string,
    name: text(claims.name),
    email: text(claims.email),
    roles: readRoles(claims, options.rolesClaim),
    issuer: options.issuer,
    expiresAt: typeof exp === 'number' ? exp : null,
    verifiedBy,
    jkt: boundKey(claims),
  });

  async function verifyJwt(token: string, header: ProtectedHeaderParameters): Promise<ApiUser> {
    const { jwks_uri, accessTokenAlgorithms } = await metadata();
    jwks ??= createRemoteJWKSet(new URL(jwks_uri));
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        // Only what the provider signs with, never `none` or HS* (provider-metadata.ts).
        algorithms: accessTokenAlgorithms,
        issuer: options.issuer,
        audience: options.audience,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (error) {
      if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)) {
        throw new ProviderUnavailableError(UNREACHABLE, { cause: error });
      }
      throw new InvalidTokenError(describe(error, options.audience), {
        cause: error,
        reason: refusalReason(error),
      });
    }
    const refusal = notAnAccessToken(header, payload);
    if (refusal) throw new InvalidTokenError(refusal);
    return toUser(payload, 'jwt', payload.exp);
  }

  /** Userinfo answers for `token`, cached; a refusal or an outage is the caller's to judge. */
  const userinfo = (provider: ProviderMetadata, token: string): Promise<TokenFacts> => {
    const endpoint = provider.userinfo_endpoint;
    if (!endpoint) {
      // Nothing will change on retry: the caller learns that such tokens cannot be checked here.
      return Promise.reject(
        new TokenRefusedError(
          'The access token is not a JWT, and the provider has no userinfo endpoint to check it',
        ),
      );
    }
    return profiles.get(token, () => askUserinfo(endpoint, token, fetchImpl));
  };

  async function verifyOpaque(token: string): Promise<ApiUser> {
    const provider = await metadata();
    const client = options.introspectionClient;
    try {
      if (!client) {
        const { claims } = await userinfo(provider, token);
        if (typeof claims.sub !== 'string') throw new TokenCheckUnavailableError('userinfo has no sub');
        return toUser(claims, 'userinfo', undefined);
      }
      const endpoint = provider.introspection_endpoint;
      if (!endpoint) {
        throw new TokenCheckUnavailableError(
          'OIDC_INTROSPECTION_CLIENT_ID is set, but the provider names no introspection_endpoint',
        );
      }
      const { claims } = await cache.get(token, () => introspect(endpoint, client, token, fetchImpl));
      checkIntrospected(claims);
      // `sub` is optional in an introspection answer (RFC 7662 2.2): the user is then userinfo's.
      const subject =
        typeof claims.sub === 'string' ? claims : { ...(await userinfo(provider, token)).claims, ...claims };
      if (typeof subject.sub !== 'string') throw new TokenCheckUnavailableError('introspection has no sub');
      return toUser(subject, 'introspection', claims.exp);
    } catch (error) {
      if (error instanceof TokenRefusedError) {
        throw new InvalidTokenError(error.message, { cause: error, reason: error.reason });
      }
      if (error instanceof TokenCheckUnavailableError) {
        throw new ProviderUnavailableError(`${UNREACHABLE} ${error.message}.`, { cause: error });
      }
      throw error;
    }
  }

  /** RFC 7662 2.2: the members a response may carry are checked when it carries them. */
  function checkIntrospected(claims: Record<string, unknown>): void {
    if (typeof claims.exp === 'number' && claims.exp <= Date.now() / 1000) {
      throw new TokenRefusedError('The access token expired', { reason: 'expired' });
    }
    if (claims.iss !== undefined && claims.iss !== options.issuer) {
      throw new TokenRefusedError('The access token is from another issuer', { reason: 'wrong_issuer' });
    }
    if (claims.aud !== undefined) {
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!audiences.includes(options.audience)) {
        throw new TokenRefusedError(audienceMismatch(claims.aud, options.audience), {
          reason: 'wrong_audience',
        });
      }
    }
  }

  const verify = async (token: string): Promise<ApiUser> => {
    const header = jwtHeader(token);
    return header ? verifyJwt(token, header) : verifyOpaque(token);
  };

  const withProfile = async (user: ApiUser, token: string): Promise<ApiUser> => {
    if (user.name !== null && user.email !== null) return user;
    const provider = options.metadata.current();
    if (!provider) return user;
    const claims = await userinfo(provider, token).then(
      (facts) => facts.claims,
      // Userinfo may refuse a token meant for another audience (Entra): the API still answers.
      () => undefined,
    );
    // OpenID Connect Core 5.3.2: userinfo about someone else must not be used.
    if (!claims || claims.sub !== user.sub) return user;
    return { ...user, name: user.name ?? text(claims.name), email: user.email ?? text(claims.email) };
  };

  return Object.assign(verify, { withProfile });
}

const text = (value: unknown) => (typeof value === 'string' ? value : null);

/** RFC 9449 section 6.1 (JWT) and 6.2 (introspection): `cnf.jkt` names the key a token is bound to. */
function boundKey(claims: Record<string, unknown>): string | null {
  const cnf = claims.cnf;
  if (!cnf || typeof cnf !== 'object') return null;
  return text((cnf as Record<string, unknown>).jkt);
}

/** The JOSE header when `token` is a signed JWT (three parts, RFC 7515 7.1); undefined for anything else. */
function jwtHeader(token: string): ProtectedHeaderParameters | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    return decodeProtectedHeader(token);
  } catch {
    return undefined;
  }
}

/** Names both audiences; the token's is attacker-controlled, so it is shortened and reduced to safe text. */
export function audienceMismatch(got: unknown, wanted: string): string {
  const shown = (Array.isArray(got) ? got : [got])
    .map((value) => (typeof value === 'string' ? value : JSON.stringify(value)))
    .join(' ')
    .replace(/[^\x20-\x7e]|["\\]/g, '?');
  const clipped = shown.length > 200 ? `${shown.slice(0, 200)}...` : shown;
  return `The access token is for another audience: it is for '${clipped}', this API accepts '${wanted}'`;
}

function refusalReason(error: unknown): ApiRefusalReason {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'wrong_audience';
    if (error.claim === 'iss') return 'wrong_issuer';
    return 'invalid_token';
  }
  if (
    error instanceof errors.JWSSignatureVerificationFailed ||
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JOSEAlgNotAllowed
  ) {
    return 'bad_signature';
  }
  return 'malformed';
}

function describe(error: unknown, audience: string): string {
  if (error instanceof errors.JWTExpired) return 'The access token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return audienceMismatch(error.payload.aud, audience);
    if (error.claim === 'iss') return 'The access token is from another issuer';
    return `The access token's ${error.claim} claim is invalid`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The access token signature is invalid';
  if (error instanceof errors.JWKSNoMatchingKey) return 'The access token is signed with an unknown key';
  if (error instanceof errors.JOSEAlgNotAllowed)
    return "The access token is signed with an algorithm the provider's discovery does not list";
  return 'The access token is malformed';
}
