/**
 * Telling an access token from an ID token. Both are JWTs signed by the same provider, and where the API's
 * audience equals the client id (Entra with one app registration, any provider without `OIDC_AUDIENCE`) an
 * ID token would pass every signature, issuer and audience check. The markers below are the ones the
 * providers Gatehouse documents really put in their tokens (see token-kind.test.ts, one case per preset).
 */

/** RFC 9068 section 2.1: the `typ` header of a JWT access token (`application/` may be left out). */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt']);

/**
 * Why this JWT is not an access token, or undefined when it is one. Checked in order:
 * 1. RFC 9068 `typ: at+jwt` (oidc-provider, Auth0 and Okta custom servers with the profile): an access token.
 * 2. Keycloak's own `typ` claim: `ID` (and `Logout`, `Refresh`) are not access tokens; `Bearer` is one.
 * 3. OpenID Connect Core 2 and 3.1.3.6: `nonce`, `at_hash`, `c_hash` only appear in ID tokens.
 * 4. An access token for a user carries the scopes it grants (`scp`: Entra, Okta; `scope`: RFC 9068 2.2.3,
 *    Auth0, Keycloak): an ID token never does.
 */
export function notAnAccessToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): string | undefined {
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : undefined;
  if (typ !== undefined && ACCESS_TOKEN_TYPES.has(typ)) return undefined;
  if (typeof payload.typ === 'string' && payload.typ !== 'Bearer') {
    return `The token is a ${payload.typ} token, not an access token`;
  }
  for (const claim of ['nonce', 'at_hash', 'c_hash']) {
    if (claim in payload) return `The token is an ID token (it has ${claim}), not an access token`;
  }
  if (!('scp' in payload) && !('scope' in payload)) {
    return 'The token is not an access token (it grants no scope: no scp or scope claim)';
  }
  return undefined;
}
