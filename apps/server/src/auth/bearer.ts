import type { NextFunction, Request, Response } from 'express';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { ProviderMetadataCache } from './provider-metadata.js';

/** Who called the API, as handlers see it. */
export interface ApiUser {
  sub: string;
  name: string | null;
  email: string | null;
  roles: string[];
  issuer: string;
  expiresAt: number;
}

export interface TokenVerifierOptions {
  issuer: string;
  audience: string;
  rolesClaim: string;
  metadata: ProviderMetadataCache;
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

/**
 * Validates JWT access tokens (RFC 9068 profile): signature against the provider's JWKS (jose caches
 * it and fetches it again for an unknown key id), issuer, audience, expiry.
 */
export function createTokenVerifier(options: TokenVerifierOptions) {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  return async function verify(token: string): Promise<ApiUser> {
    const metadata = await options.metadata.get().catch((cause: unknown) => {
      throw new ProviderUnavailableError('The identity provider could not be reached to check the token.', {
        cause,
      });
    });
    jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri));
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: options.issuer,
        audience: options.audience,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (error) {
      if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)) {
        throw new ProviderUnavailableError('The identity provider could not be reached to check the token.', {
          cause: error,
        });
      }
      throw new InvalidTokenError(describe(error), { cause: error });
    }
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    return {
      sub: payload.sub as string,
      name: text(payload.name),
      email: text(payload.email),
      roles: readRoles(payload, options.rolesClaim),
      issuer: options.issuer,
      expiresAt: payload.exp as number,
    };
  };
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The access token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'The access token is for another audience';
    if (error.claim === 'iss') return 'The access token is from another issuer';
    return `The access token's ${error.claim} claim is invalid`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The access token signature is invalid';
  if (error instanceof errors.JWKSNoMatchingKey) return 'The access token is signed with an unknown key';
  return 'The access token is malformed';
}

/**
 * Roles from the configured claim: a top-level claim by that exact name (Auth0 uses URLs with dots),
 * otherwise a dotted path into nested claims (Keycloak: `realm_access.roles`). A single string counts
 * as one role.
 */
export function readRoles(payload: Record<string, unknown>, claim: string): string[] {
  let value: unknown = payload[claim];
  if (value === undefined) {
    value = claim
      .split('.')
      .reduce<unknown>(
        (node, key) =>
          node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined,
        payload,
      );
  }
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((role): role is string => typeof role === 'string') : [];
}

const REALM = 'Bearer realm="gatehouse"';
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/;

/**
 * RFC 6750: requires a valid bearer token. A request without one gets a bare challenge (section 3.1);
 * a bad one gets `invalid_token` with a description; a missing role gets 403 `insufficient_scope`.
 */
export function requireBearer(verify: (token: string) => Promise<ApiUser>, requiredRole?: string) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (!header) {
      res
        .set('WWW-Authenticate', REALM)
        .status(401)
        .json({ error: 'unauthorized', message: 'Sign in to use this API.' });
      return;
    }
    const token = BEARER.exec(header)?.[1];
    try {
      if (!token) throw new InvalidTokenError('The Authorization header is not a bearer token');
      const user = await verify(token);
      if (requiredRole && !user.roles.includes(requiredRole)) {
        res
          .set('WWW-Authenticate', `${REALM}, error="insufficient_scope"`)
          .status(403)
          .json({ error: 'forbidden', message: `This needs the ${requiredRole} role.` });
        return;
      }
      res.locals.user = user;
      next();
    } catch (error) {
      if (!(error instanceof InvalidTokenError)) {
        next(error);
        return;
      }
      res
        .set('WWW-Authenticate', `${REALM}, error="invalid_token", error_description="${error.message}"`)
        .status(401)
        .json({ error: 'invalid_token', message: `${error.message}.` });
    }
  };
}
