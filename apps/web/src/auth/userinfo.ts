import { AuthError } from './auth-error';

/**
 * Reads the UserInfo endpoint with the access token (OpenID Connect Core 5.3.1) and checks that its
 * `sub` is the ID token's (5.3.2): claims of another user are never merged into the session.
 */
export async function fetchUserInfo(
  endpoint: string,
  accessToken: string,
  sub: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(endpoint, {
    headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' },
    credentials: 'omit',
  });
  const body: unknown = response.ok ? await response.json().catch(() => undefined) : undefined;
  if (!body || typeof body !== 'object') {
    throw new AuthError(
      'userinfo_failed',
      `The identity provider's user info could not be read (${response.status}), so sign-in was stopped. Try again.`,
    );
  }
  const claims = body as Record<string, unknown>;
  if (claims.sub !== sub) {
    throw new AuthError(
      'userinfo_mismatch',
      "The identity provider's user info is for another user than its ID token, so sign-in was stopped.",
    );
  }
  return claims;
}
