/**
 * The standard scopes of OpenID Connect Core 5.4 and 11. A provider that lists `scopes_supported` and
 * leaves one of these out does not know it, and many refuse the whole request for it (`invalid_scope`).
 */
const STANDARD_SCOPES = new Set(['profile', 'email', 'address', 'phone', 'offline_access']);

/**
 * The scope to request from a provider: the configured one, less the standard scopes its discovery
 * document (OpenID Connect Discovery 1.0, 3: `scopes_supported`) does not list. `openid` and scopes of
 * the deployment's own (an API's, such as `api://…/access_as_user`) are always kept: providers need not
 * advertise every scope they support. Without `scopes_supported`, the configured scope goes as it is.
 * `refused` are scopes this provider has refused before in this tab.
 */
export function requestedScope(
  configured: string,
  scopesSupported: unknown,
  refused: ReadonlySet<string> = new Set(),
): string {
  const wanted = configured.split(/\s+/).filter((scope) => scope && !refused.has(scope));
  if (!Array.isArray(scopesSupported)) return wanted.join(' ');
  const offered = new Set(scopesSupported.filter((scope): scope is string => typeof scope === 'string'));
  return wanted.filter((scope) => !STANDARD_SCOPES.has(scope) || offered.has(scope)).join(' ');
}

/**
 * A scope a provider refused (`invalid_scope`) that sign-in can do without: `offline_access` only
 * asks for a refresh token, which many providers issue without it. Others are the deployment's
 * choice, and their refusal is an error to show.
 */
export function optionalScopeIn(scope: string): string | undefined {
  return scope.split(/\s+/).includes('offline_access') ? 'offline_access' : undefined;
}
