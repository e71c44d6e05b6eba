import { z } from 'zod';

/**
 * Every code an error body of the API may carry: clients branch on these, never on the message, so a
 * code is never renamed or reused for another meaning. One list for the server's handlers, the bearer
 * middleware and the SPA.
 */
export const errorCodes = {
  /** No access token (RFC 6750, 3.1: the challenge carries no error code). */
  unauthorized: 'Sign in first: the request carries no access token.',
  /** RFC 6750, 3.1 `invalid_token`: expired, revoked, malformed, or for another audience. */
  invalid_token: 'The access token is not valid for this API.',
  /** RFC 9449, 7.1: the DPoP proof is missing, malformed, or not made for this request, token and key. */
  invalid_dpop_proof: 'The DPoP proof does not hold for this request.',
  /** RFC 9449, 9: the proof must carry the nonce in this answer's `DPoP-Nonce` header; send it again. */
  use_dpop_nonce: 'Send the request again with the nonce the API gave.',
  /**
   * The DPoP replay check cannot be made now (too many proofs remembered, or the shared store does not
   * answer): try again shortly.
   */
  temporarily_unavailable: 'The API is busy; try again shortly.',
  /** One DPoP key sent more proofs in the window than a client needs: wait for `Retry-After`. */
  too_many_requests: 'Too many requests with this key; wait as Retry-After says, then try again.',
  /** RFC 6750, 3.1 `insufficient_scope`, told apart as a role the caller lacks. */
  forbidden: 'The caller lacks a role this endpoint needs.',
  invalid_request: 'A parameter is invalid; the message names each bad one.',
  not_found: 'Nothing is stored for it, or no endpoint is at this path.',
  bad_request: 'The request could not be read (a body that is not JSON, or too large).',
  /** The identity provider could not be reached to check the token: try again later. */
  provider_unavailable: 'The identity provider could not be reached to check the token.',
  /** Another replica holds the telemetry store and cannot answer now (it restarts in seconds): try again. */
  store_unavailable: 'The telemetry store could not be reached; try again shortly.',
  server_error: 'Something went wrong on the server.',
  /** The dashboard's source (Azure Monitor Logs) has no honest answer to this; `link` names its own view. */
  not_available: 'Not available with this source; the link, when given, opens the source’s own view.',
  /** The dashboard's source could not answer now (throttled, timed out, partial, unreachable): try again. */
  source_unavailable: 'The usage data source did not answer; try again shortly.',
} as const;

export type ErrorCode = keyof typeof errorCodes;

export const errorCodeSchema = z.enum(Object.keys(errorCodes) as [ErrorCode, ...ErrorCode[]]);

/** The one shape of every error answer of /api: a stable code and a sentence for a person. */
export const errorBodySchema = z
  .strictObject({
    error: errorCodeSchema,
    message: z.string().min(1).meta({ description: 'What happened and what to do, for a person' }),
    link: z
      .url()
      .optional()
      .meta({ description: 'Where to go instead (not_available: the portal’s own view)' }),
  })
  .meta({ id: 'Error' });

export type ErrorBody = z.infer<typeof errorBodySchema>;

/** An error body (for a server: typed so that only listed codes compile). */
export function errorBody(error: ErrorCode, message: string, link?: string): ErrorBody {
  return link === undefined ? { error, message } : { error, message, link };
}
