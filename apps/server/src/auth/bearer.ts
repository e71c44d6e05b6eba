import {
  errorBody,
  mayAccess,
  roleFor,
  type Access,
  type ApiRefusalReason,
  type ApiUser,
} from '@gatehouse/api-contract';
import type { NextFunction, Request, Response } from 'express';
import {
  DPOP_ALGORITHMS,
  DpopNonceError,
  DpopProofError,
  DpopReplayCheckUnavailableError,
  DpopReplayError,
  DpopTooManyProofsError,
  type DpopNonces,
  type DpopVerifier,
} from './dpop.js';
import { InvalidTokenError } from './token-verifier.js';

/**
 * The API's guard (RFC 6750 and RFC 9449): reads the Authorization header, has the token verified
 * (token-verifier.ts), checks a DPoP proof, and answers 401/403/503 with the challenge each RFC asks for.
 */
export type { ApiUser };

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
  /**
   * What the verified caller must be let into, by the contract's mayAccess (default `signed-in`). A token
   * is required whatever it says: mount this guard only where a signed-out caller may not go.
   */
  access?: Access | undefined;
  dpop?: DpopPolicy | undefined;
  /** Counts each refusal (401, 403) by reason, for the refusal metric (refusal-metrics.ts). */
  refusals?: RefusalCounter | undefined;
}

export interface RefusalCounter {
  count(reason: ApiRefusalReason): void;
}

/** A refusal with the scheme its challenge names, the RFC's error code, and the reason it is counted as. */
class Refusal extends Error {
  constructor(
    readonly scheme: 'Bearer' | 'DPoP',
    readonly code: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce',
    message: string,
    readonly reason: ApiRefusalReason,
  ) {
    super(message);
  }
}

/**
 * Requires a valid access token: RFC 6750 bearer tokens, and RFC 9449 DPoP-bound tokens with a proof
 * for this request. A request without one gets bare challenges (RFC 6750 3.1; RFC 9449 7.1 lists the
 * algorithms); a bad one gets `invalid_token`, `invalid_dpop_proof` or `use_dpop_nonce` with a
 * description; a caller the contract's mayAccess keeps out gets 403 `insufficient_scope`. A DPoP-bound
 * token sent as a bearer token is refused (RFC 9449 7.2): that is what a stolen token looks like.
 */
export function requireAccessToken(
  verify: (token: string) => Promise<ApiUser>,
  needs: AccessRequirements = {},
) {
  const { access = 'signed-in', dpop, refusals } = needs;
  const role = roleFor(access);
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
  // The access log (access-log.ts) writes res.locals.authFailure next to the status: the reason of a 401 or 403.
  return async (req: Request, res: Response, next: NextFunction) => {
    if (dpop?.nonces) res.set('DPoP-Nonce', dpop.nonces.current(Date.now() / 1000));
    const header = req.get('authorization');
    if (!header) {
      refusals?.count('missing');
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
      if (!token) {
        throw new Refusal(
          scheme,
          'invalid_token',
          'The Authorization header is not a bearer or DPoP token',
          'malformed',
        );
      }
      if (scheme === 'Bearer' && dpop?.required) {
        throw new Refusal(
          'DPoP',
          'invalid_token',
          'This API requires DPoP-bound access tokens',
          'wrong_scheme',
        );
      }
      const user = await verify(token).catch((error: unknown) => {
        throw error instanceof InvalidTokenError
          ? new Refusal(scheme, 'invalid_token', error.message, error.reason)
          : error;
      });
      if (scheme === 'Bearer' && user.jkt !== null) {
        throw new Refusal(
          'DPoP',
          'invalid_token',
          'The access token is DPoP-bound: send it with a DPoP proof',
          'wrong_scheme',
        );
      }
      if (scheme === 'DPoP') await checkProof(req, token, user, dpop);
      if (!mayAccess(access, user)) {
        refusals?.count('insufficient_role');
        res.locals.authFailure = role ? `the ${role} role is missing` : `${access} access is refused`;
        res
          .set('WWW-Authenticate', `${scheme} ${REALM}, error="insufficient_scope"`)
          .status(403)
          .json(errorBody('forbidden', role ? `This needs the ${role} role.` : 'This is not open to you.'));
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
        // This key only: every other key's requests go on.
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
      refusals?.count(error.reason);
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
  if (!dpop) throw new Refusal('DPoP', 'invalid_token', 'This API does not take DPoP tokens', 'wrong_scheme');
  if (user.jkt === null) {
    throw new Refusal('DPoP', 'invalid_token', 'The access token is not DPoP-bound', 'wrong_scheme');
  }
  const proof = req.get('dpop');
  if (!proof) {
    throw new Refusal('DPoP', 'invalid_dpop_proof', 'The DPoP proof header is missing', 'dpop_invalid');
  }
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
    if (error instanceof DpopNonceError) throw new Refusal('DPoP', error.code, error.message, 'nonce_needed');
    if (error instanceof DpopProofError) {
      const reason = error instanceof DpopReplayError ? 'dpop_replay' : 'dpop_invalid';
      throw new Refusal('DPoP', error.code, error.message, reason);
    }
    throw error;
  }
}
