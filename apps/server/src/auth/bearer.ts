import { errorBody, readRoles, type ApiUser, type TokenCheck } from '@gatehouse/api-contract';
import type { NextFunction, Request, Response } from 'express';
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
import {
  DPOP_ALGORITHMS,
  DpopNonceError,
  DpopProofError,
  DpopReplayCheckUnavailableError,
  DpopTooManyProofsError,
  type DpopNonces,
  type DpopVerifier,
} from './dpop.js';
import { notAnAccessToken } from './token-kind.js';

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

export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
  readonly code = 'invalid_token';
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
      throw new InvalidTokenError(describe(error, options.audience), { cause: error });
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
      if (error instanceof TokenRefusedError) throw new InvalidTokenError(error.message, { cause: error });
      if (error instanceof TokenCheckUnavailableError) {
        throw new ProviderUnavailableError(`${UNREACHABLE} ${error.message}.`, { cause: error });
      }
      throw error;
    }
  }

  /** RFC 7662 2.2: the members a response may carry are checked when it carries them. */
  function checkIntrospected(claims: Record<string, unknown>): void {
    if (typeof claims.exp === 'number' && claims.exp <= Date.now() / 1000) {
      throw new TokenRefusedError('The access token expired');
    }
    if (claims.iss !== undefined && claims.iss !== options.issuer) {
      throw new TokenRefusedError('The access token is from another issuer');
    }
    if (claims.aud !== undefined) {
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!audiences.includes(options.audience)) {
        throw new TokenRefusedError(audienceMismatch(claims.aud, options.audience));
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

const REALM = 'realm="gatehouse"';
/** RFC 6750 2.1 and RFC 9449 7.1: the scheme (case-insensitive, RFC 9110 11.1) and a token68. */
const AUTHORIZATION = /^(Bearer|DPoP) ([A-Za-z0-9\-._~+/]+=*)$/i;

/** How the API treats DPoP (RFC 9449): always understood; required when the operator says so. */
export interface DpopPolicy {
  verify: DpopVerifier;
  required: boolean;
  /** The origin clients address (PUBLIC_ORIGIN): `htu` is checked against it, as the proxy saw it. */
  publicOrigin: string;
  /** Server nonces, also offered on every answer (section 9) when set. */
  nonces?: DpopNonces | undefined;
}

export interface AccessRequirements {
  /** A role the caller must have (read from the configured roles claim). */
  role?: string | undefined;
  dpop?: DpopPolicy | undefined;
}

/** A refusal with the scheme its challenge names, and the RFC's error code. */
class Refusal extends Error {
  constructor(
    readonly scheme: 'Bearer' | 'DPoP',
    readonly code: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Requires a valid access token: RFC 6750 bearer tokens, and RFC 9449 DPoP-bound tokens with a proof
 * for this request. A request without one gets bare challenges (RFC 6750 3.1; RFC 9449 7.1 lists the
 * algorithms); a bad one gets `invalid_token`, `invalid_dpop_proof` or `use_dpop_nonce` with a
 * description; a missing role gets 403 `insufficient_scope`. A DPoP-bound token sent as a bearer token is
 * refused (RFC 9449 7.2): that is what a stolen token looks like.
 */
export function requireAccessToken(
  verify: (token: string) => Promise<ApiUser>,
  needs: AccessRequirements = {},
) {
  const { role, dpop } = needs;
  const dpopChallenge = dpop ? `DPoP ${REALM}, algs="${DPOP_ALGORITHMS.join(' ')}"` : undefined;
  /** Every scheme the API takes, the one that failed carrying the error (RFC 9110 11.6.1). */
  const challenges = (refusal?: Refusal) => {
    const detail = refusal
      ? `, error="${refusal.code}", error_description="${refusal.message.replace(/["\\]/g, "'")}"`
      : '';
    const bearer = dpop?.required
      ? undefined
      : `Bearer ${REALM}${refusal?.scheme === 'Bearer' ? detail : ''}`;
    const proof = refusal?.scheme === 'DPoP' ? `${dpopChallenge ?? `DPoP ${REALM}`}${detail}` : dpopChallenge;
    return [bearer, proof].filter((challenge) => challenge !== undefined).join(', ');
  };
  // The access log (app.ts) writes res.locals.authFailure next to the status: the reason of a 401 or 403.
  return async (req: Request, res: Response, next: NextFunction) => {
    if (dpop?.nonces) res.set('DPoP-Nonce', dpop.nonces.current(Date.now() / 1000));
    const header = req.get('authorization');
    if (!header) {
      res.locals.authFailure = 'no access token';
      res
        .set('WWW-Authenticate', challenges())
        .status(401)
        .json(errorBody('unauthorized', 'Sign in to use this API.'));
      return;
    }
    const [, given, token] = AUTHORIZATION.exec(header) ?? [];
    const scheme = given?.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
    try {
      if (!token)
        throw new Refusal(scheme, 'invalid_token', 'The Authorization header is not a bearer or DPoP token');
      if (scheme === 'Bearer' && dpop?.required) {
        throw new Refusal('DPoP', 'invalid_token', 'This API requires DPoP-bound access tokens');
      }
      const user = await verify(token).catch((error: unknown) => {
        throw error instanceof InvalidTokenError
          ? new Refusal(scheme, 'invalid_token', error.message)
          : error;
      });
      if (scheme === 'Bearer' && user.jkt !== null) {
        throw new Refusal(
          'DPoP',
          'invalid_token',
          'The access token is DPoP-bound: send it with a DPoP proof',
        );
      }
      if (scheme === 'DPoP') await checkProof(req, token, user, dpop);
      if (role && !user.roles.includes(role)) {
        res.locals.authFailure = `the ${role} role is missing`;
        res
          .set('WWW-Authenticate', `${scheme} ${REALM}, error="insufficient_scope"`)
          .status(403)
          .json(errorBody('forbidden', `This needs the ${role} role.`));
        return;
      }
      res.locals.user = user;
      res.locals.accessToken = token;
      next();
    } catch (error) {
      if (error instanceof DpopReplayCheckUnavailableError) {
        res.locals.authFailure = error.message;
        res.set('Retry-After', '5').status(503).json(errorBody(error.code, error.message));
        return;
      }
      if (error instanceof DpopTooManyProofsError) {
        // This key only: every other key's requests go on (issue 24).
        res.locals.authFailure = error.message;
        res
          .set('Retry-After', String(error.retryAfterSeconds))
          .status(429)
          .json(errorBody(error.code, error.message));
        return;
      }
      if (!(error instanceof Refusal)) {
        next(error);
        return;
      }
      res.locals.authFailure = error.message;
      res
        .set('WWW-Authenticate', challenges(error))
        .status(401)
        .json(errorBody(error.code, `${error.message}.`));
    }
  };
}

/** RFC 9449 7.1: a DPoP-scheme request carries a proof for this method and URL, this token and its key. */
async function checkProof(req: Request, token: string, user: ApiUser, dpop: DpopPolicy | undefined) {
  if (!dpop) throw new Refusal('DPoP', 'invalid_token', 'This API does not take DPoP tokens');
  if (user.jkt === null) throw new Refusal('DPoP', 'invalid_token', 'The access token is not DPoP-bound');
  const proof = req.get('dpop');
  if (!proof) throw new Refusal('DPoP', 'invalid_dpop_proof', 'The DPoP proof header is missing');
  try {
    await dpop.verify({
      proof,
      method: req.method,
      url: `${dpop.publicOrigin}${req.originalUrl}`,
      accessToken: token,
      boundKey: user.jkt,
    });
  } catch (error) {
    // The fresh nonce is in the DPoP-Nonce header of every answer (set above).
    if (error instanceof DpopNonceError) throw new Refusal('DPoP', error.code, error.message);
    if (error instanceof DpopProofError) throw new Refusal('DPoP', error.code, error.message);
    throw error;
  }
}
