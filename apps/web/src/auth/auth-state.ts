import type { SignInTrigger } from '@gatehouse/api-contract';
import type { AuthErrorCode } from './auth-error';

/** Who is signed in, as features see it: claims only, never tokens. */
export interface AuthUser {
  /** The provider that vouches for this user (the configured authority). */
  issuer: string;
  sub: string;
  name: string;
  email: string | undefined;
  roles: string[];
  /** Epoch seconds when the access token expires. */
  expiresAt: number;
  /** Epoch seconds when this tab plans to renew it, or null when it cannot be renewed. */
  renewsAt: number | null;
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
 * What the callback came to: signed in, failed with a sentence, or a new sign-in already under way
 * (the provider refused a scope it does not list, and the request goes again without it).
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
  getAccessToken: () => Promise<string | null>;
  /** The headers that authorize one API request (bearer, or DPoP with a proof); null when signed out. */
  authorize: (request: { url: string; method: string }) => Promise<Record<string, string> | null>;
  /** Reads what an API answer says for the next requests (a DPoP nonce). */
  sawApiAnswer: (response: Pick<Response, 'headers'>) => void;
  /** Renews the tokens now, e.g. after the API refused the access token (401); never throws. */
  renew: () => Promise<void>;
}
