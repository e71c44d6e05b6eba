/**
 * What the SPA reports about signing in, and what the server reports about the tokens it refuses: one
 * vocabulary, read by the code that sends the items and by the dashboard's queries that read them back
 * (docs/decisions/0104, 0105). Only these codes and timings are sent: never a token, a code, a name, an
 * e-mail or a provider's `error_description`.
 */

/** Custom event (customEvents) names. */
export const SIGN_IN_EVENT = 'gatehouse.sign-in';
export const RENEWAL_EVENT = 'gatehouse.renewal';
export const SESSION_END_EVENT = 'gatehouse.session-end';
/** The server's metric (customMetrics): API requests refused in one minute, one item per reason. */
export const API_REFUSALS_METRIC = 'gatehouse.api-refusals';

/**
 * A sign-in journey, in order: `started` (the browser leaves for the provider), `returned` (the
 * callback was reached), `redeemed` (the code became tokens), `signed-in`; or `failed` at a step.
 */
export const signInOutcomes = ['started', 'returned', 'redeemed', 'signed-in', 'failed'] as const;
export type SignInOutcome = (typeof signInOutcomes)[number];

/**
 * What started it: the sign-in button, a session that ended (expired, renewal failed, refused by the
 * API), a guarded page opened while signed out.
 */
export const signInTriggers = ['button', 'expired-session', 'guarded-page'] as const;
export type SignInTrigger = (typeof signInTriggers)[number];

/**
 * Where a journey failed: before leaving (`start`: discovery, issuer check), at the provider (its
 * error answer, or the user came back without one: `cancelled`), the callback's state (`return`), the
 * code exchange (`redeem`), the ID token's checks (`id-token`), the UserInfo request (`userinfo`).
 */
export const signInSteps = ['start', 'provider', 'return', 'redeem', 'id-token', 'userinfo'] as const;
export type SignInStep = (typeof signInSteps)[number];

/**
 * The registered OAuth error codes a provider may answer with: RFC 6749 4.1.2.1 (authorization) and
 * 5.2 (token endpoint), OpenID Connect Core 3.1.2.6, RFC 9449 (DPoP). Any other code is `other`: the
 * provider's own words are free text, and free text may hold anything.
 */
export const oauthErrorCodes = [
  'access_denied',
  'invalid_request',
  'unauthorized_client',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
  'invalid_dpop_proof',
  'use_dpop_nonce',
] as const;
export type OAuthErrorCode = (typeof oauthErrorCodes)[number];

/** Which check of the ID token (OpenID Connect Core 3.1.3.7) refused it: reported as `id_token_<check>`. */
export const idTokenChecks = [
  'missing',
  'signature',
  'keys',
  'issuer',
  'audience',
  'azp',
  'expired',
  'claims',
  'subject',
  'malformed',
] as const;
export type IdTokenCheck = (typeof idTokenChecks)[number];

/** Why a sign-in or a renewal failed. */
export const signInFailureReasons = [
  ...oauthErrorCodes,
  'other',
  'state_mismatch',
  'nonce_mismatch',
  'issuer_mismatch',
  ...idTokenChecks.map((check) => `id_token_${check}` as const),
  'clock_skew',
  'network',
  'cancelled',
  'response_invalid',
  'userinfo_mismatch',
  'userinfo_failed',
  'config_invalid',
] as const;
export type SignInFailureReason = (typeof signInFailureReasons)[number];

/**
 * A renewal with the refresh token: `succeeded`, `failed` (the session ended), and `forced-sign-in`
 * (after a failed renewal, the user went back to the provider).
 */
export const renewalOutcomes = ['succeeded', 'failed', 'forced-sign-in'] as const;
export type RenewalOutcome = (typeof renewalOutcomes)[number];

/**
 * How a session in a tab ended: its tokens expired with nothing to renew them, the user signed out in
 * this tab, another tab ended it (sign-out or failed renewal there), or its renewal failed here.
 */
export const sessionEndReasons = ['expiry', 'sign-out', 'other-tab', 'renewal-failed'] as const;
export type SessionEndReason = (typeof sessionEndReasons)[number];

/** The event properties (customDimensions) each event may carry; the measurement is `durationMs`. */
export const signInEventProperties = ['outcome', 'trigger', 'step', 'reason'] as const;
export const SIGN_IN_DURATION_MEASUREMENT = 'durationMs';

/**
 * Why the API refused a request (the server's metric's `reason` property): no token, one it cannot
 * read, expired, for another audience or issuer, a signature that does not verify, a DPoP proof
 * replayed or otherwise invalid, a proof without the server's nonce, a token bound to a key sent
 * as a bearer token (or the reverse), a caller without the role the endpoint asks for.
 */
export const apiRefusalReasons = [
  'missing',
  'malformed',
  'expired',
  'wrong_audience',
  'wrong_issuer',
  'bad_signature',
  'invalid_token',
  'dpop_replay',
  'dpop_invalid',
  'nonce_needed',
  'wrong_scheme',
  'insufficient_role',
] as const;
export type ApiRefusalReason = (typeof apiRefusalReasons)[number];

/** Whether `code` is one of the registered OAuth error codes (an own value only, never a prototype name). */
export function isOAuthErrorCode(code: unknown): code is OAuthErrorCode {
  return typeof code === 'string' && (oauthErrorCodes as readonly string[]).includes(code);
}
