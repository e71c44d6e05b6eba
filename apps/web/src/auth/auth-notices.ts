import type { AuthNotice } from './auth-state';

/** The sentences both sessions (the token vault's and the BFF's) show when a session ends. */
export const signedOutElsewhere: AuthNotice = {
  code: 'signed_out_elsewhere',
  message: 'You signed out in another tab. Sign in again to continue.',
};
export const providerSessionRemains: AuthNotice = {
  code: 'provider_session_remains',
  message:
    'You are signed out of this app, but your identity provider offers no way to sign out there, so your session at the provider may remain until you close the browser.',
};
export const sessionExpired: AuthNotice = {
  code: 'session_expired',
  message: 'Your session has expired. Sign in again to continue.',
};
/** The session's code or its server could not be reached at start. */
export const signInUnavailable: AuthNotice = {
  code: 'provider_unreachable',
  message: 'Sign-in could not be loaded. Check your connection and reload the page.',
};
