import { AuthError } from './auth-error';

/** Makes the DPoP proof for a request (RFC 9449 7.1), with the server's nonce when it asked for one. */
export type ProofMaker = (request: { url: string; method: string; nonce?: string }) => Promise<string>;

/**
 * Reads the UserInfo endpoint with the access token (OpenID Connect Core 5.3.1) and checks that its
 * `sub` is the ID token's (5.3.2): claims of another user are never merged into the session. A
 * DPoP-bound token goes with the DPoP scheme and a proof (RFC 9449 7.1), retried once with the
 * provider's nonce when it asks for one (section 9); oidc-client-ts would send it as a bearer token.
 */
export async function fetchUserInfo(
  endpoint: string,
  accessToken: string,
  sub: string,
  proofFor?: ProofMaker,
): Promise<Record<string, unknown>> {
  const send = async (nonce?: string) =>
    fetch(endpoint, {
      headers: {
        Accept: 'application/json',
        ...(proofFor
          ? {
              Authorization: `DPoP ${accessToken}`,
              DPoP: await proofFor({ url: endpoint, method: 'GET', ...(nonce ? { nonce } : {}) }),
            }
          : { Authorization: `Bearer ${accessToken}` }),
      },
      credentials: 'omit',
    });
  let response = await send();
  const nonce = response.headers.get('DPoP-Nonce');
  if (proofFor && response.status === 401 && nonce) response = await send(nonce);
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
