import { isOAuthErrorCode, type SignInStep } from '@gatehouse/api-contract';
import { ErrorResponse, ErrorTimeout } from 'oidc-client-ts';
import { AuthError, providerErrorSentence } from './auth-error';
import { failureOf, type SignInFailure } from './sign-in-telemetry';
import { isTransient } from './token-renewal';

/** An error the provider answered the authorization request with (OpenID Connect Core 3.1.2.6). */
export function isAuthorizationError(error: unknown, code: string): boolean {
  return error instanceof ErrorResponse && error.form === undefined && error.error === code;
}

/** Maps whatever a step threw onto one sentence for the user, keeping the original as the cause. */
export function toAuthError(error: unknown): AuthError {
  if (error instanceof AuthError) return error;
  if (error instanceof ErrorResponse) {
    // oidc-client-ts attaches the request form to errors from the token endpoint only; any other
    // error response is the provider's answer to the authorization request (Core 3.1.2.6).
    const fromTokenEndpoint = error.form !== undefined;
    if (!fromTokenEndpoint) {
      return new AuthError('provider_error', providerErrorSentence(error.error ?? 'server_error'), {
        cause: error,
      });
    }
    return new AuthError(
      'token_request_failed',
      `The identity provider refused to issue tokens (${error.error}).`,
      { cause: error },
    );
  }
  if (isTransient(error)) {
    return new AuthError(
      'provider_unreachable',
      'The identity provider could not be reached. Try again later.',
      {
        cause: error,
      },
    );
  }
  // Anything else oidc-client-ts throws is a plain Error: its own checks of the provider's answer (a
  // token response that is not JSON, an ID token without `sub`), told apart by nothing but their text.
  return new AuthError(
    'response_invalid',
    "The identity provider's answer could not be accepted, so sign-in was stopped. Try again; if it keeps happening, tell the provider's administrator.",
    { cause: error },
  );
}

/** failureOf (sign-in-telemetry.ts), knowing oidc-client-ts's errors too. */
export function oidcFailureOf(error: unknown, stage: SignInStep): SignInFailure {
  return failureOf(error, stage, oidcLibraryFailure);
}

function oidcLibraryFailure(error: unknown, stage: SignInStep): SignInFailure | undefined {
  if (error instanceof ErrorResponse) {
    const reason = isOAuthErrorCode(error.error) ? error.error : 'other';
    // oidc-client-ts attaches the request form to the token endpoint's answers only.
    return { reason, step: error.form === undefined ? 'provider' : 'redeem' };
  }
  if (error instanceof ErrorTimeout) return { reason: 'network', step: stage };
  return undefined;
}
