/**
 * The user's roles in a set of claims (an ID token's, userinfo's, an access token's or an introspection
 * answer), read the one way the SPA and the API both use, so a link the SPA shows and the answer the API
 * gives cannot disagree.
 *
 * `claim` is the configured roles claim (`OIDC_ROLES_CLAIM`): a claim name first, since names may hold
 * dots (Auth0's `https://example.com/roles`); otherwise a dotted path into nested claims (Keycloak's
 * `realm_access.roles`). The value may be an array (its strings are the roles) or a single string (one
 * role, as some providers send a user with one role); anything else means no roles.
 */
export function readRoles(claims: Readonly<Record<string, unknown>>, claim: string): string[] {
  let value: unknown = claims[claim];
  if (value === undefined && claim.includes('.')) {
    value = claim
      .split('.')
      .reduce<unknown>(
        (node, key) =>
          node !== null && typeof node === 'object' && !Array.isArray(node)
            ? (node as Record<string, unknown>)[key]
            : undefined,
        claims,
      );
  }
  if (typeof value === 'string') return value ? [value] : [];
  return Array.isArray(value) ? value.filter((role): role is string => typeof role === 'string') : [];
}
