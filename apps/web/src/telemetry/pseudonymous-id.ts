/**
 * A stable id for the signed-in user that is neither their email nor their name: the SHA-256 of
 * issuer and subject, base64url, 128 bits. The same person gets the same id on every device.
 */
export async function pseudonymousUserId(issuer: string, subject: string): Promise<string> {
  const bytes = new TextEncoder().encode(`${issuer}\n${subject}`);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)).slice(0, 16);
  return btoa(String.fromCharCode(...digest))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
