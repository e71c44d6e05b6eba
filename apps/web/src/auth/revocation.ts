/** Thrown when the provider answers a revocation request with an error. */
export class RevocationError extends Error {
  override readonly name = 'RevocationError';
  constructor(
    readonly status: number,
    readonly error: string | undefined,
  ) {
    super(
      `The identity provider refused to revoke the refresh token (${status}${error ? ` ${error}` : ''}); it stays valid until it expires.`,
    );
  }
}

/**
 * Revokes a refresh token as a public client (RFC 7009, 2.1: `token`, `token_type_hint`, `client_id`).
 * `keepalive` lets the request finish after the page has gone on to the provider's end-session
 * endpoint, so sign-out never waits for it; the form body keeps it a CORS simple request.
 */
export async function revokeRefreshToken(endpoint: string, clientId: string, token: string): Promise<void> {
  const response = await fetch(endpoint, {
    method: 'POST',
    keepalive: true,
    credentials: 'omit',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, token_type_hint: 'refresh_token', client_id: clientId }),
  });
  if (response.ok) return;
  let error: string | undefined;
  try {
    const body = (await response.json()) as { error?: unknown };
    if (typeof body.error === 'string') error = body.error;
  } catch {
    // Not JSON: the status says enough.
  }
  throw new RevocationError(response.status, error);
}
