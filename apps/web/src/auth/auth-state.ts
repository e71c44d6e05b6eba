import type { SignInTrigger } from '@gatehouse/api-contract';
import type { AuthErrorCode } from './auth-error';
import type { ApiAnswer, ApiRequest } from './token-vault';

/** Who is signed in, as features see it: claims only, never tokens. */
export interface AuthUser {
  /** The provider that vouches for this user (the configured authority). */
  issuer: string;
  sub: string;
  name: string;
  email: string | undefined;
  roles: string[];
  /** Epoch seconds when the access token expires; in BFF mode, when the server's session ends. */
  expiresAt: number;
  /**
   * Epoch seconds when the tokens are to be renewed, or null when the page cannot renew them (in BFF mode
   * always: the server renews them itself).
   */
  renewsAt: number | null;
  /** BFF mode: the server renews the tokens, as long as its session lasts (until `expiresAt`). */
  renewedByServer?: true;
}

/** A sentence the user should read: why they are signed out, or why sign-in failed. */
export interface AuthNotice {
  code: AuthErrorCode;
  message: string;
}

export type AuthState =
  | { status: 'loading' }
  | { status: 'signed-out'; notice?: AuthNotice }
  /** Tokens are gone; the browser is on its way to the provider's end-session endpoint. */
  | { status: 'signing-out' }
  | { status: 'signed-in'; user: AuthUser };

/**
 * How a sign-out ended: `leaving` when the browser is being sent to the provider's end-session endpoint
 * (it comes back to the home page), `signed-out` when it ended here (the provider offers no sign-out).
 */
export type SignOutOutcome = 'leaving' | 'signed-out';

/**
 * What the callback came to: done (go to `returnTo`: signed in, or, for a session restore the provider
 * refused, signed out with a notice), failed with a sentence, or a new sign-in already under way (the
 * provider refused a scope it does not list, and the request goes again without it).
 */
export type CallbackResult =
  { ok: true; returnTo: string } | { ok: false; error: AuthNotice } | { ok: false; retrying: true };

/** The session as the React layer drives it; implemented by the lazily loaded OIDC session. */
export interface AuthSession {
  getState: () => AuthState;
  subscribe: (listener: () => void) => () => void;
  /** `trigger`: what asked for it, for the sign-in telemetry (default `button`). */
  signIn: (returnTo: string, trigger?: SignInTrigger) => Promise<void>;
  signOut: () => Promise<SignOutOutcome>;
  completeSignIn: (url: string) => Promise<CallbackResult>;
  /**
   * One call of the app's own API with the session's authorization (added out of the page's reach, by
   * the token vault); without a session, the call goes without.
   */
  fetchApi: (request: ApiRequest) => Promise<ApiAnswer>;
  /** Renews the tokens now, e.g. after the API refused the access token (401); true when a session remains. */
  renew: () => Promise<boolean>;
}
