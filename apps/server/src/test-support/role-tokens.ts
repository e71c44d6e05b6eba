import { InvalidTokenError, type ApiUser, type TokenVerifier } from '../auth/token-verifier.js';

/**
 * A unit-test stand-in for the provider's verifier: each token is the name of a caller, who holds the
 * roles given for it (the token is also the user's `sub`); any other token is invalid.
 */
export function verifierOfRoleTokens(rolesByToken: Record<string, readonly string[] | null>) {
  return Object.assign(
    (token: string): Promise<ApiUser> => {
      const roles = Object.hasOwn(rolesByToken, token) ? rolesByToken[token] : null;
      if (!roles) return Promise.reject(new InvalidTokenError('The token is not valid'));
      return Promise.resolve({
        sub: token,
        name: null,
        email: null,
        roles: [...roles],
        issuer: 'https://idp.test',
        expiresAt: null,
        verifiedBy: 'jwt',
        jkt: null,
      });
    },
    { withProfile: (user: ApiUser) => Promise.resolve(user) },
  ) satisfies TokenVerifier;
}
