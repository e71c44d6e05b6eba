import type { SignInFailureReason } from '@gatehouse/api-contract';

/** Stable codes for everything that can end a sign-in or a session. */
export type AuthErrorCode =
  | 'provider_error'
  | 'state_mismatch'
  | 'issuer_mismatch'
  | 'id_token_invalid'
  | 'userinfo_mismatch'
  | 'userinfo_failed'
  | 'response_invalid'
  | 'token_request_failed'
  | 'provider_unreachable'
  | 'renewal_failed'
  | 'session_expired'
  | 'signed_out_elsewhere'
  | 'provider_session_remains'
  /** Back from the provider, but this browser holds no session (BFF: its cookie was not kept). */
  | 'session_missing'
  /** The server could not be told to end the session (BFF): it may remain until it expires. */
  | 'sign_out_failed'
  | 'config_invalid';

/**
 * An error whose message is one sentence a user can act on; the cause keeps the technical detail.
 * `reason`, when the code is too coarse for the sign-in telemetry (which ID-token check failed), is
 * the reported code (sign-in-telemetry.ts).
 */
export class AuthError extends Error {
  override readonly name = 'AuthError';
  readonly reason: SignInFailureReason | undefined;
  constructor(
    readonly code: AuthErrorCode,
    message: string,
    options?: { cause?: unknown; reason?: SignInFailureReason },
  ) {
    super(message, options);
    this.reason = options?.reason;
  }
}

const providerErrorSentences: Record<string, string> = {
  access_denied: 'The sign-in was cancelled or access was denied at the identity provider.',
  login_required: 'The identity provider needs you to sign in again.',
  interaction_required: 'The identity provider needs you to complete a step before signing in.',
  consent_required: 'The identity provider needs your consent before signing you in.',
  temporarily_unavailable: 'The identity provider is temporarily unavailable.',
  server_error: 'The identity provider had an internal error.',
};

/** OpenID Connect Core 3.1.2.6: the provider's error code, as a sentence. */
export function providerErrorSentence(error: string): string {
  // The code is the callback's `error` parameter: an own key only, never Object.prototype's `constructor`.
  const known = Object.hasOwn(providerErrorSentences, error) ? providerErrorSentences[error] : undefined;
  return known ?? `The identity provider refused the sign-in (${error}).`;
}
